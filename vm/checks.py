"""A program's per-shape fast path as one generated Python function.

Specializing a program for a shape checks the call's shapes against the
header, evaluates the slot table (`slots.py`), and checks that registers
are aligned, inside local memory and disjoint and that every view stays
inside its argument (see `specialize.TableWalk`). Those checks walk the register
and view tables, which a program fixes: so the whole path is turned, once
per program and device, into one function of straight-line source

    def fast(D, P, C, T):              # shapes, params, cores (None: choose), one-core bytes
        [D0, D1] = D                   # the arguments: ranks, ints, dims in int64
        [d0_0, d0_1] = _map(_int, D0)
        ...
        nbytes = numel0 * 4 + numel1 * 4
        if C is None: C = 1 if nbytes < T else 2
        s0 = d0_0                      # the slots, as locals
        ...
        F = A, Q, nbytes, C, S, None   # what a failed layout check returns
        c0 = s3 * s4                   # register r0: capacity, end, checks
        e0 = s5 + c0 * 4
        if ... : return F
        ...
        if s1 and s2: v0 = _new(ViewPlan, (0, 0, (s1, s2), (), ...))  # natural
        else: return F                                   # empty: the table walk's
        if s1 and s2 and (s1 == 1 or s4 == s2) and ...: v1 = ...  # natural
        else:                                                      # any other
            if (s1 - 1) * s4 + s2 - 1 >= numel1: return F
            v1 = _new(ViewPlan, (1, 0, (s1, s2), (s4 * 4, 4), ...))
        return A, Q, nbytes, C, S, (((s5, c0), ...), (v0, ...), E)  # E: the registers' end

built only from validated table indices, constants and fixed operators: one
frame, and every slot and dim a local, where three functions passing tuples
cost a frame each and an index per use. A constant slot appears as its
literal, and a check that a constant or a slot's range decides is left out (a
dim is never negative, so a stride that is one only raises a view's highest
element). A view that the slots make natural (its strides the products of
its sizes, its sizes its argument's dims, as monomials) is not tested for
bounds at all, and a view is tested for more only when it is not natural.
Python's `compile` of the source is most of what making the fast path
costs, so the source says each thing once (a failed check returns `F`), and
a view that the slots make natural unless it is empty or its sizes disagree
with its argument's dims (which the guards of a compiled program's calls
make agree) leaves those rare shapes to the table walk. A slot outside int64
returns its index instead; a failed layout check, or such a view, returns
None as the layout, and the specializer then walks the tables the slow way,
which makes the layout or names the failing entry and reason. The fuzz tests
hold the two to agreement.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from dvm.vm.generated import define, program_origin
from dvm.vm.isa import ExprOp
from dvm.vm.plan import ViewPlan
from dvm.vm.program import (
    MAX_ARRAY_BYTES,
    Index,
    Program,
    Tok,
    View,
    ViewDim,
    measuring_views,
    stored_views,
)
from dvm.vm.slots import (
    ARGUMENT_NAMESPACE,
    LOCAL_LEAVES,
    Range,
    argument_lines,
    params_text,
    shapes_text,
    slot_lines,
)

FastFn = Callable[[Sequence[Sequence[int]], Sequence[int], "int | None", int], Any]
"""(shapes, params, cores or None, one-core bytes) -> (shapes, params, nbytes, cores,
slots or the index of a slot outside int64, layout or None); the layout is (registers,
views, the byte past the highest register); raises ValueError or TypeError when the
shapes or params do not fit the header."""


def fast_source(p: Program, local_bytes: int, alignment: int, cores: int, reads_cores: bool) -> str:
    """Python source of the fast path of a validated program on a device whose `cores`
    run it. A launch under T bytes of arguments runs on the calling thread (unplanned
    or planned): a program whose slots read the cores (`reads_cores`) is then tiled for
    one."""
    ranks = [a.rank for a in p.args]
    lines = ["def fast(D, P, C, T):", *argument_lines(ranks, p.n_params)]
    for k, a in enumerate(p.args):
        lines.append(f"    numel{k} = {numel_text(k, a.rank)}")
    sizes = [f"numel{k} * {a.dtype.np.itemsize}" for k, a in enumerate(p.args)]
    lines.append(f"    nbytes = {' + '.join(sizes) or '0'}")
    chosen = f"1 if nbytes < T else {cores}" if reads_cores else str(cores)
    lines.append(f"    if C is None: C = {chosen}")
    computed, ranges = slot_lines(p.slots, LOCAL_LEAVES, "return D, P, nbytes, C, {}, None".format)
    lines += computed
    lines.append(f"    A = {shapes_text(ranks)}")
    lines.append(f"    Q = {params_text(p.n_params)}")
    lines.append("    S = (" + "".join(f"s{i}, " for i in range(len(p.slots))) + ")")
    lines.append("    F = A, Q, nbytes, C, S, None")  # what a failed check returns
    checks, layout = layout_lines(p, _Slots(p, ranges), local_bytes, alignment, "return F")
    return "\n".join([*lines, *checks, f"    return A, Q, nbytes, C, S, {layout}"]) + "\n"


def numel_text(arg: int, rank: int) -> str:
    """The product of an argument's dims."""
    return " * ".join(LOCAL_LEAVES.dim(arg, j) for j in range(rank)) or "1"


def compile_fast(
    p: Program, local_bytes: int, alignment: int, cores: int, reads_cores: bool
) -> FastFn:
    """Compile the fast path of a validated program for one device."""
    namespace: dict[str, object] = {"__builtins__": {}, **ARGUMENT_NAMESPACE}
    namespace |= {"_disjoint": _disjoint, "_max": max, "_View": ViewPlan, "_new": tuple.__new__}
    namespace["_overlaps_itself"] = overlaps_itself
    # (`_new`: a NamedTuple's own __new__ is a Python frame)
    uses = (stored_views(p), measuring_views(p))
    tables = (p.args, p.n_params, p.slots, p.registers, p.views, uses)
    key = (tables, local_bytes, alignment, cores, reads_cores)
    source = _sources.get(key)
    if source is None:
        source = fast_source(p, local_bytes, alignment, cores, reads_cores)
        if len(_sources) >= MAX_KEPT_SOURCES:
            _sources.clear()
        _sources[key] = source
    return define(source, "fast", namespace, program_origin("fast path", p.name))


MAX_KEPT_SOURCES = 256
"""Fast-path sources kept (all are dropped when full)."""
_sources: dict[tuple[Any, ...], str] = {}
"""The fast-path source of the latest programs, by what it is made of: the tables,
which views are stored to and which only measure, and the device. Programs that
differ only in their instructions' operations (the two branches of an `if`, `x + 1`
and `x - 1`) share one; its code is then compiled once too (`generated.compiled`)."""


class _Slots:
    """What the generator knows of each slot before any shape: a constant's value,
    whether it can be negative (from the range `slot_lines` gives it), a number it is a
    multiple of (register offsets are rounded up to the alignment, so they need no
    test), and its value as a monomial (a view's strides are products of its sizes,
    which are dims: whether it is its whole argument is mostly decided here)."""

    def __init__(self, p: Program, ranges: list[Range]) -> None:
        self.nonneg = [lo is not None and lo >= 0 for lo, _ in ranges]
        self.const: list[int | None] = []
        self.factor: list[int] = []
        self.mono: list[Monomial] = []
        for k, slot in enumerate(p.slots):
            leaf = slot.expr[0] if len(slot.expr) == 1 else None
            self.const.append(leaf.a if leaf is not None and leaf.op is ExprOp.CONST else None)
            self.factor.append(_factor(slot.expr, self.factor))
            self.mono.append(_monomial(slot.expr, self.mono) or (1, (f"s{k}",)))
        self.dims = frozenset(
            LOCAL_LEAVES.dim(i, j) for i, a in enumerate(p.args) for j in range(a.rank)
        )
        """The atoms of the monomials that are dims (the others are slots)."""

    def text(self, k: int) -> str:
        """Slot k as an expression: its literal when constant, else the local `sk`."""
        value = self.const[k]
        return f"s{k}" if value is None else f"({value})"


def _factor(expr: Sequence[Tok], factors: Sequence[int]) -> int:
    """A number the value of postfix `expr` is a multiple of (0: the value is 0), given
    the earlier slots' `factors`: a constant is its own, a product multiplies, a sum,
    difference, minimum or maximum keeps what both sides share; others are only 1."""
    stack: list[int] = []
    for t in expr:
        if t.op is ExprOp.CONST:
            stack.append(abs(int(t.a)))
        elif t.op is ExprOp.SLOT:
            stack.append(factors[int(t.a)])
        elif t.op in (ExprOp.DIM, ExprOp.PARAM, ExprOp.CORES):
            stack.append(1)
        else:
            b, a = stack.pop(), stack.pop()
            if t.op is ExprOp.MUL:
                stack.append(a * b)
            elif t.op in (ExprOp.ADD, ExprOp.SUB, ExprOp.MIN, ExprOp.MAX):
                stack.append(math.gcd(a, b))
            else:  # a quotient or remainder (x // 0 is 0, a multiple of anything)
                stack.append(1)
    return stack[-1]


Monomial = tuple[int, tuple[str, ...]]
"""coefficient * the product of atoms (a dim's local `di_j`, or an opaque slot's `sk`),
the atoms sorted: equal monomials are equal values."""


def _monomial(expr: Sequence[Tok], monos: Sequence[Monomial]) -> Monomial | None:
    """Postfix `expr` as a monomial over dims and the earlier slots' `monos`, or None
    when it is not a product."""
    if expr[-1].op in _NOT_PRODUCTS:  # (a tile size is a Max: its tokens need no walk)
        return None
    stack: list[Monomial | None] = []
    for t in expr:
        if t.op is ExprOp.CONST:
            stack.append((int(t.a), ()))
        elif t.op is ExprOp.DIM:
            stack.append((1, (LOCAL_LEAVES.dim(int(t.a), int(t.b)),)))
        elif t.op is ExprOp.SLOT:
            stack.append(monos[int(t.a)])
        elif t.op in (ExprOp.PARAM, ExprOp.CORES):
            stack.append(None)
        else:
            b, a = stack.pop(), stack.pop()
            product = None if a is None or b is None else _times(a, b)
            stack.append(product if t.op is ExprOp.MUL else None)
    return stack[-1]


_NOT_PRODUCTS = frozenset(
    (ExprOp.ADD, ExprOp.SUB, ExprOp.FLOORDIV, ExprOp.CEILDIV, ExprOp.MOD, ExprOp.MIN, ExprOp.MAX)
)
"""The operators whose result `_monomial` never takes for a monomial (nor `PARAM`'s or
`CORES`' leaves, which are rare alone)."""


def _times(a: Monomial, b: Monomial) -> Monomial:
    return a[0] * b[0], tuple(sorted(a[1] + b[1]))


def layout_lines(
    p: Program, known: _Slots, local_bytes: int, alignment: int, fail: str
) -> tuple[list[str], str]:
    """Body lines of the layout checks, each failed check running `fail`, and the
    expression of their result (slot k is the local `sk`; `numelK` holds argument K's
    elements)."""
    lines: list[str] = []
    emit = lines.append
    val = known.text
    # register dims, view sizes and tile sizes may not be negative: one test per slot
    counts = sorted(
        {d for r in p.registers for d in r.shape}
        | {vd.size for v in p.views for vd in v.dims}
        | {
            vd.tile
            for v in p.views
            for vd in v.dims
            if vd.index != Index.NONE and vd.tile is not None
        }
    )
    tested = [f"{val(d)} < 0" for d in counts if not known.nonneg[d]]
    if tested:
        emit(f"    if {' or '.join(tested)}: {fail}")
    spans = []
    caps = []
    for i, r in enumerate(p.registers):
        dims = [val(d) for d in r.shape if known.const[d] != 1]
        item = r.dtype.np.itemsize
        cap = dims[0] if len(dims) == 1 else f"c{i}"  # a lone slot is its own capacity
        if len(dims) != 1:
            emit(f"    c{i} = {' * '.join(dims) or '1'}")
        start = val(r.offset)  # a local or a literal
        offset = known.const[r.offset]
        end = f"{cap} * {item}" if offset == 0 else f"{start} + {cap} * {item}"
        emit(f"    e{i} = {end}")
        if offset is None:
            tests = [] if known.nonneg[r.offset] else [f"{start} < 0"]
            tests += [] if known.factor[r.offset] % alignment == 0 else [f"{start} % {alignment}"]
            emit(f"    if {' or '.join([*tests, f'e{i} > {local_bytes}'])}: {fail}")
        elif offset < 0 or offset % alignment:
            emit(f"    {fail}")
        else:
            emit(f"    if e{i} > {local_bytes}: {fail}")
        spans.append((start, f"e{i}"))
        caps.append(cap)
    end = spans[-1][1] if spans else "0"  # the byte past the highest register
    if len(spans) > 1:
        # the compiler lays registers out in order: one chained comparison proves
        # that order, and its last register ends highest; any other layout takes the
        # general test (and the maximum: a C call, cold at a new shape)
        chain = " <= ".join(f"{o} <= {e}" for o, e in spans)
        pairs = ", ".join(f"({o}, {e})" for o, e in spans)
        ends = ", ".join(e for _, e in spans)
        emit(f"    if {chain}: E = {end}")
        emit(f"    elif _disjoint([{pairs}]): E = _max({ends})")
        emit(f"    else: {fail}")
        end = "E"
    regs = "".join(f"({o}, {c}), " for (o, _), c in zip(spans, caps, strict=True))

    stored, measuring = stored_views(p), measuring_views(p)
    for i in range(len(p.views)):
        _view_lines(emit, p, known, i, fail, (i in stored, i in measuring))
    views = "".join(f"v{i}, " for i in range(len(p.views)))
    return lines, f"(({regs}), ({views}), {end})"


def _view_lines(
    emit: Callable[[str], None],
    p: Program,
    known: _Slots,
    i: int,
    fail: str,
    uses: tuple[bool, bool],
) -> None:
    """The lines that check view i and make its ViewPlan `vi`. A natural view (not
    empty, its whole argument reshaped) is inside its argument, no larger than numpy
    allows and one-to-one: when the tests that it is natural pass, it is made at once,
    and only a view that is not needs the size and bounds tests (and, when stored to,
    `overlaps_itself`; `uses`: whether it is, and whether nothing reads or writes through
    it, a measuring view, whose argument may be empty). What the monomials decide is not
    tested at all."""
    stored, measuring = uses
    v = p.views[i]
    item = p.args[v.arg].dtype.np.itemsize
    val = known.text
    z = [val(vd.size) for vd in v.dims]
    st = [val(vd.stride) for vd in v.dims]
    sizes = [known.const[vd.size] for vd in v.dims]
    varying = [n for n, c in zip(z, sizes, strict=True) if c is None]
    tiled = _tuple(
        [
            f"({d}, {vd.index}, {val(vd.tile)})"
            for d, vd in enumerate(v.dims)
            if vd.index != Index.NONE and vd.tile is not None
        ]
    )
    natural, settled = (
        (None, False) if 0 in sizes or measuring else _natural_tests(p, known, v, (z, st), item)
    )
    indent = "    "
    if natural is not None:
        made = f"_new(_View, ({v.arg}, 0, {_tuple(z)}, (), {tiled}, False, True))"
        tests = [*varying, *natural]  # (sizes are not negative, tested first: 0 is false)
        if not tests:
            emit(f"    v{i} = {made}")
            return
        emit(f"    if {' and '.join(tests)}: v{i} = {made}")
        if settled:  # rare: the table walk makes the view, or says what is wrong
            emit(f"    else: {fail}")
            return
        emit("    else:")
        indent = "        "
    empty = "True" if 0 in sizes else " or ".join(f"{n} == 0" for n in varying) or "False"
    fixed = math.prod(max(c, 1) for c in sizes if c is not None)
    nominal = "".join(f"({n} if {n} > 1 else 1) * " for n in varying)
    if varying or fixed * item > MAX_ARRAY_BYTES:
        emit(f"{indent}if {nominal}{fixed * item} > {MAX_ARRAY_BYTES}: {fail}")
    if empty not in ("True", "False"):
        emit(f"{indent}m{i} = {empty}")
        empty = f"m{i}"
    if empty != "True" and not measuring:
        inner = indent
        if empty != "False":
            emit(f"{indent}if not {empty}:")
            inner += "    "
        _bounds(emit, inner, known, v, (val(v.offset), z, st), fail)
        if stored:
            emit(f"{inner}if _overlaps_itself({_tuple(z)}, {_tuple(st)}): {fail}")
    offset = 0 if measuring else known.const[v.offset]
    start = f"{val(v.offset)} * {item}" if offset is None else str(offset * item)
    steps = _tuple(["0" if measuring else _byte_stride(vd, known, item) for vd in v.dims])
    view = f"({v.arg}, {start}, {_tuple(z)}, {steps}, {tiled}, {empty}, False)"
    emit(f"{indent}v{i} = _new(_View, {view})")


def _natural_tests(
    p: Program, known: _Slots, v: View, texts: tuple[list[str], list[str]], item: int
) -> tuple[list[str] | None, bool]:
    """What a non-empty view must pass to be natural: offset 0, each stride the product
    of the sizes after it (or its size 1), all sizes multiplying to its argument's
    elements, and those no more than numpy allows (`texts`: its sizes and strides);
    None when it never is. A test the monomials decide is left out, and the sizes and
    elements are compared with common factors cancelled (they are not 0 in a non-empty
    view). Also whether the view is settled: natural unless it is empty, too large or
    its sizes disagree with its argument's dims (the monomials decide its offset and
    strides, and the sizes are dims, not other slots, which a slice makes), so that a
    compiled program's calls, whose guards make its arguments' shapes agree, almost
    never find it otherwise."""
    z, st = texts
    offset = known.const[v.offset]
    if offset not in (None, 0):
        return None, False
    tests = [] if offset == 0 else [f"{known.text(v.offset)} == 0"]
    acc: Monomial = (1, ())
    acc_text = "1"
    for d in reversed(range(len(v.dims))):
        size = v.dims[d].size
        if known.const[size] == 1:
            continue
        if known.mono[v.dims[d].stride] != acc:
            tests.append(f"({z[d]} == 1 or {st[d]} == {acc_text})")
        acc = _times(acc, known.mono[size])
        acc_text = z[d] if acc_text == "1" else f"{acc_text} * {z[d]}"
    settled = not tests
    dims = [LOCAL_LEAVES.dim(v.arg, j) for j in range(p.args[v.arg].rank)]
    left, right = _cancelled(acc, (1, tuple(sorted(dims))))
    whole = right[1] == tuple(sorted(dims))  # nothing cancelled: compared to numelK
    if left != right:
        tests.append(f"{_text(left)} == {f'numel{v.arg}' if whole else _text(right)}")
        settled = settled and bool(left[1]) and all(atom in known.dims for atom in left[1])
    if not (whole and not left[1] and left[0] * item <= MAX_ARRAY_BYTES):
        tests.append(f"numel{v.arg} <= {MAX_ARRAY_BYTES // item}")  # as the nominal test
    return tests, settled


def _cancelled(a: Monomial, b: Monomial) -> tuple[Monomial, Monomial]:
    """`a` and `b` without the atoms they share (the atoms stay sorted; a `Counter`
    each would cost more than these few atoms)."""
    left, right = list(a[1]), list(b[1])
    for atom in a[1]:
        if atom in right:
            right.remove(atom)
            left.remove(atom)
    return (a[0], tuple(left)), (b[0], tuple(right))


def _text(m: Monomial) -> str:
    return " * ".join([str(m[0]), *m[1]]) if m[0] != 1 or not m[1] else " * ".join(m[1])


def _byte_stride(vd: ViewDim, known: _Slots, item: int) -> str:
    """numpy's stride of a view dim: bytes, 0 for a dim of one element."""
    size, stride = known.const[vd.size], known.const[vd.stride]
    step = f"{known.text(vd.stride)} * {item}" if stride is None else str(stride * item)
    if size is None:
        return f"({step} if {known.text(vd.size)} > 1 else 0)"
    return step if size > 1 else "0"


def _bounds(
    emit: Callable[[str], None],
    indent: str,
    known: _Slots,
    v: View,
    texts: tuple[str, list[str], list[str]],
    fail: str,
) -> None:
    """The lowest and highest element a non-empty view reaches must lie in its argument
    (`texts`: its offset, sizes and strides; each line starts with `indent`). A stride
    known not to be negative only raises the highest; one known to be 0 or 1 needs no
    product."""
    f, z, st = texts
    signed = not known.nonneg[v.offset] or any(not known.nonneg[vd.stride] for vd in v.dims)
    if not signed:  # the highest element, one expression
        terms = [] if known.const[v.offset] == 0 else [f]
        for d, vd in enumerate(v.dims):
            stride = known.const[vd.stride]
            if stride == 1:
                terms.append(f"{z[d]} - 1")
            elif stride != 0:
                terms.append(f"({z[d]} - 1) * {st[d]}")
        emit(f"{indent}if {' + '.join(terms) or '0'} >= numel{v.arg}: {fail}")
        return
    emit(f"{indent}lo = hi = {f}")
    for d, vd in enumerate(v.dims):
        if known.const[vd.stride] == 0:
            continue
        emit(f"{indent}q = ({z[d]} - 1) * {st[d]}")
        emit(f"{indent}if q < 0: lo += q")
        emit(f"{indent}else: hi += q")
    emit(f"{indent}if lo < 0 or hi >= numel{v.arg}: {fail}")


def overlaps_itself(sizes: Sequence[int], strides: Sequence[int]) -> bool:
    """Whether a view may reach one address from two of its elements: unless, its dims
    of more than one element ordered by |stride|, each stride steps past all that the
    smaller ones reach (as in every layout of a dense array, transposed or reshaped).
    A store through such a view has no one defined result. (An interleaved layout
    that is one-to-one all the same fails the test too.)"""
    dims = sorted((abs(t), n) for n, t in zip(sizes, strides, strict=True) if n > 1)
    reach = 0
    for stride, n in dims:
        if stride <= reach:
            return True
        reach += (n - 1) * stride
    return False


def _tuple(items: Sequence[str]) -> str:
    return f"({''.join(f'{x}, ' for x in items)})"


def _disjoint(spans: list[tuple[int, int]]) -> bool:
    """Whether the non-empty [start, end) byte ranges are pairwise disjoint."""
    spans = sorted([sp for sp in spans if sp[1] > sp[0]])
    end = None
    for start, stop in spans:
        if end is not None and start < end:
            return False
        end = stop
    return True
