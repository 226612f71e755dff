"""The program model: what a bytecode binary holds, as plain immutable records.

This is the contract a compiler targets: build a `Program` from these
constructors, `encode` it, and the VM `load`s the bytes. All references
between tables are indices (slot `s3`, register `r0`, view `v1`, argument
`a2`); every size, offset and stride is a *slot*, an int64 computed once per
specialization from the arguments' dims (see `ExprOp`).

    Program(
        args=(Arg(DType.F32, 2), ...),          # global arrays: dtype and rank
        n_params=0,                             # caller-supplied ints
        slots=(Slot((Tok.dim(0, 0),)), ...),    # postfix int expressions
        grid=(3,),                              # 1-3 slots: grid extents
        registers=(Register(DType.F32, (4, 5), offset=6), ...),
        views=(View(arg=0, offset=7, dims=(ViewDim(size=0, stride=1, index=Index.grid(0),
                                                   tile=4), ...)), ...),
        code=(Instr.of("load", 0, 0), ...),
    )
"""

# No `from __future__ import annotations` here: `typing.NamedTuple` compiles each field's
# annotation given as text when its class is made (docs/performance.md).
import math
import operator
from collections.abc import Sequence
from typing import Any, NamedTuple

from dvm.vm.isa import (
    BY_NAME,
    WRITES_MEMORY,
    AccKind,
    Cat,
    DType,
    ExprOp,
    ExtentKind,
    Kind,
    OpDef,
    ReduceKind,
    ScalarTag,
)

MAX_ARRAY_BYTES = 2**62
"""numpy refuses arrays (even empty ones) whose dims multiply past this: a program's
views and tiles may not (the fast path, the table walk and the unplanned executor all
test it)."""


def nominal_bytes(shape: tuple[int, ...], itemsize: int) -> int:
    """What numpy checks against its size limit: the product of the non-zero dims."""
    return math.prod(max(n, 1) for n in shape) * itemsize


ARRAY_SHAPE, ARRAY_DTYPE = operator.attrgetter("shape"), operator.attrgetter("dtype")
C_CONTIGUOUS = operator.attrgetter("flags.c_contiguous")
"""An array's shape, dtype and C order, for checks of many arrays by C-level `map`s."""


class Arg(NamedTuple):
    """A global argument: a C-contiguous numpy array of this dtype and rank."""

    dtype: DType
    rank: int


class Tok(NamedTuple):
    """One token of a slot expression (postfix). `a`, `b` are the leaf's operands."""

    op: ExprOp
    a: int = 0
    b: int = 0

    @staticmethod
    def dim(arg: int, axis: int) -> "Tok":
        return Tok(ExprOp.DIM, arg, axis)

    @staticmethod
    def const(value: int) -> "Tok":
        return Tok(ExprOp.CONST, value)

    @staticmethod
    def param(index: int) -> "Tok":
        return Tok(ExprOp.PARAM, index)

    @staticmethod
    def slot(index: int) -> "Tok":
        return Tok(ExprOp.SLOT, index)

    @staticmethod
    def cores() -> "Tok":
        return Tok(ExprOp.CORES)

    @staticmethod
    def binop(op: ExprOp) -> "Tok":
        return Tok(op)


class Slot(NamedTuple):
    """A parameter slot: an int64 computed by a postfix expression over dims/params."""

    expr: tuple[Tok, ...]


class Index:
    """Index sources of a view dim, as stored (u8): which counter tiles the dim.

    NONE: the dim is not tiled (the tile covers the whole `size`).
    grid(g): tile number along grid axis g (codes 1..3).
    loop(l): iteration of the enclosing loop at depth l (codes 16..23).
    """

    NONE = 0
    GRID0 = 1
    LOOP0 = 16

    @staticmethod
    def grid(axis: int) -> int:
        return Index.GRID0 + axis

    @staticmethod
    def loop(level: int) -> int:
        return Index.LOOP0 + level

    @staticmethod
    def is_grid(code: int) -> bool:
        return Index.GRID0 <= code < Index.GRID0 + 3

    @staticmethod
    def is_loop(code: int) -> bool:
        return Index.LOOP0 <= code < Index.LOOP0 + 8


class ViewDim(NamedTuple):
    """One dim of a view: `size` and `stride` (elements) and its tiling.

    The tile with counter value i covers [i*tile, min((i+1)*tile, size)), so
    tails are exact. `tile` is a slot, required iff `index` is not NONE.
    """

    size: int
    stride: int
    index: int = Index.NONE  # pyright: ignore[reportIncompatibleMethodOverride]
    """(A record's `index` field hides the tuple method of its name, which nothing calls.)"""
    tile: int | None = None


class View(NamedTuple):
    """How `load`/`store` address argument `arg` (viewed as a flat array).

    Element (i0, i1, ...) of the view is flat element
    `offset + i0*stride0 + i1*stride1 + ...`; stride 0 broadcasts.
    """

    arg: int
    offset: int
    dims: tuple[ViewDim, ...]


class Register(NamedTuple):
    """A tile buffer: `shape` slots give its largest shape, `offset` slot its byte offset."""

    dtype: DType
    shape: tuple[int, ...]
    offset: int


class Scalar(NamedTuple):
    """A SCALAR operand: an f64 immediate (tag IMM) or the value of a slot."""

    tag: ScalarTag
    value: float | int

    @staticmethod
    def imm(value: float) -> "Scalar":
        return Scalar(ScalarTag.IMM, float(value))

    @staticmethod
    def slot(index: int) -> "Scalar":
        return Scalar(ScalarTag.SLOT, index)


class Extent(NamedTuple):
    """One entry of a SHAPE operand; see `ExtentKind`."""

    kind: ExtentKind
    index: int  # pyright: ignore[reportIncompatibleMethodOverride] (as `ViewDim.index`)
    dim: int = 0

    @staticmethod
    def slot(index: int) -> "Extent":
        return Extent(ExtentKind.SLOT, index)

    @staticmethod
    def view_dim(view: int, dim: int) -> "Extent":
        return Extent(ExtentKind.VIEW_DIM, view, dim)

    @staticmethod
    def reg_dim(reg: int, dim: int) -> "Extent":
        return Extent(ExtentKind.REG_DIM, reg, dim)


Operand = Any
"""int for REG/VIEW/SLOT/AXES/FLAGS, DType, ReduceKind, AccKind, Scalar, tuple[Extent]."""


class Instr(NamedTuple):
    """One instruction: an opcode (a row of the ISA table) and its operands."""

    op: OpDef
    operands: tuple[Operand, ...]

    @staticmethod
    def of(name: str, *operands: Operand) -> "Instr":
        """Build by mnemonic, converting plain Python values to operand types.

        Floats for SCALAR become immediates (use `Scalar.slot(i)` for a slot);
        a SHAPE may be given as a tuple of `Extent` or of ints (slots).
        """
        op = BY_NAME[name]
        if len(operands) != len(op.operands):
            raise ValueError(f"{name} takes {len(op.operands)} operands, got {len(operands)}")
        out = tuple(_coerce(kind, v) for (_, kind), v in zip(op.operands, operands, strict=True))
        return Instr(op, out)


def _coerce(kind: Kind, v: Operand) -> Operand:
    """Normalize a convenience operand value to its canonical Python type."""
    if kind is Kind.SCALAR:
        return v if isinstance(v, Scalar) else Scalar.imm(float(v))
    if kind is Kind.SHAPE:
        entries: Sequence[Any] = v
        return tuple(e if isinstance(e, Extent) else Extent.slot(int(e)) for e in entries)
    if kind is Kind.DTYPE:
        return DType(v)
    if kind is Kind.REDUCE_KIND:
        return ReduceKind(v)
    if kind is Kind.ACC_KIND:
        return AccKind(v)
    return v


class ProgramCache:
    """What the VM derives from a program once and keeps with it, each field filled on
    first use by one module. (The fields' types come from later stages, which this
    module may not import; each module's accessor is typed.)"""

    __slots__ = ("by_launch", "specializations", "static", "validated")

    def __init__(self) -> None:
        self.validated: Any = None
        """(`validate.LoopInfo`, `slots.SlotFn`): its loop structure and compiled slot
        table, made once it is found valid (`loader.validated`)."""
        self.static: Any = None
        """Its `static.Static` facts, which every specialization shares
        (`static.static_info`)."""
        self.specializations: dict[Any, Any] = {}
        """(shapes and params, device, step bound) -> `plan.Specialization`: the cache of
        `specialize.specialize` (at most `specialize.MAX_CACHED`)."""
        self.by_launch: dict[Any, Any] = {}
        """(shapes, params, device) -> `plan.Specialization`: what `launch.launch` looks
        up first, emptied whenever `specializations` drops one."""


class Program:
    """A decoded (not necessarily validated) bytecode program: immutable, equal to
    another with the same tables. (A plain class: a frozen `@dataclass` would generate
    its six methods with `exec` each time the module is imported, which a compile
    cache hit in a fresh process pays for.)"""

    FIELDS = ("args", "n_params", "slots", "grid", "registers", "views", "code")
    """The tables, which a binary holds; equality, hashing and `repr` compare them."""

    __slots__ = (*FIELDS, "cache", "name", "offsets")

    args: tuple[Arg, ...]
    n_params: int
    slots: tuple[Slot, ...]
    grid: tuple[int, ...]
    registers: tuple[Register, ...]
    views: tuple[View, ...]
    code: tuple[Instr, ...]
    offsets: "Offsets | None"
    """Byte offsets of each table entry and instruction, when decoded from bytes."""
    name: str
    """What the compiler called it (the kernel's name; a binary holds none): it names
    the program's generated code."""
    cache: ProgramCache
    """What the VM derives from the program once (a program made by `replace` starts
    with an empty one)."""

    def __init__(
        self,
        args: tuple[Arg, ...],
        n_params: int,
        slots: tuple[Slot, ...],
        grid: tuple[int, ...],
        registers: tuple[Register, ...],
        views: tuple[View, ...],
        code: tuple[Instr, ...],
        offsets: "Offsets | None" = None,
        name: str = "",
    ) -> None:
        values = (args, n_params, slots, grid, registers, views, code, offsets, name)
        set_field = object.__setattr__  # (the class's own `__setattr__` refuses)
        for field_name, value in zip((*self.FIELDS, "offsets", "name"), values, strict=True):
            set_field(self, field_name, value)
        set_field(self, "cache", ProgramCache())

    def tables(self) -> tuple[Any, ...]:
        """The values of `FIELDS`, in order."""
        return (
            self.args,
            self.n_params,
            self.slots,
            self.grid,
            self.registers,
            self.views,
            self.code,
        )

    def replace(self, **changes: Any) -> "Program":
        """A new program with the fields named in `changes` replaced (and nothing derived)."""
        given = {name: getattr(self, name) for name in (*self.FIELDS, "offsets", "name")}
        return Program(**(given | changes))

    def __eq__(self, other: object) -> bool:
        if type(other) is not Program:
            return NotImplemented
        return self.tables() == other.tables()

    def __hash__(self) -> int:
        return hash(self.tables())

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.FIELDS)
        return f"Program({fields}, name={self.name!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        """How `copy` and `pickle` make it again (they would set its fields one by one)."""
        return Program, (*self.tables(), self.offsets, self.name)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"a Program is immutable: cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"a Program is immutable: cannot delete {name!r}")


class Offsets(NamedTuple):
    """Where each part of a program starts in its binary (for error messages)."""

    slots: tuple[int, ...]
    grid: int
    registers: tuple[int, ...]
    views: tuple[int, ...]
    code: tuple[int, ...]
    end: int


def stored_views(program: Program) -> frozenset[int]:
    """The views an instruction writes memory through (a store's, a scatter's)."""
    return frozenset(ins.operands[0] for ins in program.code if ins.op.cat in WRITES_MEMORY)


def measuring_views(program: Program) -> frozenset[int]:
    """The views no instruction reads or writes memory through: an iota's, or one that
    only gives extents. They are measures of a tile, so their argument may be empty
    where they are not (an iota over the columns of a batch of 0 rows)."""
    accessed = {
        ins.operands[k]
        for ins in program.code
        if ins.op.cat is not Cat.IOTA
        for k, (_, kind) in enumerate(ins.op.operands)
        if kind is Kind.VIEW
    }
    return frozenset(range(len(program.views))) - accessed


def calls_blas(program: Program) -> bool:
    """Whether some instruction of `program` calls BLAS: an mma, a float sum over one
    axis of a tile of rank 2 or more (`blas_sum`), or one of any rank that a `mul`
    right before it feeds (which may run as one matmul with it: `summed_product`)."""
    code, registers = program.code, program.registers
    return any(
        ins.op.cat in (Cat.MMA, Cat.GROUPED_MMA)
        or blas_sum(program, ins)
        or (k > 0 and summed_product(code[k - 1], ins, registers))
        for k, ins in enumerate(code)
    )


def summed_product(mul: Instr, reduce: Instr, registers: Sequence[Register]) -> bool:
    """Whether a float `mul` of two registers feeds a float `reduce sum` over one axis,
    whose destination is neither operand (a matmul's output must not overlap them):
    the pair `product_sums` may run as one matmul, whose product is dead after it."""
    if mul.op.cat is not Cat.BINARY or mul.op.name != "mul" or reduce.op.cat is not Cat.REDUCE:
        return False
    p, a, b = mul.operands
    s, src, kind, axes, _ = reduce.operands
    if src != p or kind is not ReduceKind.SUM or not axes or axes & (axes - 1) or s in (a, b):
        return False
    dtype = registers[p].dtype
    return dtype in (DType.F32, DType.F64) and all(registers[r].dtype is dtype for r in (a, b, s))


def blas_sum(p: Program, ins: Instr) -> bool:
    """Whether an instruction is a float sum over one axis or every axis of a tile of rank
    2 or more, which both executors run as a BLAS matrix product with a ones vector
    (`kernels.blas_row_sum`, `kernels.matmul_sum_axis`, `kernels.blas_whole_sum`); other
    reductions never call BLAS, so a launch need not hold it for them."""
    if ins.op.cat is not Cat.REDUCE or ins.operands[2] is not ReduceKind.SUM:
        return False
    dst, src, axes = ins.operands[0], ins.operands[1], ins.operands[3]
    floats = p.registers[dst].dtype in (DType.F32, DType.F64)
    rank = len(p.registers[src].shape)
    one_axis = axes != 0 and axes & (axes - 1) == 0
    return floats and (one_axis or axes == (1 << rank) - 1) and rank >= 2
