"""Tiles whose innermost extent is tiny (2 to 4) and whose other axes are long.

numpy iterates strided operands in memory order: on a view of every other pair of
floats (the halves of a rotary embedding whose last dim is 4), one ufunc call is a loop
of 2 elements per step of its outer loop, 5-20x slower than a loop along the long axis.
The planned executor runs such a tile's calls on views of arguments as one call per
innermost index (`bind.per_inner_index`); the VM still runs a few instructions per tile,
and the results are numpy's.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import dvm
import dvm.pipeline as pipeline
from dvm.vm.isa import BY_NAME, Cat
from dvm.vm.kernels import STRIDED_WRONG

bind = importlib.import_module("dvm.vm.bind")

T3 = "tensor<?x?x?xf32>"
ROTARY = f"""func.func @rotary(%x: {T3}, %c: tensor<?x?xf32>, %s: tensor<?x?xf32>, %h: index)
    -> {T3} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %x, %c0 : {T3}
  %t = tensor.dim %x, %c1 : {T3}
  %x1 = tensor.extract_slice %x[0, 0, 0] [%b, %t, %h] [1, 1, 1] : {T3} to {T3}
  %x2 = tensor.extract_slice %x[0, 0, %h] [%b, %t, %h] [1, 1, 1] : {T3} to {T3}
  %n = tensor.neg %x2 : {T3}
  %r = tensor.concat dim(2) %n, %x1 : ({T3}, {T3}) -> {T3}
  %a = tensor.mul %x, %c : ({T3}, tensor<?x?xf32>) -> {T3}
  %q = tensor.mul %r, %s : ({T3}, tensor<?x?xf32>) -> {T3}
  %y = tensor.add %a, %q : ({T3}, {T3}) -> {T3}
  func.return %y : {T3}
}}"""
"""x * cos + rotate_half(x) * sin, the halves of the last dim split at %h."""


def rotary_inputs(last: int, rows: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    rng = np.random.default_rng(last)
    x = rng.standard_normal((4, rows, last)).astype(np.float32)
    c, s = (rng.standard_normal((rows, last)).astype(np.float32) for _ in range(2))
    return x, c, s, last // 2


def rotary_numpy(x: np.ndarray, c: np.ndarray, s: np.ndarray, h: int) -> np.ndarray:
    return x * c + np.concatenate((-x[..., h:], x[..., :h]), axis=-1) * s


@pytest.mark.parametrize("last", [2, 4, 6, 8])
def test_a_rotary_on_a_short_last_dim_is_numpys_in_few_instructions(last: int) -> None:
    program = dvm.compile(ROTARY, cache=False)
    lowered = pipeline.run(ROTARY, "dvm-pipeline")
    for rows in (3, 5000):  # (the first call of a shape runs unplanned, the next planned)
        args = rotary_inputs(last, rows)
        want = rotary_numpy(*args)
        for _ in range(2):
            np.testing.assert_allclose(program(*args), want, rtol=1e-6, atol=1e-6)
        got = dvm.interpret(lowered, *args)  # the bytecode, launched by the interpreter
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
        _, stats = program.profile(*args)
        tiles = sum(s.tiles for _, s in stats)
        assert sum(s.total_instructions for _, s in stats) <= 20 * tiles
        assert tiles <= 64, "a tile of a few rows per core, whatever the last dim"


def strided(shape: tuple[int, ...], dtype: np.dtype, rng: np.random.Generator) -> np.ndarray:
    """Values of `shape` as every other innermost pair of a larger array (a view)."""
    wide = (rng.random((*shape[:-1], 2 * shape[-1])) * 8 + 0.5).astype(dtype)
    return wide[..., shape[-1] :]


UFUNCS = [
    op
    for op in BY_NAME.values()
    if op.cat in (Cat.UNARY, Cat.BINARY) and isinstance(op.kernel, np.ufunc)
]


@pytest.mark.parametrize("op", UFUNCS, ids=lambda op: op.name)
def test_one_call_per_inner_index_computes_what_one_call_does(op: object) -> None:
    """Every elementwise ufunc the VM runs per innermost index, from views of every
    other pair into views of every other pair (and from a broadcast operand), gives
    what one call on contiguous copies gives; `STRIDED_WRONG` lists those numpy does
    not, which keep one call."""
    rng = np.random.default_rng(0)
    fn = op.kernel  # type: ignore[attr-defined]
    shape = (3, 40, 2)
    for dtype in map(np.dtype, ("f4", "f8", "f2", "i4", "i8", "u1", "?")):
        arity = 1 if op.cat is Cat.UNARY else 2  # type: ignore[attr-defined]
        args = [strided(shape, dtype, rng) for _ in range(arity)]
        if arity == 2:
            args[1] = args[1][:1, :, :1]  # broadcasts along two axes
        try:
            with np.errstate(all="ignore"):
                want = fn(*[a.copy() for a in args])
        except TypeError:  # no loop for this dtype
            continue
        out = np.zeros((*shape[:-1], 2 * shape[-1]), want.dtype)[..., shape[-1] :]
        run = bind.per_inner_index(fn, shape[-1]) if fn not in STRIDED_WRONG else fn
        with np.errstate(all="ignore"):
            run(*args, out=out)
        np.testing.assert_array_equal(out, want, err_msg=f"{op.name} on {dtype}")  # type: ignore[attr-defined]


def test_the_short_inner_rule() -> None:
    assert bind.short_inner((64, 2)) and bind.short_inner((2, 512, 4))
    assert not bind.short_inner((64, 1)) and not bind.short_inner((64, 5))
    assert (
        not bind.short_inner((8, 4)) and not bind.short_inner((4,)) and not bind.short_inner(None)
    )
