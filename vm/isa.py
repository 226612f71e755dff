"""The instruction set of the numpy device: ONE table, everything else derives from it.

Like Lua's `lopcodes.h`, each opcode is one row of `OPCODES`: its numeric
code, its mnemonic, its operands (a name and an operand *kind* each) and the
typing rule the validator applies. Codes are written in each row and never
change (they are the binary format); each category has a block of codes
(`BLOCKS`), and `check_opcodes` rejects a row outside its block or on another
row's code when this module is imported. The encoder and decoder (`binary.py`),
the validator (`validate.py`), the text assembler and disassembler
(`text.py`) and the executors (`kernels.py`) look rows up here; none of
them lists opcodes of its own. A compiler-side dialect can derive its ops
from the same rows.

Operand kinds and their encodings (little-endian):

| kind         | bytes                         | meaning                                   |
|--------------|-------------------------------|-------------------------------------------|
| REG          | u16                           | register index                            |
| VIEW         | u16                           | view index                                |
| SLOT         | u16                           | parameter slot index                      |
| SCALAR       | u8 tag + f64 (tag 0) / u16 (1)| immediate f64, or the value of a slot     |
| DTYPE        | u8                            | a `DType` code                            |
| AXES         | u8                            | bit mask, bit d = axis d                  |
| FLAGS        | u8                            | per-opcode named bits (`OpDef.flags`)     |
| REDUCE_KIND  | u8                            | sum / max / min / prod                    |
| ACC_KIND     | u8                            | add / max / min (for `store_acc`)         |
| SHAPE        | u8 rank + rank x EXTENT       | a tile shape, see `ExtentKind`            |
"""

# No `from __future__ import annotations` here: `typing.NamedTuple` compiles each field's
# annotation given as text when its class is made (docs/performance.md).
from collections.abc import Callable, Sequence
from enum import Enum, IntEnum
from typing import Any, NamedTuple

import numpy as np

from dvm.numerics import bfloat16, is_bfloat16
from dvm.vm import composites
from dvm.vm.erf import erf

VERSION = 2
"""Binary format version; `decode` rejects any other."""

MAGIC = b"DVMB"

MAX_RANK = 8
"""Largest rank of a register, view or argument (an AXES mask has 8 bits)."""

MAX_LOOP_DEPTH = 8
"""Deepest nesting of `loop` instructions."""

MAX_GRID_RANK = 3


class DType(IntEnum):
    """Element types, with the codes stored in the binary."""

    BOOL = 1
    I8 = 2
    I32 = 3
    I64 = 4
    F16 = 5
    F32 = 6
    F64 = 7
    U8 = 8
    I16 = 9
    U16 = 10
    U32 = 11
    U64 = 12
    BF16 = 13
    """bfloat16: `ml_dtypes.bfloat16` arrays (numpy has no bf16 of its own)."""

    @property
    def np(self) -> "np.dtype":
        """The numpy dtype of this element type."""
        return bfloat16() if self is DType.BF16 else _NP_DTYPES[self]

    @property
    def text(self) -> str:
        """The assembler spelling, as in MLIR: i1, i8, ui8, i16, ..., bf16, f16, f32, f64."""
        return _DTYPE_TEXT[self]

    @property
    def is_float(self) -> bool:
        return self in (DType.F16, DType.BF16, DType.F32, DType.F64)

    @property
    def is_int(self) -> bool:
        """A signed or unsigned integer type (not i1)."""
        return not self.is_float and self is not DType.BOOL

    @staticmethod
    def from_numpy(dtype: "np.dtype | type") -> "DType":
        """The DType of a numpy dtype; raises KeyError for unsupported ones."""
        dtype = np.dtype(dtype)
        found = _FROM_NP.get(dtype)
        if found is None:
            if not is_bfloat16(dtype):
                raise KeyError(dtype)
            return DType.BF16
        return found


_NP_DTYPES: dict[DType, np.dtype] = {
    DType.BOOL: np.dtype(np.bool_),
    DType.I8: np.dtype(np.int8),
    DType.I32: np.dtype(np.int32),
    DType.I64: np.dtype(np.int64),
    DType.F16: np.dtype(np.float16),
    DType.F32: np.dtype(np.float32),
    DType.F64: np.dtype(np.float64),
    DType.U8: np.dtype(np.uint8),
    DType.I16: np.dtype(np.int16),
    DType.U16: np.dtype(np.uint16),
    DType.U32: np.dtype(np.uint32),
    DType.U64: np.dtype(np.uint64),
}
"""The numpy dtypes of the element types but bf16 (`bfloat16()`, imported when used)."""
_FROM_NP = {v: k for k, v in _NP_DTYPES.items()}
_DTYPE_TEXT = {
    DType.BOOL: "i1",
    DType.I8: "i8",
    DType.I32: "i32",
    DType.I64: "i64",
    DType.F16: "f16",
    DType.F32: "f32",
    DType.F64: "f64",
    DType.U8: "ui8",
    DType.I16: "i16",
    DType.U16: "ui16",
    DType.U32: "ui32",
    DType.U64: "ui64",
    DType.BF16: "bf16",
}
DTYPE_BY_TEXT = {v: k for k, v in _DTYPE_TEXT.items()}


class Kind(Enum):
    """Operand kinds: how an operand is encoded and what it refers to."""

    REG = "reg"
    VIEW = "view"
    SLOT = "slot"
    SCALAR = "scalar"
    DTYPE = "dtype"
    AXES = "axes"
    FLAGS = "flags"
    REDUCE_KIND = "reduce_kind"
    ACC_KIND = "acc_kind"
    SHAPE = "shape"


class ReduceKind(IntEnum):
    """What `reduce` combines with; the identity is the result over no elements."""

    SUM = 0
    MAX = 1
    MIN = 2
    PROD = 3


class AccKind(IntEnum):
    """How `store_acc` combines a tile with what global memory already holds."""

    ADD = 0
    MAX = 1
    MIN = 2


class ScalarTag(IntEnum):
    """First byte of a SCALAR operand."""

    IMM = 0
    SLOT = 1


class ExtentKind(IntEnum):
    """First byte of each entry of a SHAPE operand.

    SLOT: the value of a slot (u16). VIEW_DIM: the extent of dim `d` (u8) of
    view `v` (u16) in the current tile. REG_DIM: dim `d` (u8) of register
    `r`'s (u16) current shape. The latter two make shapes follow tail tiles.
    """

    SLOT = 0
    VIEW_DIM = 1
    REG_DIM = 2


class ExprOp(IntEnum):
    """Tokens of a slot expression, evaluated on a stack (postfix).

    Leaves push: DIM(arg u16, axis u8), CONST(i64), PARAM(index u16: a
    caller-supplied int), SLOT(index u16: an earlier slot), CORES (no
    operand: the cores the launch is tiled for, >= 1; the VM chooses it,
    see `specialize.py`). The others pop
    two values b (top) and a, and push `a op b`. Division and modulo by zero
    give 0, so an expression can never raise.
    """

    DIM = 0
    CONST = 1
    PARAM = 2
    SLOT = 3
    CORES = 4
    ADD = 16
    SUB = 17
    MUL = 18
    FLOORDIV = 19
    CEILDIV = 20
    MOD = 21
    MIN = 22
    MAX = 23


EXPR_LEAVES = (ExprOp.DIM, ExprOp.CONST, ExprOp.PARAM, ExprOp.SLOT, ExprOp.CORES)


class Cat(Enum):
    """Opcode categories: how the validator types an op and the VM runs it."""

    NOP = "nop"
    LOAD = "load"
    STORE = "store"
    STORE_ACC = "store_acc"
    COPY = "copy"
    CONVERT = "convert"
    BROADCAST = "broadcast"
    FILL = "fill"
    SELECT = "select"
    REDUCE = "reduce"
    MMA = "mma"
    GROUPED_MMA = "grouped_mma"
    LOOP = "loop"
    ENDLOOP = "endloop"
    UNARY = "unary"
    BINARY = "binary"  # register op register
    BINARY_RS = "binary_rs"  # register op scalar
    BINARY_SR = "binary_sr"  # scalar op register
    IOTA = "iota"
    SCAN = "scan"
    TAKE = "take"
    SCATTER_ADD = "scatter_add"
    TOP_K = "top_k"


class TypeRule(Enum):
    """Which element types an elementwise op accepts, and what it produces."""

    FLOAT = "float -> same"
    NUMERIC = "int or float -> same"
    INT = "int -> same"
    CMP = "any (same) -> i1"
    LOGIC = "i1 -> i1"
    ANY_TO_BOOL = "any -> i1"
    FLOAT_TO_BOOL = "float -> i1"


Kernel = Callable[..., Any]
"""A numpy function an elementwise instruction runs (see `composites.py`)."""


class OpDef(NamedTuple):
    """One row of the ISA table."""

    code: int
    name: str
    cat: Cat
    operands: tuple[tuple[str, Kind], ...]
    rule: TypeRule | None = None
    flags: tuple[str, ...] = ()
    """Names of the bits of this op's FLAGS operand, bit 0 first."""
    doc: str = ""
    kernel: Kernel | None = None
    """An elementwise op's numpy function: `kernel(x, out=r)` or `kernel(a, b, out=r)`;
    another kind of instruction may carry the function both executors call."""
    int_kernel: Kernel | None = None
    """The function for integer operands, where it is not `kernel`."""

    def bit(self, flag: str) -> int:
        """The mask of the FLAGS bit named `flag`."""
        return 1 << self.flags.index(flag)

    def kernel_for(self, dtype: DType) -> Kernel:
        """The numpy function of an elementwise op on operands of `dtype`."""
        kernel = self.int_kernel if dtype.is_int and self.int_kernel else self.kernel
        assert kernel is not None, f"{self.name} is not elementwise"
        return kernel


_R = Kind.REG


class ElementwiseDef(NamedTuple):
    """One elementwise instruction: a unary op, or a binary op in its three forms.

    `code` is the opcode of a unary op, or of a binary op's register-register
    form; its `.rs` and `.sr` forms are `code + RS_OFFSET` and `code + SR_OFFSET`.
    """

    code: int
    name: str
    rule: TypeRule
    kernel: Kernel
    doc: str
    int_kernel: Kernel | None = None


RS_OFFSET = 0x20
"""A binary op's `.rs` (register, scalar) form has its code plus this."""
SR_OFFSET = 0x40
"""A binary op's `.sr` (scalar, register) form has its code plus this."""

# Opcodes are the binary format: a row keeps its code forever. A new op takes
# the next free code of its block (`next_free_code`, or the blocks' table in
# docs/bytecode-format.md); `check_opcodes` rejects a collision at import.
# Adding an op: docs/adding-an-op.md.
UNARY_OPS: tuple[ElementwiseDef, ...] = (
    ElementwiseDef(0x10, "neg", TypeRule.NUMERIC, np.negative, "-x"),
    ElementwiseDef(0x11, "abs", TypeRule.NUMERIC, np.absolute, "absolute value"),
    ElementwiseDef(0x12, "exp", TypeRule.FLOAT, np.exp, "e**x"),
    ElementwiseDef(0x13, "log", TypeRule.FLOAT, np.log, "natural log"),
    ElementwiseDef(0x14, "sqrt", TypeRule.FLOAT, np.sqrt, "square root"),
    ElementwiseDef(0x15, "rsqrt", TypeRule.FLOAT, composites.rsqrt, "1/sqrt(x)"),
    ElementwiseDef(0x16, "reciprocal", TypeRule.FLOAT, np.reciprocal, "1/x"),
    ElementwiseDef(0x17, "tanh", TypeRule.FLOAT, np.tanh, "tanh"),
    ElementwiseDef(0x18, "sigmoid", TypeRule.FLOAT, composites.sigmoid, "1/(1+exp(-x))"),
    ElementwiseDef(0x19, "erf", TypeRule.FLOAT, erf, "error function"),
    ElementwiseDef(0x1A, "floor", TypeRule.FLOAT, np.floor, "round down"),
    ElementwiseDef(0x1B, "ceil", TypeRule.FLOAT, np.ceil, "round up"),
    ElementwiseDef(0x1C, "round", TypeRule.FLOAT, np.rint, "round half to even"),
    ElementwiseDef(0x1D, "trunc", TypeRule.FLOAT, np.trunc, "round toward zero"),
    ElementwiseDef(0x1E, "logical_not", TypeRule.ANY_TO_BOOL, np.logical_not, "x == 0"),
    ElementwiseDef(0x1F, "isfinite", TypeRule.FLOAT_TO_BOOL, np.isfinite, "not inf and not nan"),
    ElementwiseDef(0x80, "sin", TypeRule.FLOAT, np.sin, "sine, x in radians"),
    ElementwiseDef(0x81, "cos", TypeRule.FLOAT, np.cos, "cosine, x in radians"),
    ElementwiseDef(0x82, "tan", TypeRule.FLOAT, np.tan, "tangent, x in radians"),
    ElementwiseDef(0x83, "asin", TypeRule.FLOAT, np.arcsin, "arcsine, in [-pi/2, pi/2]"),
    ElementwiseDef(0x84, "acos", TypeRule.FLOAT, np.arccos, "arccosine, in [0, pi]"),
    ElementwiseDef(0x85, "atan", TypeRule.FLOAT, np.arctan, "arctangent, in [-pi/2, pi/2]"),
    ElementwiseDef(0x86, "sinh", TypeRule.FLOAT, np.sinh, "hyperbolic sine"),
    ElementwiseDef(0x87, "cosh", TypeRule.FLOAT, np.cosh, "hyperbolic cosine"),
    ElementwiseDef(0x88, "asinh", TypeRule.FLOAT, np.arcsinh, "inverse hyperbolic sine"),
    ElementwiseDef(0x89, "acosh", TypeRule.FLOAT, np.arccosh, "inverse hyperbolic cosine"),
    ElementwiseDef(0x8A, "atanh", TypeRule.FLOAT, np.arctanh, "inverse hyperbolic tangent"),
    ElementwiseDef(0x8B, "expm1", TypeRule.FLOAT, np.expm1, "e**x - 1"),
    ElementwiseDef(0x8C, "log1p", TypeRule.FLOAT, np.log1p, "log(1 + x)"),
    ElementwiseDef(0x8D, "isinf", TypeRule.FLOAT_TO_BOOL, np.isinf, "x is +inf or -inf"),
    ElementwiseDef(0x8E, "isnan", TypeRule.FLOAT_TO_BOOL, np.isnan, "x is NaN"),
    ElementwiseDef(0x8F, "sign", TypeRule.NUMERIC, np.sign, "-1, 0 or 1 (NaN stays NaN)"),
    ElementwiseDef(0x90, "bitwise_not", TypeRule.INT, np.invert, "~x, every bit flipped"),
)
"""The unary instructions; their block continues at 0x80."""

BINARY_OPS: tuple[ElementwiseDef, ...] = (
    ElementwiseDef(0x20, "add", TypeRule.NUMERIC, np.add, "a + b"),
    ElementwiseDef(0x21, "sub", TypeRule.NUMERIC, np.subtract, "a - b"),
    ElementwiseDef(0x22, "mul", TypeRule.NUMERIC, np.multiply, "a * b"),
    ElementwiseDef(
        0x23,
        "div",
        TypeRule.NUMERIC,
        np.divide,
        "a / b; ints round toward zero, x/0 = 0",
        int_kernel=composites.int_div,
    ),
    ElementwiseDef(
        0x24,
        "pow",
        TypeRule.NUMERIC,
        np.power,
        "a ** b; ints: negative exponent gives 1/a rounded to zero",
        int_kernel=composites.int_pow,
    ),
    ElementwiseDef(0x25, "max", TypeRule.NUMERIC, np.maximum, "larger, NaN propagates"),
    ElementwiseDef(0x26, "min", TypeRule.NUMERIC, np.minimum, "smaller, NaN propagates"),
    ElementwiseDef(0x27, "eq", TypeRule.CMP, np.equal, "a == b"),
    ElementwiseDef(0x28, "ne", TypeRule.CMP, np.not_equal, "a != b"),
    ElementwiseDef(0x29, "lt", TypeRule.CMP, np.less, "a < b"),
    ElementwiseDef(0x2A, "le", TypeRule.CMP, np.less_equal, "a <= b"),
    ElementwiseDef(0x2B, "gt", TypeRule.CMP, np.greater, "a > b"),
    ElementwiseDef(0x2C, "ge", TypeRule.CMP, np.greater_equal, "a >= b"),
    ElementwiseDef(0x2D, "logical_and", TypeRule.LOGIC, np.logical_and, "a and b"),
    ElementwiseDef(0x2E, "logical_or", TypeRule.LOGIC, np.logical_or, "a or b"),
    ElementwiseDef(
        0x2F, "remainder", TypeRule.NUMERIC, np.remainder, "a % b, sign of b; ints: x % 0 = 0"
    ),
    ElementwiseDef(0x30, "fmod", TypeRule.NUMERIC, np.fmod, "C's fmod, sign of a; ints: x%0 = 0"),
    ElementwiseDef(0x31, "bitwise_and", TypeRule.INT, np.bitwise_and, "a & b"),
    ElementwiseDef(0x32, "bitwise_or", TypeRule.INT, np.bitwise_or, "a | b"),
    ElementwiseDef(0x33, "bitwise_xor", TypeRule.INT, np.bitwise_xor, "a ^ b"),
    ElementwiseDef(0x34, "shl", TypeRule.INT, np.left_shift, "a << b; b >= bits (unsigned): 0"),
    ElementwiseDef(
        0x35,
        "shr",
        TypeRule.INT,
        np.right_shift,
        "a >> b, arithmetic if signed; b >= bits (b unsigned) shifts all out",
    ),
    ElementwiseDef(0x36, "atan2", TypeRule.FLOAT, np.arctan2, "angle of (b, a), in [-pi, pi]"),
    ElementwiseDef(0x37, "copysign", TypeRule.FLOAT, np.copysign, "magnitude of a, sign of b"),
)
"""The binary instructions, each in three forms."""


def elementwise_row(
    op: ElementwiseDef,
    offset: int,
    suffix: str,
    cat: Cat,
    operands: tuple[tuple[str, Kind], ...],
) -> OpDef:
    """The row of one form of an elementwise op."""
    code, name = op.code + offset, op.name + suffix
    return OpDef(
        code, name, cat, operands, op.rule, doc=op.doc, kernel=op.kernel, int_kernel=op.int_kernel
    )


INDEX_ROWS: tuple[OpDef, ...] = (
    OpDef(
        0xC8,
        "iota",
        Cat.IOTA,
        (("dst", _R), ("src", Kind.VIEW), ("axis", Kind.AXES)),
        doc="dst = the index along view dim `axis` (one bit) of each element of src's "
        "current tile; reads no memory",
    ),
    OpDef(
        0xC9,
        "take",
        Cat.TAKE,
        (("dst", _R), ("src", Kind.VIEW), ("idx", _R)),
        doc="dst = element (e, idx[e]) of src's current tile for each e: src's last dim is "
        "the one indexed (idx broadcasts to dst); an idx outside it is an error",
    ),
)
"""The index instructions (`tensor.iota`, ...)."""


GROUPED_MATMUL_ROWS = (
    OpDef(
        0xD8,
        "gmma",
        Cat.GROUPED_MMA,
        (("dst", _R), ("a", _R), ("b", _R), ("sizes", _R), ("rows", Kind.VIEW)),
        doc="dst[i] = a[i] @ b[g], g the group of row i (rows from the rows view's tile "
        "start, in consecutive groups of `sizes` rows; zero past them)",
    ),
)
"""The grouped matmul's instruction (its own block: 0xd8-0xdb)."""


SCAN_ROWS = (
    OpDef(
        0xD0,
        "scan",
        Cat.SCAN,
        (
            ("dst", _R),
            ("src", _R),
            ("carry", _R),
            ("kind", Kind.REDUCE_KIND),
            ("axis", Kind.AXES),
            ("flags", Kind.FLAGS),
        ),
        flags=("exclusive",),
        doc="dst = running sum or prod of src along `axis` (one bit), in order, starting "
        "from carry (src's shape with 1 there); `exclusive` leaves each element out of "
        "its own; then carry = carry combined with all of src",
    ),
)
"""The scan instruction (`tensor.cumsum`, `tensor.cumprod`; its own block: 0xd0-0xd7)."""


SCATTER_ROWS = (
    OpDef(
        0xDC,
        "scatter_add",
        Cat.SCATTER_ADD,
        (("dst", Kind.VIEW), ("src", _R), ("idx", _R)),
        doc="element (e, idx[e]) of dst's current tile += src[e] for each e, in order "
        "(updates naming one element accumulate): dst's last dim is the one indexed (idx "
        "broadcasts to src); an idx outside it is an error",
    ),
)
"""The indexed store that adds (`tensor.scatter_add`; its own block: 0xdc-0xdf)."""

TOP_K_ROWS = (
    OpDef(
        0xE0,
        "top_k",
        Cat.TOP_K,
        (
            ("values", _R),
            ("indices", _R),
            ("src", _R),
            ("positions", _R),
            ("axis", Kind.AXES),
        ),
        doc="values, indices (k along `axis`, one bit) = the k largest of values and src "
        "along the axis, with their indices (positions: src's, broadcast to it): largest "
        "first, NaN above every number, equal ones by the lower index; both in place",
    ),
)
"""The merge of a top_k's carry with a chunk (`tensor.top_k`; its own block: 0xe0-0xe7)."""

BLOCK_ROWS = (*GROUPED_MATMUL_ROWS, *INDEX_ROWS, *SCAN_ROWS, *SCATTER_ROWS, *TOP_K_ROWS)
"""The rows of the blocks that hold one op family each."""


def _build_table() -> tuple[OpDef, ...]:
    """All rows: the control rows here, then the elementwise ones of `UNARY_OPS` and
    `BINARY_OPS` (a binary op in its three forms)."""
    rows = [
        OpDef(0x00, "nop", Cat.NOP, (), doc="do nothing"),
        OpDef(0x01, "load", Cat.LOAD, (("dst", _R), ("src", Kind.VIEW)), doc="tile of view -> reg"),
        OpDef(0x02, "store", Cat.STORE, (("dst", Kind.VIEW), ("src", _R)), doc="reg -> tile"),
        OpDef(
            0x03,
            "store_acc",
            Cat.STORE_ACC,
            (("dst", Kind.VIEW), ("src", _R), ("kind", Kind.ACC_KIND)),
            doc="tile = tile (add, max or min) reg, atomic per argument",
        ),
        OpDef(0x04, "copy", Cat.COPY, (("dst", _R), ("src", _R)), doc="dst = src"),
        OpDef(
            0x05,
            "convert",
            Cat.CONVERT,
            (("dst", _R), ("src", _R), ("to", Kind.DTYPE)),
            doc="dst = src cast to dtype `to` (must be dst's dtype)",
        ),
        OpDef(
            0x06,
            "broadcast",
            Cat.BROADCAST,
            (("dst", _R), ("src", _R), ("shape", Kind.SHAPE)),
            doc="dst = src broadcast (numpy rules) to shape",
        ),
        OpDef(
            0x07,
            "fill",
            Cat.FILL,
            (("dst", _R), ("value", Kind.SCALAR), ("shape", Kind.SHAPE)),
            doc="dst = value, with the given shape",
        ),
        OpDef(
            0x08,
            "select",
            Cat.SELECT,
            (("dst", _R), ("cond", _R), ("a", _R), ("b", _R)),
            doc="dst = cond ? a : b (broadcasting)",
        ),
        OpDef(
            0x09,
            "reduce",
            Cat.REDUCE,
            (
                ("dst", _R),
                ("src", _R),
                ("kind", Kind.REDUCE_KIND),
                ("axes", Kind.AXES),
                ("flags", Kind.FLAGS),
            ),
            flags=("keepdims",),
            doc="dst = reduce src over axes; empty extents give the identity",
        ),
        OpDef(
            0x0A,
            "mma",
            Cat.MMA,
            (("dst", _R), ("a", _R), ("b", _R), ("flags", Kind.FLAGS)),
            flags=("ta", "tb", "acc"),
            doc="dst (+)= op(a) @ op(b); ta/tb transpose the last two axes",
        ),
        OpDef(0x0B, "loop", Cat.LOOP, (("count", Kind.SLOT),), doc="repeat until endloop"),
        OpDef(0x0C, "endloop", Cat.ENDLOOP, (), doc="end of the innermost loop"),
        *BLOCK_ROWS,
    ]
    rows += [elementwise_row(op, 0, "", Cat.UNARY, (("dst", _R), ("src", _R))) for op in UNARY_OPS]
    forms = [
        (0, "", Cat.BINARY, (("dst", _R), ("a", _R), ("b", _R))),
        (RS_OFFSET, ".rs", Cat.BINARY_RS, (("dst", _R), ("a", _R), ("b", Kind.SCALAR))),
        (SR_OFFSET, ".sr", Cat.BINARY_SR, (("dst", _R), ("a", Kind.SCALAR), ("b", _R))),
    ]
    for offset, suffix, cat, operands in forms:
        rows += [elementwise_row(op, offset, suffix, cat, operands) for op in BINARY_OPS]
    return tuple(rows)


class Block(NamedTuple):
    """The opcodes kept for one kind of instruction: one or more ranges of codes."""

    name: str
    cats: frozenset[Cat]
    ranges: tuple[range, ...]

    def __contains__(self, code: object) -> bool:
        """Whether `code` is one of the block's opcodes (not one of its fields)."""
        return any(code in r for r in self.ranges)

    @property
    def text(self) -> str:
        """`0x10-0x1f, 0x80-0xbf`."""
        return ranges_text(self.ranges)


def ranges_text(ranges: Sequence[range]) -> str:
    """Ranges of codes as text: `0x10-0x1f, 0x80-0xbf`."""
    return ", ".join(f"0x{r.start:02x}-0x{r.stop - 1:02x}" for r in ranges)


_CONTROL = (Cat.NOP, Cat.LOAD, Cat.STORE, Cat.STORE_ACC, Cat.COPY, Cat.CONVERT, Cat.BROADCAST)
_CONTROL += (Cat.FILL, Cat.SELECT, Cat.REDUCE, Cat.MMA, Cat.LOOP, Cat.ENDLOOP)

BLOCKS: tuple[Block, ...] = (
    Block("control and data movement", frozenset(_CONTROL), (range(0x00, 0x10),)),
    Block("unary", frozenset({Cat.UNARY}), (range(0x10, 0x20), range(0x80, 0xC0))),
    Block("binary", frozenset({Cat.BINARY}), (range(0x20, 0x40),)),
    Block("binary .rs", frozenset({Cat.BINARY_RS}), (range(0x40, 0x60),)),
    Block("binary .sr", frozenset({Cat.BINARY_SR}), (range(0x60, 0x80),)),
    Block("grouped matmul", frozenset({Cat.GROUPED_MMA}), (range(0xD8, 0xDC),)),
    Block("index", frozenset({Cat.IOTA, Cat.TAKE}), (range(0xC8, 0xD0),)),
    Block("scan", frozenset({Cat.SCAN}), (range(0xD0, 0xD8),)),
    Block("scatter", frozenset({Cat.SCATTER_ADD}), (range(0xDC, 0xE0),)),
    Block("top_k", frozenset({Cat.TOP_K}), (range(0xE0, 0xE8),)),
)
"""Where each category's opcodes go; the codes no block holds (`codes_outside_blocks`)
are free for new blocks. The unary block's first range filled up, so it continues at
0x80 (codes never move)."""


def codes_outside_blocks() -> tuple[range, ...]:
    """The runs of opcodes no block holds, in order."""
    runs: list[range] = []
    for code in range(256):
        if any(code in block for block in BLOCKS):
            continue
        if runs and runs[-1].stop == code:
            runs[-1] = range(runs[-1].start, code + 1)
        else:
            runs.append(range(code, code + 1))
    return tuple(runs)


class OpcodeTableError(ValueError):
    """A row of the ISA table takes a code it may not (raised at import)."""


def next_free_code(block: Block, rows: Sequence[OpDef]) -> int | None:
    """The lowest code of `block` that no row takes, or None when it is full."""
    taken = {d.code for d in rows}
    return next((c for r in block.ranges for c in r if c not in taken), None)


def check_opcodes(rows: Sequence[OpDef], blocks: Sequence[Block] = BLOCKS) -> None:
    """Every row has its own name and its own code, inside its category's block; else
    an `OpcodeTableError` naming the ops involved and where the next free code is."""

    def block_of(d: OpDef) -> Block:
        return next(b for b in blocks if d.cat in b.cats)

    def where(d: OpDef) -> str:
        block = block_of(d)
        free = next_free_code(block, rows)
        room = f"its next free code is 0x{free:02x}" if free is not None else "it is full"
        return f"the {block.name} block is {block.text}; {room}"

    names: set[str] = set()
    holders: dict[int, OpDef] = {}
    for d in rows:
        if d.name in names:
            raise OpcodeTableError(f"ISA table: two rows are named '{d.name}'")
        names.add(d.name)
        other = holders.setdefault(d.code, d)
        if other is not d:
            misplaced = d if d.code not in block_of(d) or other.code in block_of(other) else other
            raise OpcodeTableError(
                f"ISA table: '{other.name}' and '{d.name}' both take opcode 0x{d.code:02x} "
                f"({where(misplaced)})"
            )
    for d in rows:
        if d.code not in block_of(d):
            raise OpcodeTableError(
                f"ISA table: opcode 0x{d.code:02x} of '{d.name}' is outside its block ({where(d)})"
            )


OPCODES: tuple[OpDef, ...] = _build_table()
"""The instruction set."""
check_opcodes(OPCODES)

BY_CODE: dict[int, OpDef] = {d.code: d for d in OPCODES}
BY_NAME: dict[str, OpDef] = {d.name: d for d in OPCODES}

WRITES_MEMORY = (Cat.STORE, Cat.STORE_ACC, Cat.SCATTER_ADD)
"""The categories that write global memory, through the view that is operand 0."""

KEEPDIMS = BY_NAME["reduce"].bit("keepdims")
"""`reduce`'s flag: reduced axes stay, with extent 1."""
EXCLUSIVE = BY_NAME["scan"].bit("exclusive")
"""`scan`'s flag: each element combines only the elements before it."""
TRANSPOSE_A, TRANSPOSE_B, ACCUMULATE = (BY_NAME["mma"].bit(f) for f in ("ta", "tb", "acc"))
"""`mma`'s flags: op(a) and op(b) transpose the last two axes; dst += instead of dst =."""


OPERAND_SIZES: dict[Kind, int] = {
    Kind.REG: 2,
    Kind.VIEW: 2,
    Kind.SLOT: 2,
    Kind.DTYPE: 1,
    Kind.AXES: 1,
    Kind.FLAGS: 1,
    Kind.REDUCE_KIND: 1,
    Kind.ACC_KIND: 1,
}
"""Fixed operand sizes in bytes; SCALAR and SHAPE are tagged/variable."""
