"""Hand-assembled bytecode programs shared by the VM tests and benchmarks.

Each function returns canonical program text (what `disassemble` prints), so
tests can also check that text -> binary -> text is the identity.
"""

from __future__ import annotations

ALIGN = 64


SHARED_ROWS = "s0 cores ceildiv 1 max"
"""A row tile that gives each core a share of the rows (`elementwise_chain`'s `tile`)."""


def elementwise_chain(tile: int | str = 64) -> str:
    """y = tanh(exp(-|x|) * 2.5 + x) per row block; a 2-D grid-free tail test. `tile`
    is the rows per tile, or a slot expression of them (SHARED_ROWS)."""
    return f"""\
arg a0 f32 2
arg a1 f32 2
params 0
slot s0 = dim(a0,0)
slot s1 = dim(a0,1)
slot s2 = {tile}
slot s3 = s0 s2 ceildiv
slot s4 = 0
slot s5 = 1
slot s6 = s2 s1 mul 4 mul 63 add 64 floordiv 64 mul 320 add
grid s3
reg r0 f32 (s2, s1) at s4
reg r1 f32 (s2, s1) at s6
view v0 a0 offset s4 (s0 s1 g0 s2) (s1 s5)
view v1 a1 offset s4 (s0 s1 g0 s2) (s1 s5)
load r0, v0
abs r1, r0
neg r1, r1
exp r1, r1
mul.rs r1, r1, #2.5
add r1, r1, r0
tanh r1, r1
store v1, r1
"""


def layernorm(rows_param: bool = True, alias: bool = False) -> str:
    """LayerNorm over the last dim: y = (x - mean) / sqrt(var + eps) * w + b.

    Grid over row blocks of T rows (T = param p0, or 16); each tile loads its
    rows once into local memory and does everything there. Registers:
    r0 x (T, C), r1 d (T, C), r2 row stats (T, 1), r3 w (1, C), r4 b (1, C),
    and d*d in r0 (two big registers), or with `alias` in r5 so that r0 is
    only ever loaded and the VM can alias it to the input (three big
    registers, no copy of x).
    """
    tile = "p0" if rows_param else "16"
    dd = "r5" if alias else "r0"
    r5 = "reg r5 f32 (s2, s1) at s10\n" if alias else ""
    return f"""\
arg a0 f32 2
arg a1 f32 1
arg a2 f32 1
arg a3 f32 2
params {1 if rows_param else 0}
slot s0 = dim(a0,0)
slot s1 = dim(a0,1)
slot s2 = {tile}
slot s3 = s0 s2 ceildiv
slot s4 = 0
slot s5 = 1
slot s6 = s2 s1 mul 4 mul 63 add 64 floordiv 64 mul 320 add
slot s7 = s6 s6 add
slot s8 = s2 4 mul 63 add 64 floordiv 64 mul s7 add
slot s9 = s1 4 mul 63 add 64 floordiv 64 mul s8 add
{"slot s10 = s1 4 mul 63 add 64 floordiv 64 mul s9 add 320 add" + chr(10) if alias else ""}grid s3
reg r0 f32 (s2, s1) at s4
reg r1 f32 (s2, s1) at s6
reg r2 f32 (s2, s5) at s7
reg r3 f32 (s5, s1) at s8
reg r4 f32 (s5, s1) at s9
{r5}view v0 a0 offset s4 (s0 s1 g0 s2) (s1 s5)
view v1 a1 offset s4 (s5 s4) (s1 s5)
view v2 a2 offset s4 (s5 s4) (s1 s5)
view v3 a3 offset s4 (s0 s1 g0 s2) (s1 s5)
load r0, v0
reduce r2, r0, sum, {{1}}, [keepdims]
div.rs r2, r2, s1
sub r1, r0, r2
mul {dd}, r1, r1
reduce r2, {dd}, sum, {{1}}, [keepdims]
div.rs r2, r2, s1
add.rs r2, r2, #1e-05
rsqrt r2, r2
mul r1, r1, r2
load r3, v1
mul r1, r1, r3
load r4, v2
add r1, r1, r4
store v3, r1
"""


def column_stats(tile_rows: int = 8, tile_cols: int = 16) -> str:
    """Per-column sum of the positive part and max, split over a 2-D grid with store_acc.

    a1 must hold 0 and a2 -inf before the launch (store_acc accumulates).
    """
    return f"""\
arg a0 f32 2
arg a1 f32 1
arg a2 f32 1
params 0
slot s0 = dim(a0,0)
slot s1 = dim(a0,1)
slot s2 = {tile_rows}
slot s3 = {tile_cols}
slot s4 = s0 s2 ceildiv
slot s5 = s1 s3 ceildiv
slot s6 = 0
slot s7 = 1
slot s8 = 1024
slot s9 = 2048
slot s10 = 3072
slot s11 = 4096
grid s4 s5
reg r0 f32 (s2, s3) at s6
reg r1 i1 (s2, s3) at s8
reg r2 f32 (s7, s7) at s9
reg r3 f32 (s2, s3) at s10
reg r4 f32 (s7, s3) at s11
view v0 a0 offset s6 (s0 s1 g0 s2) (s1 s7 g1 s3)
view v1 a1 offset s6 (s7 s6) (s1 s7 g1 s3)
view v2 a2 offset s6 (s7 s6) (s1 s7 g1 s3)
load r0, v0
gt.rs r1, r0, #0.0
fill r2, #0.0, (s7, s7)
select r3, r1, r0, r2
reduce r4, r3, sum, {{0}}, [keepdims]
store_acc v1, r4, add
reduce r4, r0, max, {{0}}, [keepdims]
store_acc v2, r4, max
"""


def addmm_relu(tm: int = 32, tn: int = 32, tk: int = 16, transpose_b: bool = False) -> str:
    """out = relu(a @ b + bias) with a K loop accumulating in a register.

    With transpose_b, argument a1 holds b transposed (N, K) and the view
    reads it with swapped strides (a transposed view, no copy).
    """
    if transpose_b:
        n_slot = "slot s2 = dim(a1,0)"
        b_view = "view v1 a1 offset s7 (s1 s6 l0 s5) (s2 s1 g1 s4)"
    else:
        n_slot = "slot s2 = dim(a1,1)"
        b_view = "view v1 a1 offset s7 (s1 s2 l0 s5) (s2 s6 g1 s4)"
    return f"""\
arg a0 f32 2
arg a1 f32 2
arg a2 f32 1
arg a3 f32 2
params 0
slot s0 = dim(a0,0)
slot s1 = dim(a0,1)
{n_slot}
slot s3 = {tm}
slot s4 = {tn}
slot s5 = {tk}
slot s6 = 1
slot s7 = 0
slot s8 = s0 s3 ceildiv
slot s9 = s2 s4 ceildiv
slot s10 = s1 s5 ceildiv
slot s11 = s3 s5 mul 4 mul 63 add 64 floordiv 64 mul
slot s12 = s5 s4 mul 4 mul 63 add 64 floordiv 64 mul s11 add
slot s13 = s3 s4 mul 4 mul 63 add 64 floordiv 64 mul s12 add
grid s8 s9
reg r0 f32 (s3, s5) at s7
reg r1 f32 (s5, s4) at s11
reg r2 f32 (s3, s4) at s12
reg r3 f32 (s6, s4) at s13
view v0 a0 offset s7 (s0 s1 g0 s3) (s1 s6 l0 s5)
{b_view}
view v2 a2 offset s7 (s6 s7) (s2 s6 g1 s4)
view v3 a3 offset s7 (s0 s2 g0 s3) (s2 s6 g1 s4)
fill r2, #0.0, (v0[0], v1[1])
loop s10
  load r0, v0
  load r1, v1
  mma r2, r0, r1, [acc]
endloop
load r3, v2
add r2, r2, r3
max.rs r2, r2, #0.0
store v3, r2
"""


def transpose_broadcast(tile: int = 8) -> str:
    """out[j, i] = x[i, j] + row[j]: a transposed view of x and a stride-0 view of row."""
    return f"""\
arg a0 f32 2
arg a1 f32 1
arg a2 f32 2
params 0
slot s0 = dim(a0,0)
slot s1 = dim(a0,1)
slot s2 = {tile}
slot s3 = s1 s2 ceildiv
slot s4 = s0 s2 ceildiv
slot s5 = 0
slot s6 = 1
slot s7 = 1024
grid s3 s4
reg r0 f32 (s2, s2) at s5
reg r1 f32 (s2, s2) at s7
view v0 a0 offset s5 (s1 s6 g0 s2) (s0 s1 g1 s2)
view v1 a1 offset s5 (s1 s6 g0 s2) (s0 s5 g1 s2)
view v2 a2 offset s5 (s1 s0 g0 s2) (s0 s6 g1 s2)
load r0, v0
load r1, v1
add r0, r0, r1
store v2, r0
"""


def mixed_rows(tile: int = 4) -> str:
    """Row tiles through the rarer instructions: a broadcast to a shape of view and
    register extents, a fill and scalar ops with a caller's param, a select whose
    destination is one of its inputs, a copy, a convert and a nop.

    out = (1 - p0 * where(x - rowmax(x) > -0.5, x - rowmax(x), p0)); out16 = f16(out).
    """
    return f"""\
arg a0 f32 2
arg a1 f32 2
arg a2 f16 2
params 1
slot s0 = dim(a0,0)
slot s1 = dim(a0,1)
slot s2 = {tile}
slot s3 = s0 s2 ceildiv
slot s4 = 0
slot s5 = 1
slot s6 = p0
slot s7 = s2 s1 mul 4 mul 63 add 64 floordiv 64 mul
slot s8 = s2 4 mul 63 add 64 floordiv 64 mul s7 add
slot s9 = s2 s1 mul 4 mul 63 add 64 floordiv 64 mul s8 add
slot s10 = s2 s1 mul 63 add 64 floordiv 64 mul s9 add
grid s3
reg r0 f32 (s2, s1) at s4
reg r1 f32 (s2, s5) at s7
reg r2 f32 (s2, s1) at s8
reg r3 i1 (s2, s1) at s9
reg r4 f16 (s2, s1) at s10
view v0 a0 offset s4 (s0 s1 g0 s2) (s1 s5)
view v1 a1 offset s4 (s0 s1 g0 s2) (s1 s5)
view v2 a2 offset s4 (s0 s1 g0 s2) (s1 s5)
load r0, v0
reduce r1, r0, max, {{1}}, [keepdims]
broadcast r2, r1, (v0[0], r0[1])
nop
sub r2, r0, r2
gt.rs r3, r2, #-0.5
fill r1, s6, (v0[0], s5)
select r2, r3, r2, r1
mul.rs r2, r2, s6
sub.sr r2, #1.0, r2
copy r0, r2
convert r4, r0, f16
store v1, r0
store v2, r4
"""


def single_op(op: str, dtype: str, out_dtype: str, form: str = "rr", scalar: str = "#2.0") -> str:
    """A 1-D program applying one elementwise op: out = op(x[, y]) in tiles of 16."""
    if form == "unary":
        body = f"{op} r2, r0"
    elif form == "rr":
        body = f"{op} r2, r0, r1"
    elif form == "rs":
        body = f"{op}.rs r2, r0, {scalar}"
    else:
        body = f"{op}.sr r2, {scalar}, r0"
    return f"""\
arg a0 {dtype} 1
arg a1 {dtype} 1
arg a2 {out_dtype} 1
params 0
slot s0 = dim(a0,0)
slot s1 = 16
slot s2 = s0 s1 ceildiv
slot s3 = 0
slot s4 = 1
slot s5 = 128
slot s6 = 256
slot s7 = 3
grid s2
reg r0 {dtype} (s1) at s3
reg r1 {dtype} (s1) at s5
reg r2 {out_dtype} (s1) at s6
view v0 a0 offset s3 (s0 s4 g0 s1)
view v1 a1 offset s3 (s0 s4 g0 s1)
view v2 a2 offset s3 (s0 s4 g0 s1)
load r0, v0
load r1, v1
{body}
store v2, r2
"""


def reduce_op(kind: str, dtype: str, axes: str, keepdims: bool, tile_rows: int = 4) -> str:
    """Reduce a (rows, cols) tile per row block; output (rows, cols) reduced over `axes`.

    axes "{1}" gives (R, 1) or (R,); axes "{0}" needs one tile covering all rows; axes
    "{}" reduces over nothing (the output is the input).
    """
    flags = "[keepdims]" if keepdims else "[]"
    grid, in_view, in_reg = "s3", "(s0 s1 g0 s2) (s1 s5)", "(s2, s1)"
    if axes == "{0}":  # one tile holding every row, even when there are none
        grid, in_view, in_reg = "s5", "(s0 s1) (s1 s5)", "(s0, s1)"
    if axes == "{}":
        out_rank, out_reg, out_view = 2, in_reg, f"view v1 a1 offset s4 {in_view}"
    elif axes == "{1}":
        out_rank = 2 if keepdims else 1
        out_reg = "(s2, s5)" if keepdims else "(s2)"
        out_view = (
            "view v1 a1 offset s4 (s0 s5 g0 s2) (s5 s4)"
            if keepdims
            else "view v1 a1 offset s4 (s0 s5 g0 s2)"
        )
    else:
        out_rank = 2 if keepdims else 1
        out_reg = "(s5, s1)" if keepdims else "(s1)"
        out_view = (
            "view v1 a1 offset s4 (s5 s4) (s1 s5)" if keepdims else "view v1 a1 offset s4 (s1 s5)"
        )
    return f"""\
arg a0 {dtype} 2
arg a1 {dtype} {out_rank}
params 0
slot s0 = dim(a0,0)
slot s1 = dim(a0,1)
slot s2 = {tile_rows}
slot s3 = s0 s2 ceildiv
slot s4 = 0
slot s5 = 1
slot s6 = 4096
grid {grid}
reg r0 {dtype} {in_reg} at s4
reg r1 {dtype} {out_reg} at s6
view v0 a0 offset s4 {in_view}
{out_view}
load r0, v0
reduce r1, r0, {kind}, {axes}, {flags}
store v1, r1
"""


def add_chain(n: int) -> str:
    """One tile, one element: load, then n `add` instructions, then store (the VM's
    dispatch cost per instruction, measured by the benchmarks)."""
    body = "\n".join("add r1, r1, r0" for _ in range(n))
    return f"""\
arg a0 f32 1
arg a1 f32 1
params 0
slot s0 = 1
slot s1 = 0
slot s2 = 64
grid s0
reg r0 f32 (s0) at s1
reg r1 f32 (s0) at s2
view v0 a0 offset s1 (s0 s0)
view v1 a1 offset s1 (s0 s0)
load r0, v0
copy r1, r0
{body}
store v1, r1
"""


def broadcast_add(in_place: bool = False) -> str:
    """a2 = a0 + a1 for 2-D arguments of any shapes, broadcast by numpy's rule, in one
    tile: each argument whole in a register (the sum in r0 itself with `in_place`)."""
    dst = "r0" if in_place else "r2"
    return f"""\
arg a0 f32 2
arg a1 f32 2
arg a2 f32 2
params 0
slot s0 = dim(a0,0)
slot s1 = dim(a0,1)
slot s2 = dim(a1,0)
slot s3 = dim(a1,1)
slot s4 = dim(a2,0)
slot s5 = dim(a2,1)
slot s6 = 0
slot s7 = 1
slot s8 = 1024
slot s9 = 2048
grid s7
reg r0 f32 (s0, s1) at s6
reg r1 f32 (s2, s3) at s8
reg r2 f32 (s4, s5) at s9
view v0 a0 offset s6 (s0 s1) (s1 s7)
view v1 a1 offset s6 (s2 s3) (s3 s7)
view v2 a2 offset s6 (s4 s5) (s5 s7)
load r0, v0
load r1, v1
add {dst}, r0, r1
store v2, {dst}
"""
