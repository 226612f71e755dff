"""Stage 3: specialization, once per (argument shapes, params, device).

Given concrete shapes, evaluate every slot, then check what depends on
them: registers fit the local memory, are aligned and do not overlap; every
view lies inside its argument (and a view stored through does not overlap
itself). One function generated per program and device does it all
(`checks.py`); only when one of its checks fails does the table walk
(`TableWalk`) run, which names the check and the table entry. The result is
a `Specialization` (`plan.py`), whose tile classes are planned when a launch
first needs them (`planner.py`): loop counts and grid extents are then checked
and the total work is bounded.

Nothing later re-checks: a Specialization that was built is safe to run on
arrays of its shapes.
"""

from __future__ import annotations

import itertools
import math
import operator
import threading
from collections.abc import Sequence
from functools import cached_property
from typing import Any

from dvm.vm.binary import layout
from dvm.vm.checks import FastFn, compile_fast, overlaps_itself
from dvm.vm.device import DeviceSpec
from dvm.vm.errors import BytecodeError
from dvm.vm.plan import (
    DEFAULT_MAX_STEPS,
    UNPLANNED_BYTES,
    GridPlan,
    Shape,
    Specialization,
    ViewPlan,
)
from dvm.vm.program import MAX_ARRAY_BYTES, Index, Offsets, Program, nominal_bytes
from dvm.vm.slots import I64_MAX, SlotSteps
from dvm.vm.static import Static, static_info

MAX_CACHED = 512
"""Specializations a program keeps (the oldest is dropped first)."""
_EVICTING = threading.Lock()
"""Held while `specialize` drops a program's oldest specialization and adds one."""

SHARE_UNPLANNED = True
"""Whether large launches with independent tiles run unplanned on the cores
(`Specialization.shares_unplanned`); off, they are planned at their first launch (a
switch for benchmarks)."""


def specialize(
    program: Program,
    shapes: Sequence[Sequence[int]],
    params: Sequence[int] = (),
    device: DeviceSpec | None = None,
    max_steps: int = DEFAULT_MAX_STEPS,
    lazy: bool = False,
) -> Specialization:
    """Validate `program` (once), then specialize it; cached by its arguments.

    With `lazy`, the tile classes are planned when a launch first needs them (a small
    first launch does not: it runs unplanned, and `Specializer` says for how many
    cores its slots are evaluated); otherwise now, so that every shape-dependent error
    is raised here."""
    device = device or DeviceSpec.host()
    key = (tuple(map(tuple, shapes)), tuple(params))
    cache: dict[Any, Specialization] = program.cache.specializations
    spec = cache.get((key, device, max_steps))
    if spec is None:
        spec = Specializer(program, device, max_steps)(*key, lazy=lazy)
        with _EVICTING:  # (two threads would find the same oldest entry to drop)
            if len(cache) >= MAX_CACHED:
                del cache[next(iter(cache))]  # the oldest: dicts keep insertion order
                program.cache.by_launch.clear()
            cache[(key, device, max_steps)] = spec
    if not lazy:
        spec.plan  # noqa: B018 (planning raises what is wrong with the shapes)
    return spec


class Specializer:
    """Specializes one program for one device, without a cache: for a caller that keeps
    the specializations itself (the runtime keeps one per kernel and launch shape). Its
    specializations plan their tile classes when a launch first needs them.

    Tile sizes may depend on the cores a launch shares its work among (the `cores`
    leaf of a slot). A first launch of a small shape runs unplanned on one core, so its
    slots are evaluated for one: every tile it walks costs a pass of Python dispatch.
    Planning evaluates them again for the device's cores when the planned launches will
    share the work (see `Specialization.retile`).

    With `patience`, a small specialization's launches keep running unplanned until they
    have run `patience` times the program's instructions: planning a shape costs about
    as much as that many instructions run unplanned beyond their planned cost, so a
    shape called a few times is never planned, and one called often pays at most about
    twice what planning at once would have cost (rent until renting has cost the price,
    then buy). A launch that walks many tiles reaches it at its first and is planned at
    its second; one of a few tiles, later. One whose planned launches would share the
    work among the cores (`Static.share_bytes`) is planned at its second launch whatever its
    patience, since unplanned it runs on one core; unless it is large (its slots for the
    device's cores) with independent tiles: its unplanned launches then share the tiles
    among the cores too (`shares_unplanned`), and it waits its patience.
    Without patience, the second launch plans."""

    def __init__(
        self,
        program: Program,
        device: DeviceSpec | None = None,
        max_steps: int = DEFAULT_MAX_STEPS,
        patience: int = 0,
        walks: int = 0,
    ) -> None:
        self.program = program
        self.static = static_info(program)  # validates the program
        self.device = device or DeviceSpec.host()
        self.max_steps = max_steps
        self.one_core_bytes = max(UNPLANNED_BYTES, self.static.share_bytes)
        """Arguments' bytes below which slots that read the cores are evaluated for one:
        such a launch runs on the calling thread, unplanned (UNPLANNED_BYTES) or planned
        (`Static.share_bytes`), where tiles sized for a share of each core would only
        add tiles (a 1.1 MB LayerNorm: 3 tiles, against 1)."""
        self.plan_after = patience * len(program.code)
        """Instructions a specialization's unplanned launches run before one is planned."""
        self.walks = walks
        """New shapes to bind without the fast path (`walked`) while the program has none
        for the device; the next makes it. Generating and compiling it costs what 50 to 90
        walks cost beyond the fast path (BERT's kernels: 1.6-2.4 ms, a walk 32-47 us with
        the `tables` it makes at its first, the fast path 5-7 us; in a loop at a load of
        6.5 on 2 cores), so a caller that keeps this specializer (a runtime kernel) and
        meets a few shapes never pays for it, and one that meets many pays a few times
        what it would have at once at most (rent or buy, as `patience` for plans)."""

    @cached_property
    def fast(self) -> FastFn:
        """The generated fast path: `vm.prepare` makes it ahead, else the first call (or
        the first after `walks`)."""
        return fast_function(self.program, self.device)

    @cached_property
    def slot_steps(self) -> SlotSteps:
        """The slot table made into steps to interpret (`walked`), made at the first walk."""
        return SlotSteps(self.program.slots)

    def fast_or_walked(self) -> FastFn:
        """`fast`, or `walked` while there are `walks` left and no fast path (once there
        is one, no walk is left: a new shape then asks nothing more)."""
        if self.walks:
            if fast_key(self.static, self.device) not in self.static.fast_paths:
                self.walks -= 1
                return self.walked
            self.walks = 0
        return self.fast

    def walked(
        self,
        shapes: Sequence[Sequence[int]],
        params: Sequence[int],
        cores: int | None,
        one_core_bytes: int,
    ) -> tuple[Any, ...]:
        """What the fast path gives, made without it: the header checked, the slots
        interpreted (`slot_steps`), the registers and views laid out by `tables` (None
        when a check fails: `bind` then walks the tables, which says which)."""
        st = self.static
        TableWalk(st, self.device).check_call(shapes, params)
        dims = tuple(tuple(map(int, shape)) for shape in shapes)
        values = tuple(map(int, params))
        nbytes = sum(math.prod(d) * t.itemsize for d, t in zip(dims, st.arg_dtypes, strict=True))
        if cores is None:  # as the fast path chooses (`checks.fast_source`)
            one = st.reads_cores and nbytes < one_core_bytes
            cores = 1 if one else self.device.cores_for(st.has_mma)
        slots = self.slot_steps(dims, values, cores)
        if isinstance(slots, int):  # a slot outside int64: the walk says which
            return dims, values, nbytes, cores, slots, None
        memory, alignment = self.device.memory_bytes(st.has_mma), self.device.alignment
        got = self.tables.layout(slots, dims, memory, alignment)
        return dims, values, nbytes, cores, slots, got

    @cached_property
    def tables(self) -> LayoutTables:
        """The register and view tables as `walked` reads them, made at the first walk."""
        return LayoutTables(self.static)

    def __call__(
        self,
        shapes: Sequence[Sequence[int]],
        params: Sequence[int] = (),
        lazy: bool = True,
    ) -> Specialization:
        """The program bound to these argument shapes and params (a BytecodeError or
        ValueError says what does not fit). Unless `lazy` (planned when a launch first
        needs it: a first launch may run unplanned, on one core), the slots are evaluated
        for the device's cores at once, for a caller that plans now."""
        cores = None if lazy else self.device.cores_for(self.static.has_mma)
        return self.bind(shapes, params, cores)

    def again(
        self, shapes: Sequence[Sequence[int]], params: Sequence[int], cores: int
    ) -> Specialization:
        """The program bound to these shapes and params, its slots evaluated for `cores`."""
        return self.bind(shapes, params, cores)

    def plan(self, spec: Specialization) -> GridPlan:
        """The tile classes of one of its specializations (the planner imported by the
        first plan: a specialization's first launches run unplanned)."""
        from dvm.vm.planner import TilePlanner

        return TilePlanner(self.static, spec, self.max_steps).plan_grid()

    def bind(
        self, shapes: Sequence[Sequence[int]], params: Sequence[int], cores: int | None
    ) -> Specialization:
        """Run the fast path for these shapes and make their Specialization; only a
        failed check walks the tables, which says which check and why. Slots that read
        the cores are evaluated for `cores`, or (None) for one when its launches run on
        the calling thread (below `one_core_bytes`), else for the device's."""
        s: Any  # the slot values, or the index of one outside int64
        try:
            fast = self.fast_or_walked() if self.walks else self.fast  # (no frame: none left)
            dims, values, nbytes, used, s, got = fast(shapes, params, cores, self.one_core_bytes)
        except (TypeError, ValueError):
            TableWalk(self.static, self.device).check_call(shapes, params)  # names the argument
            raise
        st = self.static
        if type(s) is int or got is None:
            s, regs, views = TableWalk(self.static, self.device).walk(s, dims)
            end = registers_end(regs, st.itemsizes)
        else:
            regs, views, end = got
        if st.placement:
            regs, end = placed(regs, st, self.device, end)
        shared = nbytes >= st.share_bytes  # planned launches then use several cores
        small = nbytes < UNPLANNED_BYTES
        # unplanned, a large launch shares its tiles among the cores when they are
        # independent: its shape then pays for planning only if it comes back often
        spread = SHARE_UNPLANNED and shared and not small and st.independent_tiles
        # idle: every argument it stores to has a dim of 0 (a loop: at a new shape, cold,
        # C-level maps cost more than the bytecodes they save)
        idle = True
        for arg in st.stored:
            if all(dims[arg]):
                idle = False
                break
        return Specialization(
            st.program,
            self.device,
            dims,
            values,
            s,
            regs,
            end,
            views,
            self,
            st.has_mma,
            st.uses_blas,
            st.stored,
            st.alias_regs,
            st.alias_args,
            st.arg_dtypes,
            cores=used,
            small=small,
            idle=idle,
            shared=shared,
            shares_unplanned=spread,
            max_steps=self.max_steps,
            # a launch the cores would share pays more than its Python unplanned on one core
            plan_after=0 if shared and not spread else self.plan_after,
        )


def fast_function(program: Program, device: DeviceSpec) -> FastFn:
    """The program's generated fast path (`checks.py`) for the device (compiled once)."""
    st = static_info(program)
    key = fast_key(st, device)
    fast = st.fast_paths.get(key)
    if fast is None:
        fast = st.fast_paths[key] = compile_fast(program, *key, st.reads_cores)
    return fast


def placed(
    regs: tuple[tuple[int, int], ...], static: Static, device: DeviceSpec, end: int
) -> tuple[tuple[tuple[int, int], ...], int]:
    """A checked layout of a program with an mma (`regs`: offset and capacity of each
    register; `end`: the byte past the highest) packed from offset 0 in
    `static.placement`'s order, when it fits the cube memory (else `regs`), with the byte
    past its highest register. A launch that reads its operands in place never touches their
    registers, which the program places first: its result's register, above them, moves
    with each shape, and a new shape's first call faulted its pages in (tens at the
    suite's matmuls). Packed, the registers launches write share the low pages from
    shape to shape. Nothing else depends on a register's offset: it stays aligned,
    inside the memory and apart from the others."""
    alignment, out, offset = device.alignment, list(regs), 0
    for r, itemsize in static.placement:
        n = regs[r][1]
        out[r] = (offset, n)
        offset += -(-n * itemsize // alignment) * alignment
    if offset > device.memory_bytes(True):
        return regs, end
    last, itemsize = static.placement[-1]  # (every register, each above the one before)
    return tuple(out), out[last][0] + out[last][1] * itemsize


def registers_end(regs: Sequence[tuple[int, int]], itemsizes: Sequence[int]) -> int:
    """The byte just past the highest of registers `regs` (offset and capacity of each)
    of these itemsizes: what the fast path returns, for a layout the tables gave."""
    end = 0
    for (offset, count), itemsize in zip(regs, itemsizes, strict=True):
        end = max(end, offset + count * itemsize)
    return end


def fast_key(static: Static, device: DeviceSpec) -> tuple[int, int, int]:
    """What a program's fast path depends on of a device: the bytes of the memory its
    registers live in (cube memory for a program with an mma), the alignment, the cores."""
    cube = static.has_mma
    return device.memory_bytes(cube), device.alignment, device.cores_for(cube)


class TableWalk:
    """The shape checks by walking the register and view tables, entry by entry: what
    the fast path computes, and, when one of its checks fails, the error naming which
    check and the byte of the entry at fault."""

    def __init__(self, static: Static, device: DeviceSpec) -> None:
        self.static = static
        self.p = static.program
        self.device = device
        self._offsets: Offsets | None = self.p.offsets
        self.s: tuple[int, ...] = ()

    def fail(self, table: str, i: int, reason: str, detail: str = "") -> BytecodeError:
        """A BytecodeError pointing at a table entry of the binary."""
        if self._offsets is None:
            self._offsets = layout(self.p)
        o = self._offsets
        return BytecodeError(getattr(o, table)[i], reason, detail)

    def walk(
        self, s: tuple[int, ...] | int, dims: tuple[Shape, ...]
    ) -> tuple[tuple[int, ...], tuple[tuple[int, int], ...], tuple[ViewPlan, ...]]:
        """The slots, registers and views, for slot values `s` (or the index of the first
        slot outside int64) and argument shapes `dims`."""
        if isinstance(s, int):
            raise self.fail("slots", s, "slot value out of int64 range")
        self.s = s
        regs = self.place_registers()
        views = tuple(self.view(i, dims) for i in range(len(self.p.views)))
        return s, regs, views

    def check_call(self, shapes: Sequence[Sequence[int]], params: Sequence[int]) -> None:
        """The caller's shapes and params must match the program's header."""
        p = self.p
        if len(shapes) != len(p.args):
            raise ValueError(f"program takes {len(p.args)} arguments, got {len(shapes)} shapes")
        for i, (s, a) in enumerate(zip(shapes, p.args, strict=True)):
            if len(s) != a.rank:
                raise ValueError(f"argument a{i}: shape {s} does not fit rank {a.rank}")
            for n in s:  # (a loop: a generator's frame costs a walk at each new shape)
                if not 0 <= n <= I64_MAX:  # (slots.DIM_RANGE)
                    raise ValueError(f"argument a{i}: shape {s} has a dim outside 0..2**63-1")
        if len(params) != p.n_params:
            raise ValueError(f"program takes {p.n_params} params, got {len(params)}")

    def eval_slots(self, shapes: tuple[Shape, ...], params: tuple[int, ...], cores: int) -> None:
        """Run the compiled slot function; a slot outside int64 is an error."""
        got = self.static.slot_fn(shapes, params, cores)
        if isinstance(got, int):
            raise self.fail("slots", got, "slot value out of int64 range")
        self.s = got

    def nonneg(self, table: str, i: int, slot: int, what: str) -> int:
        """A slot value that must not be negative (sizes, counts, offsets)."""
        v = self.s[slot]
        if v < 0:
            raise self.fail(table, i, f"negative {what}", f"s{slot} = {v}")
        return v

    def place_registers(self) -> tuple[tuple[int, int], ...]:
        """Registers must be aligned, inside local memory (cube memory for a program
        with an mma), and pairwise disjoint: (byte offset, capacity) of each."""
        out: list[tuple[int, int]] = []
        spans: list[tuple[int, int, int]] = []
        for i, item in enumerate(self.static.itemsizes):
            off, cap = self.register(i)
            if cap * item:
                spans.append((off, off + cap * item, i))
            out.append((off, cap))
        spans.sort()
        for (_, end, a), (start, _, b) in itertools.pairwise(spans):
            if start < end:
                raise self.fail("registers", max(a, b), "registers overlap", f"r{a} and r{b}")
        return tuple(out)

    def register(self, i: int) -> tuple[int, int]:
        """Register i's byte offset and capacity, checked but for overlaps."""
        r, item, s = self.p.registers[i], self.static.itemsizes[i], self.s
        cube = self.static.has_mma
        memory, alignment = self.device.memory_bytes(cube), self.device.alignment
        cap = 1
        for d in r.shape:
            n = s[d]
            if n < 0:
                raise self.fail("registers", i, "negative register dim", f"s{d} = {n}")
            cap *= n
        off = s[r.offset]
        if off < 0:
            raise self.fail("registers", i, "negative register offset", f"s{r.offset} = {off}")
        if off % alignment:
            raise self.fail("registers", i, "misaligned register", f"{off} % {alignment}")
        if off + cap * item > memory:
            where = f"r{i}: bytes {off}..{off + cap * item} > {memory}"
            raise self.fail("registers", i, f"register exceeds {_MEMORY[cube]} memory", where)
        return off, cap

    def view(self, i: int, shapes: tuple[Shape, ...]) -> ViewPlan:
        """Slot values of a view, and the proof that it stays inside its argument."""
        v = self.p.views[i]
        s = self.s
        sizes = tuple([s[d.size] for d in v.dims])
        if any(n < 0 for n in sizes):
            for d in v.dims:
                self.nonneg("views", i, d.size, "view size")
        strides = tuple([s[d.stride] for d in v.dims])
        offset = s[v.offset]
        tiled = tuple(
            (k, d.index, self.nonneg("views", i, d.tile, "tile size"))
            for k, d in enumerate(v.dims)
            if d.index != Index.NONE and d.tile is not None
        )
        item = self.static.arg_dtypes[v.arg].itemsize
        if nominal_bytes(sizes, item) > MAX_ARRAY_BYTES:
            raise self.fail("views", i, "view too large", f"sizes {sizes}")
        if i in self.static.measuring_views:  # no memory: only its tiles' extents count
            return ViewPlan(v.arg, 0, sizes, (0,) * len(sizes), tiled, 0 in sizes, False)
        natural = 0 not in sizes and self.inside(i, shapes, sizes, strides)
        steps = () if natural else tuple(_byte_strides(sizes, strides, item))
        return ViewPlan(v.arg, offset * item, sizes, steps, tiled, 0 in sizes, natural)

    def inside(self, i: int, shapes: tuple[Shape, ...], sizes: Shape, strides: Shape) -> bool:
        """Whether non-empty view i is natural (offset 0, dense, its whole argument), once
        its elements are proven inside its argument and, if stored through, not to overlap
        each other."""
        v = self.p.views[i]
        numel = math.prod(shapes[v.arg])
        offset = lo = hi = self.s[v.offset]
        acc, dense = 1, True
        for n, st in zip(reversed(sizes), reversed(strides), strict=True):
            reach = (n - 1) * st
            if reach < 0:
                lo += reach
            else:
                hi += reach
            if n != 1 and st != acc:
                dense = False
            acc *= n
        if lo < 0 or hi >= numel:
            where = f"elements {lo}..{hi} of a{v.arg} ({numel})"
            raise self.fail("views", i, "view out of bounds", where)
        natural = offset == 0 and dense and acc == numel
        if not natural and i in self.static.stored_views and overlaps_itself(sizes, strides):
            raise self.fail("views", i, "store view overlaps itself", f"sizes {sizes}")
        return natural


class LayoutTables:
    """A program's register and view tables as the slot indices `TableWalk.walk` reads,
    made once, so that a walk at a new shape checks the same without a call per entry:
    a program without a fast path (read from the compile cache) pays it at each of its
    first new shapes (`Specializer.walks`)."""

    __slots__ = ("registers", "views")

    def __init__(self, st: Static) -> None:
        p = st.program
        self.registers = tuple(
            (r.shape, r.offset, item) for r, item in zip(p.registers, st.itemsizes, strict=True)
        )
        """Per register: its shape's slots, its offset's slot, its itemsize."""
        self.views = tuple(
            (
                v.arg,
                v.offset,
                _getter([d.size for d in v.dims]),
                _getter([d.stride for d in v.dims]),
                tuple(
                    (k, d.index, d.tile)
                    for k, d in enumerate(v.dims)
                    if d.index != Index.NONE and d.tile is not None
                ),
                st.arg_dtypes[v.arg].itemsize,
                i in st.stored_views,
                i in st.measuring_views,
            )
            for i, v in enumerate(p.views)
        )
        """Per view: its argument, its offset's slot, what gets its sizes and its strides
        from the slot values, its tiled dims (dim, index source, tile's slot), its
        argument's itemsize, whether stores write through it and whether nothing reads
        or writes through it."""

    def layout(
        self, s: tuple[int, ...], dims: tuple[Shape, ...], memory: int, alignment: int
    ) -> tuple[tuple[tuple[int, int], ...], tuple[ViewPlan, ...], int] | None:
        """`TableWalk.walk`'s registers and views at slot values `s`, and the byte past
        the highest register, or None when one of its checks fails."""
        regs, spans, highest = [], [], 0
        for shape, at, item in self.registers:
            cap = 1
            for d in shape:
                if s[d] < 0:
                    return None
                cap *= s[d]
            off = s[at]
            end = off + cap * item
            if off < 0 or off % alignment or end > memory:
                return None
            if end > off:
                spans.append((off, end))
            if end > highest:
                highest = end
            regs.append((off, cap))
        spans.sort()
        for (_, end), (start, _) in itertools.pairwise(spans):
            if start < end:
                return None
        views = []
        for arg, at, sizes_of, strides_of, tiles, item, stored, measuring in self.views:
            sizes, strides = sizes_of(s), strides_of(s)
            tiled = tuple([(k, index, s[t]) for k, index, t in tiles])
            offset = lo = hi = s[at]
            count, dense, nominal = 1, True, item
            for n, stride in zip(reversed(sizes), reversed(strides), strict=True):
                if n < 0:
                    return None
                nominal *= n or 1
                reach = (n - 1) * stride
                if reach < 0:
                    lo += reach
                else:
                    hi += reach
                dense = dense and (n == 1 or stride == count)
                count *= n
            if nominal > MAX_ARRAY_BYTES:
                return None
            for _, _, t in tiled:
                if t < 0:
                    return None
            natural = False
            if measuring:
                zeros = (0,) * len(sizes)
                views.append(_new(ViewPlan, (arg, 0, sizes, zeros, tiled, not count, False)))
                continue
            if count:  # no dim of 0: its elements lie inside the argument
                numel = math.prod(dims[arg])
                if lo < 0 or hi >= numel:
                    return None
                natural = offset == 0 and dense and count == numel
                if not natural and stored and overlaps_itself(sizes, strides):
                    return None
            steps = () if natural else tuple(_byte_strides(sizes, strides, item))
            plan = (arg, offset * item, sizes, steps, tiled, not count, natural)
            views.append(_new(ViewPlan, plan))
        return tuple(regs), tuple(views), highest


def _getter(slots: list[int]) -> Any:
    """A function of the slot values giving the tuple of those at `slots`."""
    if len(slots) == 1:
        return lambda s, k=slots[0]: (s[k],)
    return operator.itemgetter(*slots) if slots else lambda s: ()


_new = tuple.__new__
"""Makes a NamedTuple without the frame of its own `__new__` (a walk makes one a view)."""
_MEMORY = {True: "cube", False: "local"}
"""The memory a program's registers live in, by whether it has an mma."""


def _byte_strides(sizes: Shape, strides: Shape, item: int) -> list[int]:
    """numpy's strides of a view: bytes, 0 for a dim of one element."""
    return [t * item if n > 1 else 0 for n, t in zip(sizes, strides, strict=True)]
