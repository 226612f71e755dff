"""A concat fused with the ops that compute its inputs, at every level.

Each input's producers run in the concat's kernel and store into its part of the
result (several stores into one output). Every program is checked against numpy
in the interpreter, after each pass level and compiled, on both device presets,
on shapes with 0, 1, primes and large dims, and its kernel count after `fuse`.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_elementwise import NUMPY
from test_ops_concat import DTYPES, values
from test_ops_slices import PRESETS, check, levels, lowered

import dvm
from dvm.errors import ExecutionError


def kernels(src: str) -> int:
    return str(lowered(src, "symbolic-shapes,fuse")).count("tensor.fusion")


def seeded(shape: tuple[int, ...], seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


PRODUCED = """
func.func @f(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %c: tensor<?x1xf32>) -> tensor<?x?xf32> {
  %e = tensor.add %a, %c : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
  %n = tensor.neg %b : tensor<?x?xf32>
  %m = tensor.mul %n, %n : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %r = tensor.concat dim(1) %e, %m, %b : (tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>)
      -> tensor<?x?xf32>
  func.return %r : tensor<?x?xf32>
}
"""


@pytest.mark.parametrize("device", PRESETS)
def test_each_input_computed_in_the_concat_kernel(device: str) -> None:
    """An input with producers, one with a broadcast, one read as it is."""
    assert kernels(PRODUCED) == 1
    cases = []
    for seed, (rows, left, right) in enumerate(
        [(0, 3, 2), (1, 1, 1), (7, 0, 13), (7, 13, 0), (97, 301, 5), (2, 3001, 1499)]
    ):
        a, b, c = seeded((rows, left), seed), seeded((rows, right), seed + 1), seeded((rows, 1), 9)
        cases.append((a, b, c))
    check(PRODUCED, device, cases, lambda a, b, c: np.concatenate([a + c, b * b, b], axis=1))


NARROWED = """
func.func @f(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xi1> {
  %r = tensor.concat dim(1) %a, %b : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %m = tensor.convert %r : tensor<?x?xf32> -> tensor<?x?xi1>
  func.return %m : tensor<?x?xi1>
}
"""


@pytest.mark.parametrize("device", PRESETS)
def test_a_narrower_result_counts_the_tiles_it_is_made_from(device: str) -> None:
    """Each piece converts its input, loaded as f32, to i1: tiles are sized by both (5
    bytes an element), not by the result alone, whose tiles would not fit the local
    memory where an input has 300,000 elements or more."""
    cases = [(seeded((2, n), n) > 0, seeded((3, n), n + 1) > 0) for n in (7, 300_007)]
    cases = [(a.astype(np.float32), b[:2].astype(np.float32)) for a, b in cases]
    check(NARROWED, device, cases, lambda a, b: np.concatenate([a, b], axis=1) != 0)


def rank_three(axis: int) -> str:
    t = "tensor<?x?x?xf32>"
    return f"""
func.func @f(%a: {t}, %b: {t}) -> {t} {{
  %x = tensor.abs %a : {t}
  %y = tensor.sub %b, %x : ({t}, {t}) -> {t}
  %r = tensor.concat dim({axis}) %y, %b, %x : ({t}, {t}, {t}) -> {t}
  func.return %r : {t}
}}
"""


@pytest.mark.parametrize("device", PRESETS)
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_pieces_along_every_axis_of_rank_three(device: str, axis: int) -> None:
    """Inputs that share producers, along the outer, middle and inner axis."""
    src = rank_three(axis)
    assert kernels(src) == 1
    cases = [
        (seeded(shape, 1), seeded(shape, 2))
        for shape in [(2, 3, 5), (1, 1, 1), (0, 3, 7), (3, 0, 2), (5, 2, 0), (13, 1, 3001)]
    ]
    want = lambda a, b: np.concatenate([b - abs(a), b, abs(a)], axis=axis)  # noqa: E731
    check(src, device, cases, want)


@pytest.mark.parametrize("element", DTYPES)
def test_every_element_type(element: str) -> None:
    """A max (on booleans: a logical or) computed in the concat's kernel."""
    t = f"tensor<?x?x{element}>"
    op = "tensor.logical_or" if element == "i1" else "tensor.max"
    src = f"""
func.func @f(%a: {t}, %b: {t}) -> {t} {{
  %m = {op} %a, %b : ({t}, {t}) -> {t}
  %r = tensor.concat dim(0) %m, %a : ({t}, {t}) -> {t}
  func.return %r : {t}
}}
"""
    assert kernels(src) == 1
    cases = [
        (values((rows, cols), element, seed), values((rows, cols), element, seed + 5))
        for seed, (rows, cols) in enumerate([(0, 0), (1, 1), (3, 7), (0, 5), (2, 0)])
    ]

    def want(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.concatenate([np.maximum(a, b), a], axis=0).astype(NUMPY[element])

    check(src, "host", cases, want)


SLICES = """
func.func @f(%x: tensor<?x?xf32>, %h: index) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x?xf32>
  %x1 = tensor.extract_slice %x[0, 0] [%n, %h] [1, 1] : tensor<?x?xf32> to tensor<?x?xf32>
  %x2 = tensor.extract_slice %x[0, %h] [%n, %h] [1, 1] : tensor<?x?xf32> to tensor<?x?xf32>
  %neg = tensor.neg %x2 : tensor<?x?xf32>
  %r = tensor.concat dim(1) %neg, %x1 : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %r : tensor<?x?xf32>
}
"""


@pytest.mark.parametrize("device", PRESETS)
def test_rotate_half_is_one_kernel(device: str) -> None:
    """Slices of an input are views the pieces read through."""
    assert kernels(SLICES) == 1
    cases = [(seeded((rows, 2 * h), rows), h) for rows, h in [(0, 2), (1, 1), (3, 0), (7, 13)]]
    cases.append((seeded((3, 2 * 1499), 3), 1499))

    def want(x: np.ndarray, h: int) -> np.ndarray:
        return np.concatenate([-x[:, h : 2 * h], x[:, :h]], axis=1)

    check(SLICES, device, cases, want)


ROTARY_TABLES = """
func.func @f(%x: tensor<?x?xf32>, %cos: tensor<?x?xf32>, %sin: tensor<?x?xf32>)
    -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %n = tensor.dim %x, %c0 : tensor<?x?xf32>
  %d = tensor.dim %x, %c1 : tensor<?x?xf32>
  %h = arith.divui %d, %c2 : index
  %rest = arith.subi %d, %h : index
  %lo = tensor.extract_slice %x[0, 0] [%n, %h] [1, 1] : tensor<?x?xf32> to tensor<?x?xf32>
  %hi = tensor.extract_slice %x[0, %h] [%n, %rest] [1, 1] : tensor<?x?xf32> to tensor<?x?xf32>
  %neg = tensor.neg %hi : tensor<?x?xf32>
  %r = tensor.concat dim(1) %neg, %lo : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %a = tensor.mul %x, %cos : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %b = tensor.mul %r, %sin : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %y = tensor.add %a, %b : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %y : tensor<?x?xf32>
}
"""


def rotary(x: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
    h = x.shape[1] // 2
    return x * cos + np.concatenate([-x[:, h:], x[:, :h]], axis=1) * sin


@pytest.mark.parametrize("device", PRESETS)
def test_rotary_with_tables_and_a_computed_half_is_one_kernel(device: str) -> None:
    """The half width computed on the host (`d / 2`) sizes the pieces, and `x * cos`,
    read by nothing else, is cut into them too."""
    assert kernels(ROTARY_TABLES) == 1
    shapes = [(0, 4), (1, 1), (3, 7), (5, 8), (2, 0), (13, 3001)]
    cases = [tuple(seeded(shape, seed + k) for k in range(3)) for seed, shape in enumerate(shapes)]
    check(ROTARY_TABLES, device, cases, rotary)


ROTARY_SIZED_BY_ARGUMENTS = """
func.func @f(%flat: tensor<?xf32>, %angle: tensor<?x?xf32>, %b: index, %t: index, %d: index,
             %h: index) -> tensor<?x?x?xf32> {
  %x = tensor.expand_shape %flat [[0, 1, 2]] output_shape [%b, %t, %d]
      : tensor<?xf32> into tensor<?x?x?xf32>
  %angles = tensor.concat dim(1) %angle, %angle
      : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %cos = tensor.cos %angles : tensor<?x?xf32>
  %a = tensor.mul %x, %cos : (tensor<?x?x?xf32>, tensor<?x?xf32>) -> tensor<?x?x?xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %x, %c0 : tensor<?x?x?xf32>
  %m = tensor.dim %x, %c1 : tensor<?x?x?xf32>
  %x1 = tensor.extract_slice %x[0, 0, 0] [%n, %m, %h] [1, 1, 1]
      : tensor<?x?x?xf32> to tensor<?x?x?xf32>
  %x2 = tensor.extract_slice %x[0, 0, %h] [%n, %m, %h] [1, 1, 1]
      : tensor<?x?x?xf32> to tensor<?x?x?xf32>
  %neg = tensor.neg %x2 : tensor<?x?x?xf32>
  %rotated = tensor.concat dim(2) %neg, %x1
      : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %sin = tensor.sin %angles : tensor<?x?xf32>
  %r = tensor.mul %rotated, %sin : (tensor<?x?x?xf32>, tensor<?x?xf32>) -> tensor<?x?x?xf32>
  %out = tensor.add %a, %r : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  func.return %out : tensor<?x?x?xf32>
}
"""


@pytest.mark.parametrize("device", PRESETS)
def test_rotary_sized_by_index_arguments(device: str) -> None:
    """The sizes of the pieces cut from `%x` are index arguments (as the torch importer
    writes a view), read before the program's own `tensor.dim`s of `%x`: each slice
    of `%x` is sized by the arguments, not by a dim defined after it. `2*h == 2*w`
    (the rotated halves against the angles) makes `h` and `w` one size, so the
    rotated concat splits too; the dims of `%x` are read from the arguments
    (`%b`, `%t`), so `%x` is not needed outside a kernel: one kernel."""

    def want(flat: np.ndarray, angle: np.ndarray, b: int, t: int, d: int, h: int) -> np.ndarray:
        x = flat.reshape(b, t, d)
        angles = np.concatenate([angle, angle], axis=1)
        rotated = np.concatenate([-x[..., h:], x[..., :h]], axis=2)
        return x * np.cos(angles) + rotated * np.sin(angles)

    assert kernels(ROTARY_SIZED_BY_ARGUMENTS) == 1
    cases = [
        (seeded((b * t * 2 * h,), seed), seeded((t, h), seed + 1), b, t, 2 * h, h)
        for seed, (b, t, h) in enumerate([(2, 5, 8), (1, 1, 1), (3, 7, 0), (0, 4, 2), (2, 13, 32)])
    ]
    check(ROTARY_SIZED_BY_ARGUMENTS, device, cases, want)


BROADCAST_USER = """
func.func @f(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %s: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %e = tensor.exp %a : tensor<?x?xf32>
  %r = tensor.concat dim(1) %e, %b : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %y = tensor.mul %r, %s : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %y : tensor<?x?xf32>
}
"""


@pytest.mark.parametrize("device", PRESETS)
def test_a_user_operand_of_one_column_still_broadcasts(device: str) -> None:
    """The pieces read slices of `%s`; the program keeps the broadcast guard the `mul`
    made, so an `%s` of one column (or one row) re-specializes as numpy broadcasts,
    never a slice out of bounds, and rotary tables of one row do too."""
    program = dvm.compile(BROADCAST_USER, device=device, cache=False)
    a, b = seeded((5, 3), 1), seeded((5, 4), 2)
    for s in (seeded((5, 7), 3), seeded((5, 1), 4), seeded((1, 7), 5), seeded((1, 1), 6)):
        want = np.concatenate([np.exp(a), b], axis=1) * s
        np.testing.assert_allclose(program(a, b, s), want, rtol=1e-6)
        np.testing.assert_allclose(dvm.interpret(dvm.parse(BROADCAST_USER), a, b, s), want)
    tables = dvm.compile(ROTARY_TABLES, device=device, cache=False)
    x = seeded((4, 6), 7)
    for cos, sin in [
        (seeded((1, 6), 8), seeded((4, 1), 9)),
        (seeded((4, 6), 8), seeded((1, 1), 9)),
    ]:
        np.testing.assert_allclose(tables(x, cos, sin), rotary(x, cos, sin), rtol=1e-6)


IOTA = """
func.func @f(%a: tensor<?x?xi64>) -> tensor<?x?xi64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %a, %c0 : tensor<?x?xi64>
  %m = tensor.dim %a, %c1 : tensor<?x?xi64>
  %i = tensor.iota dim(%AXIS) %n, %m : tensor<?x?xi64>
  %s = tensor.add %a, %i : (tensor<?x?xi64>, tensor<?x?xi64>) -> tensor<?x?xi64>
  %r = tensor.concat dim(0) %i, %s, %a : (tensor<?x?xi64>, tensor<?x?xi64>, tensor<?x?xi64>)
      -> tensor<?x?xi64>
  func.return %r : tensor<?x?xi64>
}
"""


@pytest.mark.parametrize("device", PRESETS)
@pytest.mark.parametrize("axis", [0, 1])
def test_an_iota_fuses_into_the_concat(device: str, axis: int) -> None:
    """An iota is a piece's producer like any elementwise op: its tiles follow the
    piece's sizes, not the result's (along the axis or across it): one kernel."""
    src = IOTA.replace("%AXIS", str(axis))
    assert kernels(src) == 1
    rng = np.random.default_rng(axis)
    cases = [
        (rng.integers(0, 50, (n, m)),) for n, m in [(0, 3), (1, 1), (2, 0), (97, 5), (3, 3001)]
    ]

    def want(a: np.ndarray) -> np.ndarray:
        i = np.indices(a.shape)[axis]
        return np.concatenate([i, a + i, a])

    check(src, device, cases, want)


def test_a_producer_used_elsewhere_keeps_the_concat_apart() -> None:
    """A producer whose value is also returned is a kernel output: the concat reads it."""
    src = """
func.func @f(%a: tensor<?xf32>, %b: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %e = tensor.neg %a : tensor<?xf32>
  %r = tensor.concat dim(0) %e, %b : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  func.return %r, %e : tensor<?xf32>, tensor<?xf32>
}
"""
    assert kernels(src) == 2
    a, b = seeded((5,), 0), seeded((3,), 1)
    for name, run in levels(src, "host"):
        got = run(a, b)
        np.testing.assert_array_equal(got[0], np.concatenate([-a, b]), err_msg=name)
        np.testing.assert_array_equal(got[1], -a, err_msg=name)


def test_a_reduced_input_keeps_the_concat_apart() -> None:
    """A piece holds no reduction: its axis would be walked twice."""
    src = """
func.func @f(%a: tensor<?x?xf32>, %b: tensor<?x1xf32>) -> tensor<?x?xf32> {
  %s = tensor.reduce_sum %a {axes = [1], keepdims = true} : tensor<?x?xf32> -> tensor<?x1xf32>
  %r = tensor.concat dim(1) %s, %b : (tensor<?x1xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
  func.return %r : tensor<?x?xf32>
}
"""
    assert kernels(src) == 2
    a, b = seeded((4, 6), 0), seeded((4, 1), 1)
    want = lambda a, b: np.concatenate([a.sum(1, keepdims=True), b], axis=1)  # noqa: E731
    for name, run in levels(src, "host"):
        np.testing.assert_allclose(run(a, b), want(a, b), rtol=1e-5, err_msg=name)


TAKE = """
func.func @f(%table: tensor<?x?xf32>, %ids: tensor<?xi64>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %rows = tensor.take %table, %ids dim(0) : (tensor<?x?xf32>, tensor<?xi64>) -> tensor<?x?xf32>
  %s = tensor.add %rows, %b : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %r = tensor.concat dim(AXIS) %s, %b : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %r : tensor<?x?xf32>
}
"""


@pytest.mark.parametrize("device", PRESETS)
@pytest.mark.parametrize("axis", [0, 1])
def test_a_gather_in_a_piece(device: str, axis: int) -> None:
    """An indexed load is read through its piece's view, its indices checked."""
    src = TAKE.replace("AXIS", str(axis))
    assert kernels(src) == 1
    rng = np.random.default_rng(axis)
    cases = []
    for vocab, n, d in [(1, 0, 3), (1, 1, 1), (5, 7, 0), (11, 13, 97), (3, 2, 3001)]:
        ids = rng.integers(0, vocab, n)
        cases.append((seeded((vocab, d), n), ids, seeded((n, d), d)))

    def want(table: np.ndarray, ids: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.concatenate([table[ids] + b, b], axis=axis)

    check(src, device, cases, want)
    with pytest.raises(ExecutionError, match=r"tensor\.take: index 5 is out of range"):
        dvm.compile(src, device=device)(seeded((5, 2), 0), np.array([0, 5]), seeded((2, 2), 1))


SPLATS = """
func.func @f(%a: tensor<2x?xf32>) -> tensor<2x?xf32> {
  %c = arith.constant dense<2.0> : tensor<2x3xf32>
  %e = tensor.add %a, %c : (tensor<2x?xf32>, tensor<2x3xf32>) -> tensor<2x?xf32>
  %r = tensor.concat dim(1) %c, %e, %e, %c
      : (tensor<2x3xf32>, tensor<2x?xf32>, tensor<2x?xf32>, tensor<2x3xf32>) -> tensor<2x?xf32>
  func.return %r : tensor<2x?xf32>
}
"""


@pytest.mark.parametrize("device", PRESETS)
def test_splat_constants_and_a_repeated_input(device: str) -> None:
    """A constant the concat reads is loaded; one a piece computes with is copied in;
    an input that appears twice is computed in both its pieces."""
    assert kernels(SPLATS) == 1
    c = np.full((2, 3), 2, np.float32)
    cases = [(seeded((2, 3), 0),)]
    check(SPLATS, device, cases, lambda a: np.concatenate([c, a + c, a + c, c], axis=1))


SUNK = """
func.func @f(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %y: tensor<?x?xf32>, %row: tensor<?xf32>,
             %col: tensor<?x1xf32>) -> tensor<?x?xf32> {
  %r = tensor.concat dim(1) %a, %b : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %n = tensor.neg %r : tensor<?x?xf32>
  %m = tensor.mul %n, %y : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %s = tensor.add %m, %row : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  %t = tensor.sub %s, %col : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
  func.return %t : tensor<?x?xf32>
}
"""


@pytest.mark.parametrize("device", PRESETS)
def test_elementwise_users_move_into_the_pieces(device: str) -> None:
    """Each user of the concat is split into pieces: an operand of the concat's shape
    is sliced along the axis (a view), one that broadcasts there is read whole."""
    assert kernels(SUNK) == 1
    cases = []
    for seed, (rows, left, right) in enumerate(
        [(0, 3, 2), (1, 1, 1), (7, 0, 13), (7, 13, 0), (5, 1, 1), (3, 3001, 1499)]
    ):
        cols = left + right
        shapes = [(rows, left), (rows, right), (rows, cols), (cols,), (rows, 1)]
        cases.append(tuple(seeded(shape, seed + i) for i, shape in enumerate(shapes)))

    def want(*xs: np.ndarray) -> np.ndarray:
        a, b, y, row, col = xs
        return -np.concatenate([a, b], axis=1) * y + row - col

    check(SUNK, device, cases, want)


TWO_CONCATS = """
func.func @f(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %c: tensor<?x?xf32>,
             %d: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %p = tensor.concat dim(0) %a, %b : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %c1 = tensor.add %c, CA : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %q = tensor.concat dim(0) %c1, %d : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %s = tensor.max %p, %q : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %z = tensor.convert %s : tensor<?x?xf32> -> tensor<?x?xf64>
  %o = tensor.exp %z : tensor<?x?xf64>
  %r = tensor.convert %o : tensor<?x?xf64> -> tensor<?x?xf32>
  func.return %r : tensor<?x?xf32>
}
"""


@pytest.mark.parametrize("device", PRESETS)
@pytest.mark.parametrize(("ca", "count"), [("%a", 1), ("%c", 2)])
def test_two_concats_with_the_same_parts_or_others(device: str, ca: str, count: int) -> None:
    """Concats of the same parts (sizes equal by proof: `c + a` makes c's rows a's)
    give their inputs to the pieces; with other parts (sizes that only the run
    decides) the second concat is sliced, in memory: a kernel of its own."""
    src = TWO_CONCATS.replace("CA", ca)
    assert kernels(src) == count
    cases = []
    for seed, (rows, top, bottom) in enumerate([(0, 1, 2), (1, 1, 1), (13, 0, 7), (2, 3001, 3)]):
        shapes = [(top, rows), (bottom, rows), (top, rows), (bottom, rows)]
        cases.append(tuple(seeded(shape, seed + i) for i, shape in enumerate(shapes)))

    def want(a: np.ndarray, b: np.ndarray, c: np.ndarray, d: np.ndarray) -> np.ndarray:
        q = np.concatenate([c + (a if ca == "%a" else c), d])
        s = np.maximum(np.concatenate([a, b]), q)
        return np.exp(s.astype(np.float64)).astype(np.float32)

    for name, run in levels(src, device):
        for args in cases:
            np.testing.assert_allclose(run(*args), want(*args), rtol=1e-6, err_msg=name)


UNIT = """
func.func @f(%a: tensor<1x?xf32>, %b: tensor<?x1xf32>, %c: tensor<?x?xf32>, %d: tensor<?x?xf32>)
    -> tensor<?x?xf32> {
  %n = tensor.neg %a : tensor<1x?xf32>
  %rows = tensor.concat dim(0) %n, %c, %n : (tensor<1x?xf32>, tensor<?x?xf32>, tensor<1x?xf32>)
      -> tensor<?x?xf32>
  %e = tensor.abs %b : tensor<?x1xf32>
  %cols = tensor.concat dim(1) %e, %d : (tensor<?x1xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %s = tensor.add %rows, %rows : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %t = tensor.add %cols, %cols : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %r = tensor.concat dim(0) %s, %t : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %r : tensor<?x?xf32>
}
"""


@pytest.mark.parametrize("device", PRESETS)
def test_inputs_of_one_element_along_the_axis(device: str) -> None:
    """A piece whose input has a static 1 along the axis stores one row (or column)
    without a loop; concats of concats nest."""
    cases = []
    for seed, (rows, cols) in enumerate([(0, 1), (1, 1), (2, 0), (7, 13), (3, 3001)]):
        shapes = [(1, cols + 1), (rows + 2, 1), (rows, cols + 1), (rows + 2, cols)]
        cases.append(tuple(seeded(shape, seed + i) for i, shape in enumerate(shapes)))

    def want(a: np.ndarray, b: np.ndarray, c: np.ndarray, d: np.ndarray) -> np.ndarray:
        rows = np.concatenate([-a, c, -a])
        cols = np.concatenate([abs(b), d], axis=1)
        return np.concatenate([rows + rows, cols + cols])

    check(UNIT, device, cases, want)


SCATTERED = """
func.func @f(%a: tensor<?x6xf32>, %z: tensor<?x6xf32>, %ids: tensor<?xi64>, %u: tensor<?x6xf32>)
    -> tensor<?x12xf32> {
  %s = tensor.scatter_add %z, %ids, %u dim(0)
      : (tensor<?x6xf32>, tensor<?xi64>, tensor<?x6xf32>) -> tensor<?x6xf32>
  %r = tensor.concat dim(1) %a, %s : (tensor<?x6xf32>, tensor<?x6xf32>) -> tensor<?x12xf32>
  func.return %r : tensor<?x12xf32>
}
"""


def scattered(a: np.ndarray, z: np.ndarray, ids: np.ndarray, u: np.ndarray) -> np.ndarray:
    added = z.copy()
    np.add.at(added, ids, u)
    return np.concatenate([a, added], axis=1)


@pytest.mark.parametrize("device", PRESETS)
def test_a_scatter_add_input_keeps_its_own_kernel(device: str) -> None:
    """A scatter_add has no form inside a tile, so the concat reading it is not fused
    with it (an embedding bag's sums concatenated, DLRM-style)."""
    cases = []
    for seed, (rows, count) in enumerate([(1, 1), (5, 13), (97, 3)]):
        ids = np.random.default_rng(seed).integers(0, rows, count)
        a, z = seeded((rows, 6), seed), seeded((rows, 6), seed + 1)
        cases.append((a, z, ids, seeded((count, 6), seed + 2)))
    check(SCATTERED, device, cases, scattered)


UNIT_REDUCED = """
func.func @f(%a: tensor<1x?x7xf32>, %b: tensor<?x7xf32>) -> tensor<?x14xf32> {
  %s = tensor.reduce_sum %a {axes = [0], keepdims = true} : tensor<1x?x7xf32> -> tensor<1x?x7xf32>
  %c = tensor.collapse_shape %s [[0, 1], [2]] : tensor<1x?x7xf32> into tensor<?x7xf32>
  %r = tensor.concat dim(1) %b, %c : (tensor<?x7xf32>, tensor<?x7xf32>) -> tensor<?x14xf32>
  func.return %r : tensor<?x14xf32>
}
"""


@pytest.mark.parametrize("device", PRESETS)
def test_an_input_summed_over_a_unit_dim_is_not_fused(device: str) -> None:
    """A sum over a dim of 1 (an autograd sum over a batch of one step, a GRU's
    backward) reduces no axis of the concat's domain, but the piece's loads would
    not map its input's dims: it keeps a kernel of its own."""
    cases = [(seeded((1, n, 7), n), seeded((n, 7), n + 1)) for n in (1, 2, 13)]
    check(UNIT_REDUCED, device, cases, lambda a, b: np.concatenate([b, a.sum(0)], axis=1))


UNIT_ROW = """
func.func @f(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<1x?xf32> {
  %c = tensor.concat dim(1) %a, %b : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<1x?xf32>
  %n = tensor.neg %c : tensor<1x?xf32>
  func.return %n : tensor<1x?xf32>
}
"""


@pytest.mark.parametrize("device", PRESETS)
def test_a_unary_piece_has_its_input_type(device: str) -> None:
    """`neg` of a concat typed `1x?` whose inputs are `?x?`: each piece of the moved
    `neg` is typed as its input (a unary op's result must be), so the IR after each
    pass verifies (found by the random-program campaign)."""
    a, b = seeded((1, 3), 0), seeded((1, 4), 1)
    check(UNIT_ROW, device, [(a, b)], lambda a, b: -np.concatenate([a, b], axis=1))


def many_pieces(count: int) -> str:
    """A concat of `count` inputs, each the negation of a slice of `%a` (an im2col's
    shape: one piece per kernel offset)."""
    t = "tensor<?xf32>"
    lines = [f"func.func @f(%a: {t}) -> {t} {{"]
    for k in range(count):
        lines.append(f"  %n{k} = tensor.neg %a : {t}")
        lines.append(f"  %m{k} = tensor.mul %n{k}, %a : ({t}, {t}) -> {t}")
    inputs = ", ".join(f"%m{k}" for k in range(count))
    lines.append(f"  %r = tensor.concat dim(0) {inputs} : ({', '.join([t] * count)}) -> {t}")
    lines += [f"  func.return %r : {t}", "}"]
    return "\n".join(lines)


def test_each_piece_is_analyzed_once_per_set_of_ops(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fusion grows the concat's group one producer at a time; the pieces the new
    producer does not compute are not analyzed again (`PieceCache`): a piece's domain
    is found once for each set of its ops, not once per op joining the group."""
    from dvm.passes import concat_fusion
    from dvm.passes.domain import Domain, DomainAnalysis

    runs: list[int] = []

    class Counted(DomainAnalysis):
        def run(self) -> Domain:
            runs.append(1)
            return super().run()

    monkeypatch.setattr(concat_fusion, "DomainAnalysis", Counted)
    count = 12
    assert kernels(many_pieces(count)) == 1
    assert len(runs) <= 3 * count  # (without the cache: count * count)
    a = seeded((5,), 0)
    np.testing.assert_array_equal(dvm.compile(many_pieces(3), cache=False)(a), np.tile(-a * a, 3))
