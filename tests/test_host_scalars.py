"""Scalars on the host: `arith` on `index`, integer and float scalars, comparisons
that steer `scf.if` and `scf.while`, and scalars as loop bounds, compiled by
`dvm.compile` and compared with `dvm.interpret` bit for bit (value and type).

Each program computes every op of a family at once from its arguments, so one
compile covers the family and each call one pair of operand values.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np
import pytest

import dvm
from dvm.errors import CallError, DvmError, ExecutionError

pytestmark = pytest.mark.filterwarnings("error")

INTEGER_TYPES: dict[str, Any] = {
    "i1": np.bool_,
    "i8": np.int8,
    "i16": np.int16,
    "i32": np.int32,
    "i64": np.int64,
    "index": int,
}
FLOAT_TYPES: dict[str, Any] = {"f16": np.float16, "f32": np.float32, "f64": np.float64}

INTEGER_BINARY = (
    "addi", "subi", "muli", "divsi", "divui", "remsi", "remui", "floordivsi", "ceildivsi",
    "ceildivui", "maxsi", "minsi", "maxui", "minui", "andi", "ori", "xori", "shli", "shrsi",
    "shrui",
)  # fmt: skip
CMPI = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")
FLOAT_BINARY = ("addf", "subf", "mulf", "divf", "maximumf", "minimumf", "maxnumf", "minnumf")
CMPF = (
    "false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord",
    "ueq", "ugt", "uge", "ult", "ule", "une", "uno", "true",
)  # fmt: skip


def integer_values(name: str) -> list[Any]:
    """Values of an integer type that reach its corners: the extremes, 0, +-1, and
    shift amounts at and past the width."""
    if name == "i1":
        return [np.False_, np.True_]
    bits = 64 if name == "index" else int(name[1:])
    low, high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    values = sorted({low, low + 1, -7, -1, 0, 1, 2, 7, bits - 1, bits, high})
    return values if name == "index" else [INTEGER_TYPES[name](v) for v in values]


def float_values(name: str) -> list[Any]:
    dtype = FLOAT_TYPES[name]
    info = np.finfo(dtype)
    values = [0.0, -0.0, 1.0, -2.5, 0.1, info.max, -info.max, info.smallest_subnormal]
    return [dtype(v) for v in [*values, np.inf, -np.inf, np.nan]]


Lines = list[tuple[str, str | tuple[str, ...]]]


def program(arguments: str, lines: Lines) -> str:
    """A function of `arguments` returning every result of each (op text, result type or
    types of an op with several results)."""
    body, names, types = [], [], []
    for text, result_types in lines:
        result_types = (result_types,) if isinstance(result_types, str) else result_types
        results = [f"%r{len(names) + i}" for i in range(len(result_types))]
        body.append(f"  {', '.join(results)} = {text}")
        names += results
        types += result_types
    signature = ", ".join(types)
    return (
        f"func.func @f({arguments}) -> ({signature}) {{\n"
        + "\n".join(body)
        + f"\n  func.return {', '.join(names)} : {signature}\n}}"
    )


def assert_same_values(got: Sequence[Any], want: Sequence[Any], what: str) -> None:
    assert len(got) == len(want), what
    for k, (g, w) in enumerate(zip(got, want, strict=True)):
        assert type(g) is type(w), f"{what}, result {k}: {type(g)} vs {type(w)}"
        if isinstance(w, int):
            assert g == w, f"{what}, result {k}: {g} vs {w}"
        else:  # the same bits: NaN, -0.0 and the rounding of the type included
            assert np.asarray(g).tobytes() == np.asarray(w).tobytes(), f"{what}, result {k}"


def check_calls(source: str, calls: Sequence[Sequence[Any]]) -> None:
    module = dvm.parse(source)
    compiled = dvm.compile(module)
    for args in calls:
        got, want = compiled(*args), dvm.interpret(module, *args)
        got, want = (v if isinstance(v, tuple) else (v,) for v in (got, want))
        assert_same_values(got, want, f"arguments {args}")


@pytest.mark.parametrize("name", INTEGER_TYPES)
def test_integer_arith_and_comparisons(name: str) -> None:
    lines: Lines = [(f"arith.{op} %a, %b : {name}", name) for op in INTEGER_BINARY]
    lines += [(f"arith.cmpi {p}, %a, %b : {name}", "i1") for p in CMPI]
    lines += [(f"arith.select %c, %a, %b : {name}", name)]
    lines += [(f"arith.{op}_extended %a, %b : {name}", (name, name)) for op in ("mulsi", "mului")]
    if name != "index":  # (upstream's addui_extended takes no index)
        lines += [(f"arith.addui_extended %a, %b : {name}, i1", (name, "i1"))]
    source = program(f"%a: {name}, %b: {name}, %c: i1", lines)
    values = integer_values(name)
    flags = [np.True_, np.False_]
    calls = [(a, b, flags[i % 2]) for i, (a, b) in enumerate(itertools.product(values, values))]
    check_calls(source, calls)


@pytest.mark.parametrize("name", FLOAT_TYPES)
def test_float_arith_and_comparisons(name: str) -> None:
    lines: Lines = [(f"arith.{op} %a, %b : {name}", name) for op in FLOAT_BINARY]
    lines += [(f"arith.negf %a : {name}", name)]
    lines += [(f"arith.cmpf {p}, %a, %b : {name}", "i1") for p in CMPF]
    lines += [(f"arith.select %c, %a, %b : {name}", name)]
    source = program(f"%a: {name}, %b: {name}, %c: i1", lines)
    values = float_values(name)
    flags = [np.True_, np.False_]
    calls = [(a, b, flags[i % 2]) for i, (a, b) in enumerate(itertools.product(values, values))]
    check_calls(source, calls)


def test_index_arithmetic_is_int64_arithmetic() -> None:
    """`index` computes the frequent ops on Python ints (numerics.INDEX_ARITHMETIC):
    they must give what the numpy path gives on i64."""
    ops = ("addi", "subi", "muli", "divsi", "remsi", "floordivsi", "ceildivsi", "maxsi", "minsi")
    lines: Lines = [(f"arith.{op} %a, %b : index", "index") for op in ops]
    lines += [(f"arith.{op} %x, %y : i64", "i64") for op in ops]
    module = dvm.parse(program("%a: index, %b: index, %x: i64, %y: i64", lines))
    values = integer_values("index")
    for a, b in itertools.product(values, values):
        got = dvm.interpret(module, a, b, np.int64(a), np.int64(b))
        assert list(got[: len(ops)]) == [int(v) for v in got[len(ops) :]], (a, b)


def casts_from(name: str) -> Lines:
    """Every cast upstream allows from scalar type `name`, as (op text, result type)."""
    widths = {"i1": 1, "i8": 8, "i16": 16, "i32": 32, "i64": 64, "f16": 16, "f32": 32, "f64": 64}
    ints = [n for n in INTEGER_TYPES if n != "index"]
    if name == "index":
        return [(f"arith.index_cast %a : index to {n}", n) for n in ints]
    lines: Lines = []
    if name in FLOAT_TYPES:
        for n in ints:
            lines += [(f"arith.{op} %a : {name} to {n}", n) for op in ("fptosi", "fptoui")]
        for n in FLOAT_TYPES:
            op = (
                "extf" if widths[n] > widths[name] else "truncf" if widths[n] < widths[name] else ""
            )
            lines += [(f"arith.{op} %a : {name} to {n}", n)] if op else []
        same_width = "i" + name[1:]
    else:
        for n in ints:
            if widths[n] > widths[name]:
                lines += [(f"arith.{op} %a : {name} to {n}", n) for op in ("extsi", "extui")]
            elif widths[n] < widths[name]:
                lines += [(f"arith.trunci %a : {name} to {n}", n)]
        lines += [(f"arith.index_cast %a : {name} to index", "index")]
        for n in FLOAT_TYPES:
            lines += [(f"arith.{op} %a : {name} to {n}", n) for op in ("sitofp", "uitofp")]
        same_width = "f" + name[1:]
    if same_width in widths and widths[same_width] == widths[name]:
        lines += [(f"arith.bitcast %a : {name} to {same_width}", same_width)]
    return lines


@pytest.mark.parametrize("name", [*INTEGER_TYPES, *FLOAT_TYPES])
def test_casts(name: str) -> None:
    source = program(f"%a: {name}", casts_from(name))
    values = float_values(name) if name in FLOAT_TYPES else integer_values(name)
    check_calls(source, [(v,) for v in values])


def test_the_programs_above_cover_every_arith_op() -> None:
    from xdsl.dialects.arith import Arith

    written = {*INTEGER_BINARY, *FLOAT_BINARY, "negf", "cmpi", "cmpf", "select"}
    written |= {"mulsi_extended", "mului_extended", "addui_extended"}
    for name in [*INTEGER_TYPES, *FLOAT_TYPES]:
        written |= {text.split()[0].removeprefix("arith.") for text, _ in casts_from(name)}
    assert {op.name.removeprefix("arith.") for op in Arith.operations} - written == {"constant"}


# --------------------------------------------------------------------------
# Scalars made on the host as dims: bound where they are made, checked there
# --------------------------------------------------------------------------

DIM_FROM_A_READ_VALUE = """func.func @f(%x: tensor<?x4xf32>, %k: tensor<i32>) -> tensor<?x?x4xf32> {
  %kv = tensor.extract %k[] : tensor<i32>
  %n = arith.index_cast %kv : i32 to index
  %b = tensor.broadcast_to %x to [%n, %n, 4] : tensor<?x4xf32> -> tensor<?x?x4xf32>
  %e = tensor.exp %b : tensor<?x?x4xf32>
  func.return %e : tensor<?x?x4xf32>
}"""

DIM_FROM_THE_INDUCTION_VARIABLE = """func.func @f(%x: tensor<?x4xf32>, %n: index)
    -> tensor<?x4xf32> {
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c1 to %n step %c1 iter_args(%acc = %x) -> (tensor<?x4xf32>) {
    %y = tensor.broadcast_to %acc to [%i, 4] : tensor<?x4xf32> -> tensor<?x4xf32>
    %s = tensor.reduce_sum %y {axes = [0], keepdims = true} : tensor<?x4xf32> -> tensor<1x4xf32>
    %u = tensor.add %acc, %s : (tensor<?x4xf32>, tensor<1x4xf32>) -> tensor<?x4xf32>
    scf.yield %u : tensor<?x4xf32>
  }
  func.return %r : tensor<?x4xf32>
}"""

DIM_CARRIED_BY_A_LOOP = """func.func @f(%x: tensor<1x4xf32>, %n: index)
    -> (tensor<1x4xf32>, index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r, %m = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x, %rows = %c1)
      -> (tensor<1x4xf32>, index) {
    %z = tensor.broadcast_to %acc to [%rows, 4] : tensor<1x4xf32> -> tensor<?x4xf32>
    %t = tensor.reduce_sum %z {axes = [0], keepdims = true} : tensor<?x4xf32> -> tensor<1x4xf32>
    %more = arith.addi %rows, %c1 : index
    scf.yield %t, %more : tensor<1x4xf32>, index
  }
  func.return %r, %m : tensor<1x4xf32>, index
}"""

DIM_FROM_A_BRANCH = """func.func @f(%x: tensor<1x4xf32>, %a: index, %p: tensor<i1>)
    -> tensor<?x4xf32> {
  %c = tensor.extract %p[] : tensor<i1>
  %n, %y = scf.if %c -> (index, tensor<1x4xf32>) {
    scf.yield %a, %x : index, tensor<1x4xf32>
  } else {
    %e = tensor.exp %x : tensor<1x4xf32>
    %c2 = arith.constant 2 : index
    %twice = arith.muli %a, %c2 : index
    scf.yield %twice, %e : index, tensor<1x4xf32>
  }
  %b = tensor.broadcast_to %y to [%n, 4] : tensor<1x4xf32> -> tensor<?x4xf32>
  %t = tensor.tanh %b : tensor<?x4xf32>
  func.return %t : tensor<?x4xf32>
}"""

DIM_FROM_AN_INDEX_ARGUMENT = """func.func @f(%x: tensor<?x4xf32>, %n: index) -> tensor<?x4xf32> {
  %y = tensor.broadcast_to %x to [%n, 4] : tensor<?x4xf32> -> tensor<?x4xf32>
  %e = tensor.exp %y : tensor<?x4xf32>
  func.return %e : tensor<?x4xf32>
}"""


def outcome(run: Any, args: Sequence[Any]) -> tuple[Any, ...] | type[Exception]:
    """What a call gives: its results, or that it failed as it should (an ExecutionError,
    or a CallError for an index argument that does not fit)."""
    try:
        results = run(*args)
    except (ExecutionError, CallError):
        return ExecutionError
    return results if isinstance(results, tuple) else (results,)


@pytest.mark.parametrize(
    ("source", "calls"),
    [
        (DIM_FROM_A_READ_VALUE, [((r, 4), np.int32(k)) for r in (1, 2) for k in (0, 1, 2, 3)]),
        (DIM_FROM_THE_INDUCTION_VARIABLE, [((r, 4), n) for r in (1, 2) for n in (0, 1, 2, 4)]),
        (DIM_CARRIED_BY_A_LOOP, [((1, 4), n) for n in (0, 1, 3)]),
        (DIM_FROM_A_BRANCH, [((1, 4), a, np.bool_(c)) for a in (0, 3) for c in (True, False)]),
        (DIM_FROM_AN_INDEX_ARGUMENT, [((r, 4), n) for r in (1, 3) for n in (0, 1, 3)]),
    ],
    ids=["read-value", "induction-variable", "loop-carried", "branch", "index-argument"],
)
def test_dims_made_on_the_host(source: str, calls: list[tuple[Any, ...]]) -> None:
    """Each call gives what the interpreter gives: the same results, or an error where
    the sizes do not broadcast (never a wrong answer, nor an unbound symbol)."""
    module = dvm.parse(source)
    compiled = dvm.compile(module)
    rng = np.random.default_rng(0)
    for shape, *scalars in calls:
        args = [rng.standard_normal(shape).astype(np.float32), *scalars]
        want = outcome(partial(dvm.interpret, module), args)
        got = outcome(compiled, args)
        if want is ExecutionError or got is ExecutionError:
            assert got is want, f"arguments {shape} {scalars}: {got} vs {want}"
            continue
        assert isinstance(got, tuple) and isinstance(want, tuple)
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-6, err_msg=f"{shape} {scalars}")
            assert np.shape(g) == np.shape(w)


# --------------------------------------------------------------------------
# Index operands out of range: the same ExecutionError compiled and interpreted
# --------------------------------------------------------------------------

INDEX_OPERANDS = """func.func @f(%x: tensor<?x3xf32>, %i: index, %j: index, %axis: index,
    %step: index) -> (f32, index, tensor<?x3xf32>) {
  %v = tensor.extract %x[%i, %j] : tensor<?x3xf32>
  %d = tensor.dim %x, %axis : tensor<?x3xf32>
  %c0 = arith.constant 0 : index
  %r = scf.for %k = %c0 to %d step %step iter_args(%a = %x) -> (tensor<?x3xf32>) {
    %e = tensor.exp %a : tensor<?x3xf32>
    scf.yield %e : tensor<?x3xf32>
  }
  func.return %v, %d, %r : f32, index, tensor<?x3xf32>
}"""


@pytest.mark.parametrize(
    ("rows", "i", "j", "axis", "step", "message"),
    [
        (2, -1, 0, 0, 1, "%v = tensor.extract: index -1 is out of range for axis 0 of size 2"),
        (2, 2, 0, 0, 1, "%v = tensor.extract: index 2 is out of range for axis 0 of size 2"),
        (2, 1, 3, 0, 1, "%v = tensor.extract: index 3 is out of range for axis 1 of size 3"),
        (2, 0, -4, 0, 1, "%v = tensor.extract: index -4 is out of range for axis 1 of size 3"),
        (0, 0, 0, 0, 1, "%v = tensor.extract: index 0 is out of range for axis 0 of size 0"),
        (2, 0, 0, 2, 1, "%d = tensor.dim: index 2 is out of range for rank 2"),
        (2, 0, 0, -1, 1, "%d = tensor.dim: index -1 is out of range for rank 2"),
        (2, 0, 0, 0, 0, "%r = scf.for: step must be positive, got 0"),
        (2, 0, 0, 1, -2, "%r = scf.for: step must be positive, got -2"),
    ],
)
def test_index_operands_out_of_range(
    rows: int, i: int, j: int, axis: int, step: int, message: str
) -> None:
    """The message names the op (where it is in the source), the index and the size."""
    module = dvm.parse(INDEX_OPERANDS, "prog.mlir")
    x = np.arange(3 * rows, dtype=np.float32).reshape(rows, 3)
    errors = []
    for run in (dvm.compile(module), partial(dvm.interpret, module)):
        with pytest.raises(ExecutionError, match=message) as caught:
            run(x, i, j, axis, step)
        errors.append(str(caught.value))
    assert errors[0] == errors[1]
    assert errors[0].startswith("prog.mlir:")


def test_index_operands_in_range() -> None:
    module = dvm.parse(INDEX_OPERANDS)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    for args in ((1, 2, 0, 1), (0, 0, 1, 2), (1, 0, 0, 5)):
        got, want = dvm.compile(module)(x, *args), dvm.interpret(module, x, *args)
        assert got[:2] == want[:2] and type(got[0]) is np.float32
        np.testing.assert_array_equal(got[2], want[2])


NEGATIVE_DIMS = """func.func @f(%x: tensor<1x4xf32>, %v: tensor<?xf32>, %n: index, %a: index)
    -> (tensor<1x4xf32>, tensor<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %size = tensor.dim %v, %c0 : tensor<?xf32>
  %b = arith.divsi %size, %a : index
  %y = tensor.broadcast_to %x to [%n, 4] : tensor<1x4xf32> -> tensor<?x4xf32>
  %s = tensor.reduce_sum %y {axes = [0], keepdims = true} : tensor<?x4xf32> -> tensor<1x4xf32>
  %e = tensor.expand_shape %v [[0, 1]] output_shape [%a, %b] : tensor<?xf32> into tensor<?x?xf32>
  %t = tensor.tanh %e : tensor<?x?xf32>
  func.return %s, %t : tensor<1x4xf32>, tensor<?x?xf32>
}"""


@pytest.mark.parametrize(
    ("n", "a", "message"),
    [
        (-1, 2, r"%y = tensor.broadcast_to: got a negative dim in shape \[-1, 4\]"),
        (3, -2, r"%e = tensor.expand_shape: got a negative dim in shape \[-2, -3\]"),
    ],
)
def test_negative_dims_from_index_values(n: int, a: int, message: str) -> None:
    """A dim an index value gives (here one computed on the host) may not be negative,
    even where the sizes still multiply (-2 x -3 is 6); the kernel's own launch checks."""
    module = dvm.parse(NEGATIVE_DIMS, "prog.mlir")
    args = (np.ones((1, 4), np.float32), np.arange(6, dtype=np.float32), n, a)
    errors = []
    for run in (dvm.compile(module), partial(dvm.interpret, module)):
        with pytest.raises(ExecutionError, match=message) as caught:
            run(*args)
        errors.append(str(caught.value))
    assert errors[0] == errors[1]
    s, t = dvm.compile(module)(args[0], args[1], 3, 2)
    assert s.tolist() == [[3.0] * 4] and t.shape == (2, 3)


def test_an_op_the_compiler_cannot_run_is_named_at_its_place() -> None:
    source = """func.func @g(%a: index) -> index {
  func.return %a : index
}
func.func @main(%n: index) -> index {
  %y = func.call @g(%n) : (index) -> index
  func.return %y : index
}"""
    with pytest.raises(DvmError, match=r"^prog.mlir:5:3: %y = func.call: dvm.compile does not"):
        dvm.compile(dvm.parse(source, "prog.mlir"), entry="main")
