"""`dvm.compile`: compile a program once, then run it on any shapes.

Compiling runs the whole pipeline (`dvm-pipeline`) once, symbolically, and
turns what is left on the host — the function's control flow, the arithmetic
on scalars (`arith` on `index`, integers and floats, as `dvm.interpret` computes
it), the kernel launches — into plain Python closures. Each kernel's
bytecode is decoded and validated once.

A call then does only cheap work:

1. checks the arguments (count, dtypes, ranks, static dims);
2. on a shape not seen before, binds the shape symbols and checks the
   guards; a failed broadcast guard whose dim is 1 re-specializes (a variant
   of the program compiled with that dim fixed to 1, cached), any other
   failed guard is a clear error; the result is cached by shape (LRU);
3. runs the host closures: `scf.if` takes one branch from a value read on
   the host, loops run on the host, each `tile.launch` evaluates its
   precompiled output shapes and runs its bytecode on the VM, which
   specializes the bytecode template for new shapes by evaluating its slots.

No xDSL object is built or interpreted after `compile` returns.
"""

from __future__ import annotations

import builtins
import gc
import itertools
import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import sympy
from sympy.printing.pycode import PythonCodePrinter
from xdsl.context import Context
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    FloatAttr,
    FunctionType,
    IndexType,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    TensorType,
)
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.rewriter import Rewriter

from dvm import vm
from dvm.call_errors import (
    FAILURES,
    check_outputs,
    fail,
    not_allocated,
    refused,
)
from dvm.dialects import bytecode as bc
from dvm.dialects import tensor as t
from dvm.dialects import tile
from dvm.errors import CallError, DvmError, ShapeError
from dvm.interpreter import (
    ARITH_OPS,
    argument_label,
    arith_function,
    check_argument,
    check_arguments,
    check_step,
    checked_axis,
    checked_indices,
    dense_array,
    find_entry,
    is_float,
    numpy_dtype,
    owned,
)
from dvm.ir import parse
from dvm.lowering.bytecode_to_vm import to_program
from dvm.lowering.pipeline import DvmPipelinePass
from dvm.lowering.tensor_to_tile import DEVICE, DEVICES, INDEX_DIMS
from dvm.lowering.tile_to_bytecode import dtype_name
from dvm.passes.errors import located
from dvm.passes.symbolic import (
    ARG_VALUES,
    SHAPE,
    SHAPES,
    VALUE,
    VALUES,
    Guard,
    GuardKind,
    Shape,
    argument_shapes,
    function_guards,
    index_symbol_name,
    parse_expr,
    shape_from_attr,
    split_condition,
    substitute,
)
from dvm.vm.program import ARRAY_DTYPE, ARRAY_SHAPE, C_CONTIGUOUS

Env = list[Any]
Step = Callable[["Call", Env], None]
Launch = tuple["Kernel", list[int], list[int], list[int | None] | None]
"""A launch's kernel, the slots of its inputs and outputs, and its outputs' arena places."""

MAX_KERNEL_PLANS = 512
"""Launch plans a kernel keeps (all are dropped when full; the VM keeps as many)."""
MAX_KEPT_BYTES = 16 << 20
"""The largest launch result kept for the next call (see `Arena`)."""
KEEP_INTERMEDIATES = True
"""Whether programs compiled from now on keep their intermediates' memory (`Arena`): a
switch for measuring what that saves (`benchmarks/specialization.py`)."""
FREEZE_AFTER_FIRST_COMPILE = True
"""Whether the first `compile` of the process ends by freezing what is alive (see
`freeze_once`); set it False before compiling to leave the collector alone."""
_frozen: list[bool] = []


class CompileError(DvmError):
    """The program cannot be compiled for this machine (names what and where)."""


# --------------------------------------------------------------------------
# Expressions as plain Python
# --------------------------------------------------------------------------


def python_function(
    exprs: Sequence[sympy.Expr], names: Sequence[str]
) -> Callable[..., tuple[int, ...]]:
    """A plain Python function of the named ints that computes integer
    expressions (generated once from sympy; calling it costs a microsecond).
    Subexpressions the expressions share are computed once (a tile size
    appears many times in a choice's condition)."""
    lines, values = python_lines(exprs)
    body = "".join(f"{v}, " for v in values)
    source = f"def f({', '.join(names)}):\n{''.join(lines)}    return ({body})\n"
    namespace: dict[str, Any] = {"math": math}
    exec(builtins.compile(source, "<dvm expressions>", "exec"), namespace)
    return namespace["f"]


class FloorDiv(sympy.Function):
    """floor(p / q) of integers p and q, kept whole (`cse` would pull out p/q)."""


class CeilDiv(sympy.Function):
    """ceiling(p / q) of integers p and q."""


def integer_division(expr: sympy.Expr) -> sympy.Basic:
    """`expr` with each floor and ceiling of a quotient as FloorDiv or CeilDiv.

    The tree is rebuilt without evaluating its nodes again: `expr.replace` would
    re-evaluate every Max and Min above a replaced node (sympy compares their
    arguments pairwise each time), which was a quarter of BERT's compile."""
    return _with_integer_division(expr, {})


def _with_integer_division(e: sympy.Basic, done: dict[sympy.Basic, sympy.Basic]) -> sympy.Basic:
    """`integer_division` of `e`, each subtree rebuilt once (`done`). (A function of its
    own, not a closure that calls itself: that would be a cycle, garbage for the
    collector after each compile.)"""
    got = done.get(e)
    if got is not None:
        return got
    args = tuple(_with_integer_division(a, done) for a in e.args)
    made: Any = e  # (sympy's constructors are untyped)
    if isinstance(e, sympy.floor | sympy.ceiling):
        num, den = sympy.fraction(sympy.together(args[0]))
        kind = FloorDiv if isinstance(e, sympy.floor) else CeilDiv
        made = e.func(args[0]) if den == 1 else kind(num, den)
    elif args != e.args:
        made = e.func(*args, evaluate=False)  # type: ignore[call-arg]
    done[e] = made
    return made


class IntegerPrinter(PythonCodePrinter):
    """Python for integer expressions: a floor or ceiling of a quotient is integer
    division, exact at any size (sympy's own printer divides in floats, where
    floor(49 / 49) came out 0, and calls math besides)."""

    def _print_FloorDiv(self, expr: FloorDiv) -> str:
        num, den = expr.args
        return f"(({self._print(num)}) // ({self._print(den)}))"

    def _print_CeilDiv(self, expr: CeilDiv) -> str:
        num, den = expr.args
        return f"(-(-({self._print(num)}) // ({self._print(den)})))"


def python_lines(exprs: Sequence[sympy.Expr]) -> tuple[list[str], list[str]]:
    """Lines computing the subexpressions `exprs` share, and each expression's text."""
    printer = IntegerPrinter()
    exact = [integer_division(e) for e in exprs]
    shared, reduced = sympy.cse(exact, symbols=sympy.numbered_symbols("_t"))
    lines = [f"    {t} = {printer.doprint(e)}\n" for t, e in shared]
    return lines, [f"int({printer.doprint(e)})" for e in reduced]


Sizes = Callable[
    [Sequence[np.ndarray[Any, Any]], dict[str, int]],
    tuple[list[tuple[tuple[int, ...], Any]], list[tuple[int, ...]], list[int]],
]
"""(inputs, the call's symbol values) -> the outputs' (shape, dtype), every argument's
shape (inputs, then outputs) and the params' values."""


def sizes_function(
    ranks: Sequence[int],
    names: Sequence[str],
    outputs: Sequence[tuple[Sequence[sympy.Expr], np.dtype[Any]]],
    params: Sequence[str],
) -> Sizes:
    """A kernel's `Sizes`, generated once: the input dims as locals `di_a`, `names`
    (params and other symbols) read from the call, then the output dims."""
    lines = ["def sizes(_I, _Y):\n"]
    for i, rank in enumerate(ranks):
        dims = "".join(f"d{i}_{a}, " for a in range(rank))
        lines.append(f"    ({dims}) = _S{i} = _I[{i}].shape\n")
    lines += [f"    {name} = _Y[{name!r}]\n" for name in names]
    computed, values = python_lines([e for dims, _ in outputs for e in dims])
    lines += computed
    shapes, k = [f"_S{i}" for i in range(len(ranks))], 0
    for j, (dims, _) in enumerate(outputs):
        lines.append(f"    _O{j} = ({''.join(f'{v}, ' for v in values[k : k + len(dims)])})\n")
        shapes.append(f"_O{j}")
        k += len(dims)
    outs = ", ".join(f"(_O{j}, _dt{j})" for j in range(len(outputs)))
    lines.append(f"    return [{outs}], [{', '.join(shapes)}], [{', '.join(params)}]\n")
    namespace: dict[str, Any] = {"math": math}
    namespace |= {f"_dt{j}": dtype for j, (_, dtype) in enumerate(outputs)}
    exec(builtins.compile("".join(lines), "<dvm sizes>", "exec"), namespace)
    return namespace["sizes"]


def binder_source(
    checks: Sequence[tuple[str, Attribute, np.dtype[Any] | None, tuple[int, ...]]],
    symbols: Sequence[tuple[int, int, str]],
    guard_names: Sequence[str],
    guards: int,
) -> str:
    """Python source of a program's binder: `bind(args)` returns the symbol values of the
    generic variant, or None when anything is not as the fast path expects (a wrong
    array, a guard that fails), for the full checks to say what and where, or to fix
    dims to 1. Made only from argument positions, axes and static dims."""
    lines = ["def bind(args):", f"    if len(args) != {len(checks)}: return None"]
    names = [f"a{i}" for i in range(len(checks))]
    lines.append(f"    [{', '.join(names)}] = args")
    for i, (_, _, dtype, declared) in enumerate(checks):
        if dtype is None:  # index or scalar: converted by the full check, which names a bad one
            lines.append(f"    _check({i}, a{i})")
            continue
        # numpy's built-in dtypes are singletons: any other equal one takes the full check
        wrong = f"type(a{i}) is not _ndarray or a{i}.dtype is not _dt{i}"
        if DYNAMIC_INDEX not in declared:  # a static shape: one tuple comparison
            lines.append(f"    if {wrong} or a{i}.shape != {declared!r}: return None")
            continue
        lines.append(f"    if {wrong}: return None")
        lines.append(f"    d{i} = a{i}.shape")
        tests = [f"len(d{i}) != {len(declared)}"]
        tests += [f"d{i}[{k}] != {n}" for k, n in enumerate(declared) if n != DYNAMIC_INDEX]
        lines.append(f"    if {' or '.join(tests)}: return None")
    values = {name: f"d{i}[{a}]" for i, a, name in symbols}  # the last occurrence, as `bind`
    if guards:  # each guard's two sides, from the symbols in `guard_names`' order
        lines.append(f"    g = _guards({', '.join(values[n] for n in guard_names)})")
        unequal = " or ".join(f"g[{2 * k}] != g[{2 * k + 1}]" for k in range(guards))
        lines.append(f"    if {unequal}: return None")
    found = ", ".join(f"{name!r}: {v}" for name, v in values.items())
    lines.append(f"    return {{{found}}}")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------
# Kernels
# --------------------------------------------------------------------------


@dataclass
class Kernel:
    """A kernel's validated bytecode, and how to size its outputs."""

    name: str
    program: vm.Program
    specializer: vm.Specializer
    """Binds the program to each new launch shape (`plans` keeps the results)."""
    device: vm.DeviceSpec
    sizes: Sizes
    """The outputs' shapes and dtypes, and the launch's shapes and params."""
    params: list[str]
    """Symbols the program needs that no input dim gives (from the call)."""
    shape_symbols: list[str] = field(default_factory=list)
    """Symbols only the outputs' dims name (e.g. a `broadcast_to` target
    taken from an argument that is no input of the kernel): the VM reads
    them from the output arrays, so they are no params; the call gives them."""

    def __post_init__(self) -> None:
        self.key_symbols = [*self.params, *self.shape_symbols]
        """What a plan depends on besides the inputs' shapes."""

    @property
    def uses_blas(self) -> bool:
        """Whether its launches call BLAS (mma, or row sums as matrix-vector products)."""
        return self.specializer.static.uses_blas

    @staticmethod
    def build(program_op: bc.ProgramOp, inputs: int, prepare: bool = True) -> Kernel:
        """The kernel of a bytecode program taking `inputs` inputs. With `prepare`, what
        every shape shares is made now (`vm.prepare`); otherwise at its first launch."""
        args = [op for op in program_op.body.block.ops if isinstance(op, bc.ArgOp)]
        params = [p.data for p in program_op.params.data]
        ranks = [len(arg.dims.data) for arg in args[:inputs]]
        names = [f"d{i}_{a}" for i, rank in enumerate(ranks) for a in range(rank)]
        rename: dict[sympy.Symbol, sympy.Expr] = {}
        for i, arg in enumerate(args[:inputs]):
            for a, d in enumerate(arg.dims.data):
                expr = parse_expr(d.data)
                if isinstance(expr, sympy.Symbol) and expr not in rename:
                    rename[expr] = sympy.Symbol(f"d{i}_{a}")
        outputs = [
            (
                [substitute(parse_expr(d.data), rename) for d in arg.dims.data],
                vm.DType[dtype_name(arg.dtype.data)].np,
            )
            for arg in args[inputs:]
        ]
        exprs = [e for dims, _ in outputs for e in dims]
        known = {*names, *params}
        shape_symbols = sorted({str(s) for e in exprs for s in e.free_symbols} - known)
        device = program_op.attributes.get(DEVICE)
        preset = device.data if isinstance(device, StringAttr) else "host"
        device_spec = DEVICES[preset]()
        program = vm.check(to_program(program_op))
        if prepare:
            vm.prepare(program, device_spec)
        return Kernel(
            name=program_op.sym_name.data,
            program=program,
            specializer=vm.Specializer(program, device_spec),
            device=device_spec,
            sizes=sizes_function(ranks, [*params, *shape_symbols], outputs, params),
            params=params,
            shape_symbols=shape_symbols,
        )

    plans: dict[tuple[Any, ...], tuple[list[tuple[tuple[int, ...], Any]], Any, int]] = field(
        default_factory=dict, repr=False
    )
    """Per (input shapes, symbol values): the outputs' shapes and dtypes, the VM's
    specialization and the serial number of the call that made them, so a call at
    a known shape only allocates and launches."""

    def run(
        self,
        inputs: Sequence[np.ndarray[Any, Any]],
        call: Call,
        kept: Sequence[int | None] | None = None,
    ) -> list[Any]:
        """Launch on `inputs`; returns the outputs: new arrays, or for those `kept` gives
        a place in the call's arena, arrays in its memory there."""
        spec, outputs, unplanned = self.bind(inputs, call, kept)
        if spec is None:  # no output element: nothing to run
            if call.stats is not None:
                call.stats.append((self.name, vm.LaunchStats.collect([], 0, 0, 0, 1)))
        elif call.stats is None:
            vm.launch(spec, [*inputs, *outputs], fresh=True, unplanned=unplanned)
        else:
            self.profile(spec, [*inputs, *outputs], call)
        return outputs

    def bind(
        self,
        inputs: Sequence[np.ndarray[Any, Any]],
        call: Call,
        kept: Sequence[int | None] | None = None,
    ) -> tuple[Any, list[Any], bool]:
        """What a launch on `inputs` needs: the VM specialization (None when no output
        has an element: the launch would write nothing, whatever its inputs), the
        outputs (allocated as `run` says) and whether the launch runs unplanned: a shape
        met in this call runs unplanned at each launch of the kernel (`dedupe-kernels`
        shares one among launches)."""
        key: Any = tuple(map(ARRAY_SHAPE, inputs))
        symbols = call.symbols
        if self.key_symbols:
            key = (key, *[symbols[p] for p in self.key_symbols])
        plan = self.plans.get(key)
        if plan is None:
            plan = (*self.plan(inputs, symbols), call.serial)
            if len(self.plans) >= MAX_KERNEL_PLANS:
                self.plans.clear()
            self.plans[key] = plan
        outs, spec, made_by = plan
        try:
            if kept is None or call.arena is None:
                outputs = [np.empty(shape, dtype) for shape, dtype in outs]
            else:
                outputs = [
                    np.empty(shape, dtype) if j is None else call.arena.array(j, shape, dtype)
                    for (shape, dtype), j in zip(outs, kept, strict=True)
                ]
        except MemoryError:
            raise not_allocated(outs) from None
        return spec, outputs, made_by == call.serial

    def profile(self, spec: Any, arrays: list[Any], call: Call) -> None:
        """Launch with the VM's statistics, kept in the call's."""
        stats = vm.launch(spec, arrays, trace=call.trace, stats=True)
        assert stats is not None and call.stats is not None
        call.stats.append((self.name, stats))

    def plan(
        self, inputs: Sequence[np.ndarray[Any, Any]], symbols: dict[str, int]
    ) -> tuple[list[tuple[tuple[int, ...], Any]], Any]:
        """The outputs' (shape, dtype) and the VM specialization for these inputs (None
        when no output has an element); Unrunnable when the sizes are more than an array
        or the VM can take."""
        outs, shapes, params = self.sizes(inputs, symbols)
        check_outputs(outs)
        if all(0 in shape for shape, _ in outs):
            return outs, None
        try:
            return outs, self.specializer(shapes, params)
        except ValueError as e:  # the VM's BytecodeError is one
            raise refused(e) from e


class Arena:
    """Memory for a call's intermediates, kept for the calls after: one buffer per
    launch result that never leaves a call (only later launches read it), grown as
    needed, rounded up to a power of two (at most MAX_KEPT_BYTES; larger results get
    new memory). A call takes an arena of its variant's for its whole run and gives it
    back as it ends; calls at the same time take different ones. Within the call, each
    run of a launch (a loop's passes) may write its buffer again: the last run's
    result is dead by then. So a new shape writes its intermediates into pages
    already mapped, where the allocator would map fresh ones for each new size (a
    page fault costs 2.6-5 us on this host; the first calls at a new BERT shape met
    about 250, about 40 with an arena)."""

    __slots__ = ("buffers", "views")

    def __init__(self, places: int) -> None:
        self.buffers: list[np.ndarray[Any, Any] | None] = [None] * places
        self.views: list[tuple[tuple[int, ...], Any, np.ndarray[Any, Any]] | None]
        self.views = [None] * places
        """The last array made at each place, with its shape and dtype: a call at a
        known shape gets the same array again, allocating nothing."""

    def array(
        self, place: int, shape: tuple[int, ...], dtype: np.dtype[Any]
    ) -> np.ndarray[Any, Any]:
        """An uninitialized array of `shape` and `dtype` in the buffer at `place` (`shape`
        and `dtype` as a kernel's plan keeps them: the same objects at a known shape)."""
        last = self.views[place]
        if last is not None and last[0] is shape and last[1] is dtype:
            return last[2]
        nbytes = math.prod(shape) * dtype.itemsize
        base = self.buffers[place]
        if base is None or base.nbytes < nbytes:
            if nbytes > MAX_KEPT_BYTES:
                return np.empty(shape, dtype)
            base = self.buffers[place] = np.empty(1 << max(nbytes - 1, 4095).bit_length(), np.uint8)
        array = np.ndarray(shape, dtype, base)
        self.views[place] = (shape, dtype, array)
        return array


def launch_inputs(env: Env, inputs: Sequence[int]) -> list[Any]:
    """A launch's input arrays, in C order (which kernels read)."""
    arrays = [env[i] for i in inputs]
    if not all(map(C_CONTIGUOUS, arrays)):
        arrays = [contiguous(a) for a in arrays]
    return arrays


def read_by_launches_only(value: SSAValue) -> bool:
    """Whether only kernel launches read `value`, directly or as what a `tensor.stack`,
    a `tensor.choice` or an `scf.if` yields: it never leaves the call."""
    for use in value.uses:
        op, parent = use.operation, use.operation.parent_op()
        if isinstance(op, tile.LaunchOp):
            continue
        if not isinstance(op, t.YieldOp | scf.YieldOp) or not isinstance(
            parent, t.StackOp | t.ChoiceOp | scf.IfOp
        ):
            return False
        if not read_by_launches_only(parent.results[use.index]):
            return False
    return True


# --------------------------------------------------------------------------
# The host program as closures
# --------------------------------------------------------------------------


@dataclass
class Call:
    """What one call's steps share: the symbol values of its shapes, and
    where to collect each launch's VM statistics when profiling."""

    symbols: dict[str, int]
    stats: list[tuple[str, vm.LaunchStats]] | None = None
    trace: bool = False
    serial: int = field(default_factory=itertools.count().__next__)  # atomic under the GIL
    """Tells this call apart from every other (`Kernel.plans` records who planned)."""
    arena: Arena | None = None
    """Where its intermediates go (None: in new memory)."""


class HostCompiler:
    """Turns the host function (after lowering) into a list of closures over
    an environment: one slot per SSA value.

    Symbols that no argument dim gives are bound during the call, by the
    step that makes their value: an `scf.if` result whose dims the branches
    disagree on (`r0_1`), an index nobody knows before (`i3`). Guards over
    such symbols (`late`) are checked by that step, as soon as all their
    symbols are bound.
    """

    def __init__(
        self,
        module: ModuleOp,
        kernels: dict[str, Kernel],
        known: set[str] | None = None,
        late: Sequence[Guard] = (),
    ):
        self.module = module
        self.kernels = kernels
        self.slot: dict[SSAValue, int] = {}
        self.known = set(known or ())
        """Symbols bound when the steps compiled so far have run."""
        self.late = list(late)
        """Guards not yet checked: some symbol of theirs is not known yet."""
        self.guard_failed: Callable[[Guard, int, int], Exception] = lambda g, a, b: ShapeError(
            f"{g.origin} needs {g}, but {g.lhs} is {a} and {g.rhs} is {b}"
        )
        """The error of a late guard that fails: the call made a value that breaks it."""
        self.places = 0
        """Launch results that never leave a call: each has a place in its arena."""
        self.argument_dims: set[str] = set()
        """The symbols of the arguments' dims (never negative)."""

    def index(self, value: SSAValue) -> int:
        if value not in self.slot:
            self.slot[value] = len(self.slot)
        return self.slot[value]

    def block(self, block: Block) -> tuple[list[Step], list[int]]:
        """The steps of a block, and the slots of what its terminator yields."""
        steps: list[Step] = []
        yielded: list[int] = []
        for op in block.ops:
            if isinstance(op, scf.YieldOp | t.YieldOp | ReturnOp | scf.ConditionOp):
                yielded = [self.index(v) for v in op.operands]
            else:
                steps.append(self.op(op))
        return steps, yielded

    def op(self, op: Operation) -> Step:
        handler = getattr(self, "op_" + type(op).__name__, None)
        if handler is not None:
            step = handler(op)
        elif type(op) in ARITH_OPS:
            step = self.scalar_arith(op)
        else:
            raise CompileError(f"{located(op)}: dvm.compile does not support {op.name}")
        return self.binding(op, step)

    def binding(self, op: Operation, step: Step) -> Step:
        """`step`, then binding the new symbols its results' dims or value
        are, then checking the guards that became decidable."""
        binds: list[tuple[int, int | None, str]] = []
        for k, result in enumerate(op.results):
            for axis, name in enumerate(result_symbols(op, k)):
                if name is not None and name not in self.known:
                    binds.append((self.index(result), axis, name))
                    self.known.add(name)
        for value, name in self.new_value_symbols(op.results, value_texts(op)):
            binds.append((self.index(value), None, name))
        if not binds:
            return step
        check = self.decidable_guards()

        def bound(call: Call, env: Env) -> None:
            step(call, env)
            for slot, axis, name in binds:
                call.symbols[name] = env[slot] if axis is None else env[slot].shape[axis]
            check(call.symbols)

        return bound

    def argument_binding(self, op: Operation, region: int) -> Step | None:
        """Binding the new symbols that the arguments of `op`'s block `region` are (an
        induction variable, an index a loop carries), then checking the guards that became
        decidable: a step for each time the block starts (None: nothing to bind)."""
        texts = op.attributes.get(ARG_VALUES)
        if not isinstance(texts, ArrayAttr):
            return None
        args = op.regions[region].block.args
        entries = texts.data[region]
        assert isinstance(entries, ArrayAttr)
        binds = [
            (self.index(a), name)
            for a, name in self.new_value_symbols(args, [e.data for e in entries.data])
        ]
        if not binds:
            return None
        check = self.decidable_guards()

        def bound(call: Call, env: Env) -> None:
            for slot, name in binds:
                call.symbols[name] = env[slot]
            check(call.symbols)

        return bound

    def new_value_symbols(
        self, values: Sequence[SSAValue], texts: Sequence[str]
    ) -> list[tuple[SSAValue, str]]:
        """The index values whose expression (`VALUE`) is a symbol not known yet, with
        it; from now on it is known."""
        found = []
        for value, text in zip(values, texts, strict=True):
            expr = parse_expr(text) if text else None
            if isinstance(expr, sympy.Symbol) and str(expr) not in self.known:
                found.append((value, str(expr)))
                self.known.add(str(expr))
        return found

    def decidable_guards(self) -> Callable[[dict[str, int]], None]:
        """A check of the late guards whose symbols are all known now."""
        ready = [g for g in self.late if {str(s) for s in guard_symbols(g)} <= self.known]
        self.late = [g for g in self.late if g not in ready]
        return guard_check(ready, self.guard_failed)

    # -- values ---------------------------------------------------------------------

    def op_ConstantOp(self, op: arith.ConstantOp) -> Step:
        value = constant_value(op)
        if isinstance(value, np.ndarray):  # every call shares it: nobody may write to it
            value.flags.writeable = False
        out = self.index(op.result)

        def step(call: Call, env: Env) -> None:
            env[out] = value

        return step

    def op_DimOp(self, op: t.DimOp) -> Step:
        src, index, out = self.index(op.source), self.index(op.index), self.index(op.result)
        label = located(op)

        def step(call: Call, env: Env) -> None:
            shape = env[src].shape
            env[out] = shape[checked_axis(label, env[index], shape)]

        return step

    def op_ExtractOp(self, op: t.ExtractOp) -> Step:
        src, out = self.index(op.tensor), self.index(op.result)
        indices = [self.index(v) for v in op.indices]
        label = located(op)

        def step(call: Call, env: Env) -> None:
            array = env[src]
            env[out] = array[checked_indices(label, [env[i] for i in indices], array.shape)]

        return step

    def scalar_arith(self, op: Operation) -> Step:
        """An arith op on `index`, integer or float scalars, computed as `dvm.interpret`
        computes it (`arith_function`), with numpy's warnings off as they are there."""
        fn = arith_function(op)
        args = [self.index(v) for v in op.operands]
        outs = [(self.index(r), value_maker(r.type)) for r in op.results]
        (out, make), *_ = outs
        # float arithmetic on numpy scalars warns of overflow; integers never do
        floats = any(not isinstance(r.type, IndexType) and is_float(r.type) for r in op.results)

        def step(call: Call, env: Env) -> None:
            if floats:
                with np.errstate(all="ignore"):
                    value = fn(*[env[i] for i in args])
            else:
                value = fn(*[env[i] for i in args])
            if len(outs) == 1:
                env[out] = make(value)
            else:
                for (slot, make_one), one in zip(outs, value, strict=True):
                    env[slot] = make_one(one)

        return step

    # -- kernels ----------------------------------------------------------------------

    def op_LaunchOp(self, op: tile.LaunchOp) -> Step:
        return self.checked_dims(op, self.launch_step(self.launch_parts(op)))

    def checked_dims(self, op: tile.LaunchOp, step: Step) -> Step:
        """`step`, after checking that no shape its kernel takes from index values has a
        negative dim (`INDEX_DIMS`; those of argument dims alone never do)."""
        entries = op.attributes.get(INDEX_DIMS)
        shapes: list[tuple[str, Shape]] = []
        for entry in entries.data if isinstance(entries, ArrayAttr) else ():
            assert isinstance(entry, DictionaryAttr)
            label, shape = entry.data["op"], shape_from_attr(entry.data["shape"])
            assert isinstance(label, StringAttr)
            if not all(self.never_negative(d) for d in shape):
                shapes.append((label.data, shape))
        if not shapes:
            return step
        names = sorted({str(s) for _, shape in shapes for d in shape for s in d.free_symbols})
        dims = python_function([d for _, shape in shapes for d in shape], names)

        def checked(call: Call, env: Env) -> None:
            values = dims(*[call.symbols[n] for n in names])
            if min(values) < 0:
                start = 0
                for label, shape in shapes:
                    got = list(values[start : start + len(shape)])
                    if min(got) < 0:
                        raise ShapeError(f"{label}: got a negative dim in shape {got}")
                    start += len(shape)
            step(call, env)

        return checked

    def never_negative(self, dim: sympy.Expr) -> bool:
        """Whether a dim is at least 0 however the program runs: made of argument dims."""
        symbols = {str(s) for s in dim.free_symbols}
        return symbols <= self.argument_dims and bool(dim.is_nonnegative)

    @staticmethod
    def launch_step(parts: Launch) -> Step:
        kernel, inputs, outputs, kept = parts

        def step(call: Call, env: Env) -> None:
            arrays = launch_inputs(env, inputs)
            for i, value in zip(outputs, kernel.run(arrays, call, kept), strict=True):
                env[i] = value

        return step

    def launch_parts(self, op: tile.LaunchOp) -> Launch:
        """A launch's kernel, the slots of its inputs and outputs, and the places of its
        outputs in the call's arena (None: all in new memory)."""
        kernel = self.kernels[op.callee.root_reference.data]
        inputs = [self.index(v) for v in op.inputs]
        outputs = [self.index(v) for v in op.outputs]
        places: list[int | None] = []  # in the call's arena, per output (None: new memory)
        for v in op.outputs:
            keep = KEEP_INTERMEDIATES and read_by_launches_only(v)
            places.append(self.places if keep else None)
            self.places += keep
        kept = places if any(j is not None for j in places) else None
        return kernel, inputs, outputs, kept

    def op_StackOp(self, op: t.StackOp) -> Step:
        """Its launches as one (`vm.launch_stack`); one by one when profiling (for each
        kernel's statistics), or when the stack holds anything but launches whose
        results bind no new symbol."""
        results = [self.index(r) for r in op.results]
        steps: list[Step] = []
        members: list[Launch] = []
        yielded: list[int] = []
        for inner in op.body.block.ops:
            if isinstance(inner, t.YieldOp):
                yielded = [self.index(v) for v in inner.operands]
                continue
            if isinstance(inner, tile.LaunchOp):
                parts = self.launch_parts(inner)
                plain = self.launch_step(parts)
                step = self.binding(inner, self.checked_dims(inner, plain))
                if step is plain:
                    members.append(parts)
            else:
                step = self.op(inner)
            steps.append(step)
        one_by_one = self.region_step(steps, yielded, results)
        if len(members) != len(steps) or len(members) < 2:
            return one_by_one
        in_turn = op.mode.data == "parallel"

        def stacked(call: Call, env: Env) -> None:
            if call.stats is not None:
                one_by_one(call, env)
                return
            bound = []
            for kernel, inputs, outputs, kept in members:
                arrays = launch_inputs(env, inputs)
                spec, made, unplanned = kernel.bind(arrays, call, kept)
                if spec is not None:
                    bound.append((spec, [*arrays, *made], unplanned))
                for i, value in zip(outputs, made, strict=True):
                    env[i] = value
            vm.launch_stack(bound, fresh=True, in_turn=in_turn)
            for r, y in zip(results, yielded, strict=True):
                env[r] = env[y]

        return stacked

    def op_ChoiceOp(self, op: t.ChoiceOp) -> Step:
        conditions = [split_condition(c.data) for c in op.conditions.data]
        names = sorted({str(s) for lhs, _, rhs in conditions for s in (lhs - rhs).free_symbols})
        sides = python_function([e for lhs, _, rhs in conditions for e in (lhs, rhs)], names)
        relations = [relation for _, relation, _ in conditions]
        then_steps, then_yield = self.block(op.then_body.block)
        else_steps, else_yield = self.block(op.else_body.block)
        results = [self.index(r) for r in op.results]
        take_then = self.region_step(then_steps, then_yield, results)
        take_else = self.region_step(else_steps, else_yield, results)

        decided: dict[tuple[int, ...], bool] = {}

        def step(call: Call, env: Env) -> None:
            key = tuple([call.symbols[n] for n in names])
            holds = decided.get(key)
            if holds is None:
                values = sides(*key)
                holds = all(r(values[2 * i], values[2 * i + 1]) for i, r in enumerate(relations))
                if len(decided) >= MAX_KERNEL_PLANS:
                    decided.clear()
                decided[key] = holds
            (take_then if holds else take_else)(call, env)

        return step

    # -- control flow -------------------------------------------------------------------

    @staticmethod
    def region_step(steps: list[Step], yielded: list[int], results: list[int]) -> Step:
        def step(call: Call, env: Env) -> None:
            for s in steps:
                s(call, env)
            for r, y in zip(results, yielded, strict=True):
                env[r] = env[y]

        return step

    def op_IfOp(self, op: scf.IfOp) -> Step:
        cond = self.index(op.cond)
        results = [self.index(r) for r in op.results]
        branches = [self.block(r.block) if r.blocks else ([], []) for r in op.regions]
        take = [self.region_step(s, y, results) for s, y in branches]

        def step(call: Call, env: Env) -> None:
            take[0 if bool(env[cond]) else 1](call, env)

        return step

    def op_ForOp(self, op: scf.ForOp) -> Step:
        lb, ub, stride = (self.index(v) for v in (op.lb, op.ub, op.step))
        body = op.body.block
        induction = self.index(body.args[0])
        carried = [self.index(a) for a in body.args[1:]]
        inits = [self.index(v) for v in op.iter_args]
        results = [self.index(r) for r in op.results]
        label = located(op)
        bind_args = self.argument_binding(op, 0)
        steps, yielded = self.block(body)
        if bind_args is not None:
            steps = [bind_args, *steps]

        def step(call: Call, env: Env) -> None:
            check_step(label, env[stride])
            for c, i in zip(carried, inits, strict=True):
                env[c] = env[i]
            for i in range(env[lb], env[ub], env[stride]):
                env[induction] = i
                for s in steps:
                    s(call, env)
                # all at once: a yielded value may be another carried value (a swap)
                values = [env[y] for y in yielded]
                for c, v in zip(carried, values, strict=True):
                    env[c] = v
            for r, c in zip(results, carried, strict=True):
                env[r] = env[c]

        return step

    def op_WhileOp(self, op: scf.WhileOp) -> Step:
        before, after = op.before_region.block, op.after_region.block
        before_args = [self.index(a) for a in before.args]
        after_args = [self.index(a) for a in after.args]
        inits = [self.index(v) for v in op.arguments]
        results = [self.index(r) for r in op.results]
        bind_before = self.argument_binding(op, 0)
        check_steps, condition = self.block(before)
        bind_after = self.argument_binding(op, 1)
        body_steps, yielded = self.block(after)
        if bind_before is not None:
            check_steps = [bind_before, *check_steps]
        if bind_after is not None:
            body_steps = [bind_after, *body_steps]

        def step(call: Call, env: Env) -> None:
            values = [env[i] for i in inits]
            while True:
                for a, v in zip(before_args, values, strict=True):
                    env[a] = v
                for s in check_steps:
                    s(call, env)
                go, *forwarded = (env[i] for i in condition)
                if not bool(go):
                    break
                for a, v in zip(after_args, forwarded, strict=True):
                    env[a] = v
                for s in body_steps:
                    s(call, env)
                values = [env[i] for i in yielded]
            for r, v in zip(results, forwarded, strict=True):
                env[r] = v

        return step


def value_texts(op: Operation) -> list[str]:
    """Per result of `op`, its index expression as `symbolic-shapes` wrote it ("" for none)."""
    value, values = op.attributes.get(VALUE), op.attributes.get(VALUES)
    if len(op.results) == 1 and isinstance(value, StringAttr):
        return [value.data]
    if isinstance(values, ArrayAttr):
        return [v.data if isinstance(v, StringAttr) else "" for v in values.data]
    return [""] * len(op.results)


def result_symbols(op: Operation, k: int) -> list[str | None]:
    """Per dim of result `k`, the symbol it is (None for other expressions)."""
    attr = op.attributes.get(SHAPE) if len(op.results) == 1 else None
    shapes = op.attributes.get(SHAPES)
    if attr is None and isinstance(shapes, ArrayAttr) and k < len(shapes.data):
        attr = shapes.data[k]
    if attr is None or not isinstance(op.results[k].type, TensorType):
        return []
    return [str(d) if isinstance(d, sympy.Symbol) else None for d in shape_from_attr(attr)]


def describe_guard(
    func: FuncOp, symbols: Sequence[tuple[int, int, str]], guard: Guard, lhs: int, rhs: int
) -> str:
    """A failed guard's message: the op, the guard, each side's value and
    which argument axes (or values made on the way) it comes from."""

    def where(expr: sympy.Expr, value: int) -> str:
        if expr.is_number:
            return f"it must be {value}"
        names = {str(s) for s in expr.free_symbols}
        axes = []
        for i, a, n in symbols:
            if n in names:
                hint = func.body.block.args[i].name_hint
                axes.append(f"axis {a} of {f'%{hint}' if hint else f'argument {i}'}")
        return f"{' / '.join(axes) or expr} ({expr}) is {value}"

    rule = "broadcast" if guard.kind is GuardKind.BROADCAST else "equal sizes"
    return (
        f"@{func.sym_name.data}: {guard.origin} needs {guard} ({rule}), "
        f"but {where(guard.lhs, lhs)} and {where(guard.rhs, rhs)}"
    )


def guard_symbols(guard: Guard) -> set[sympy.Basic]:
    return guard.lhs.free_symbols | guard.rhs.free_symbols


def guard_check(
    guards: Sequence[Guard], failed: Callable[[Guard, int, int], Exception]
) -> Callable[[dict[str, int]], None]:
    """A function that checks `guards` on symbol values, raising `failed(...)`."""
    if not guards:
        return lambda symbols: None
    names = sorted({str(s) for g in guards for s in guard_symbols(g)})
    sides = python_function([e for g in guards for e in (g.lhs, g.rhs)], names)

    def check(symbols: dict[str, int]) -> None:
        values = sides(*(symbols[n] for n in names))
        for k, guard in enumerate(guards):
            if values[2 * k] != values[2 * k + 1]:
                raise failed(guard, values[2 * k], values[2 * k + 1])

    return check


def contiguous(array: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """`array` in C order, of the same shape (`np.ascontiguousarray` makes a
    0-d array 1-d, which a kernel's rank-0 argument rejects)."""
    return array if array.flags.c_contiguous else np.ascontiguousarray(array)


def value_maker(type_: Attribute) -> Callable[[Any], Any]:
    """What makes numpy's result the run-time value of a scalar of `type_`, as the
    interpreter's `to_value` does: an int for `index`, else a numpy scalar."""
    if isinstance(type_, IndexType):
        return int
    dtype = numpy_dtype(type_)
    return lambda raw: np.asarray(raw, dtype)[()]


def constant_value(op: arith.ConstantOp) -> Any:
    value, type_ = op.value, op.result.type
    if isinstance(value, DenseIntOrFPElementsAttr) and isinstance(type_, TensorType):
        return dense_array(value, type_)
    if isinstance(type_, IndexType) and isinstance(value, IntegerAttr):
        return int(value.value.data)
    assert isinstance(value, IntegerAttr | FloatAttr)
    raw = value.value.data
    return np.asarray(raw != 0 if numpy_dtype(type_) == np.bool_ else raw, numpy_dtype(type_))[()]


# --------------------------------------------------------------------------
# One compiled variant of the program
# --------------------------------------------------------------------------


@dataclass
class Variant:
    """The program compiled for one pattern of dims fixed to 1."""

    func: FuncOp
    steps: list[Step]
    results: list[int]
    others: tuple[None, ...]
    """The empty slots after the arguments' (which are the first ones)."""
    symbols: list[tuple[int, int, str]]
    """(argument, axis, symbol) for every symbol an argument's dim names."""
    guards: list[Guard]
    check_guards: Callable[..., tuple[int, ...]]
    guard_names: list[str]
    indices: list[tuple[int, str]] = field(default_factory=list)
    """(argument, symbol) of each `index` argument: bound per call."""
    check_indices: Callable[[dict[str, int]], None] = lambda symbols: None
    """The guards over index arguments' values (checked per call)."""
    stretchable: list[tuple[str, frozenset[tuple[int, int]]]] = field(default_factory=list)
    """Argument symbols that a broadcast checked during the call (against an index
    argument or a value made on the way) assumed equal to the other side, with their
    (argument, axis): a call where one is 1 takes the variant with those dims fixed to
    1, which broadcasts them (the call cannot re-specialize once running)."""
    places: int = 0
    """Its launch results that never leave a call (places in an `Arena`)."""
    arenas: list[Arena] = field(default_factory=list)
    """Arenas free for its calls (as many as ever ran at once)."""
    late: bool = False
    """Whether a call binds symbols (index arguments, values made on the way),
    so that it needs its own copy of the specialization's symbols."""
    runs: Callable[[Sequence[Any], Call], list[Any]] = field(init=False, repr=False)
    """How a call runs the steps: `run`, or `run` with BLAS held at one thread from
    start to end when it may make several launches that call BLAS (each would
    otherwise set and restore the count)."""

    def __post_init__(self) -> None:
        self.runs = self.run

    def run_in(self, args: Sequence[Any], call: Call) -> list[Any]:
        """`runs` for `call` with an arena of its own, if it has intermediates to keep:
        a free one (taken atomically: two calls never take one), or a new one; given
        back as the call ends, when its intermediates are dead."""
        if not self.places:
            return self.runs(args, call)
        try:
            call.arena = self.arenas.pop()
        except IndexError:
            call.arena = Arena(self.places)
        try:
            return self.runs(args, call)
        finally:
            self.arenas.append(call.arena)

    @staticmethod
    def build(source: ModuleOp, entry: str | None, device: str) -> Variant:
        module = source.clone()
        DvmPipelinePass(device=device).apply(Context(), module)
        func = find_entry(module, entry)
        calls = [op for op in func.walk() if isinstance(op, tile.LaunchOp)]
        programs = {p.sym_name.data: p for p in module.ops if isinstance(p, bc.ProgramOp)}
        fallbacks = fallback_kernels(calls)
        kernels = {
            name: Kernel.build(programs[name], len(c.inputs), prepare=name not in fallbacks)
            for c in calls
            for name in [c.callee.root_reference.data]
        }
        symbols = [
            (i, a, str(d))
            for i, shape in enumerate(argument_shapes(func))
            if shape is not None
            for a, d in enumerate(shape)
            if isinstance(d, sympy.Symbol)
        ]
        names = sorted({name for _, _, name in symbols})
        indices = [
            (i, index_symbol_name(a))
            for i, a in enumerate(func.body.block.args)
            if isinstance(a.type, IndexType)
        ]
        # Guards over argument dims are checked once per signature; those over
        # index arguments per call; those over symbols made on the way when made.
        guards, per_call, late = [], [], []
        for g in function_guards(func):
            used = {str(s) for s in guard_symbols(g)}
            if used <= set(names):
                guards.append(g)
            elif used <= {*names, *(n for _, n in indices)}:
                per_call.append(g)
            else:
                late.append(g)
        known = {*names, *(n for _, n in indices)}
        compiler = HostCompiler(module, kernels, known, late)
        compiler.argument_dims = set(names)
        # (a guard over values the call made fails with what it made: an ExecutionError)
        compiler.guard_failed = lambda g, a, b: ShapeError(describe_guard(func, symbols, g, a, b))
        arg_slots = [compiler.index(a) for a in func.body.block.args]
        assert arg_slots == list(range(len(arg_slots)))  # the first slots (see `run`)
        steps, results = compiler.block(func.body.block)
        sides = [e for g in guards for e in (g.lhs, g.rhs)]
        check = python_function(sides, names) if sides else (lambda *_: ())
        others = (None,) * (len(compiler.slot) - len(arg_slots))
        variant = Variant(func, steps, results, others, symbols, guards, check, names)
        variant.indices = indices
        variant.places = compiler.places
        variant.late = bool(indices) or compiler.known != known
        variant.check_indices = guard_check(
            per_call, lambda g, a, b: CallError(describe_guard(func, symbols, g, a, b))
        )
        variant.stretchable = stretchable_symbols([*per_call, *late], symbols)
        if blas_launches(func.body.block, kernels) > 1:
            device = next(k.device for k in kernels.values() if k.uses_blas)
            variant.runs = partial(vm.with_blas_held, device, variant.run)
        return variant

    def call_symbols(self, symbols: dict[str, int], args: Sequence[Any]) -> dict[str, int]:
        """The symbols of one call: the signature's, and those the call binds."""
        if not self.late:
            return symbols
        symbols = dict(symbols)
        for i, name in self.indices:
            symbols[name] = int(args[i])
        self.check_indices(symbols)
        return symbols

    def bind(self, args: Sequence[Any]) -> dict[str, int]:
        return {name: args[i].shape[a] for i, a, name in self.symbols}

    def units_to_stretch(self, symbols: dict[str, int]) -> frozenset[tuple[int, int]]:
        """The argument dims to fix to 1 for these symbols (see `stretchable`)."""
        ones: frozenset[tuple[int, int]] = frozenset()
        for name, where in self.stretchable:
            if symbols[name] == 1:
                ones |= where
        return ones

    def failed_guard(self, symbols: dict[str, int]) -> tuple[Guard, int, int] | None:
        values = self.check_guards(*(symbols[n] for n in self.guard_names))
        for k, guard in enumerate(self.guards):
            if values[2 * k] != values[2 * k + 1]:
                return guard, values[2 * k], values[2 * k + 1]
        return None

    def run(self, args: Sequence[Any], call: Call) -> list[Any]:
        env: Env = [*args, *self.others]
        for step in self.steps:
            step(call, env)
        return [env[r] for r in self.results]


def stretchable_symbols(
    guards: Sequence[Guard], symbols: Sequence[tuple[int, int, str]]
) -> list[tuple[str, frozenset[tuple[int, int]]]]:
    """The argument symbols that are one side of a broadcast guard among `guards`, with
    the (argument, axis) each names (see `Variant.stretchable`)."""
    names = sorted(
        {
            str(side)
            for g in guards
            if g.kind is GuardKind.BROADCAST
            for side in (g.lhs, g.rhs)
            if isinstance(side, sympy.Symbol)
        }
        & {name for _, _, name in symbols}
    )
    return [(n, frozenset((i, a) for i, a, name in symbols if name == n)) for n in names]


def fallback_kernels(launches: Sequence[tile.LaunchOp]) -> set[str]:
    """The kernels launched only in `else` regions of `tensor.choice`s: those for the
    shapes beyond a guarded kernel's bound (rows too long for local memory, more
    columns than an epilogue reduces), which many programs never meet. They are
    prepared at their first launch, not in the compile."""
    guarded: set[str] = set()
    unguarded: set[str] = set()
    for launch in launches:
        name = launch.callee.root_reference.data
        (guarded if in_else_region(launch) else unguarded).add(name)
    return guarded - unguarded


def in_else_region(op: Operation) -> bool:
    """Whether `op` is inside the `else` region of some `tensor.choice`."""
    region = op.parent_region()
    while region is not None:
        parent = region.parent_op()
        if parent is None:
            return False
        if isinstance(parent, t.ChoiceOp) and region is parent.else_body:
            return True
        region = parent.parent_region()
    return False


def blas_launches(block: Block, kernels: dict[str, Kernel]) -> int:
    """How many launches that call BLAS one run of `block` may make, at most (2 for
    any in a loop: "several")."""
    count = 0
    for op in block.ops:
        if isinstance(op, tile.LaunchOp):
            count += kernels[op.callee.root_reference.data].uses_blas
            continue
        regions = [blas_launches(r.block, kernels) for r in op.regions if r.blocks]
        if isinstance(op, t.ChoiceOp | scf.IfOp):  # one branch runs
            count += max(regions, default=0)
        elif isinstance(op, scf.ForOp | scf.WhileOp):
            count += 2 * sum(regions)
        else:
            count += sum(regions)
    return count


# --------------------------------------------------------------------------
# The compiled program
# --------------------------------------------------------------------------


@dataclass
class Specialization:
    """What a shape (and dtype) signature resolved to: a variant and its symbols."""

    variant: Variant
    symbols: dict[str, int]


@dataclass
class Program:
    """A compiled program: call it with numpy arrays (and ints for `index`)."""

    source: ModuleOp
    entry: str | None
    device: str
    cache_size: int = 256
    variants: dict[frozenset[tuple[int, int]], Variant] = field(default_factory=dict)
    cache: OrderedDict[tuple[Any, ...], Specialization] = field(default_factory=OrderedDict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.variants[frozenset()] = Variant.build(self.source, self.entry, self.device)
        self.func = find_entry(self.source, self.entry)
        self.arity = len(self.func.args)
        self.tensors = {
            i
            for i, t_ in enumerate(self.func.function_type.inputs.data)
            if isinstance(t_, TensorType)
        }
        self.checks = argument_checks(self.func)
        self.scalars = [i for i in range(self.arity) if i not in self.tensors]
        """The positions of the `index` and other scalar arguments."""
        self.signature = signature if len(self.tensors) == self.arity else mixed_signature
        """How a call's cache key is made (index arguments: per argument, no exception)."""
        self.fast_bind = self.binder(self.variants[frozenset()])
        """A new signature's symbols in one generated function (None: the full checks)."""

    def arrays(self, args: tuple[Any, ...]) -> tuple[Any, ...]:
        """Numpy scalars given for tensors as 0-d arrays, as `check_arguments`
        accepts them (kernels take arrays only)."""
        if not any(map(isinstance, args, itertools.repeat(np.generic))):
            return args
        return tuple(
            np.asarray(a) if isinstance(a, np.generic) and i in self.tensors else a
            for i, a in enumerate(args)
        )

    def __call__(self, *args: Any) -> Any:
        args, spec = self.specialized(args)
        variant = spec.variant
        call = Call(variant.call_symbols(spec.symbols, args))
        try:
            outputs = variant.run_in(args, call)
        except FAILURES as e:  # sizes beyond the machine's or the VM's: name the arguments
            fail(self.func, args, e)
        return self.finish(args, outputs)

    def profile(
        self, *args: Any, trace: bool = False
    ) -> tuple[Any, list[tuple[str, vm.LaunchStats]]]:
        """Call the program and collect the VM's statistics of every launch
        (with `trace`, each launch's per-core timeline too)."""
        args, spec = self.specialized(args)
        variant = spec.variant
        call = Call(variant.call_symbols(spec.symbols, args), [], trace)
        try:
            outputs = self.finish(args, variant.run_in(args, call))
        except FAILURES as e:
            fail(self.func, args, e)
        assert call.stats is not None
        return outputs, call.stats

    @staticmethod
    def finish(args: Sequence[Any], outputs: list[Any]) -> Any:
        """The results, each an array of its own (never an argument, a constant of the
        program, its kept memory or another result; scalars are immutable: an `index`
        is a Python int); one value or a tuple."""
        outputs = owned(outputs, args)
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def specialized(self, args: tuple[Any, ...]) -> tuple[tuple[Any, ...], Specialization]:
        """The arguments as the kernels take them, and the cached specialization of their
        signature, or a new one."""
        key = self.signature(args)
        spec = self.cached(key)
        if spec is None:
            converted = self.arrays(args)
            if converted is not args:  # numpy scalars given for tensors: their 0-d arrays'
                args, key = converted, self.signature(converted)
                spec = self.cached(key)
            if spec is None:
                spec = self.specialize(args)
                with self.lock:
                    self.cache[key] = spec
                    if len(self.cache) > self.cache_size:
                        self.cache.popitem(last=False)
        if self.scalars:
            args = self.scalar_values(args)
        return args, spec

    def scalar_values(self, args: tuple[Any, ...]) -> tuple[Any, ...]:
        """The arguments with each scalar one as its run-time value (a Python int for an
        `index`, a numpy scalar of its type), checked at every call: a cached signature
        knows only its type (a CallError for an index beyond int64, an i8 beyond i8)."""
        values = list(args)
        for i in self.scalars:
            where, type_, _, _ = self.checks[i]
            values[i] = check_argument(where, args[i], type_)
        return tuple(values)

    def cached(self, key: tuple[Any, ...]) -> Specialization | None:
        """The cached specialization of a signature, if any (now the most recent)."""
        with self.lock:
            try:
                spec = self.cache.get(key)
            except TypeError:  # an unhashable `shape`: no array, which the checks will say
                return None
            if spec is not None:
                self.cache.move_to_end(key)
        return spec

    def check(self, args: Sequence[Any]) -> tuple[Any, ...]:
        """The arguments as run-time values, or a CallError naming what is wrong (the full
        checks, for a signature the generated binder declined)."""
        return check_arguments(self.func, args)

    def binder(self, variant: Variant) -> Callable[[Sequence[Any]], Any]:
        """The generated fast path of `specialize` for the generic variant."""
        namespace: dict[str, Any] = {
            "_ndarray": np.ndarray,
            **{f"_dt{i}": dtype for i, (_, _, dtype, _) in enumerate(self.checks)},
            "_guards": variant.check_guards,
            "_check": lambda i, a: check_argument(self.checks[i][0], a, self.checks[i][1]),
        }
        source = binder_source(
            self.checks, variant.symbols, variant.guard_names, len(variant.guards)
        )
        exec(builtins.compile(source, "<dvm binder>", "exec"), namespace)
        return namespace["bind"]

    def specialize(self, args: Sequence[Any]) -> Specialization:
        """Check the arguments and the guards for a new signature."""
        symbols = self.fast_bind(args)
        generic = self.variants[frozenset()]
        if symbols is not None and not generic.units_to_stretch(symbols):
            return Specialization(generic, symbols)
        values = self.check(args)
        ones: frozenset[tuple[int, int]] = frozenset()
        while True:
            variant = self.variant(ones)
            symbols = variant.bind(values)
            failed = variant.failed_guard(symbols)
            if failed is not None:
                ones = self.respecialize(variant, failed, symbols, ones)
            elif not variant.units_to_stretch(symbols) <= ones:
                ones |= variant.units_to_stretch(symbols)
            else:
                return Specialization(variant, symbols)

    def respecialize(
        self,
        variant: Variant,
        failed: tuple[Guard, int, int],
        symbols: dict[str, int],
        ones: frozenset[tuple[int, int]],
    ) -> frozenset[tuple[int, int]]:
        """The dims to fix to 1 for a broadcast that a guard assumed away, or
        a CallError naming the arguments, axes and values that disagree."""
        guard, lhs, rhs = failed
        sides = [(guard.lhs, lhs), (guard.rhs, rhs)]
        unit = [e for e, v in sides if v == 1 and isinstance(e, sympy.Symbol)]
        if guard.kind is GuardKind.BROADCAST and unit:
            where = {(i, a) for i, a, name in variant.symbols if name == str(unit[0])}
            if not where <= ones:
                return ones | where
        raise CallError(self.describe_failure(variant, guard, lhs, rhs))

    def describe_failure(self, variant: Variant, guard: Guard, lhs: int, rhs: int) -> str:
        """Which op needs which dims equal, and which argument axes disagree."""
        return describe_guard(self.func, variant.symbols, guard, lhs, rhs)

    def argument_name(self, i: int) -> str:
        name = self.func.body.block.args[i].name_hint
        return f"%{name}" if name else f"argument {i}"

    def variant(self, ones: frozenset[tuple[int, int]]) -> Variant:
        with self.lock:
            found = self.variants.get(ones)
        if found is None:
            found = Variant.build(
                with_unit_dims(self.source, self.entry, ones), self.entry, self.device
            )
            with self.lock:
                self.variants[ones] = found
        return found


def argument_checks(
    func: FuncOp,
) -> list[tuple[str, Attribute, np.dtype[Any] | None, tuple[int, ...]]]:
    """Per argument of `func`: where it is (for errors), its type, and for a tensor
    the numpy dtype and declared shape an array must have."""
    checks: list[tuple[str, Attribute, np.dtype[Any] | None, tuple[int, ...]]] = []
    for i, type_ in enumerate(func.function_type.inputs.data):
        where = f"@{func.sym_name.data} argument {argument_label(func, i)}"
        if isinstance(type_, TensorType):
            checks.append((where, type_, numpy_dtype(type_), tuple(type_.get_shape())))
        else:
            checks.append((where, type_, None, ()))
    return checks


def signature(args: Sequence[Any]) -> tuple[Any, ...]:
    """The cache key of a call whose arguments are all tensors: each argument's type,
    shape and dtype (the dtype itself: a byte-swapped f32 is no f32), by three C-level
    maps; `mixed_signature` when one is no array."""
    try:
        return (*map(type, args), *map(ARRAY_SHAPE, args), *map(ARRAY_DTYPE, args))
    except AttributeError:
        return mixed_signature(args)


def mixed_signature(args: Sequence[Any]) -> tuple[Any, ...]:
    """The cache key of a call with index values (ints) or other non-arrays: per
    argument, an array's type, shape and dtype, or another value's type."""
    return tuple([(type(a), a.shape, a.dtype) if isinstance(a, ARRAYS) else type(a) for a in args])


ARRAYS = (np.ndarray, np.generic)
"""What has a shape and a dtype in a call's signature."""


def with_unit_dims(
    source: ModuleOp, entry: str | None, ones: frozenset[tuple[int, int]]
) -> ModuleOp:
    """A copy of the program whose entry has the given argument dims fixed to 1.

    Such an argument gets the narrower type, and its uses see it through a
    `tensor.convert` back to the declared type (the same element type, so
    no conversion; it fuses into the kernels that use it). Every op thus
    keeps the types it was written with, which ops whose result type must
    be their operand's (unary ops), `scf.yield` and `func.return` require.
    """
    module = source.clone()
    func = find_entry(module, entry)
    block = func.body.block
    types = list(func.function_type.inputs.data)
    for i in sorted({i for i, _ in ones}):
        old = types[i]
        assert isinstance(old, TensorType)
        shape = [1 if (i, axis) in ones else d for axis, d in enumerate(old.get_shape())]
        types[i] = TensorType(old.element_type, shape)
        arg = Rewriter.replace_value_with_new_type(block.args[i], types[i])
        view = t.ConvertOp.create(operands=[arg], result_types=[old])
        first = block.first_op
        assert first is not None
        block.insert_op_before(view, first)
        arg.replace_uses_with_if(view.result, lambda use, view=view: use.operation is not view)
    func.function_type = FunctionType.from_lists(types, func.function_type.outputs.data)
    module.verify()
    return module


def compile(
    src: str | Path | ModuleOp,
    entry: str | None = None,
    device: str | None = None,
    cache_size: int = 256,
) -> Program:
    """Compile `.mlir` text, a path or a module once; returns a callable.

    `device` is a preset name (`host`, the default, or `ascend910b`).
    `cache_size` bounds the specializations kept (least recently used go).
    The process's first compile ends with a collection and `gc.freeze()`
    (`freeze_once`; `FREEZE_AFTER_FIRST_COMPILE` turns it off).
    """
    preset = device or "host"
    if preset not in DEVICES:
        raise CompileError(f"unknown device {preset!r}; use one of {sorted(DEVICES)}")
    module = src if isinstance(src, ModuleOp) else parse(src)
    program = Program(module, entry, preset, cache_size)
    freeze_once()
    return program


def freeze_once() -> None:
    """After the process's first compile: collect the garbage, then freeze what is alive
    (`gc.freeze`), above all the libraries the compile loaded (sympy, xDSL: some 125,000
    objects that live as long as the process). The full collections that a stream of
    new shapes triggers now and then (its caches' objects grow the old generation) then
    traverse only what came later: LayerNorm's took 7-15 ms instead of 125-155 ms. What
    is frozen is never collected: a program compiled first and dropped stays (about
    3,500 objects), and so do the caller's objects alive then that later become
    unreachable cycles."""
    if FREEZE_AFTER_FIRST_COMPILE and not _frozen:
        _frozen.append(True)
        gc.collect()
        gc.freeze()
