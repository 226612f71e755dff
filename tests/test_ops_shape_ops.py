"""`tensor.from_elements` and `tensor.cast` at every level.

Each program runs in the reference interpreter, after `fuse`, as tile IR, as
bytecode and compiled, on both device presets, and must match numpy; a cast
the shapes contradict is an error naming the op.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_ops_scans import PRESETS, check
from xdsl.utils.exceptions import VerifyException

import dvm
from dvm.errors import CallError, DvmError, ExecutionError

SHAPE_AND_SIZE = """
func.func @f(%x: tensor<?x?x?xf32>) -> (tensor<3xi64>, tensor<i64>, tensor<2x2xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %d0 = tensor.dim %x, %c0 : tensor<?x?x?xf32>
  %d1 = tensor.dim %x, %c1 : tensor<?x?x?xf32>
  %d2 = tensor.dim %x, %c2 : tensor<?x?x?xf32>
  %a = arith.index_cast %d0 : index to i64
  %b = arith.index_cast %d1 : index to i64
  %c = arith.index_cast %d2 : index to i64
  %ab = arith.muli %a, %b : i64
  %n = arith.muli %ab, %c : i64
  %shape = tensor.from_elements %a, %b, %c : tensor<3xi64>
  %size = tensor.from_elements %n : tensor<i64>
  %a32 = arith.index_cast %d0 : index to i32
  %c32 = arith.index_cast %d2 : index to i32
  %m = tensor.from_elements %a32, %c32, %c32, %a32 : tensor<2x2xi32>
  func.return %shape, %size, %m : tensor<3xi64>, tensor<i64>, tensor<2x2xi32>
}
"""


@pytest.mark.parametrize("device", PRESETS)
def test_shape_and_size_as_data(device: str) -> None:
    """ONNX's Shape and Size: the dims as a tensor, and their product."""
    shapes = [(0, 3, 1), (1, 1, 1), (7, 13, 2), (2, 3001, 5)]
    cases = [(np.zeros(s, np.float32),) for s in shapes]

    def want(x: np.ndarray) -> tuple[np.ndarray, ...]:
        a, _, c = x.shape
        return (
            np.array(x.shape, np.int64),
            np.array(x.size, np.int64),
            np.array([[a, c], [c, a]], np.int32),
        )

    check(SHAPE_AND_SIZE, device, cases, want)


@pytest.mark.parametrize(
    ("dtype", "values"),
    [("i1", ["true", "false"]), ("i8", ["-3", "7"]), ("i16", ["-32768", "2"]),
     ("bf16", ["1.5", "-2.0"]), ("f16", ["0.5", "2.0"]), ("f64", ["0.1", "3.0"])],
)  # fmt: skip
def test_from_elements_of_every_element_type(dtype: str, values: list[str]) -> None:
    typed = (lambda v: v) if dtype == "i1" else (lambda v: f"{v} : {dtype}")
    lines = [f"  %v{i} = arith.constant {typed(v)}" for i, v in enumerate(values)]
    src = f"""
func.func @f() -> tensor<2x{dtype}> {{
{chr(10).join(lines)}
  %t = tensor.from_elements %v0, %v1 : tensor<2x{dtype}>
  func.return %t : tensor<2x{dtype}>
}}"""
    want = dvm.interpret(src)
    parsed = [v == "true" if dtype == "i1" else float(v) for v in values]
    np.testing.assert_array_equal(want.astype(np.float64), np.array(parsed, np.float64))
    for device in PRESETS:
        got = dvm.compile(src, device=device)()
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


CAST = """
func.func @f(%x: tensor<?x?xf32>, %y: tensor<4x?xf32>) -> (tensor<4x?xf32>, tensor<?x?xf32>) {
  %xc = tensor.cast %x : tensor<?x?xf32> to tensor<4x?xf32>
  %e = tensor.exp %xc : tensor<4x?xf32>
  %back = tensor.cast %e : tensor<4x?xf32> to tensor<?x?xf32>
  %s = tensor.add %e, %y : (tensor<4x?xf32>, tensor<4x?xf32>) -> tensor<4x?xf32>
  func.return %s, %back : tensor<4x?xf32>, tensor<?x?xf32>
}
"""


@pytest.mark.parametrize("device", PRESETS)
def test_a_cast_refines_a_dim_and_fuses(device: str) -> None:
    module = dvm.pipeline.run(dvm.parse(CAST), "symbolic-shapes,fuse")
    assert str(module).count("tensor.fusion") == 1
    cases = []
    for i, n in enumerate((0, 1, 13, 3001)):
        rng = np.random.default_rng(i)
        x, y = (rng.standard_normal((4, n)).astype(np.float32) for _ in range(2))
        cases.append((x, y))

    def close(got: np.ndarray, want: np.ndarray, message: str) -> None:
        np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=message)

    check(CAST, device, cases, lambda x, y: (np.exp(x) + y, np.exp(x)), close)


def test_a_cast_the_shapes_contradict_is_an_error_naming_the_op() -> None:
    x, y = np.zeros((3, 5), np.float32), np.zeros((4, 5), np.float32)
    with pytest.raises(
        ExecutionError, match=r"%xc = tensor.cast: dim 0 is 3, but tensor<4x\?xf32>"
    ):
        dvm.interpret(CAST, x, y)
    with pytest.raises(CallError, match=r"%xc = tensor.cast needs x_0 == 4.*is 3"):
        dvm.compile(CAST)(x, y)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("%t = tensor.cast %x : tensor<4x?xf32> to tensor<5x?xf32>", "changes static dim 4 to 5"),
        ("%t = tensor.cast %x : tensor<4x?xf32> to tensor<4x?xf16>", "changes the element type"),
        ("%t = tensor.cast %x : tensor<4x?xf32> to tensor<?xf32>", "changes the rank"),
        ("%t = tensor.from_elements : tensor<?xf32>", "must have a static shape"),
        ("%t = tensor.from_elements %i : tensor<2xindex>", "expected any supported"),
    ],
)
def test_shape_op_verifiers_name_the_op_and_types(line: str, message: str) -> None:
    op = line.split(" = ")[1].split(" ")[0]
    src = f"""
func.func @f(%x: tensor<4x?xf32>, %i: index) -> tensor<4x?xf32> {{
  {line}
  func.return %x : tensor<4x?xf32>
}}"""
    with pytest.raises((VerifyException, DvmError), match=f"'{op}' .*{message}"):
        dvm.parse(src)
