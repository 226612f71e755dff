"""The elementwise ops: one row each, from which every level derives.

A row names an elementwise instruction of the VM's ISA table (`dvm.vm.isa`),
which holds what the VM needs: the opcode, the typing rule, the numpy kernel
and a one-line meaning. The row adds what only the compiler knows: the
element types the tensor op accepts where they are fewer than the
instruction's, the reference function where the kernel is not a plain
numpy ufunc, the documented meaning where it says more than the
instruction's, and how accurate the op is.

Derived from the rows: the `tensor.<name>` op classes (`tensor.py`), their
`tile.<name>` mirrors (`tile.py`), the reference interpreter's functions
(`dvm/interpreter.py`), the tables of `docs/` (`dvm/tools/gendocs.py`) and
the tests' tolerances (`tests/tolerances.py`). Adding an op:
docs/adding-an-op.md.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from dvm import numerics
from dvm.vm.isa import BY_NAME, Cat, OpDef, TypeRule

ElementKind = Literal["float", "integer", "numeric", "bool", "any"]
"""Which element types an op accepts (see `tensor.ELEMENT_KINDS`)."""

WIDER: dict[ElementKind, tuple[ElementKind, ...]] = {
    "float": ("float", "numeric", "any"),
    "integer": ("integer", "numeric", "any"),
    "numeric": ("numeric", "any"),
    "bool": ("bool", "any"),
    "any": ("any",),
}
"""The kinds that include a kind."""

RULE_KINDS: dict[TypeRule, tuple[ElementKind, bool]] = {
    TypeRule.FLOAT: ("float", False),
    TypeRule.NUMERIC: ("numeric", False),
    TypeRule.INT: ("integer", False),
    TypeRule.CMP: ("any", True),
    TypeRule.LOGIC: ("bool", False),
    TypeRule.ANY_TO_BOOL: ("any", True),
    TypeRule.FLOAT_TO_BOOL: ("float", True),
}
"""An instruction's typing rule as (the operands' kind, whether the result is i1)."""


@dataclass(frozen=True)
class ElementwiseSpec:
    """One elementwise op, at every level."""

    name: str
    """`tensor.<name>`, `tile.<name>` and the ISA instruction `<name>`."""
    accepts: ElementKind | None = None
    """The operands' element kind, where the tensor op takes fewer than the instruction."""
    reference: Callable[..., Any] | None = None
    """The reference interpreter's function; by default the instruction's kernel, which
    must then be a numpy ufunc."""
    ulps: int = 0
    """How far a result may be from numpy's float64 result rounded to its type, in
    epsilons of that type (relative, and absolute near 0); 0: the same bits."""
    doc: str = ""
    """What it computes, in markdown, for docs/dialects/tensor.md; by default the
    instruction's meaning."""

    @property
    def instruction(self) -> OpDef:
        return BY_NAME[self.name]

    @property
    def arity(self) -> int:
        return 1 if self.instruction.cat is Cat.UNARY else 2

    @property
    def operand_kind(self) -> ElementKind:
        return self.accepts or self._rule()[0]

    @property
    def same_type(self) -> bool:
        """Whether the result has the operands' element type."""
        return not self._rule()[1] or self.operand_kind == "bool"

    @property
    def numpy_fn(self) -> Callable[..., Any]:
        """The reference function: `fn(x)` or `fn(a, b)` returns the result."""
        fn = self.reference or self.instruction.kernel
        assert fn is not None
        return fn

    @property
    def meaning(self) -> str:
        return self.doc or self.instruction.doc

    def _rule(self) -> tuple[ElementKind, bool]:
        rule = self.instruction.rule
        assert rule is not None
        return RULE_KINDS[rule]


ELEMENTWISE: tuple[ElementwiseSpec, ...] = (
    ElementwiseSpec("neg", doc=r"`-x` (integers wrap: `-(-128)` is `-128` in `i8`)"),
    ElementwiseSpec("abs", doc=r"`\|x\|` (integers wrap at the minimum)"),
    ElementwiseSpec("exp", ulps=4, doc="`e^x`"),
    ElementwiseSpec("log", ulps=4, doc="natural log; `log(0) = -inf`, negative gives NaN"),
    ElementwiseSpec("sqrt", doc="square root; negative gives NaN"),
    ElementwiseSpec("rsqrt", reference=numerics.rsqrt, ulps=4, doc="`1 / sqrt(x)`"),
    ElementwiseSpec("reciprocal", doc="`1 / x`"),
    ElementwiseSpec("tanh", ulps=4, doc="hyperbolic tangent"),
    ElementwiseSpec("sigmoid", reference=numerics.sigmoid, ulps=4, doc="`1 / (1 + e^-x)`"),
    ElementwiseSpec("erf", reference=numerics.erf, ulps=4),
    ElementwiseSpec("floor", doc="round toward -inf"),
    ElementwiseSpec("ceil", doc="round toward +inf"),
    ElementwiseSpec("round", doc="round to nearest, ties to even (numpy's `round`)"),
    ElementwiseSpec("trunc", doc="round toward zero"),
    ElementwiseSpec("logical_not", accepts="bool", doc="`not x`"),
    ElementwiseSpec("isfinite", doc="true where `x` is neither infinite nor NaN"),
    ElementwiseSpec("add", doc="`a + b`"),
    ElementwiseSpec("sub", doc="`a - b`"),
    ElementwiseSpec("mul", doc="`a * b`"),
    ElementwiseSpec(
        "div",
        reference=numerics.divide,
        doc="floats: `a / b` (IEEE: `1/0 = inf`); integers: rounds toward zero, "
        "and a zero divisor gives 0",
    ),
    ElementwiseSpec(
        "pow",
        reference=numerics.power,
        ulps=4,
        doc="`a ** b`; integers: exact (wrapping) repeated squaring, and a negative exponent "
        "gives `1 / a ** -b` rounded toward zero (1 for `a = 1`, +-1 for `a = -1`, else 0, "
        "`0 ** -n` included)",
    ),
    ElementwiseSpec("max", doc="elementwise maximum; NaN propagates (numpy's `maximum`)"),
    ElementwiseSpec("min", doc="elementwise minimum; NaN propagates"),
    ElementwiseSpec("eq", doc="`a == b`"),
    ElementwiseSpec("ne", doc="`a != b`"),
    ElementwiseSpec("lt", doc="`a < b`"),
    ElementwiseSpec("le", doc="`a <= b`"),
    ElementwiseSpec("gt", doc="`a > b`"),
    ElementwiseSpec("ge", doc="`a >= b`"),
    ElementwiseSpec("logical_and", doc="`a and b`"),
    ElementwiseSpec("logical_or", doc="`a or b`"),
    ElementwiseSpec("sin", ulps=4),
    ElementwiseSpec("cos", ulps=4),
    ElementwiseSpec("tan", ulps=4),
    ElementwiseSpec("asin", ulps=4, doc="arcsine, in `[-pi/2, pi/2]`; NaN outside `[-1, 1]`"),
    ElementwiseSpec("acos", ulps=4, doc="arccosine, in `[0, pi]`; NaN outside `[-1, 1]`"),
    ElementwiseSpec("atan", ulps=4, doc="arctangent, in `[-pi/2, pi/2]`"),
    ElementwiseSpec("sinh", ulps=4),
    ElementwiseSpec("cosh", ulps=4),
    ElementwiseSpec("asinh", ulps=4),
    ElementwiseSpec("acosh", ulps=4, doc="inverse hyperbolic cosine; NaN below 1"),
    ElementwiseSpec("atanh", ulps=4, doc="inverse hyperbolic tangent; `+-inf` at `+-1`"),
    ElementwiseSpec("expm1", ulps=4, doc="`e^x - 1`, accurate for small `x`"),
    ElementwiseSpec("log1p", ulps=4, doc="`log(1 + x)`, accurate for small `x`"),
    ElementwiseSpec("isinf", doc="true where `x` is `+inf` or `-inf`"),
    ElementwiseSpec("isnan", doc="true where `x` is NaN"),
    ElementwiseSpec("sign", doc="-1, 0 or 1 by the sign of `x` (0 for `+-0`, NaN for NaN)"),
    ElementwiseSpec("bitwise_not", doc="`~x`: every bit flipped"),
    ElementwiseSpec(
        "remainder",
        ulps=1,
        doc="`a % b` as Python and numpy compute it: the result has the sign of `b`; "
        "integers: `a % 0 = 0`, floats: NaN",
    ),
    ElementwiseSpec(
        "fmod",
        doc="C's `fmod`: `a - b * trunc(a / b)`, the sign of `a`; integers: `fmod(a, 0) = 0`, "
        "floats: NaN",
    ),
    ElementwiseSpec("bitwise_and", doc="`a & b`"),
    ElementwiseSpec("bitwise_or", doc="`a \\| b`"),
    ElementwiseSpec("bitwise_xor", doc="`a ^ b`"),
    ElementwiseSpec(
        "shl",
        doc="`a << b`; `b` read as unsigned: a shift by the bit width or more (or by a "
        "negative amount) gives 0",
    ),
    ElementwiseSpec(
        "shr",
        doc="`a >> b`: arithmetic (sign-filling) for signed types, logical for unsigned; `b` "
        "read as unsigned: a shift by the bit width or more gives 0, or -1 for a negative "
        "signed `a`",
    ),
    ElementwiseSpec(
        "atan2",
        ulps=4,
        doc="the angle of the point `(b, a)`, in `[-pi, pi]`, by the signs of both (signed "
        "zeros included: `atan2(+-0, -0) = +-pi`)",
    ),
    ElementwiseSpec(
        "copysign", doc="`\\|a\\|` with the sign bit of `b` (`-0.0` and NaN's included)"
    ),
)
"""Every elementwise op; the docs list them in this order."""


class ElementwiseTableError(ValueError):
    """A row of `ELEMENTWISE` that does not fit its instruction (raised at import)."""


def check_elementwise(specs: Sequence[ElementwiseSpec]) -> None:
    """Each row names an elementwise instruction (once), accepts no more element types
    than it does, and has a reference function that returns its result."""
    seen: set[str] = set()
    for spec in specs:
        where = f"elementwise op '{spec.name}'"
        op = BY_NAME.get(spec.name)
        if op is None or op.cat not in (Cat.UNARY, Cat.BINARY) or spec.name in seen:
            problem = "is listed twice" if spec.name in seen else "has no elementwise instruction"
            raise ElementwiseTableError(f"{where} {problem} in the ISA table (dvm.vm.isa)")
        seen.add(spec.name)
        rule_kind = spec._rule()[0]
        if rule_kind not in WIDER[spec.operand_kind]:
            raise ElementwiseTableError(
                f"{where} accepts {spec.operand_kind}, more than its instruction's {rule_kind}"
            )
        if spec.reference is None and not isinstance(op.kernel, np.ufunc):
            raise ElementwiseTableError(
                f"{where} needs a reference function: its kernel writes into `out`"
            )


check_elementwise(ELEMENTWISE)

BY_OP_NAME: dict[str, ElementwiseSpec] = {spec.name: spec for spec in ELEMENTWISE}
