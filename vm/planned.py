"""The planned executor: a specialization's tile classes bound to numpy calls, per core.

Each core has its own local memory (`memory.py`) and binds each tile class's
body once (`bind.py`): every instruction becomes a pre-bound numpy call on
views of its registers, loops become one callable each. An `Executable` is a
specialization bound to a number of cores; `launch.py` runs its tiles, inline
or shared among the cores, so that a steady-state launch only makes one numpy
view per argument view and runs `for f in body: f()` per tile. Within a
tile's top level, an op whose result is only stored writes the global tile
directly (`fused_stores`), and a load whose register is next overwritten in
place reads the global tile in place (`forwarded_loads`).
"""

from __future__ import annotations

import bisect
import math
import threading
import time
from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np

from dvm.vm.bind import (
    Binder,
    Fn,
    bind_op,
    bind_product_sum,
    bind_tanh_plus_one,
    binders,
    slicer_maker,
)
from dvm.vm.isa import WRITES_MEMORY, Cat
from dvm.vm.kernels import fusable, global_view
from dvm.vm.memory import device_memory
from dvm.vm.plan import Body, LoopNode, OpNode, Shape, Specialization, ViewPlan
from dvm.vm.product_sums import Plan, plan_for, program_products
from dvm.vm.static import (
    NO_DESTINATION,
    Static,
    in_place_writer,
    read_registers,
    register_operands,
    static_info,
)
from dvm.vm.tanh_plus_one import program_pairs

if TYPE_CHECKING:
    from dvm.vm.stats import CoreStats


def binders_for(static: Static, alias: frozenset[int]) -> list[Binder]:
    """Per instruction of the program, its binder when `alias` are the alias registers
    (made once per program and set, see `bind.binders`)."""
    got = static.binders.get(alias)
    if got is None:
        code = static.program.code
        got = static.binders[alias] = binders(code, static.reg_dtypes, alias)
    return got


class Core:
    """One simulated core: local memory, tile counters, and bound tile bodies."""

    def __init__(
        self,
        spec: Specialization,
        g: list[np.ndarray],
        locks: Sequence[threading.Lock],
        alias_regs: frozenset[int],
        mem: np.ndarray,
        scratch: dict[np.dtype, np.ndarray] | None = None,
        forwarding: bool = False,
        reach: Callable[..., None] | None = None,
    ) -> None:
        # No reference to `spec`: it keeps its executables and their cores, and a cycle
        # would leave each specialization dropped from a cache to the cyclic collector.
        self.registers = spec.registers
        self.program = spec.program
        self.extents = spec.plan.extents
        self.mem = mem
        self.reach = reach
        """Maps a register view's bytes of `mem` before it is bound (`DeviceMemory.reach`,
        given the view's end and `start`): a core maps only the registers its tiles use."""
        self.idx = [0] * 11
        self.g = g
        self.views: Sequence[ViewPlan] = spec.views
        self.acc_locks = locks
        self.alias_regs = alias_regs
        self.alias: list[Any] = [None] * len(spec.registers)
        static = static_info(spec.program)
        self.alias_operands = static.alias_operands
        self.facts = static.body_facts
        if not static.slicer_makers:
            static.slicer_makers[:] = [
                slicer_maker(tuple([(d, src) for d, src, _ in tiled])) for tiled in static.tiled
            ]
        self._makers = static.slicer_makers
        self._grid_axes = static.grid_axes
        self.binders = binders_for(static, alias_regs)
        self._slicers: dict[int, Callable[[np.ndarray], np.ndarray] | None] = {}
        self._scratch = scratch
        self._dtypes = static.reg_dtypes
        self._typed: dict[np.dtype, np.ndarray] = {}
        self._regs: dict[tuple[int, Shape], np.ndarray] = {}
        self.stats: CoreStats | None = None
        self.fused: dict[tuple[int, ...], dict[int, int]] = {}
        self.has_mma = spec.has_mma
        """Whether a class may have a chain (`fused_chains`: an mma heads each)."""
        self.forwarding = forwarding
        """Whether loads may be forwarded (no argument read shares memory with one written)."""
        self.read_only = spec.alias_args if forwarding else frozenset()
        """Arguments a load may read while a chain (`fused_chains`) has written the output
        tile early: never written by the program, nor sharing memory with one that is."""
        self.arg_dtypes = spec.arg_dtypes
        self.dynamic = False
        """While binding forwarded readers: every alias register is fetched per call."""
        self.products = program_products(static)
        """The program's `mul` instructions that may run with their reduce as one matmul."""
        self.tanh_pairs = program_pairs(static)
        """The program's `tanh` instructions that may run with the add after them as one
        logistic."""

    def reg(self, r: int, shape: Shape) -> np.ndarray:
        """Register `r` viewed with `shape` (its first prod(shape) elements, row-major)."""
        key = (r, shape)
        got = self._regs.get(key)
        if got is None:
            dtype, off = self._dtypes[r], self.registers[r][0]
            item = dtype.itemsize
            if self.reach is not None:
                self.reach(off + math.prod(shape) * item, start=off)
            if off % item:  # a byte offset that is no multiple of the element size
                n = math.prod(shape) * item
                got = self._regs[key] = self.mem[off : off + n].view(dtype).reshape(shape)
                return got
            base = self._typed.get(dtype)
            if base is None:
                base = self._typed[dtype] = self.mem[: len(self.mem) // item * item].view(dtype)
            start = off // item
            got = self._regs[key] = base[start : start + math.prod(shape)].reshape(shape)
        return got

    def dtype(self, r: int) -> np.dtype:
        """The numpy dtype of register `r`."""
        return self._dtypes[r]

    def slicer(self, v: int) -> Callable[[np.ndarray], np.ndarray] | None:
        """The function cutting view `v`'s current tile out of its launch view (None: the
        tile is the whole view); one per view and core."""
        if v in self._slicers:
            return self._slicers[v]
        vp = self.views[v]
        one = self._one_tile(self._grid_axes[v], vp)
        got = self._slicers[v] = None if one else self._makers[v](self.idx, vp.tiled)
        return got

    def _one_tile(self, axes: tuple[int, ...] | None, vp: ViewPlan) -> bool:
        """Whether each tiled dim of `vp` is tiled by a grid axis (`axes`: which, or None
        when a loop tiles one) of one tile as large as the dim: the tile is the whole
        view, whatever the launch (a tiny launch's case, which then slices nothing per
        call)."""
        if axes is None:
            return False
        extents, sizes = self.extents, vp.sizes
        for axis, (d, _, tile) in zip(axes, vp.tiled, strict=True):
            if extents[axis] != 1 or tile < sizes[d]:
                return False
        return True

    def scratch(self, shape: Shape, dtype: np.dtype) -> np.ndarray:
        """A temporary of `shape` that only one instruction uses at a time (this core's,
        shared by the classes and executables of its device: launches take turns)."""
        pool = self._scratch if self._scratch is not None else {}
        self._scratch = pool
        n = math.prod(shape)
        buf = pool.get(dtype)
        if buf is None or buf.size < n:
            buf = pool[dtype] = np.empty(max(n, 1), dtype)
        return buf[:n].reshape(shape)

    def bind_class(self, key: tuple[int, ...], body: Body) -> list[Fn]:
        """Callables for the tile class `key` of the grid (its fused stores found once
        per executable, shared by the cores)."""
        fused = self.fused.get(key)
        if fused is None:
            fused = self.fused[key] = fused_stores(body, self.facts)
        chains = fused_chains(body, fused, self) if fused and self.has_mma else {}
        return self.bind(body, fused, chains)

    def bind(
        self,
        body: Body,
        fused: dict[int, int] | None = None,
        chains: dict[int, tuple[int, ...]] | None = None,
    ) -> list[Fn]:
        """Callables for a tile body; loops become one callable each. In the tile's top
        level, an op whose result is only stored writes the global tile directly, and so
        do the ops of a chain before it (`fused_chains`); a load whose register is next
        overwritten in place is forwarded (see `forwarded_loads`)."""
        out: list[Fn] = []
        binders = self.binders
        forward = forwarded_loads(body, self.alias_regs, self.facts) if self.forwarding else {}
        products = self._product_sums(body) if self.products else {}
        if chains:
            fused = self._chained(body, fused or {}, chains)
        tanhs = self._tanh_pairs(body, fused or {}) if self.tanh_pairs else frozenset()
        if not fused and not forward and not products and not tanhs and self.stats is None:
            for node in body:
                if type(node) is LoopNode:
                    out.append(self._bind_loop(node))
                    continue
                fn = binders[node.k](node, self)  # type: ignore[union-attr, arg-type]
                if fn is not None:
                    out.append(fn)
            return out
        fused, chains = fused or {}, chains or {}
        elided = set(fused.values()).union([i + 1 for i in (*products, *tanhs)])
        special = elided.union(fused, forward, products, tanhs)
        stats = self.stats is not None
        base, windows = self.alias_regs, {}  # forwarded register -> index of its last reader
        ends = {members[-1]: head for head, members in chains.items()}
        for i, node in enumerate(body):
            if type(node) is LoopNode:
                out.append(self._bind_loop(node))
                continue
            if not windows and i not in special:  # bound as in the loop above
                fn = binders[node.k](node, self)  # type: ignore[union-attr, arg-type]
                if fn is not None:
                    out.append(self._instrument(node, fn) if stats else fn)  # type: ignore[arg-type]
                continue
            assert isinstance(node, OpNode)
            if i in elided:
                if stats:
                    out.append(self._instrument(node, _nothing))
                continue
            j = fused.get(i)
            if j is not None:
                store = body[j]
                assert isinstance(store, OpNode)
                k, ins, shapes, out_shape, extents, scalar, _ = node
                node = OpNode(k, ins, shapes, out_shape, extents, scalar, store.ins.operands[0])
            end = forward.get(i)
            if end is not None:
                windows[node.ins.operands[0]] = end
            plan = products.get(i)
            if windows:
                self.alias_regs, self.dynamic = base | frozenset(windows), True
                try:
                    fn = self._bind_special(body, i, plan, i in tanhs) or bind_op(node, self)
                finally:
                    self.alias_regs, self.dynamic = base, False
                windows = {r: e for r, e in windows.items() if e > i}
            else:
                fn = self._bind_special(body, i, plan, i in tanhs) or binders[node.k](node, self)
            if fn is not None:
                out.append(self._instrument(node, fn) if stats else fn)
            if i in chains:  # its members read the head's result where it wrote it
                windows[node.ins.operands[0]] = chains[i][-1]
                out.append(self._point_alias(node))
            if i in ends:
                out.append(partial(self.alias.__setitem__, node.ins.operands[0], None))
        return out

    def _chained(
        self, body: Body, fused: dict[int, int], chains: dict[int, tuple[int, ...]]
    ) -> dict[int, int]:
        """`fused` with each chain's head and members writing the store of its last."""
        fused = dict(fused)
        for head, members in chains.items():
            for i in (head, *members[:-1]):
                fused[i] = fused[members[-1]]
        return fused

    def _point_alias(self, head: OpNode) -> Fn:
        """Make the head's register an alias of the tile the head wrote (`fused_chains`)."""
        assert head.store_to is not None
        alias, g, v, r = self.alias, self.g, head.store_to, head.ins.operands[0]
        cut = self.slicer(v)
        if cut is None:
            return lambda: alias.__setitem__(r, g[v])
        return lambda: alias.__setitem__(r, cut(g[v]))

    def _product_sums(self, body: Body) -> dict[int, Plan]:
        """The positions in `body` of the `mul`s that run with the reduce after them as
        one matmul at this tile class's shapes (see `product_sums`), with how."""
        found: dict[int, Plan] = {}
        for i in range(len(body) - 1):
            mul, reduce = body[i], body[i + 1]
            if type(mul) is not OpNode or mul.k not in self.products:
                continue
            if type(reduce) is not OpNode or reduce.k != mul.k + 1:
                continue  # (the tile class left the reduce out)
            a, b = mul.shapes[1], mul.shapes[2]
            assert a is not None and b is not None
            plan = plan_for(a, b, reduce.ins.operands[3].bit_length() - 1)
            if plan is not None:
                found[i] = plan
        return found

    def _tanh_pairs(self, body: Body, fused: dict[int, int]) -> frozenset[int]:
        """The positions in `body` of the `tanh`s that run with the `add` of 1 after them
        as one logistic (see `tanh_plus_one`): not when the add writes a stored tile."""
        return frozenset(
            i
            for i in range(len(body) - 1)
            if type(node := body[i]) is OpNode
            and node.k in self.tanh_pairs
            and type(add := body[i + 1]) is OpNode
            and add.k == node.k + 1
            and i + 1 not in fused
        )

    def _bind_special(self, body: Body, i: int, plan: Plan | None, tanh: bool) -> Fn | None:
        """Instruction i with the one after it, as `product_sums` (with `plan`) or as
        `tanh_plus_one` (with `tanh`) say; None when neither does."""
        if plan is not None:
            mul, reduce = body[i], body[i + 1]
            assert isinstance(mul, OpNode) and isinstance(reduce, OpNode)
            return bind_product_sum(mul, reduce, plan, self)
        if tanh:
            node = body[i]
            assert isinstance(node, OpNode)
            return bind_tanh_plus_one(node, self)
        return None

    def _bind_loop(self, node: LoopNode) -> Fn:
        """A loop runs each segment's body for its iterations, setting the loop counter."""
        idx, c = self.idx, 3 + node.level
        segs = [(lo, hi, self.bind(body)) for lo, hi, body in node.segments]

        def loop() -> None:
            for lo, hi, fns in segs:
                for j in range(lo, hi):
                    idx[c] = j
                    for f in fns:
                        f()

        return loop

    def _instrument(self, node: OpNode, fn: Fn) -> Fn:
        """Wrap `fn` to count the instruction, its global bytes and its numpy time."""
        st = self.stats
        assert st is not None
        name, cat = node.ins.op.name, node.ins.op.cat
        nbytes = math.prod(node.extents or ()) * self._itemsize(node)
        read = nbytes if cat is Cat.LOAD else 0
        written = nbytes if cat in (Cat.STORE, Cat.STORE_ACC) else 0
        if cat is Cat.STORE_ACC:
            read = nbytes
        top = self._reg_end(node.ins.operands[0], node.out) if node.out is not None else 0
        if cat is Cat.LOAD and node.ins.operands[0] in self.alias_regs:
            top = 0  # an alias load keeps a view of global memory: no local bytes
        clock = time.perf_counter_ns

        def counted() -> None:
            t0 = clock()
            fn()
            t1 = clock()
            st.numpy_ns += t1 - t0
            st.count(name, read, written, top)
            if st.events is not None:
                st.events.append((name, t0, t1))

        return counted

    def _itemsize(self, node: OpNode) -> int:
        """Bytes per element moved by a load/store (0 for other instructions)."""
        cat = node.ins.op.cat
        if cat not in (Cat.LOAD, Cat.STORE, Cat.STORE_ACC):
            return 0
        r = node.ins.operands[0 if cat is Cat.LOAD else 1]
        return self.program.registers[r].dtype.np.itemsize

    def _reg_end(self, r: int, shape: Shape | None) -> int:
        """The local-memory byte just past register `r` at `shape`."""
        off, _ = self.registers[r]
        item = self.program.registers[r].dtype.np.itemsize
        return off + math.prod(shape or ()) * item


def _nothing() -> None:
    """An elided store (its producer already wrote the tile); counted in stats mode."""


_GLOBAL_MEMORY = (Cat.LOAD, Cat.STORE, Cat.STORE_ACC, Cat.SCATTER_ADD)


def forwarded_loads(
    body: Body, alias_regs: frozenset[int], facts: dict[Any, Any] | None = None
) -> dict[int, int]:
    """Loads of this straight-line body that need not copy, each with the instruction
    that then writes its register in place ({load: writer}; see
    `specialize.in_place_writer`). Only bound when no argument the program reads shares
    memory with one it writes. `facts` (`Static.body_facts`) keeps what the
    instructions alone decide, for the next body with the same ones."""
    key = (alias_regs, tuple([node.k for node in body]))
    found = facts.get(key) if facts is not None else None
    if found is None:
        found = _forwardable(body, alias_regs)
        if facts is not None:
            facts[key] = found
    # ... and a tile with no element copies nothing: nothing to forward.
    return {i: w for i, w in found.items() if _has_elements(body[i])}


def _forwardable(body: Body, alias_regs: frozenset[int]) -> dict[int, int]:
    """`forwarded_loads` by the instructions alone, whatever the tiles' extents."""
    code = [None if isinstance(node, LoopNode) else node.ins for node in body]
    out: dict[int, int] = {}
    for i, ins in enumerate(code):
        if ins is None or ins.op.cat is not Cat.LOAD or ins.operands[0] in alias_regs:
            continue
        w = in_place_writer(code, i)
        if w is not None:
            out[i] = w
    return out


def _has_elements(node: OpNode | LoopNode) -> bool:
    extents = node.extents if isinstance(node, OpNode) else None
    return extents is not None and len(extents) > 0 and 0 not in extents


def fused_stores(body: Body, facts: dict[Any, Any] | None = None) -> dict[int, int]:
    """Pairs (producer, store) in a straight-line tile body that can fuse: the producer
    then writes the stored view's tile itself, saving a copy of the tile.

    Safe when: the producer is `fusable`, writing register r with exactly the tile's
    shape; between it and the store nothing touches r and nothing touches global
    memory (so no load sees the early write and no store is reordered past it); and
    after the store nothing reads r (the value exists only in global memory then).
    All but the shape follow from the instructions, which `facts` (`Static.body_facts`)
    keeps per instruction sequence; not for a body with a loop, whose segments (and so
    the registers it reads) depend on the shape.
    """
    key = (None, tuple([node.k for node in body]))
    if facts is not None and key in facts:
        pairs = facts[key]
    else:
        loops = any(isinstance(node, LoopNode) for node in body)
        pairs = None if loops else _fusable_pairs(body)
        if facts is not None:
            facts[key] = pairs
    if pairs is None:  # a body with a loop: found again for each
        pairs = _fusable_pairs(body)
    return {i: j for i, j in pairs.items() if _same_tile(body, i, j)}


CHAIN_BYTES = 512 * 1024
"""The least bytes of an output tile that `fused_chains` has its mma write: below it the
tile stays in the core's cache between the passes, and a chain's two calls per tile (to
point its register at the tile and let go of it) cost more than they save."""

_ELEMENTWISE = (Cat.UNARY, Cat.BINARY, Cat.BINARY_RS, Cat.BINARY_SR)


def fused_chains(body: Body, fused: dict[int, int], core: Core) -> dict[int, tuple[int, ...]]:
    """Epilogues that run in the stored tile: {mma: members}. A fused pair's producer
    that updates its register r in place (`max r, r, 0` before `store v, r`) is the
    last member; before it, elementwise ops updating r in place, back to a
    non-accumulating mma that computes r with the tile's shape. The mma then writes
    the tile itself and the members update it there: one buffer instead of two (a
    register and the tile), whose passes find it in cache (at 777x1500x333, the gemm's
    output written by BLAS's two threads, add and maximum took 0.2 ms over a register
    against 0.11 ms over the tile). Safe when between the mma and the store no other
    instruction reads r or writes global memory, and loads read only `Core.read_only`
    arguments (the tile holds r's value early); r has the argument's dtype (the tile
    holds the value, not a conversion) and every member reads all of it."""
    chains: dict[int, tuple[int, ...]] = {}
    for p, j in fused.items():
        store, last = body[j], body[p]
        assert isinstance(store, OpNode) and isinstance(last, OpNode)
        r, extents = last.ins.operands[0], store.extents
        if extents is None or not _updates(last, r, extents):
            continue
        if math.prod(extents) * core.dtype(r).itemsize < CHAIN_BYTES:
            continue
        if core.dtype(r) != core.arg_dtypes[core.views[store.ins.operands[0]].arg]:
            continue
        head = _chain_head(body, p, r, extents, core.read_only, core.views)
        if head is not None:
            members = [i for i in range(head + 1, p + 1) if _writes(body[i], r)]
            chains[head] = tuple(members)
    return chains


def _chain_head(
    body: Body,
    last: int,
    r: int,
    extents: Shape,
    read_only: frozenset[int],
    views: Sequence[ViewPlan],
) -> int | None:
    """The mma that starts a chain ending at `last` (see `fused_chains`), or None."""
    for i in range(last - 1, -1, -1):
        node = body[i]
        if isinstance(node, LoopNode) or node.ins.op.cat in WRITES_MEMORY:
            return None
        cat = node.ins.op.cat
        if cat is Cat.LOAD:
            if node.ins.operands[0] == r or views[node.ins.operands[1]].arg not in read_only:
                return None
        elif _writes(node, r):
            if cat is Cat.MMA and fusable(node.ins) and node.out == extents:
                return None if r in read_registers(node.ins) else i
            if not _updates(node, r, extents):
                return None
        elif _reads(node, r):
            return None
    return None


def _writes(node: OpNode | LoopNode, r: int) -> bool:
    """Whether `node` is an instruction with a destination that is register r."""
    if not isinstance(node, OpNode):
        return False
    return node.ins.op.cat not in NO_DESTINATION and node.ins.operands[0] == r


def _updates(node: OpNode, r: int, extents: Shape) -> bool:
    """Whether `node` is an elementwise op writing r in place at `extents` that reads all
    of r wherever it reads it."""
    if node.ins.op.cat not in _ELEMENTWISE or node.out != extents:
        return False
    reads = [pos for pos, v, read in register_operands(node.ins) if read and v == r and pos]
    return bool(reads) and all(node.shapes[pos] == extents for pos in reads)


def _fusable_pairs(body: Body) -> dict[int, int]:
    """`fused_stores` by the instructions alone, whatever the shapes."""
    pairs: dict[int, int] = {}
    for j, node in enumerate(body):
        if isinstance(node, LoopNode) or node.ins.op.cat is not Cat.STORE:
            continue
        r = node.ins.operands[1]
        i = _producer(body, j, r)
        if i is not None and not any(_reads(n, r) for n in body[j + 1 :]):
            pairs[i] = j
    return pairs


def _same_tile(body: Body, i: int, j: int) -> bool:
    """Whether producer i writes exactly store j's tile (and is not fused already)."""
    producer, store = body[i], body[j]
    assert isinstance(producer, OpNode) and isinstance(store, OpNode)
    return producer.out == store.extents and producer.store_to is None


def _producer(body: Body, j: int, r: int) -> int | None:
    """The instruction before store `j` that computes register r, if fusable (whatever
    its shape: see `_same_tile`)."""
    for i in range(j - 1, -1, -1):
        n = body[i]
        if isinstance(n, LoopNode) or n.ins.op.cat in _GLOBAL_MEMORY:
            return None
        if n.ins.operands[0] == r:
            return i if fusable(n.ins) else None
        if _reads(n, r):
            return None
    return None


def _reads(node: OpNode | LoopNode, r: int) -> bool:
    """Whether `node` (or anything in a loop) may read register r."""
    if isinstance(node, LoopNode):
        return any(_reads(n, r) for _, _, sub in node.segments for n in sub)
    return r in read_registers(node.ins)


OPENBLAS_ONE_THREAD_ELEMENTS = 2304 * 4
"""OpenBLAS runs a gemv of fewer matrix elements than this (2304 times its default
GEMM_MULTITHREAD_THRESHOLD of 4) on one thread, whatever its thread count, and a gemm
of at most 64^3 multiply-adds too (`plan.BLAS_SHARED_GEMM`)."""


def blas_single_threaded(spec: Specialization) -> bool:
    """Whether every BLAS call of a launch of `spec` runs on one thread anyway, so that a
    launch on the calling thread need not hold BLAS at one (three C calls, about 1 us). A
    program without an `mma` calls BLAS to sum a tile (its product with a ones vector:
    M*N*K is at most the tile's elements) or a product that is never written (at most
    the product's elements): when every register holds fewer than
    OPENBLAS_ONE_THREAD_ELEMENTS, so does each of those."""
    if spec.has_mma:
        return False
    return max((size for _, size in spec.registers), default=0) < OPENBLAS_ONE_THREAD_ELEMENTS


class Executable:
    """A specialization bound to `n` cores: what one launch at a time uses."""

    def __init__(self, spec: Specialization, n: int, stats: bool, alias: bool) -> None:
        self.plan = plan = spec.plan  # (not `spec`, which keeps it: see `Core`)
        self.uses_blas = spec.uses_blas and (n > 1 or not blas_single_threaded(spec))
        self.n = n
        self.stats = stats
        self.alias = alias
        self.g: list[np.ndarray] = [np.empty(0)] * len(spec.views)
        self._unbound = list(self.g)
        self._unbound_alias = [None] * len(spec.registers)
        locks = [threading.Lock() for _ in spec.program.args]
        regs = spec.alias_regs if alias else frozenset()
        self.memory = device_memory(spec.device)
        memory = self.memory
        self.cores = []
        for c in range(n):
            reach = partial(memory.reach, core=c)
            mem, scratch = memory.buffers[c], memory.scratch[c]
            self.cores.append(Core(spec, self.g, locks, regs, mem, scratch, alias, reach))
        self.launches = 0
        self.single: list[Fn] | None = None
        """A one-tile plan's functions, once bound (see `run_all`)."""
        self.runners: list[Callable[[int, int], None]] = []
        self.fns_of: list[Callable[[tuple[int, ...]], list[Fn]]] = []
        self._strides = [math.prod(plan.extents[a + 1 :]) for a in range(len(plan.extents))]
        self._starts = [[lo for lo, _, _ in segs] for segs in plan.axis_segments]
        dtypes = spec.arg_dtypes
        # A launch's arrays have the specialization's shapes (`_check_args`), so which
        # views are their whole argument is known now; the others are cut per launch,
        # and an empty one (a zero dim) reads and writes an empty array.
        views = list(enumerate(spec.views))
        whole = [v.natural and spec.shapes[v.arg] == v.sizes for v in spec.views]
        self._whole = [(i, v.arg) for i, v in views if whole[i]]
        self._cut = [
            (i, v, np.empty(v.sizes, dtypes[v.arg]) if v.empty else None)
            for i, v in views
            if not whole[i]
        ]
        self._alias_tiles = [core.alias for core in self.cores] if regs else []
        fused: dict[tuple[int, ...], dict[int, int]] = {}
        for core in self.cores:
            if stats:  # (only an instrumented launch imports the statistics)
                from dvm.vm.stats import CoreStats

                core.stats = CoreStats()
            core.fused = fused
            self.runners.append(self._runner(core))

    def _runner(self, core: Core) -> Callable[[int, int], None]:
        """The function that runs linear tile ids [lo, hi) on `core`. Each tile class is
        bound on this core the first time the core runs one of its tiles."""
        plan, idx = self.plan, core.idx
        bound: dict[tuple[int, ...], list[Fn]] = {}

        def fns_of(key: tuple[int, ...]) -> list[Fn]:
            got = bound.get(key)
            if got is None:
                got = bound[key] = core.bind_class(key, plan.bodies[key])
            return got

        self.fns_of.append(fns_of)
        if len(plan.extents) == 1:
            segs = [(lo, hi, (c,)) for lo, hi, c in plan.axis_segments[0]]

            def run_1d(lo: int, hi: int) -> None:
                for s_lo, s_hi, key in segs:
                    a, b = max(lo, s_lo), min(hi, s_hi)
                    if a < b:
                        fns = fns_of(key)
                        for i in range(a, b):
                            idx[0] = i
                            for f in fns:
                                f()

            return run_1d
        strides, starts, segments = self._strides, self._starts, self.plan.axis_segments

        def run_nd(lo: int, hi: int) -> None:
            for t in range(lo, hi):
                key = []
                for a, st in enumerate(strides):
                    i, t = divmod(t, st)
                    idx[a] = i
                    key.append(segments[a][bisect.bisect_right(starts[a], i) - 1][2])
                for f in fns_of(tuple(key)):
                    f()

        return run_nd

    def run_all(self) -> None:
        """Run every tile on core 0, class by class (an inline launch)."""
        if self.single is not None:
            for f in self.single:
                f()
            return
        plan = self.plan
        if plan.tiles == 1:  # its class's functions, kept (the tile index stays 0)
            key = tuple([next(c for lo, hi, c in segs if lo < hi) for segs in plan.axis_segments])
            self.single = self.fns_of[0](key)
            for f in self.single:
                f()
            return
        if len(plan.extents) == 1:
            self.runners[0](0, plan.tiles)
            return
        idx, fns_of = self.cores[0].idx, self.fns_of[0]
        if len(plan.extents) == 2:
            rows, cols = plan.axis_segments
            for lo0, hi0, c0 in rows:
                for lo1, hi1, c1 in cols:
                    if lo0 == hi0 or lo1 == hi1:
                        continue
                    fns = fns_of((c0, c1))
                    for i in range(lo0, hi0):
                        idx[0] = i
                        for j in range(lo1, hi1):
                            idx[1] = j
                            for f in fns:
                                f()
            return
        planes, rows, cols = plan.axis_segments  # three grid axes
        for lo0, hi0, c0 in planes:
            for lo1, hi1, c1 in rows:
                for lo2, hi2, c2 in cols:
                    if lo0 == hi0 or lo1 == hi1 or lo2 == hi2:
                        continue
                    fns = fns_of((c0, c1, c2))
                    for i in range(lo0, hi0):
                        idx[0] = i
                        for j in range(lo1, hi1):
                            idx[1] = j
                            for k in range(lo2, hi2):
                                idx[2] = k
                                for f in fns:
                                    f()

    def caller_runner(
        self, enter: Callable[[], Any], leave: Callable[[Any], None]
    ) -> Callable[[Sequence[np.ndarray]], None]:
        """A launch on the calling thread as one function: `set_args`, numpy's error
        state entered, `run_all` (a one-tile plan's functions called in place, once
        bound), the state left and `clear_args`, in one frame, as a known shape's
        launches call it (a tiny launch's overhead is mostly frames)."""
        g, whole, cut, unbound = self.g, self._whole, self._cut, self._unbound
        alias_tiles, unbound_alias, run_all = self._alias_tiles, self._unbound_alias, self.run_all

        def run(args: Sequence[np.ndarray]) -> None:
            for i, a in whole:
                g[i] = args[a]
            for i, vp, empty in cut:
                g[i] = global_view(vp, args[vp.arg], empty)
            quiet = enter()
            try:
                single = self.single
                if single is None:
                    run_all()
                else:
                    for f in single:
                        f()
            finally:
                leave(quiet)
                g[:] = unbound
                for held in alias_tiles:
                    held[:] = unbound_alias

        return run

    def set_args(self, args: Sequence[np.ndarray]) -> None:
        """Build this launch's numpy view of every view over its argument (arrays of
        exactly the specialization's shapes)."""
        g = self.g
        for i, a in self._whole:
            g[i] = args[a]
        for i, vp, empty in self._cut:
            g[i] = global_view(vp, args[vp.arg], empty)

    def clear_args(self) -> None:
        """Let go of the launch's arrays (and of the tiles of them alias registers hold):
        an executable kept for its shape must not keep arrays its caller dropped alive,
        or the allocator maps fresh pages for the next shape's (docs/performance.md,
        "Page faults")."""
        self.g[:] = self._unbound
        for held in self._alias_tiles:
            held[:] = self._unbound_alias
