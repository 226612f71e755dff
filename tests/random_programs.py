"""Random well-typed tensor-dialect programs with dynamic dims, for differential tests.

`cases()` is a hypothesis strategy of `Case`s: a program (`.mlir` text in the
syntax of `shared/examples`), one or more assignments of its shape symbols,
a seed for the input values and a device preset. `check_case` compiles the
program once with `dvm.compile`, runs it on every assignment and compares
the VM's results with `dvm.interpret`'s.

Ops: elementwise unary and binary ops (comparisons feeding select), the math
ops (trigonometric and hyperbolic functions, expm1, log1p, isinf, isnan, sign,
remainder, fmod, clamp, integer pow, bitwise ops and shifts), detours through
the narrow and unsigned types (ui8 ... ui64, i16, bf16), 0-d and
splat constants, broadcasts (size-1 dims, lower-rank operands, more leading
dims), reductions over any axes with or without keepdims (reduce_any and
reduce_all of booleans too), argmax and argmin along a static axis, cumsum
(exclusive, reversed), matmul (2-D and batched, transposed), transpose,
expand_shape / collapse_shape (with `tensor.dim` and `arith.muli` for their
sizes), broadcast_to, convert,
`scf.if` on a reduced scalar and `scf.for` carrying tensors, `tensor.iota`
over the shape of a visible value, concat of equal-shaped values and slices
(halves, or every other element), take, take_along_axis and scatter_add along
an axis of static size (their indices in range: `remainder(abs(i), n)` of an
i32 argument), and grouped_matmul over rows of static count (each group size
`remainder(abs(s), rows / groups + 1)`, so they never add up to more).

How programs stay well-typed and verifiable: while generating, every value
carries its shape as a list of `Dim`s. A dim's *size* is a monomial, an
integer times a product of shape symbols (`a`, `b`, ...), so that it is known
exactly what it will be at run time, and its *type* is either that integer
(static) or `?`. Operands are only combined where numpy's rules hold for any
value of the symbols: broadcast dims have equal sizes or one of them is 1,
matmul contractions have equal sizes, reshapes multiply out. Sizes that are
1 behind a `?` (an argument declared `tensor<?xf32>` that is always called
with one element) make the runtime re-specialize. Ops that add dims
(expand_shape, broadcast_to, operands with more leading dims) stop at the
VM's maximum rank, which the compiler refuses to exceed.

How results stay comparable: argument values are small dyadic rationals
(multiples of 1/4), so sums, products, matmuls and reductions of them are
*exact* in floating point, whatever the order: for every value the generator
tracks a bound on its magnitude, its fraction bits and whether it is still
exact. Only exact values feed comparisons, `floor`/`round`/..., and the
predicate of an `scf.if`, so both implementations take the same paths and
the discontinuous ops see the same inputs. Inexact values (after exp, tanh,
mean, ...) are compared with a tolerance that comes from the program
itself: the reference is run a second time with f32 widened to f64, and the
f32 reference's distance from that bounds the rounding noise. Magnitudes
are kept below `BMAX` (log and sqrt take `abs(x) + c`, exp takes only small
values, division is by `abs(y) + 1` or a power of two, pow has a positive
base); infinities and NaN from reductions over empty axes (max, min, mean)
are tracked so that they never meet an inexact value in a product.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
from hypothesis import strategies as st

import dvm
from dvm.vm.isa import MAX_RANK

T = TypeVar("T")
Draw = Callable[[st.SearchStrategy[T]], T]

Size = tuple[int, tuple[str, ...]]
"""A dim's run-time size: coefficient times the product of (sorted) symbols."""
ONE: Size = (1, ())

SYMBOLS = ("a", "b", "c", "d")
FLOATS = ("f32", "f16", "f64")
NUMPY = {
    "f16": np.float16,
    "f32": np.float32,
    "f64": np.float64,
    "i32": np.int32,
    "i1": np.bool_,
}
MANTISSA = {"f16": 11, "f32": 24, "f64": 53}
BF16_MANTISSA = 8
BMAX = 1e6
"""Largest magnitude a float value may reach (far from f32 overflow)."""
ELEMENTS_CAP = 12_000
"""Largest number of elements of any value once the symbols are drawn."""
DIM_POOL = (2, 1, 0, 3, 5, 7, 1, 0, 4, 13, 17, 31, 8, 11, 64, 97)
"""Symbol values (0 and 1 twice as likely); hypothesis shrinks toward the first."""
ARG_BOUND, ARG_FRAC = 2.0, 2
"""Float arguments hold multiples of 1/4 in [-2, 2]."""
INT_ARG_BOUND = 4


def multiply(a: Size, b: Size) -> Size:
    return (a[0] * b[0], tuple(sorted(a[1] + b[1])))


def evaluate(size: Size, dims: dict[str, int]) -> int:
    return size[0] * math.prod(symbol_value(s, dims) for s in size[1])


def symbol_value(symbol: str, dims: dict[str, int]) -> int:
    """A symbol's run-time value; `a+2` (a padded dim's size, see
    `random_programs_mixed`) is `a`'s plus 2, `2*a*b+1` (a padded `2*a*b`, see
    `random_programs_symbolic`) is `2*a*b` plus 1."""
    if symbol in dims:
        return dims[symbol]
    base, _, extra = symbol.partition("+")
    return evaluate(base_size(base), dims) + int(extra or 0)


def base_size(base: str) -> Size:
    """The size a padded symbol's base names: `a`, `2*a*b` (factors joined by `*`)."""
    factors = base.split("*")
    numbers = [int(f) for f in factors if f.isdigit()]
    return (math.prod(numbers), tuple(sorted(f for f in factors if not f.isdigit())))


def symbols_in(symbol: str) -> list[str]:
    """The shape symbols a (maybe padded) symbol is made of."""
    return list(base_size(symbol.partition("+")[0])[1])


@dataclass(frozen=True)
class Dim:
    size: Size
    static: bool
    """Whether the type states the size (only for sizes without symbols)."""

    def __post_init__(self) -> None:
        assert not (self.static and self.size[1]), self

    @property
    def text(self) -> str:
        return str(self.size[0]) if self.static else "?"


def type_text(dims: Sequence[Dim], dtype: str) -> str:
    return "tensor<" + "".join(f"{d.text}x" for d in dims) + dtype + ">"


@dataclass(frozen=True)
class Value:
    """A tensor value of the program and what is known about its elements."""

    name: str
    dims: tuple[Dim, ...]
    dtype: str
    exact: bool = True
    """Equal in every implementation (see the module docstring)."""
    bound: float = 0.0
    """Largest magnitude of a finite element."""
    frac: int = 0
    """Exact floats are multiples of 2**-frac."""
    nonfinite: bool = False
    """May hold inf or NaN (from reductions over empty axes)."""

    @property
    def type(self) -> str:
        return type_text(self.dims, self.dtype)

    @property
    def sizes(self) -> tuple[Size, ...]:
        return tuple(d.size for d in self.dims)

    @property
    def rank(self) -> int:
        return len(self.dims)


def compatible(a: Sequence[Size], b: Sequence[Size]) -> bool:
    """Whether two shapes broadcast for every value of the symbols."""
    return all(x == y or ONE in (x, y) for x, y in zip(reversed(a), reversed(b), strict=False))


def broadcast(shapes: Sequence[Sequence[Size]]) -> list[Size]:
    rank = max((len(s) for s in shapes), default=0)
    out: list[Size] = []
    for axis in range(rank):
        sizes = {s[len(s) - rank + axis] for s in shapes if len(s) - rank + axis >= 0} - {ONE}
        assert len(sizes) <= 1, shapes
        out.append(sizes.pop() if sizes else ONE)
    return out


def exact_float(dtype: str, bound: float, frac: int) -> bool:
    if dtype == "f16" and bound > 60_000:
        return False
    return bound * 2.0**frac < 2.0 ** MANTISSA[dtype]


@dataclass
class Argument:
    name: str
    sizes: tuple[Size, ...]
    dtype: str
    type: str


@dataclass
class RandomProgram:
    text: str
    arguments: list[Argument]
    shapes: list[tuple[Size, ...]]
    """The shape of every value, to bound the sizes a symbol assignment gives."""
    symbols: list[str]

    def arg_shapes(self, dims: dict[str, int]) -> list[tuple[int, ...]]:
        return [tuple(evaluate(s, dims) for s in a.sizes) for a in self.arguments]

    def largest(self, dims: dict[str, int]) -> int:
        return max(
            (math.prod(evaluate(s, dims) for s in shape) for shape in self.shapes), default=1
        )

    def fit(self, dims: dict[str, int]) -> dict[str, int]:
        """`dims` with the largest symbols made smaller until every value is
        at most ELEMENTS_CAP elements."""
        dims = dict(dims)
        while self.largest(dims) > ELEMENTS_CAP and any(v > 1 for v in dims.values()):
            name = max(dims, key=lambda s: dims[s])
            dims[name] //= 2
        return dims


class Generator:
    """Builds one program from hypothesis draws; see the module docstring."""

    KINDS = (
        ["unary"] * 3
        + ["binary"] * 4
        + ["select"] * 2
        + ["reduce"] * 3
        + ["matmul"] * 2
        + ["transpose", "collapse", "expand", "broadcast_to", "convert", "if", "compare", "for"]
        + ["math"] * 3
        + ["clamp", "narrow"]
        + ["any_all"] * 2
        + ["cumsum", "argmax"]
        + ["iota"]
        + ["concat", "slice", "slice"]
        + ["take", "take_along_axis", "scatter_add", "grouped_matmul"]
    )

    MAX_DEPTH = 1
    """How deep `scf.if` and `scf.for` nest."""
    BRANCH_STEPS = (1, 0, 2, 3)
    """How many steps a branch of an `scf.if` takes (drawn, shrinking to the first)."""

    def __init__(self, draw: Draw[Any], symbols: Sequence[str]):
        self.draw = draw
        self.symbols = list(symbols)
        self.args: list[Value] = []
        self.scopes: list[list[Value]] = [[]]
        self.blocks: list[list[str]] = [[]]
        self.count = 0
        self.carriers: dict[str, tuple[Value, int]] = {}
        self.shapes: list[tuple[Size, ...]] = []
        self.depth = 0
        self.results: list[Value] = []
        """Values that should be results of the function (when defined at its top)."""

    # -- drawing -----------------------------------------------------------------------

    def pick(self, options: Sequence[T]) -> T:
        return self.draw(st.sampled_from(options))

    def chance(self, percent: int) -> bool:
        """True with about this probability; shrinks to False."""
        return self.draw(st.integers(0, 99)) >= 100 - percent

    def between(self, lo: int, hi: int) -> int:
        return self.draw(st.integers(lo, hi))

    # -- emitting ----------------------------------------------------------------------

    def fresh(self, prefix: str = "v") -> str:
        self.count += 1
        return f"%{prefix}{self.count}"

    def emit(self, line: str) -> None:
        self.blocks[-1].append(line)

    def visible(self) -> list[Value]:
        return self.args + [v for scope in self.scopes for v in scope]

    def value(
        self,
        line: str,
        name: str,
        dims: Sequence[Dim],
        dtype: str,
        *,
        exact: bool,
        bound: float,
        frac: int = 0,
        nonfinite: bool = False,
    ) -> Value:
        """Emit `line` (which defines `name`) and record its value."""
        if dtype in FLOATS:
            exact = exact and exact_float(dtype, bound, frac)
        elif dtype == "i32":
            exact, bound, frac = True, min(bound, 2.0**31), 0
        else:
            exact, bound, frac = True, 1.0, 0
        v = Value(name, tuple(dims), dtype, exact, bound, frac, nonfinite)
        self.emit(line.format(r=v.type))
        self.scopes[-1].append(v)
        self.shapes.append(v.sizes)
        return v

    def allowed(self, dtype: str, exact: bool, bound: float) -> bool:
        """Whether a result with these properties may be made: floats stay
        below BMAX, f16 values stay exact."""
        if dtype in FLOATS:
            return bound <= BMAX and (dtype != "f16" or exact)
        return True

    def result_dims(self, sizes: Sequence[Size]) -> list[Dim]:
        """A result's dims: `?` for symbolic sizes, integers usually static."""
        return [Dim(s, not s[1] and not self.chance(15)) for s in sizes]

    # -- arguments and constants ------------------------------------------------------

    def new_dim(self) -> Dim:
        kind = self.pick(["symbol"] * 4 + ["static", "unit", "hidden-unit"])
        if kind == "symbol":
            return Dim((1, (self.pick(self.symbols),)), False)
        if kind == "static":
            return Dim((self.pick([2, 3, 4, 5]), ()), True)
        return Dim(ONE, kind == "unit")

    def known_size(self) -> Size:
        """A size for a new dim that no argument gives: a symbol some
        argument has (so that an index can be made of it) or a small integer."""
        if self.carriers and self.chance(70):
            return (1, (self.pick(sorted(self.carriers)),))
        return (self.pick([1, 2, 3, 4, 5]), ())

    def argument(self, dims: Sequence[Dim], dtype: str) -> Value:
        name = f"%arg{len(self.args)}"
        bound, frac = (ARG_BOUND, ARG_FRAC) if dtype in FLOATS else (INT_ARG_BOUND, 0)
        v = Value(name, tuple(dims), dtype, True, 1.0 if dtype == "i1" else bound, frac)
        self.args.append(v)
        self.shapes.append(v.sizes)
        for axis, d in enumerate(dims):
            if d.size[0] == 1 and len(d.size[1]) == 1:
                self.carriers.setdefault(d.size[1][0], (v, axis))
        return v

    def fresh_argument(self, dtype: str, min_rank: int = 0) -> Value:
        rank = max(min_rank, self.pick([2, 1, 3, 0, 2, 1, 4]))
        return self.argument([self.new_dim() for _ in range(rank)], dtype)

    def constant(self, dims: Sequence[Dim], dtype: str) -> Value:
        """A splat constant of static shape (often 0-d)."""
        if dtype == "i1":
            value, text = 1.0, self.pick(["true", "false"])
        elif dtype == "i32":
            n = self.pick([0, 1, -1, 2, 3, -2])
            value, text = abs(n), str(n)
        else:
            x = self.pick([0.0, 0.5, 1.0, -1.0, 2.0, -0.25, 1.5, 3.0])
            value, text = abs(x), repr(x)
        name = self.fresh("k")
        return self.value(
            f"{name} = arith.constant dense<{text}> : {{r}}",
            name,
            dims,
            dtype,
            exact=True,
            bound=value,
            frac=2,
        )

    def index(self, size: Size) -> str:
        """An `index` value equal to `size` at run time."""
        holders = [(v, a) for v in self.visible() for a in range(v.rank) if v.sizes[a] == size]
        if holders and (size[1] or self.chance(40)):
            v, axis = self.pick(holders)
            return self.dim_of(v, axis)
        if not size[1]:
            return self.index_constant(size[0])
        parts = [self.symbol_index(s) for s in size[1]]
        if size[0] != 1:
            parts.append(self.index_constant(size[0]))
        result = parts[0]
        for p in parts[1:]:
            name = self.fresh("i")
            self.emit(f"{name} = arith.muli {result}, {p} : index")
            result = name
        return result

    def symbol_index(self, symbol: str) -> str:
        """An `index` value equal to a symbol (or to `a+2`: `a`'s plus 2, `2*a+1`:
        `2*a` plus 1)."""
        if symbol in self.carriers:
            return self.dim_of(*self.carriers[symbol])
        base, _, extra = symbol.partition("+")
        if base in self.carriers:
            start = self.dim_of(*self.carriers[base])
        else:  # a product: `2*a*b`
            start = self.index(base_size(base))
        shift = self.index_constant(int(extra))
        name = self.fresh("i")
        self.emit(f"{name} = arith.addi {start}, {shift} : index")
        return name

    def index_constant(self, n: int) -> str:
        name = self.fresh("c")
        self.emit(f"{name} = arith.constant {n} : index")
        return name

    def dim_of(self, v: Value, axis: int) -> str:
        c = self.index_constant(axis)
        name = self.fresh("i")
        self.emit(f"{name} = tensor.dim {v.name}, {c} : {v.type}")
        return name

    # -- operands ---------------------------------------------------------------------

    def operand(self, dtypes: Sequence[str], *, exact: bool = False, min_rank: int = 0) -> Value:
        """A visible value of one of these types, or a new argument."""
        found = [
            v
            for v in self.visible()
            if v.dtype in dtypes and v.rank >= min_rank and (v.exact or not exact)
        ]
        if found and not self.chance(20):
            return self.pick(found)
        return self.fresh_argument(self.pick(list(dtypes)), min_rank)

    def partner(self, shape: Sequence[Size], dtype: str, *, exact: bool = False) -> Value:
        """A value that broadcasts with `shape`: a visible one, a new argument
        (a suffix of the shape, some dims 1, maybe more leading dims) or a
        constant."""
        found = [
            v
            for v in self.visible()
            if v.dtype == dtype and compatible(v.sizes, shape) and (v.exact or not exact)
        ]
        kind = self.pick(["argument", "visible", "constant"])
        if kind == "visible" and found:
            return self.pick(found)
        rank = self.between(0, len(shape)) if self.chance(40) else len(shape)
        dims: list[Dim] = []
        for size in shape[len(shape) - rank :]:
            how = self.pick(["same"] * 4 + ["unit", "hidden-unit"])
            if how == "same":
                dims.append(Dim(size, not size[1] and not self.chance(20)))
            else:
                dims.append(Dim(ONE, how == "unit"))
        if rank == len(shape) < MAX_RANK and self.chance(15):
            dims.insert(0, self.new_dim())
        if kind == "constant" and all(d.static or d.size == ONE for d in dims):
            return self.constant([Dim(d.size, True) for d in dims], dtype)
        return self.argument(dims, dtype)

    # -- ops ---------------------------------------------------------------------------

    def step(self) -> None:
        for _ in range(4):
            kind = self.pick(self.KINDS)
            if kind in ("if", "for") and self.depth >= self.MAX_DEPTH:
                continue
            if getattr(self, f"op_{kind.replace('-', '_')}")() is not None:
                return
        self.op_unary()

    def op_unary(self) -> Value | None:
        x = self.operand(["f32", "f32", "f32", "f64", "f16", "i32", "i1"])
        if x.dtype == "i1":
            name = self.fresh()
            return self.value(f"{name} = tensor.logical_not {x.name} : {{r}}", name, x.dims, "i1",
                              exact=True, bound=1)  # fmt: skip
        if x.dtype == "i32":
            op = self.pick(["neg", "abs"])
            return self.unary(op, x, exact=True, bound=x.bound)
        ops = ["neg", "abs", "tanh", "sigmoid", "erf", "exp", "log", "sqrt", "rsqrt"]
        ops += ["reciprocal", "floor", "ceil", "round", "trunc", "isfinite"]
        op = self.pick(ops)
        if op in ("neg", "abs"):
            return self.unary(op, x, exact=x.exact, bound=x.bound, frac=x.frac)
        if op in ("floor", "ceil", "round", "trunc"):
            if not x.exact:
                return None
            return self.unary(op, x, exact=True, bound=x.bound + 1)
        if op == "isfinite":
            name = self.fresh()
            return self.value(
                f"{name} = tensor.isfinite {x.name} : {x.type} -> {{r}}",
                name,
                x.dims,
                "i1",
                exact=True,
                bound=1,
            )
        if x.dtype == "f16":
            return None
        if op in ("tanh", "sigmoid", "erf"):
            return self.unary(op, x, exact=False, bound=1.0)
        if op == "exp":
            if x.bound > 8:
                return None
            return self.unary(op, x, exact=False, bound=math.exp(x.bound))
        # log(|x| + 1), sqrt(|x|), rsqrt(|x| + 1/2), reciprocal(|x| + 1)
        shift = {"log": 1.0, "sqrt": 0.0, "rsqrt": 0.5, "reciprocal": 1.0}[op]
        y = self.positive(x, shift)
        bound = {"log": math.log1p(x.bound), "sqrt": math.sqrt(x.bound)}.get(op, 2.0)
        return self.unary(op, y, exact=False, bound=bound)

    def unary(self, op: str, x: Value, *, exact: bool, bound: float, frac: int = 0) -> Value:
        name = self.fresh()
        return self.value(
            f"{name} = tensor.{op} {x.name} : {{r}}",
            name,
            x.dims,
            x.dtype,
            exact=exact,
            bound=bound,
            frac=frac,
            nonfinite=x.nonfinite,
        )

    def positive(self, x: Value, shift: float) -> Value:
        """|x| + shift (>= shift)."""
        y = self.unary("abs", x, exact=x.exact, bound=x.bound, frac=x.frac)
        if shift == 0:
            return y
        c = self.const_scalar(x.dtype, shift)
        return self.binary("add", y, c, exact=y.exact, bound=y.bound + shift, frac=max(y.frac, 1))

    def const_scalar(self, dtype: str, x: float) -> Value:
        name = self.fresh("k")
        text = repr(float(x)) if dtype in FLOATS else str(int(x))
        return self.value(
            f"{name} = arith.constant dense<{text}> : {{r}}",
            name,
            [],
            dtype,
            exact=True,
            bound=abs(x),
            frac=2,
        )

    def binary(
        self,
        op: str,
        a: Value,
        b: Value,
        *,
        exact: bool,
        bound: float,
        frac: int = 0,
        dtype: str | None = None,
        nonfinite: bool | None = None,
    ) -> Value:
        name = self.fresh()
        dims = self.result_dims(broadcast([a.sizes, b.sizes]))
        return self.value(
            f"{name} = tensor.{op} {a.name}, {b.name} : ({a.type}, {b.type}) -> {{r}}",
            name,
            dims,
            dtype or a.dtype,
            exact=exact,
            bound=bound,
            frac=frac,
            nonfinite=a.nonfinite or b.nonfinite if nonfinite is None else nonfinite,
        )

    def op_binary(self) -> Value | None:
        a = self.operand(["f32", "f32", "f32", "f64", "f16", "i32", "i1"])
        if a.dtype == "i1":
            b = self.partner(a.sizes, "i1")
            op = self.pick(["logical_and", "logical_or", "eq", "ne"])
            return self.binary(op, a, b, exact=True, bound=1)
        if a.dtype == "i32":
            b = self.partner(a.sizes, "i32")
            op = self.pick(["add", "sub", "mul", "max", "min", "div"])
            bound = {"add": a.bound + b.bound, "sub": a.bound + b.bound}.get(op, a.bound)
            if op == "mul":
                bound = a.bound * b.bound
            if op in ("max", "min"):
                bound = max(a.bound, b.bound)
            return self.binary(op, a, b, exact=True, bound=bound)
        op = self.pick(["add", "sub", "mul", "max", "min", "div", "pow"])
        b = self.partner(a.sizes, a.dtype)
        exact = a.exact and b.exact
        if op in ("add", "sub"):
            bound, frac = a.bound + b.bound, max(a.frac, b.frac)
        elif op in ("max", "min"):
            bound, frac = max(a.bound, b.bound), max(a.frac, b.frac)
        elif op == "mul":
            if (a.nonfinite and not b.exact) or (b.nonfinite and not a.exact):
                return None
            bound, frac = a.bound * b.bound, a.frac + b.frac
        elif op == "div":
            if a.dtype == "f16":
                return None
            if self.chance(30):  # by a power of two: exact
                two = self.const_scalar(a.dtype, self.pick([2.0, 4.0, 0.5]))
                bound = a.bound * 2
                return self.binary("div", a, two, exact=a.exact, bound=bound, frac=a.frac + 2)
            d = self.positive(b, 1.0)
            return self.binary("div", a, d, exact=False, bound=a.bound)
        else:  # pow: a positive base, a small exponent
            if a.dtype == "f16" or a.nonfinite or b.nonfinite:
                return None
            base = self.positive(a, 0.5)
            if self.chance(50):
                e = self.pick([2.0, 0.5, -1.0, 3.0, 1.5])
                exponent = self.const_scalar(a.dtype, e)
            else:
                e = 1.0
                exponent = self.unary("tanh", b, exact=False, bound=1.0)
            bound = max((base.bound) ** abs(e), 2.0 ** abs(e))
            if not self.allowed(a.dtype, False, bound):
                return None
            return self.binary("pow", base, exponent, exact=False, bound=bound)
        if not self.allowed(a.dtype, exact and exact_float(a.dtype, bound, frac), bound):
            return None
        return self.binary(op, a, b, exact=exact, bound=bound, frac=frac)

    def comparison(self, shape: Sequence[Size] | None = None) -> Value:
        """An i1 value from comparing exact values (broadcasting with `shape`)."""
        if shape is None:
            a = self.operand(["f32", "f32", "i32", "f16", "f64"], exact=True)
        else:
            a = self.partner(shape, self.pick(["f32", "i32"]), exact=True)
        b = self.partner(broadcast([a.sizes, shape or ()]), a.dtype, exact=True)
        op = self.pick(["gt", "lt", "ge", "le", "eq", "ne"])
        return self.binary(op, a, b, exact=True, bound=1, dtype="i1", nonfinite=False)

    def op_compare(self) -> Value | None:
        return self.comparison()

    def op_select(self) -> Value | None:
        a = self.operand(["f32", "f32", "i32", "f64", "f16"])
        cond = self.comparison(a.sizes) if self.chance(50) else self.partner(a.sizes, "i1")
        shape = broadcast([a.sizes, cond.sizes])
        b = self.partner(shape, a.dtype)
        name = self.fresh()
        dims = self.result_dims(broadcast([shape, b.sizes]))
        return self.joined(
            f"{name} = tensor.select {cond.name}, {a.name}, {b.name} : "
            f"({cond.type}, {a.type}, {b.type}) -> {{r}}",
            name,
            dims,
            a.dtype,
            (a, b),
        )

    def op_math(self) -> Value | None:
        """The math ops: trigonometric and hyperbolic functions, expm1, log1p, isinf,
        isnan, sign, remainder and fmod on floats; `integer_math` on i32."""
        x = self.operand(["f32", "f64", "f16", "i32", "i32"])
        if x.dtype == "i32":
            return self.integer_math(x)
        ops = ["sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh"]
        op = self.pick([*ops, "atanh", "expm1", "log1p", "isinf", "isnan", "sign", "remainder"])
        if op in ("isinf", "isnan"):
            name = self.fresh()
            line = f"{name} = tensor.{op} {x.name} : {x.type} -> {{r}}"
            return self.value(line, name, x.dims, "i1", exact=True, bound=1)
        if op == "sign":  # of exact values only: the sign of a value near 0 may differ
            return self.unary(op, x, exact=True, bound=1.0) if x.exact else None
        if op == "remainder":
            return self.float_remainder(x)
        if x.dtype == "f16":  # f16 values stay exact
            return None
        if op in ("sin", "cos", "atan", "asinh"):
            bound = {"atan": 1.6, "asinh": math.asinh(x.bound)}.get(op, 1.0)
            return self.unary(op, x, exact=False, bound=bound)
        if op in ("sinh", "cosh", "expm1"):
            return self.unary(op, x, exact=False, bound=math.exp(x.bound)) if x.bound <= 8 else None
        if op in ("log1p", "acosh"):  # log1p(|x|), acosh(|x| + 1)
            y = self.positive(x, 1.0 if op == "acosh" else 0.0)
            return self.unary(op, y, exact=False, bound=math.log1p(y.bound) + 1)
        # tan, asin, acos, atanh of tanh(x) / 2, inside (-1, 1)
        t = self.unary("tanh", x, exact=False, bound=1.0)
        half = self.binary("mul", t, self.const_scalar(x.dtype, 0.5), exact=False, bound=0.5)
        return self.unary(op, half, exact=False, bound=4.0)

    def float_remainder(self, x: Value) -> Value | None:
        """`remainder` or `fmod` of exact values by a divisor of magnitude at least 1,
        either sign: exact."""
        b = self.partner(x.sizes, x.dtype, exact=True)
        if not x.exact or x.nonfinite or b.nonfinite:
            return None
        d = self.positive(b, 1.0)
        if self.chance(50):
            d = self.unary("neg", d, exact=d.exact, bound=d.bound, frac=d.frac)
        op = self.pick(["remainder", "fmod"])
        bound = d.bound if op == "remainder" else x.bound
        frac = max(x.frac, d.frac)
        if not self.allowed(x.dtype, exact_float(x.dtype, bound, frac), bound):
            return None
        return self.binary(op, x, d, exact=True, bound=bound, frac=frac)

    def integer_math(self, x: Value) -> Value:
        """sign, bitwise ops, shifts, remainder, fmod and pow on i32 (all exact: integer
        results wrap around alike everywhere)."""
        ops = ["bitwise_not", "sign", "bitwise_and", "bitwise_or", "bitwise_xor", "shl", "shr"]
        op = self.pick([*ops, "remainder", "fmod", "pow"])
        if op in ("sign", "bitwise_not"):
            return self.unary(op, x, exact=True, bound=1.0 if op == "sign" else x.bound + 1)
        if op in ("shl", "pow"):  # by a small constant; pow's may be negative
            k = self.pick([0, 1, 2, 3] if op == "shl" else [-1, 0, 1, 2, 3])
            c = self.const_scalar("i32", k)
            bound = x.bound * 2**k if op == "shl" else max(x.bound ** max(k, 0), 1.0)
            return self.binary(op, x, c, exact=True, bound=bound)
        b = self.partner(x.sizes, "i32")  # any values: shifts by negative amounts too
        if op == "shr":
            return self.binary(op, x, b, exact=True, bound=x.bound)
        bound = max(x.bound, b.bound)
        if op.startswith("bitwise"):  # inside [-2**k, 2**k) when both operands are
            bound = 2.0 ** math.ceil(math.log2(bound + 1))
        return self.binary(op, x, b, exact=True, bound=bound)

    def op_clamp(self) -> Value | None:
        """`clamp` by a partner tensor and a partner or a constant scalar."""
        x = self.operand(["f32", "f32", "i32", "f64", "f16"])
        lo = self.partner(x.sizes, x.dtype)
        shape = broadcast([x.sizes, lo.sizes])
        if self.chance(50):
            hi = self.const_scalar(x.dtype, self.pick([0.0, 1.0, 6.0]))
        else:
            hi = self.partner(shape, x.dtype)
        operands = (x, lo, hi)
        exact = all(v.exact for v in operands)
        bound = max(v.bound for v in operands)
        if not self.allowed(x.dtype, exact, bound):
            return None
        name = self.fresh()
        types = ", ".join(v.type for v in operands)
        return self.joined(
            f"{name} = tensor.clamp {x.name}, {lo.name}, {hi.name} : ({types}) -> {{r}}",
            name,
            self.result_dims(broadcast([shape, hi.sizes])),
            x.dtype,
            operands,
        )

    def op_narrow(self) -> Value | None:
        """A detour through one of the narrower or unsigned types: convert, one op there,
        convert back. i32 goes through ui8 ... ui64 or i16, where integers wrap around
        alike at every level; an exact f32 through bf16, where a max or min is exact
        and a sum or product rounds once, alike at every level."""
        x = self.operand(["i32", "i32", "f32"])
        b = self.partner(x.sizes, x.dtype, exact=True)
        if x.dtype == "i32":
            narrow = self.pick(["ui8", "i16", "ui16", "ui32", "ui64"])
            op = self.pick(["add", "sub", "mul", "div", "max", "min", "shr", "bitwise_xor"])
            exact, bound, frac = True, 2.0**31, 0
        elif x.exact and b.exact and not (x.nonfinite or b.nonfinite):
            narrow, op = "bf16", self.pick(["add", "max", "min", "mul"])
            exact = op in ("max", "min") and all(
                v.bound * 2.0**v.frac < 2.0**BF16_MANTISSA for v in (x, b)
            )
            bound = {"add": x.bound + b.bound, "mul": x.bound * b.bound}.get(
                op, max(x.bound, b.bound)
            )
            frac = x.frac + b.frac if op == "mul" else max(x.frac, b.frac)
            if not self.allowed("f32", exact, bound):
                return None
        else:
            return None
        there = self.binary(
            op, self.retyped(x, narrow), self.retyped(b, narrow), exact=True, bound=1
        )
        return self.retyped(there, x.dtype, exact=exact, bound=bound, frac=frac)

    def retyped(
        self, v: Value, dtype: str, *, exact: bool = True, bound: float = 1.0, frac: int = 0
    ) -> Value:
        """`v` converted to `dtype`: the detours of `op_narrow` (into a narrow type, where
        no value is tracked, and back, with what the caller knows of it)."""
        name = self.fresh()
        return self.value(
            f"{name} = tensor.convert {v.name} : {v.type} -> {{r}}",
            name,
            v.dims,
            dtype,
            exact=exact,
            bound=bound,
            frac=frac,
        )

    def op_reduce(self) -> Value | None:
        x = self.operand(["f32", "f32", "f32", "i32", "f64"])
        axes = self.draw(st.permutations(list(range(x.rank))))
        axes = axes[: self.between(0, x.rank)] if x.rank else []
        keepdims = self.chance(40)
        kinds = (
            ["sum", "max", "min", "mean", "prod"] if x.dtype in FLOATS else ["sum", "max", "min"]
        )
        kind = self.pick(kinds)
        count = 1.0
        empty = False
        for a in axes:
            size = x.sizes[a]
            count *= size[0] if not size[1] else ELEMENTS_CAP
            empty |= bool(size[1]) or size[0] == 0
        count = min(count, ELEMENTS_CAP)
        exact, bound, frac, nonfinite = x.exact, x.bound, x.frac, x.nonfinite
        if kind == "sum":
            bound = x.bound * count
        elif kind == "mean":
            exact, nonfinite = False, nonfinite or empty
        elif kind in ("max", "min"):
            nonfinite = nonfinite or (empty and x.dtype in FLOATS)
            if empty and x.dtype == "i32":
                bound = 2.0**31
        elif x.nonfinite and not x.exact:
            return None
        else:  # a product of many values: of values in [-1, 1], to stay finite
            if x.bound > 1:
                x = self.unary("tanh", x, exact=False, bound=1.0)
            exact, bound = False, 1.0
        if not self.allowed(x.dtype, exact, bound):
            return None
        sizes = [
            ONE if i in axes else s for i, s in enumerate(x.sizes) if keepdims or i not in axes
        ]
        name = self.fresh()
        attrs = f"axes = [{', '.join(map(str, axes))}]"
        if keepdims:
            attrs += ", keepdims = true"
        elif self.chance(20):
            attrs += ", keepdims = false"
        return self.value(
            f"{name} = tensor.reduce_{kind} {x.name} {{{{{attrs}}}}} : {x.type} -> {{r}}",
            name,
            self.result_dims(sizes),
            x.dtype,
            exact=exact,
            bound=bound,
            frac=frac,
            nonfinite=nonfinite,
        )

    def op_any_all(self) -> Value | None:
        """`reduce_any` or `reduce_all` of booleans over some axes."""
        x = self.operand(["i1"])
        axes = self.draw(st.permutations(list(range(x.rank))))
        axes = sorted(axes[: self.between(0, x.rank)]) if x.rank else []
        keepdims = self.chance(40)
        sizes = [
            ONE if i in axes else s for i, s in enumerate(x.sizes) if keepdims or i not in axes
        ]
        name = self.fresh()
        attrs = f"axes = [{', '.join(map(str, axes))}]" + (", keepdims = true" if keepdims else "")
        kind = self.pick(["any", "all"])
        line = f"{name} = tensor.reduce_{kind} {x.name} {{{{{attrs}}}}} : {x.type} -> {{r}}"
        return self.value(line, name, self.result_dims(sizes), "i1", exact=True, bound=1.0)

    def op_argmax(self) -> Value | None:
        """`argmax` or `argmin` of exact values (a near tie could go either way) along
        an axis that is never empty (one of static size: a symbol may be 0)."""
        x = self.operand(["f32", "i32", "f64"], exact=True, min_rank=1)
        axes = [a for a, (n, symbols) in enumerate(x.sizes) if not symbols and n >= 1]
        if not axes or x.nonfinite:
            return None
        return self.arg_extremum(x, axes, 30)

    def arg_extremum(self, x: Value, axes: list[int], keepdims_percent: int) -> Value:
        """`argmax` or `argmin` of `x` along one of `axes` (each never empty)."""
        axis, keepdims = self.pick(axes), self.chance(keepdims_percent)
        sizes = [ONE if i == axis else s for i, s in enumerate(x.sizes) if keepdims or i != axis]
        name, op = self.fresh(), self.pick(["argmax", "argmin"])
        attrs = f"axis = {axis}" + (", keepdims = true" if keepdims else "")
        line = f"{name} = tensor.{op} {x.name} {{{{{attrs}}}}} : {x.type} -> {{r}}"
        bound = float(x.sizes[axis][0])
        return self.value(line, name, self.result_dims(sizes), "i32", exact=True, bound=bound)

    def op_cumsum(self) -> Value | None:
        """`cumsum` along an axis, maybe exclusive or reversed: a sum's bound."""
        x = self.operand(["f32", "i32", "f64"], min_rank=1)
        axis = self.between(0, x.rank - 1)
        size = x.sizes[axis]
        bound = x.bound * min(size[0] if not size[1] else ELEMENTS_CAP, ELEMENTS_CAP)
        if not self.allowed(x.dtype, x.exact, bound):
            return None
        attrs = self.scan_attrs(axis, 40)
        name = self.fresh()
        line = f"{name} = tensor.cumsum {x.name} {{{{{attrs}}}}} : {x.type} -> {{r}}"
        return self.value(
            line,
            name,
            list(x.dims),
            x.dtype,
            exact=x.exact,
            bound=bound,
            frac=x.frac,
            nonfinite=x.nonfinite,
        )

    def op_matmul(self) -> Value | None:
        a = self.operand(["f32", "f32", "f32", "i32", "f64"], min_rank=2)
        ta, tb = self.chance(25), self.chance(25)
        m, k = (a.dims[-1], a.dims[-2]) if ta else (a.dims[-2], a.dims[-1])
        batch = list(a.sizes[:-2])
        candidates = [
            v
            for v in self.visible()
            if v.dtype == a.dtype
            and v.rank >= 2
            and v.sizes[-1 if tb else -2] == k.size
            and compatible(v.sizes[:-2], batch)
        ]
        if candidates and self.chance(40):
            b = self.pick(candidates)
        else:
            n = self.new_dim() if self.chance(70) else Dim(m.size, not m.size[1])
            kdim = Dim(k.size, not k.size[1] and not self.chance(20))
            core = [n, kdim] if tb else [kdim, n]
            lead = self.between(0, len(batch))
            bdims = [
                Dim(s, not s[1]) if not self.chance(20) else Dim(ONE, True)
                for s in batch[len(batch) - lead :]
            ]
            if lead == len(batch) and a.rank < MAX_RANK and self.chance(15):
                bdims.insert(0, self.new_dim())
            b = self.argument([*bdims, *core], a.dtype)
        if (a.nonfinite and not b.exact) or (b.nonfinite and not a.exact):
            return None
        n_size = b.sizes[-2] if tb else b.sizes[-1]
        count = k.size[0] if not k.size[1] else ELEMENTS_CAP
        bound = a.bound * b.bound * count
        frac = a.frac + b.frac
        exact = a.exact and b.exact
        if not self.allowed(a.dtype, exact, bound):
            return None
        sizes = [*broadcast([batch, b.sizes[:-2]]), m.size, n_size]
        attrs = [f"transpose_a = {'true' if ta else 'false'}"] * ta
        attrs += [f"transpose_b = {'true' if tb else 'false'}"] * tb
        flags = f" {{{{{', '.join(attrs)}}}}}" if attrs else ""
        name = self.fresh()
        return self.value(
            f"{name} = tensor.matmul {a.name}, {b.name}{flags} : ({a.type}, {b.type}) -> {{r}}",
            name,
            self.result_dims(sizes),
            a.dtype,
            exact=exact,
            bound=bound,
            frac=frac,
            nonfinite=a.nonfinite or b.nonfinite,
        )

    def scan_attrs(self, axis: int, percent: int) -> str:
        """A scan's attributes: its axis, each of `exclusive` and `reverse` drawn."""
        attrs = f"axis = {axis}"
        for flag in ("exclusive", "reverse"):
            if self.chance(percent):
                attrs += f", {flag} = true"
        return attrs

    def joined(
        self, line: str, name: str, dims: Sequence[Dim], dtype: str, operands: Sequence[Value]
    ) -> Value:
        """`value` of an op whose elements are its operands' (a select, a clamp, a concat,
        an insert_slice): exact where they all are, their largest bound and fraction."""
        return self.value(
            line,
            name,
            dims,
            dtype,
            exact=all(v.exact for v in operands),
            bound=max(v.bound for v in operands),
            frac=max(v.frac for v in operands),
            nonfinite=any(v.nonfinite for v in operands),
        )

    def layout(self, line: str, name: str, x: Value, dims: Sequence[Dim]) -> Value:
        return self.value(
            line,
            name,
            dims,
            x.dtype,
            exact=x.exact,
            bound=x.bound,
            frac=x.frac,
            nonfinite=x.nonfinite,
        )

    def op_concat(self) -> Value | None:
        """`concat` of a value and values of its shape (itself, visible ones, new
        arguments) along an axis: k inputs make the axis k times as long, a size the
        model holds (a monomial)."""
        x = self.operand(["f32", "f32", "i32", "i1", "f16"], min_rank=1)
        axis = self.between(0, x.rank - 1)
        inputs = [x]
        for _ in range(self.between(1, 2)):
            same = [v for v in self.visible() if v.dtype == x.dtype and v.sizes == x.sizes]
            take = same and self.chance(50)
            inputs.append(self.pick(same) if take else self.argument(list(x.dims), x.dtype))
        sizes = list(x.sizes)
        sizes[axis] = (sizes[axis][0] * len(inputs), sizes[axis][1])
        return self.concatenated(inputs, axis, sizes)

    def concatenated(self, values: Sequence[Value], axis: int, sizes: list[Size]) -> Value:
        """`tensor.concat` of `values` (of one dtype) along `axis`, its result `sizes`."""
        name = self.fresh()
        names = ", ".join(v.name for v in values)
        types = ", ".join(v.type for v in values)
        return self.joined(
            f"{name} = tensor.concat dim({axis}) {names} : ({types}) -> {{r}}",
            name,
            self.result_dims(sizes),
            values[0].dtype,
            values,
        )

    def in_range(self, dims: Sequence[Dim], n: int) -> Value:
        """An i32 tensor of these dims whose elements lie in [0, n): an argument's
        `remainder(abs(i), n)`."""
        i = self.argument(list(dims), "i32")
        a = self.unary("abs", i, exact=True, bound=i.bound)
        return self.binary("remainder", a, self.const_scalar("i32", n), exact=True, bound=n - 1)

    def indexed_axis(self, dtypes: Sequence[str]) -> tuple[Value, int, int] | None:
        """A value, an axis of static size n >= 1 to index (a symbol may be 0, where no
        index is in range) and n."""
        x = self.operand(dtypes, min_rank=1)
        axes = [a for a, (n, symbols) in enumerate(x.sizes) if not symbols and n >= 1]
        if not axes:
            return None
        axis = self.pick(axes)
        return x, axis, x.sizes[axis][0]

    def op_take(self) -> Value | None:
        """`take` along an axis by an index tensor of rank 1 or 2 (an embedding lookup)."""
        found = self.indexed_axis(["f32", "f32", "i32", "f16", "i1"])
        if found is None:
            return None
        x, axis, n = found
        rank = self.between(1, 2)
        if x.rank - 1 + rank > MAX_RANK:
            return None
        idx = self.in_range([self.new_dim() for _ in range(rank)], n)
        sizes = [*x.sizes[:axis], *idx.sizes, *x.sizes[axis + 1 :]]
        name = self.fresh()
        types = f"({x.type}, {idx.type})"
        line = f"{name} = tensor.take {x.name}, {idx.name} dim({axis}) : {types} -> {{r}}"
        return self.layout(line, name, x, self.result_dims(sizes))

    def op_take_along_axis(self) -> Value | None:
        """`take_along_axis`: indices of the source's rank, any length along the axis,
        the other dims equal or 1 (they broadcast)."""
        found = self.indexed_axis(["f32", "i32", "f64"])
        if found is None:
            return None
        x, axis, n = found
        return self.take_along(x, axis, n, self.new_dim)

    def take_along(self, x: Value, axis: int, n: int, length: Callable[[], Dim]) -> Value:
        """`take_along_axis` of `x` by indices below `n`, `length()` of them along `axis`
        (drawn in its place among the others), the other dims `x`'s or 1 (they broadcast)."""
        dims = [length() if a == axis else Dim(ONE, True) if self.chance(30) else d
                for a, d in enumerate(x.dims)]  # fmt: skip
        idx = self.in_range(dims, n)
        sizes = [idx.sizes[a] if a == axis else x.sizes[a] for a in range(x.rank)]
        name = self.fresh()
        line = (
            f"{name} = tensor.take_along_axis {x.name}, {idx.name} dim({axis}) "
            f": ({x.type}, {idx.type}) -> {{r}}"
        )
        return self.layout(line, name, x, self.result_dims(sizes))

    def op_scatter_add(self) -> Value | None:
        """`scatter_add` of updates (a take's shape) at indices of rank 1 or 2, which
        repeat: each element gains at most one update per index."""
        found = self.indexed_axis(["f32", "i32", "f64"])
        if found is None:
            return None
        return self.scatter_add(*found)

    def scatter_add(self, base: Value, axis: int, n: int) -> Value | None:
        """`base` with updates added at indices along `axis` (of static size n >= 1)."""
        rank = self.between(1, 2)
        if base.rank - 1 + rank > MAX_RANK:
            return None
        idx = self.in_range([self.new_dim() for _ in range(rank)], n)
        upd = self.updates([*base.dims[:axis], *idx.dims, *base.dims[axis + 1 :]], base.dtype)
        count = math.prod(s[0] if not s[1] else ELEMENTS_CAP for s in idx.sizes)
        bound = base.bound + upd.bound * min(count, ELEMENTS_CAP)
        frac = max(base.frac, upd.frac)
        if not self.allowed(base.dtype, base.exact, bound) or base.nonfinite:
            return None
        return self.scattered(base, idx, upd, axis, base.exact, bound, frac)

    def scattered(
        self, base: Value, idx: Value, upd: Value, axis: int, exact: bool, bound: float, frac: int
    ) -> Value:
        """`tensor.scatter_add` of `upd` into `base` at `idx` along `axis`."""
        name = self.fresh()
        types = f"{base.type}, {idx.type}, {upd.type}"
        return self.value(
            f"{name} = tensor.scatter_add {base.name}, {idx.name}, {upd.name} dim({axis}) "
            f": ({types}) -> {{r}}",
            name,
            list(base.dims),
            base.dtype,
            exact=exact,
            bound=bound,
            frac=frac,
        )

    def updates(self, dims: Sequence[Dim], dtype: str) -> Value:
        """The updates of a `scatter_add`: a new argument."""
        return self.argument(dims, dtype)

    def op_grouped_matmul(self) -> Value | None:
        """`grouped_matmul` of a 2-D value with rows of static count m, in g groups of
        at most m / g rows each (so they add up to at most m), maybe with a bias."""
        x = self.operand(["f32", "f32", "f16"], min_rank=2)
        if x.rank != 2 or x.sizes[0][1] or x.nonfinite:  # rows of a static count
            rows = Dim((self.pick([1, 2, 3, 5, 8]), ()), True)
            x = self.argument([rows, self.new_dim()], x.dtype)
        m, k, g = x.sizes[0][0], x.dims[1], self.between(1, 3)
        sizes = self.in_range([Dim((g, ()), True)], m // g + 1)
        n = self.new_dim()
        w = self.argument([Dim((g, ()), True), Dim(k.size, k.static), n], x.dtype)
        bias = self.argument([Dim((g, ()), True), n], x.dtype) if self.chance(50) else None
        count = k.size[0] if not k.size[1] else ELEMENTS_CAP
        bound = x.bound * w.bound * count + (bias.bound if bias else 0.0)
        frac = x.frac + w.frac
        exact = x.exact
        if not self.allowed(x.dtype, exact, bound) or (
            x.dtype == "f16" and not exact_float("f16", bound, frac)
        ):
            return None
        operands = [x, sizes, w, *([bias] if bias else [])]
        names = ", ".join(v.name for v in operands)
        types = ", ".join(v.type for v in operands)
        name = self.fresh()
        return self.value(
            f"{name} = tensor.grouped_matmul {names} : ({types}) -> {{r}}",
            name,
            self.result_dims([x.sizes[0], n.size]),
            x.dtype,
            exact=exact,
            bound=bound,
            frac=frac,
        )

    def op_slice(self) -> Value | None:
        """`extract_slice` of a dim whose size has an even coefficient: either half
        (offsets and sizes from `tensor.dim` arithmetic), or every other element."""
        x = self.operand(["f32", "f32", "i32", "i1", "f16"], min_rank=1)
        axes = [a for a in range(x.rank) if x.sizes[a][0] % 2 == 0 and x.sizes[a][0] > 0]
        if not axes:
            return None
        axis = self.pick(axes)
        half = (x.sizes[axis][0] // 2, x.sizes[axis][1])
        how = self.pick(["first", "second", "even", "odd"])
        if how == "odd" and half[1]:  # offset 1 would pass the end of an empty dim
            how = "even"
        offsets = ["0"] * x.rank
        sizes = [d.text if d.static else self.index(d.size) for d in x.dims]
        strides = ["1"] * x.rank
        sizes[axis] = str(half[0]) if not half[1] else self.index(half)
        if how == "second":
            offsets[axis] = str(half[0]) if not half[1] else self.index(half)
        elif how in ("even", "odd"):
            offsets[axis], strides[axis] = ("0" if how == "even" else "1"), "2"
        dims = list(x.sizes)
        dims[axis] = half
        name = self.fresh()
        lists = " ".join(f"[{', '.join(parts)}]" for parts in (offsets, sizes, strides))
        return self.layout(
            f"{name} = tensor.extract_slice {x.name}{lists} : {x.type} to {{r}}",
            name,
            x,
            self.result_dims(dims),
        )

    def op_transpose(self) -> Value | None:
        x = self.operand(["f32", "f32", "i32", "i1", "f16"], min_rank=2)
        perm = self.draw(st.permutations(list(range(x.rank))))
        name = self.fresh()
        dims = self.result_dims([x.sizes[p] for p in perm])
        return self.layout(
            f"{name} = tensor.transpose {x.name} {{{{perm = [{', '.join(map(str, perm))}]}}}} : "
            f"{x.type} -> {{r}}",
            name,
            x,
            dims,
        )

    def op_collapse(self) -> Value | None:
        x = self.operand(["f32", "f32", "i32", "i1"], min_rank=2)
        groups: list[list[int]] = [[0]]
        for axis in range(1, x.rank):
            if self.chance(60):
                groups[-1].append(axis)
            else:
                groups.append([axis])
        return self.collapsed(x, groups)

    def collapsed(self, x: Value, groups: list[list[int]]) -> Value:
        """`x` with each group of its dims collapsed into one (their product)."""
        dims: list[Dim] = []
        for g in groups:
            size = ONE
            for a in g:
                size = multiply(size, x.sizes[a])
            dims.append(Dim(size, all(x.dims[a].static for a in g)))
        name = self.fresh()
        return self.layout(
            f"{name} = tensor.collapse_shape {x.name} {groups_text(groups)} : {x.type} into {{r}}",
            name,
            x,
            dims,
        )

    def split(self, size: Size) -> list[Size]:
        """Sizes whose product is `size`."""
        how = self.pick(["none", "unit-before", "unit-after", "symbols", "coefficient"])
        if how == "unit-before":
            return [ONE, size]
        if how == "unit-after":
            return [size, ONE]
        if how == "symbols" and len(size[1]) >= 2:
            cut = self.between(1, len(size[1]) - 1)
            return [(size[0], size[1][:cut]), (1, size[1][cut:])]
        if how == "coefficient":
            factors = [f for f in range(2, size[0]) if size[0] % f == 0]
            if factors:
                f = self.pick(factors)
                return [(f, ()), (size[0] // f, size[1])]
        return [size]

    def op_expand(self) -> Value | None:
        x = self.operand(["f32", "f32", "i32", "i1"], min_rank=1)
        groups: list[list[int]] = []
        dims: list[Dim] = []
        entries: list[str] = []
        room = MAX_RANK - x.rank  # dims the splits may add
        for d in x.dims:
            parts = self.split(d.size) if room > 0 else [d.size]
            room -= len(parts) - 1
            group = [
                Dim(p, d.static or (not p[1] and not self.chance(20) and len(parts) > 1))
                for p in parts
            ]
            if not d.static and all(g.static for g in group):
                group[0] = Dim(group[0].size, False)
            groups.append(list(range(len(dims), len(dims) + len(group))))
            dims += group
            entries += [str(g.size[0]) if g.static else self.index(g.size) for g in group]
        name = self.fresh()
        return self.layout(
            f"{name} = tensor.expand_shape {x.name} {groups_text(groups)} output_shape "
            f"[{', '.join(entries)}] : {x.type} into {{r}}",
            name,
            x,
            dims,
        )

    def op_broadcast_to(self) -> Value | None:
        x = self.operand(["f32", "f32", "i32", "i1"])
        target: list[Size] = []
        for _ in range(min(self.pick([0, 1, 1, 2]), MAX_RANK - x.rank)):
            target.append(self.known_size())
        # A unit dim is stretched only where its type says 1: symbolic-shapes takes a
        # `?` stretched to a size for that size, and rejects the program when it is
        # stretched again to another (defined in numpy when the dim is 1).
        for size, dim in zip(x.sizes, x.dims, strict=True):
            stretch = size == ONE and dim.static and self.chance(50)
            target.append(self.known_size() if stretch else size)
        dims = [Dim(s, not s[1] and not self.chance(25)) for s in target]
        entries = [str(d.size[0]) if d.static else self.index(d.size) for d in dims]
        name = self.fresh()
        return self.layout(
            f"{name} = tensor.broadcast_to {x.name} to [{', '.join(entries)}] : {x.type} -> {{r}}",
            name,
            x,
            dims,
        )

    def op_iota(self) -> Value | None:
        """The index along one dim of a visible value's shape (its sizes from dims)."""
        x = self.operand(["f32", "i32", "i1", "f64"], min_rank=1)
        dims = self.result_dims(x.sizes)
        sizes = "".join(f" {self.index(d.size)}," for d in dims if not d.static).rstrip(",")
        name = self.fresh()
        return self.value(
            f"{name} = tensor.iota dim({self.between(0, x.rank - 1)}){sizes} : {{r}}",
            name,
            dims,
            self.pick(["i32", "f32", "f64"]),
            exact=True,
            bound=ELEMENTS_CAP,
        )

    def op_convert(self) -> Value | None:
        x = self.operand(["f32", "f32", "i1", "i32", "f16", "f64"])
        targets = {
            "f32": ["f16", "f64", "i1"],
            "f16": ["f32"],
            "f64": ["f32"],
            "i1": ["f32", "i32", "f16"],
            "i32": ["f32", "i1"],
        }[x.dtype]
        to = self.pick(targets)
        if to == "i1" and not x.exact:
            return None
        exact = x.exact
        if to in FLOATS:
            exact = exact and exact_float(to, x.bound, x.frac)
            if not self.allowed(to, exact, x.bound):
                return None
        name = self.fresh()
        return self.value(
            f"{name} = tensor.convert {x.name} : {x.type} -> {{r}}",
            name,
            x.dims,
            to,
            exact=exact,
            bound=x.bound,
            frac=x.frac,
            nonfinite=x.nonfinite,
        )

    def retype(self, v: Value, dims: Sequence[Dim]) -> Value:
        """`v` with the given type's dims (same sizes), via max(v, v) or or(v, v)."""
        if type_text(dims, v.dtype) == v.type:
            return v
        op = "logical_or" if v.dtype == "i1" else "max"
        name = self.fresh()
        return self.value(
            f"{name} = tensor.{op} {v.name}, {v.name} : ({v.type}, {v.type}) -> {{r}}",
            name,
            dims,
            v.dtype,
            exact=v.exact,
            bound=v.bound,
            frac=v.frac,
            nonfinite=v.nonfinite,
        )

    def predicate(self) -> str:
        """An `i1` from an exact value reduced to a scalar and compared."""
        x = self.operand(["f32", "f32", "i32"], exact=True)
        if x.rank or self.chance(50):
            kind = self.pick(["sum", "max", "min"])
            axes = self.draw(st.permutations(list(range(x.rank))))
            bound = x.bound * ELEMENTS_CAP if kind == "sum" else x.bound
            if kind == "sum" and not (x.dtype == "i32" or exact_float(x.dtype, bound, x.frac)):
                kind = "max"
            name = self.fresh()
            x = self.value(
                f"{name} = tensor.reduce_{kind} {x.name} "
                f"{{{{axes = [{', '.join(map(str, axes))}]}}}} : {x.type} -> {{r}}",
                name,
                [],
                x.dtype,
                exact=True,
                bound=bound,
                frac=x.frac,
                nonfinite=x.nonfinite or kind != "sum",
            )
        threshold = self.const_scalar(x.dtype, self.pick([0.0, 1.0, -1.0, 2.0]))
        op = self.pick(["gt", "lt", "ge", "le", "eq", "ne"])
        p = self.binary(op, x, threshold, exact=True, bound=1, dtype="i1", nonfinite=False)
        name = self.fresh("p")
        self.emit(f"{name} = tensor.extract {p.name}[] : {p.type}")
        return name

    def op_if(self) -> Value | None:
        cond = self.predicate()
        seeds = [self.operand(["f32", "f32", "i32", "i1"]) for _ in range(self.pick([1, 1, 2]))]
        branches: list[tuple[list[str], list[Value]]] = []
        self.depth += 1
        for _ in range(2):
            self.scopes.append([])
            self.blocks.append([])
            for _ in range(self.pick(self.BRANCH_STEPS)):
                self.step()
            yields = []
            for s in seeds:
                same = [v for v in self.visible() if v.sizes == s.sizes and v.dtype == s.dtype]
                yields.append(self.retype(self.pick(same), s.dims))
            types = ", ".join(v.type for v in yields)
            self.emit(f"scf.yield {', '.join(v.name for v in yields)} : {types}")
            self.scopes.pop()
            branches.append((self.blocks.pop(), yields))
        self.depth -= 1
        names = [self.fresh() for _ in seeds]
        types = ", ".join(s.type for s in seeds)
        indent = "  "
        lines = [f"{', '.join(names)} = scf.if {cond} -> ({types}) {{"]
        lines += [indent + line for line in branches[0][0]]
        lines += ["} else {"]
        lines += [indent + line for line in branches[1][0]]
        lines += ["}"]
        for line in lines:
            self.emit(line)
        results = []
        for i, (name, s) in enumerate(zip(names, seeds, strict=True)):
            a, b = branches[0][1][i], branches[1][1][i]
            v = Value(
                name,
                s.dims,
                s.dtype,
                a.exact and b.exact,
                max(a.bound, b.bound),
                max(a.frac, b.frac),
                a.nonfinite or b.nonfinite,
            )
            self.scopes[-1].append(v)
            results.append(v)
        return results[-1]

    def op_for(self) -> Value | None:
        """`scf.for` over 0-3 iterations carrying values of unchanged shape.

        Inside the body a carried float is taken as inexact (its value after
        some iterations is not known to stay exact) with the seed's bound
        (at least 1); a yield that could exceed it is squashed by tanh, one
        that could hold inf or NaN where the seed cannot is replaced by the
        carried value itself.
        """
        seeds = [self.operand(["f32", "f32", "i32", "i1"]) for _ in range(self.pick([1, 1, 2]))]
        lb, ub, step = (self.index_constant(n) for n in (0, self.pick([2, 0, 1, 3]), 1))
        carried = self.carried(seeds)
        induction = self.fresh("iv")
        self.depth += 1
        self.scopes.append(list(carried))
        self.blocks.append([])
        for _ in range(self.pick([1, 2, 3])):
            self.step()
        yields = self.loop_yields(seeds, carried)
        types = ", ".join(s.type for s in seeds)
        self.emit(f"scf.yield {', '.join(v.name for v in yields)} : {types}")
        self.scopes.pop()
        body = self.blocks.pop()
        self.depth -= 1
        names = [self.fresh() for _ in seeds]
        inits = ", ".join(f"{c.name} = {s.name}" for c, s in zip(carried, seeds, strict=True))
        self.emit(
            f"{', '.join(names)} = scf.for {induction} = {lb} to {ub} step {step} "
            f"iter_args({inits}) -> ({types}) {{"
        )
        for line in body:
            self.emit("  " + line)
        self.emit("}")
        results = [
            Value(name, c.dims, c.dtype, c.exact, c.bound, c.frac, c.nonfinite)
            for name, c in zip(names, carried, strict=True)
        ]
        self.scopes[-1].extend(results)
        return results[-1]

    def carried(self, seeds: Sequence[Value]) -> list[Value]:
        """A loop's carried values, one per seed: a float taken as inexact (its value
        after some iterations is not known to stay exact) with the seed's bound (at
        least 1)."""
        return [
            Value(
                self.fresh("acc"),
                s.dims,
                s.dtype,
                s.dtype not in FLOATS,
                max(s.bound, 1.0) if s.dtype in FLOATS else s.bound,
                s.frac,
                s.nonfinite,
            )
            for s in seeds
        ]

    def loop_yields(self, seeds: Sequence[Value], carried: Sequence[Value]) -> list[Value]:
        """What a loop body yields for each carried value: a visible value of its seed's
        shape and dtype, squashed by tanh where it could exceed the carried bound, the
        carried value itself where it could hold inf or NaN and the seed cannot."""
        yields = []
        for s, c in zip(seeds, carried, strict=True):
            same = [v for v in self.visible() if v.sizes == s.sizes and v.dtype == s.dtype]
            u = self.pick(same)
            if u.nonfinite and not c.nonfinite:
                u = c
            if u.dtype in FLOATS and u.bound > c.bound:
                u = self.unary("tanh", u, exact=False, bound=1.0)
            yields.append(self.retype(u, s.dims))
        return yields

    # -- the whole function -----------------------------------------------------------

    def function(self, steps: int) -> RandomProgram:
        self.fresh_argument("f32", min_rank=1)
        for _ in range(steps):
            self.step()
        values = self.scopes[0]
        outputs = [values[-1]] if values else [self.args[0]]
        outputs += [v for v in self.wanted_results() if v in values and v not in outputs]
        for _ in range(self.pick([0, 1, 2])):
            extra = self.pick(values or self.args)
            if extra not in outputs:
                outputs.append(extra)
        if self.chance(5):
            outputs.append(self.pick(self.args))  # a result that is an argument
        params = ", ".join(f"{a.name}: {a.type}" for a in self.args)
        types = ", ".join(v.type for v in outputs)
        results = types if len(outputs) == 1 else f"({types})"
        body = "\n".join("  " + line for line in self.blocks[0])
        text = (
            f"func.func @main({params}) -> {results} {{\n{body}\n"
            f"  func.return {', '.join(v.name for v in outputs)} : {types}\n}}\n"
        )
        arguments = [Argument(a.name, a.sizes, a.dtype, a.type) for a in self.args]
        used = sorted({b for a in self.args for d in a.sizes for s in d[1] for b in symbols_in(s)})
        return RandomProgram(text, arguments, self.shapes, used)

    def wanted_results(self) -> list[Value]:
        """Values that the function should return besides the last one."""
        return self.results


def groups_text(groups: Sequence[Sequence[int]]) -> str:
    return "[" + ", ".join("[" + ", ".join(map(str, g)) + "]" for g in groups) + "]"


def programs_made_by(
    generator: type[Generator], max_steps: int = 7
) -> st.SearchStrategy[RandomProgram]:
    """Random well-typed programs of `generator` (see the module docstring) of 1 to
    `max_steps` steps."""

    @st.composite
    def draw_program(draw: Draw[Any]) -> RandomProgram:
        symbols = SYMBOLS[: draw(st.integers(1, len(SYMBOLS)))]
        return generator(draw, symbols).function(draw(st.integers(1, max_steps)))

    return draw_program()


def programs(max_steps: int = 7) -> st.SearchStrategy[RandomProgram]:
    """Random well-typed programs of the base `Generator`."""
    return programs_made_by(Generator, max_steps)


@dataclass
class Case:
    program: RandomProgram
    draws: list[dict[str, int]]
    seed: int
    device: str

    def shapes(self) -> list[list[tuple[int, ...]]]:
        return [self.program.arg_shapes(d) for d in self.draws]


@st.composite
def cases(
    draw: Draw[Any], max_steps: int = 7, made_by: st.SearchStrategy[RandomProgram] | None = None
) -> Case:
    """A program (of `made_by`, else `programs`), 1-3 assignments of its symbols, a seed
    for the values and a device."""
    program = draw(made_by if made_by is not None else programs(max_steps))
    draws = []
    for _ in range(draw(st.integers(1, 3))):
        dims = {s: draw(st.sampled_from(DIM_POOL)) for s in program.symbols}
        draws.append(program.fit(dims))
    seed = draw(st.integers(0, 2**16))
    device = draw(st.sampled_from(["host", "ascend910b"]))
    return Case(program, draws, seed, device)


# --------------------------------------------------------------------------
# Inputs and the comparison
# --------------------------------------------------------------------------


def make_inputs(types: Sequence[tuple[str, Any]], seed: int) -> list[Any]:
    """Arguments for (element type, shape) pairs: multiples of 1/4 in [-2, 2]
    for floats, integers in [-4, 4], random booleans; for an `index`
    argument the "shape" is its value."""
    rng = np.random.default_rng(seed)
    args: list[Any] = []
    for dtype, shape in types:
        if dtype == "index":
            args.append(int(shape))
        elif dtype == "i1":
            args.append(rng.random(shape) < 0.5)
        elif dtype in FLOATS:
            args.append((rng.integers(-8, 9, size=shape) / 4).astype(NUMPY[dtype]))
        else:
            args.append(rng.integers(-4, 5, size=shape).astype(NUMPY[dtype]))
    return args


def widened(text: str) -> str:
    """The program with every f32 made f64 (tensor elements and scalars): a more
    precise reference."""
    return re.sub(r"(?<=[x<\s(,])f32\b", "f64", text)


TOLERANCES = {  # dtype -> (rtol, atol relative to the result's largest magnitude)
    np.dtype(np.float16): (2e-3, 2e-3),
    np.dtype(np.float32): (2e-5, 2e-6),
    np.dtype(np.float64): (1e-12, 1e-13),
}
NOISE_FACTOR = 16
"""How many times the f32 reference's own rounding noise the VM may be off."""


def compare(got: Any, want: Any, precise: Any, what: str) -> None:
    """`got` (the VM) against `want` (the reference); `precise` is the
    reference run in f64, which bounds the rounding noise of `want`."""
    assert isinstance(got, np.ndarray), f"{what}: got a {type(got).__name__}"
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != {want.dtype}"
    if want.dtype.kind != "f":
        np.testing.assert_array_equal(got, want, err_msg=what)
        return
    with np.errstate(invalid="ignore"):  # inf - inf where both are inf
        _compare_floats(got, want, precise, what)


def _compare_floats(got: Any, want: Any, precise: Any, what: str) -> None:
    g, w = got.astype(np.float64), want.astype(np.float64)
    p = np.asarray(precise, np.float64)
    np.testing.assert_array_equal(np.isnan(g), np.isnan(w), err_msg=f"{what}: NaN positions")
    np.testing.assert_array_equal(
        np.where(np.isinf(g), g, 0), np.where(np.isinf(w), w, 0), err_msg=f"{what}: infinities"
    )
    assert p.shape == w.shape, f"{what}: the f64 reference has shape {p.shape}"
    finite = np.isfinite(w)
    noise = float(np.max(np.abs(w - p)[finite & np.isfinite(p)], initial=0.0))
    scale = float(np.max(np.abs(w[finite]), initial=1.0))
    rtol, atol = TOLERANCES[want.dtype]
    tol = atol * max(scale, 1.0) + NOISE_FACTOR * noise + rtol * np.abs(w)
    bad = finite & ~(np.abs(g - w) <= tol)
    if bad.any():
        i = tuple(int(x) for x in np.argwhere(bad)[0])
        raise AssertionError(
            f"{what}: {int(bad.sum())} of {bad.size} elements differ; at {i} the VM gives "
            f"{g[i]!r}, the reference {w[i]!r} (f64 reference {p[i]!r}, tolerance {tol[i]:.3g})"
        )


def as_tuple(x: Any) -> tuple[Any, ...]:
    return x if isinstance(x, tuple) else (x,)


def check_call(program: Any, text: str, args: Sequence[Any], what: str = "") -> None:
    """One call of a compiled program against the reference interpreter."""
    want = as_tuple(dvm.interpret(text, *args))
    wide_args = [
        a.astype(np.float64)
        if isinstance(a, np.ndarray | np.generic) and a.dtype == np.float32
        else a
        for a in args
    ]
    precise = as_tuple(dvm.interpret(widened(text), *wide_args))
    # a first call at a shape runs unplanned, the second planned and bound, the third
    # (of a program that is one launch) as the signature's one closure
    for call in ("first call", "second call", "third call"):
        got = as_tuple(program(*args))
        assert len(got) == len(want), f"{what}: {len(got)} results, expected {len(want)}"
        for i, (g, w, p) in enumerate(zip(got, want, precise, strict=True)):
            compare(g, w, p, f"{what}, {call}, result {i}")


def check_case(case: Case) -> None:
    program = dvm.compile(case.program.text, device=case.device)
    types = [a.dtype for a in case.program.arguments]
    for dims in case.draws:
        shapes = case.program.arg_shapes(dims)
        args = make_inputs(list(zip(types, shapes, strict=True)), case.seed)
        check_call(program, case.program.text, args, f"dims {dims}")


def regression_text(case: Case, message: str) -> str:
    """A regression file for a failing case: a header saying what failed and
    on which inputs (read back by `read_regression`), then the program."""
    header = ["// Found by tests/test_random_programs.py: " + " ".join(message.split())[:300]]
    for dims, shapes in zip(case.draws, case.shapes(), strict=True):
        header.append(f"// symbols: {' '.join(f'{k}={v}' for k, v in dims.items())}")
        header.append(f"// shapes: {' '.join(shape_text(s) for s in shapes)}")
    header += [f"// seed: {case.seed}", f"// device: {case.device}"]
    return "\n".join(header) + "\n" + case.program.text


def shape_text(shape: Sequence[int]) -> str:
    return "x".join(map(str, shape)) if shape else "scalar"


@dataclass
class Regression:
    """A regression program and the calls it is checked on."""

    text: str
    calls: list[list[Any]]
    """Each call's argument shapes (one `// shapes:` line each; an index
    argument's value is written `index=3`)."""
    seed: int
    device: str
    xfail: str | None = None
    """Why it still fails (`// xfail: ...`): a known bug, reported, not fixed."""


def parse_shapes(text: str) -> list[Any]:
    """`3x4 5 scalar index=2` -> [(3, 4), (5,), (), 2]."""
    out: list[Any] = []
    for s in text.split():
        if s.startswith("index="):
            out.append(int(s.removeprefix("index=")))
        else:
            out.append(() if s == "scalar" else tuple(int(d) for d in s.split("x")))
    return out


def read_regression(text: str) -> Regression:
    """The program and inputs of a regression file (see `regression_text`)."""
    calls: list[list[Any]] = []
    fields: dict[str, str] = {}
    for line in text.splitlines():
        m = re.match(r"//\s*(shapes|seed|device|xfail):\s*(.*)$", line)
        if m and m[1] == "shapes":
            calls.append(parse_shapes(m[2]))
        elif m:
            fields[m[1]] = m[2].strip()
    if not calls:
        raise ValueError("a regression file needs a `// shapes: ...` line")
    return Regression(
        text, calls, int(fields.get("seed", "0")), fields.get("device", "host"), fields.get("xfail")
    )


def argument_types(text: str) -> list[str]:
    """The element type of each argument of the program's only function."""
    from xdsl.dialects.builtin import IndexType

    from dvm.arguments import find_entry, numpy_dtype

    func = find_entry(dvm.parse(text), None)
    names = {np.dtype(v): k for k, v in NUMPY.items()}
    return [
        "index" if isinstance(t, IndexType) else names[numpy_dtype(t)]
        for t in func.function_type.inputs.data
    ]


def check_regression(reg: Regression) -> None:
    """Compile once, then every recorded call against the reference."""
    types = argument_types(reg.text)
    program = dvm.compile(reg.text, device=reg.device)
    for shapes in reg.calls:
        args = make_inputs(list(zip(types, shapes, strict=True)), reg.seed)
        check_call(program, reg.text, args, f"shapes {' '.join(map(str, shapes))}")
