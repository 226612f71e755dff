"""Kernel launches from the host: a kernel's bytecode validated once and its output
sizes compiled (`Kernel`), what the launches of one call share (`Call`), and the memory
a program keeps for its intermediates from one call to the next (`Arena`).

A kernel plans each new launch shape once: its outputs' shapes and dtypes and the VM's
specialization, kept in `Kernel.plans`, so a launch at a known shape only allocates its
outputs and runs on the VM.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from functools import cached_property, partial
from typing import TYPE_CHECKING, Any

import numpy as np

from dvm import vm
from dvm.call_errors import check_outputs, not_allocated, refused
from dvm.expr_code import Sizes, checked_code, sizes_of_code
from dvm.vm.device import PRESETS
from dvm.vm.program import ARRAY_DTYPE, ARRAY_SHAPE, C_CONTIGUOUS, calls_blas

if TYPE_CHECKING:
    from dvm.dialects import bytecode as bc

Env = list[Any]
"""A call's values: one slot per SSA value of the host function, the arguments first."""

MAX_KERNEL_PLANS = 512
"""Launch plans a kernel keeps (all are dropped when full; the VM keeps as many)."""
MAX_KEPT_BYTES = 16 << 20
"""The largest launch result kept for the next call (see `Arena`)."""
PLAN_PATIENCE = 16
"""A kernel's launches at a shape run unplanned until they have run this many times its
program's instructions; the next plans and binds it (`vm.Specializer`'s patience:
planning costs about what that many instructions cost unplanned beyond planned)."""
FAST_PATH_WALKS = 30
"""A kernel without a fast path (one read from the compile cache, a fallback) binds its
first new launch shapes by the VM's table walk, and the next makes the fast path
(`vm.Specializer`'s walks: making it costs what 50 (BERT) to 90 (LayerNorm) walks cost
in a loop, so fewer walks than the rent-or-buy rule's count: a long stream of shapes
gets the fast path sooner, and a stream pays at most a few times what making it at once
would have)."""


_serials = itertools.count()


class Call:
    """What one call's steps share: the symbol values of its shapes, and
    where to collect each launch's VM statistics when profiling."""

    __slots__ = ("arena", "launched", "serial", "stats", "symbols", "trace")

    def __init__(
        self,
        symbols: dict[str, int],
        stats: list[tuple[str, vm.LaunchStats]] | None = None,
        trace: bool = False,
    ) -> None:
        self.symbols = symbols
        self.stats = stats
        self.trace = trace
        self.serial = next(_serials)  # atomic under the GIL
        """Tells this call apart from every other (`Kernel.plans` records who planned)."""
        self.arena: Arena | None = None
        """Where its intermediates go (None: in new memory)."""
        self.launched: Any = None
        """The VM specialization its last launch ran (unprofiled; None: none ran)."""


LaunchPlan = tuple[list[tuple[tuple[int, ...], Any]], Any, int]
"""A kernel's plan for a call at known shapes (see `Kernel.plans`)."""


class Kernel:
    """A kernel's validated bytecode, and how to size its outputs. (A plain class, as
    `Variant` and `CompiledProgram`: a `@dataclass` generates its `__init__` with `exec`
    each time the module is imported, which a compile cache hit pays for.)"""

    def __init__(
        self,
        name: str,
        program: vm.Program,
        device: vm.DeviceSpec,
        make_sizes: Callable[[], Sizes],
        params: list[str],
        inputs: int = 0,
        shape_symbols: list[str] | None = None,
        patience: int = 0,
        walks: int = 0,
    ) -> None:
        self.name = name
        self.program = program
        self.device = device
        self.make_sizes = make_sizes
        """Makes `sizes` (generated Python, compiled at its first need)."""
        self.params = params
        """Symbols the program needs that no input dim gives (from the call)."""
        self.inputs = inputs
        """How many of its program's arguments are inputs (the others are outputs)."""
        self.shape_symbols = shape_symbols or []
        """Symbols only the outputs' dims name (e.g. a `broadcast_to` target
        taken from an argument that is no input of the kernel): the VM reads
        them from the output arrays, so they are no params; the call gives them."""
        self.patience = patience
        self.walks = walks
        """Its specializer's (`PLAN_PATIENCE` and `FAST_PATH_WALKS` when it was built)."""
        self.key_symbols = [*self.params, *self.shape_symbols]
        """What a plan depends on besides the inputs' shapes."""
        self.uses_blas = calls_blas(self.program)
        """Whether its launches call BLAS (mma, or row sums as matrix-vector products)."""
        self.plans: dict[tuple[Any, ...], LaunchPlan] = {}
        """Per (input shapes and dtypes, symbol values): the outputs' shapes and dtypes, the
        VM's specialization and the serial number of the call that made them, so a call at
        a known shape only allocates and launches. A plan's inputs are checked against the
        program once, as it is made (`vm.check_inputs`: their layout `launch_inputs` makes
        C order), and its outputs are allocated as planned, so its launches check no array."""

    @cached_property
    def sizes(self) -> Sizes:
        """The outputs' shapes and dtypes, and the launch's shapes and params: made at
        the first launch (a compile cache hit makes none; its code is checked as it is
        read), unless the kernel was prepared ahead."""
        return self.make_sizes()

    @cached_property
    def specializer(self) -> vm.Specializer:
        """Binds the program to each new launch shape (`plans` keeps the results): made at
        the first launch, so that a compile cache hit imports none of the VM's stages
        beyond its validator, and a kernel never launched costs nothing more."""
        return vm.Specializer(self.program, self.device, patience=self.patience, walks=self.walks)

    @staticmethod
    def build(
        program_op: bc.ProgramOp,
        inputs: int,
        prepare: bool = True,
        binary: vm.Program | None = None,
    ) -> Kernel:
        """The kernel of a bytecode program taking `inputs` inputs. With `prepare`, what
        every shape shares is made now (`vm.prepare`, but for the unplanned launcher, made
        at its first launch); otherwise at its first launch.
        `binary` is its program as decoded from a binary, whose arguments must be those
        `program_op` declares (then `program_op` needs to hold its declarations only)."""
        from dvm.lowering.bytecode_to_vm import to_program

        plain = kernel_plain(program_op, inputs, prepare)
        return Kernel.from_plain(plain, to_program(program_op) if binary is None else binary)

    @staticmethod
    def from_plain(plain: dict[str, Any], binary: vm.Program, ahead: bool = True) -> Kernel:
        """The kernel `kernel_plain` describes, running `binary` (validated here by the
        VM's loader, and refused unless it takes the arguments `plain` declares). Unless
        `ahead`, its generated code is made at its first launch even when `plain` says
        to prepare it now (a compile cache hit: see `Variant.from_plain`)."""
        inputs, args, params = plain["inputs"], plain["args"], plain["params"]
        if type(inputs) is not int or not 0 <= inputs <= len(args):
            raise ValueError(f"{inputs!r} inputs of {len(args)} arguments")
        # first: the binary's ranks are the VM's (a forged rank of 2**63 would count to it)
        program = vm.check(matching(binary, plain["name"], args, len(params)))
        ranks = [rank for _, rank in args[:inputs]]
        names = [f"d{i}_{a}" for i, rank in enumerate(ranks) for a in range(rank)]
        shape_symbols = plain["shape_symbols"]
        if not all(isinstance(n, str) and n.isidentifier() for n in [*params, *shape_symbols]):
            raise ValueError("a kernel's symbols are no names")
        sizes_code = checked_code(plain["sizes"], [*names, *params, *shape_symbols])
        outputs = [(rank, vm.DType[dtype].np) for dtype, rank in args[inputs:]]
        if len(sizes_code[1]) != sum(rank for rank, _ in outputs):  # (else an IndexError)
            raise ValueError(f"{program.name}'s output sizes are not one per output dim")
        device_spec = PRESETS[plain["device"]]()
        origin = f"output sizes: {program.name}"
        kernel = Kernel(
            name=program.name,
            program=program,
            device=device_spec,
            make_sizes=partial(
                sizes_of_code,
                ranks,
                [*params, *shape_symbols],
                sizes_code,
                outputs,
                params,
                check_outputs,
                origin,
            ),
            params=list(params),
            inputs=inputs,
            shape_symbols=list(shape_symbols),
            patience=PLAN_PATIENCE,
            walks=FAST_PATH_WALKS,
        )
        if ahead:  # what a compile makes now (a hit leaves it to the first launch)
            kernel.sizes  # noqa: B018 (the cached property made)
            if plain["prepare"]:
                # the unplanned launcher at the first launch: compiling it is up to a
                # tenth of a small program's compile, and a kernel not launched (the branch
                # not taken) never pays it; the fast path, a cost per new shape, is made now
                vm.prepare(program, device_spec, launcher=False)
        return kernel

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
            call.launched = spec
            # a known shape's launch on one core: its closure under the device's lock, as
            # `vm.launch` would run it, without that call's keywords and tests
            ready = spec.ready[bool(spec.alias_args)]
            if ready is not None:
                with spec.memory.lock:
                    ready([*inputs, *outputs])
            else:
                vm.launch(spec, [*inputs, *outputs], fresh=True, unplanned=unplanned, checked=True)
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
        symbols = call.symbols
        key = self.plan_key(inputs, symbols)
        plan = self.plans.get(key)
        if plan is None:
            layout = key[0] if self.key_symbols else key  # (the inputs' shapes and dtypes)
            plan = (*self.plan(inputs, symbols, layout), call.serial)
            if len(self.plans) >= MAX_KERNEL_PLANS:
                self.plans.clear()
            self.plans[key] = plan
        outs, spec, made_by = plan
        if len(outs) == 1 and (kept is None or call.arena is None):
            try:  # the common case, without `allocated`'s frame
                outputs = [np.empty(*outs[0])]
            except MemoryError:
                raise not_allocated(outs) from None
        else:
            outputs = allocated(outs, kept, call.arena)
        return spec, outputs, made_by == call.serial

    def plan_key(self, inputs: Sequence[Any], symbols: dict[str, int]) -> Any:
        """What the plan for `inputs` is kept under: their shapes and dtypes, and the
        values of the symbols the plan reads beyond them (`key_symbols`)."""
        key: Any = (*map(ARRAY_SHAPE, inputs), *map(ARRAY_DTYPE, inputs))
        if self.key_symbols:
            key = (key, *[symbols[p] for p in self.key_symbols])
        return key

    def known_plan(self, inputs: Sequence[Any], symbols: dict[str, int]) -> LaunchPlan | None:
        """The plan `bind` finds for `inputs` and `symbols`, if it is made."""
        return self.plans.get(self.plan_key(inputs, symbols))

    def profile(self, spec: Any, arrays: list[Any], call: Call) -> None:
        """Launch with the VM's statistics, kept in the call's."""
        stats = vm.launch(spec, arrays, trace=call.trace, stats=True)
        assert stats is not None and call.stats is not None
        call.stats.append((self.name, stats))

    def plan(
        self,
        inputs: Sequence[np.ndarray[Any, Any]],
        symbols: dict[str, int],
        layout: tuple[Any, ...],
    ) -> tuple[list[tuple[tuple[int, ...], Any]], Any]:
        """The outputs' (shape, dtype) and the VM specialization for these inputs (None
        when no output has an element); Unrunnable when the sizes are more than an array
        or the VM can take. `layout`: the inputs' shapes, then their dtypes."""
        outs, shapes, params, elements = self.sizes(inputs, symbols)  # (outputs checked)
        if not elements:
            return outs, None
        try:
            spec = self.specializer.bind(shapes, params, None)  # (lazy: as its __call__)
        except ValueError as e:  # the VM's BytecodeError is one
            raise refused(e) from e
        vm.check_inputs(spec, inputs, layout)  # once per plan: its launches check nothing
        return outs, spec


def kernel_plain(program_op: bc.ProgramOp, inputs: int, prepare: bool) -> dict[str, Any]:
    """What `Kernel.from_plain` needs of a bytecode program taking `inputs` inputs, as
    plain data: its name, its arguments' element types and ranks, its params, its
    outputs' dims as code of the input dims (`d0_1`) and the symbols, its device."""
    import sympy
    from xdsl.dialects.builtin import StringAttr

    from dvm.codegen import expression_code
    from dvm.dialects import bytecode as bc
    from dvm.dialects.expr import symbol_names
    from dvm.lowering.tensor_to_tile import DEVICE
    from dvm.lowering.tile_to_bytecode import dtype_name
    from dvm.passes.symbolic import substitute

    args = [op for op in program_op.body.block.ops if isinstance(op, bc.ArgOp)]
    params = program_op.param_names
    rename: dict[sympy.Symbol, sympy.Expr] = {}
    for i, arg in enumerate(args[:inputs]):
        for a, expr in enumerate(arg.dims.data):
            if isinstance(expr, sympy.Symbol) and expr not in rename:
                rename[expr] = sympy.Symbol(f"d{i}_{a}")
    exprs = [substitute(d, rename) for arg in args[inputs:] for d in arg.dims.data]
    names = {f"d{i}_{a}" for i, arg in enumerate(args[:inputs]) for a in range(len(arg.dims.data))}
    shape_symbols = sorted(symbol_names(exprs) - names - {*params})
    device = program_op.attributes.get(DEVICE)
    return {
        "name": program_op.sym_name.data,
        "inputs": inputs,
        "args": [[dtype_name(a.dtype.data), len(a.dims.data)] for a in args],
        "params": list(params),
        "shape_symbols": shape_symbols,
        "sizes": expression_code(exprs),
        "device": device.data if isinstance(device, StringAttr) else "host",
        "prepare": prepare,
    }


def matching(binary: vm.Program, name: str, args: list[Any], n_params: int) -> vm.Program:
    """`binary`, once its name, arguments ([element type's name, rank] each) and
    parameter count are those declared (a BytecodeError otherwise)."""
    declared = [(vm.DType[dtype], rank) for dtype, rank in args]
    got = [(a.dtype, a.rank) for a in binary.args]
    if binary.name != name or got != declared or binary.n_params != n_params:
        raise vm.BytecodeError(-1, "not the program declared", name)
    return binary


class Arena:
    """Memory for a call's intermediates, kept for the calls after: one buffer per
    launch result that never leaves a call (only later launches read it), grown as
    needed, rounded up to a power of two (at most MAX_KEPT_BYTES; larger results get
    new memory). A call takes an arena of its variant's for its whole run and gives it
    back as it ends; calls at the same time take different ones. Within the call, each
    run of a launch (a loop's passes) may write its buffer again: the last run's
    result is dead by then. So a new shape writes its intermediates into pages
    already mapped, where the allocator would map fresh ones for each new size (the
    first touch of a fresh page faults, which costs more than writing the page)."""

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


def allocated(
    outs: Sequence[tuple[tuple[int, ...], Any]],
    kept: Sequence[int | None] | None,
    arena: Arena | None,
) -> list[Any]:
    """A launch's outputs of the (shape, dtype) `outs`: new arrays, or for those `kept`
    gives a place in `arena` (when there is one), arrays in its memory there."""
    try:
        if kept is None or arena is None:
            return [np.empty(shape, dtype) for shape, dtype in outs]
        return [
            np.empty(shape, dtype) if j is None else arena.array(j, shape, dtype)
            for (shape, dtype), j in zip(outs, kept, strict=True)
        ]
    except MemoryError:
        raise not_allocated(outs) from None


def launch_inputs(env: Sequence[Any], inputs: Sequence[int]) -> list[Any]:
    """A launch's input arrays, in C order (which kernels read)."""
    arrays = list(map(env.__getitem__, inputs))
    if not all(map(C_CONTIGUOUS, arrays)):
        arrays = [contiguous(a) for a in arrays]
    return arrays


def known_launch(
    spec: Any, slots: Sequence[int], output: Any
) -> Callable[[Sequence[Any]], Any] | None:
    """The launch a call just ran (`Call.launched`) on the arguments at `slots`, at their
    shapes, as one closure taking the arguments and returning a new output shaped as
    `output`: what `Kernel.run` does at a known shape. None until the VM binds the launch
    on the calling thread (`vm.launch` makes that closure once it plans it on one core).
    A call whose signature fixes the launch's shapes (one launch of its arguments:
    `Variant.lone`) runs it directly."""
    ready = spec.ready[bool(spec.alias_args)]
    if ready is None:
        return None
    shape, dtype, lock = output.shape, output.dtype, spec.memory.lock

    def launch(args: Sequence[Any]) -> Any:
        arrays = list(map(args.__getitem__, slots))  # `launch_inputs`, without its frame
        if not all(map(C_CONTIGUOUS, arrays)):
            arrays = [contiguous(a) for a in arrays]
        try:
            result = np.empty(shape, dtype)
        except MemoryError:
            raise not_allocated([(shape, dtype)]) from None
        with lock:  # as `Kernel.run`: one launch at a time per device
            ready([*arrays, result])
        return result

    return launch


def contiguous(array: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """`array` in C order, of the same shape (`np.ascontiguousarray` makes a
    0-d array 1-d, which a kernel's rank-0 argument rejects)."""
    return array if array.flags.c_contiguous else np.ascontiguousarray(array)
