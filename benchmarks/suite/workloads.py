"""The benchmark workloads: a program, a stream of shapes, and the peers' versions.

Each workload is one `.mlir` program (the shared examples, plus
`benchmarks/programs/addmm_gelu.mlir`), a shape sampler, an input maker, and
the same computation for every peer:

- numpy eager: the composites of the examples' `reference.py` (the numpy
  reference semantics the project's conformance tests use);
- torch eager / TorchInductor: the same composite written with torch ops,
  op for op (no fused library kernels such as `F.layer_norm`), so that every
  system computes the same graph;
- numexpr, where the work is elementwise: elementwise parts in one
  `numexpr.evaluate`, matmuls and reductions in numpy (float32 constants
  are passed as variables, or numexpr computes in float64).

Shape ranges: `2d` and `mm` are exactly those of `shared/baselines/common.py`
(same bounds, same seeds), so the numbers compare with the baseline
measurements; softmax, BERT and MMoE add their own samplers in the same
log-uniform style.
"""

from __future__ import annotations

import importlib.util
import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

Shape = tuple[int, ...]
Arrays = tuple[np.ndarray, ...]
Fn = Callable[..., Any]

BENCH_DIR = Path(__file__).resolve().parents[1]
REPO = BENCH_DIR.parent
DEFAULT_EXAMPLES = REPO.parent / "shared" / "examples"
PROGRAMS = BENCH_DIR / "programs"

# --------------------------------------------------------------------------
# Shape streams (log-uniform, fixed seeds)
# --------------------------------------------------------------------------

LO, HI = 16, 4096
EW_CAP = 4 * 1024 * 1024
"""2-D elementwise / row workloads: R*C <= 4M elements (baselines/common.py)."""
MM_OPERAND_CAP = 4 * 1024 * 1024
"""Matmul: M*K <= 4M and K*N <= 4M elements (baselines/common.py)."""
MM_FLOP_CAP = 2**31
"""Matmul: M*N*K <= 2^31 (baselines/common.py)."""


def _logu(rng: np.random.Generator, lo: int = LO, hi: int = HI) -> int:
    """An integer drawn log-uniformly from [lo, hi]."""
    return round(math.exp(rng.uniform(math.log(lo), math.log(hi))))


def sample_2d(n: int, seed: int = 1) -> list[Shape]:
    """(R, C) pairs, both in [16, 4096], R*C <= 4M (identical to the baseline's)."""
    rng = np.random.default_rng(seed)
    out: list[Shape] = []
    while len(out) < n:
        r, c = _logu(rng), _logu(rng)
        if r * c <= EW_CAP:
            out.append((r, c))
    return out


def sample_mm(n: int, seed: int = 2) -> list[Shape]:
    """(M, K, N) triples in [16, 4096] under the operand and FLOP caps (the baseline's)."""
    rng = np.random.default_rng(seed)
    out: list[Shape] = []
    while len(out) < n:
        m, k, nn = _logu(rng), _logu(rng), _logu(rng)
        if m * k <= MM_OPERAND_CAP and k * nn <= MM_OPERAND_CAP and m * nn * k <= MM_FLOP_CAP:
            out.append((m, k, nn))
    return out


def sample_softmax(n: int, seed: int = 3) -> list[Shape]:
    """(B, S) for a (B, S, 128) tensor: B in [1, 64], S in [16, 4096], B*S*128 <= 4M."""
    rng = np.random.default_rng(seed)
    out: list[Shape] = []
    while len(out) < n:
        b, s = _logu(rng, 1, 64), _logu(rng)
        if b * s * 128 <= EW_CAP:
            out.append((b, s))
    return out


def sample_bert(n: int, seed: int = 4) -> list[Shape]:
    """(B, S) for BERT: B in [1, 32], S in [16, 512], B*S <= 8192 tokens and
    attention scores B*4*S*S <= 4M elements."""
    rng = np.random.default_rng(seed)
    out: list[Shape] = []
    while len(out) < n:
        b, s = _logu(rng, 1, 32), _logu(rng, 16, 512)
        if b * s <= 8192 and 4 * b * s * s <= EW_CAP:
            out.append((b, s))
    return out


def sample_mmoe(n: int, seed: int = 5) -> list[Shape]:
    """(B, E) for MMoE: batch B in [16, 16384], experts E in [2, 16]."""
    rng = np.random.default_rng(seed)
    return [(_logu(rng, 16, 16384), _logu(rng, 2, 16)) for _ in range(n)]


# --------------------------------------------------------------------------
# Workloads
# --------------------------------------------------------------------------


@dataclass
class Workload:
    """One benchmark workload; see the module docstring."""

    name: str
    program: Path
    shape_names: str
    """How the shape tuple reads, e.g. "(M, K, N)"."""
    sampler: Callable[[int], list[Shape]]
    make_inputs: Callable[[Shape, np.random.Generator], Arrays]
    numpy: Fn
    torch: Fn
    numexpr: Fn | None
    paper: bool
    """One of the six workloads of the DVM paper's evaluation."""
    uses_blas: bool
    """Its numpy version calls a BLAS GEMM (OpenBLAS workers spin after it)."""

    def elements(self, shape: Shape) -> int:
        """The size of a shape in elements of its main tensor (for plots)."""
        return math.prod(shape)


def load_reference(examples: Path) -> ModuleType:
    """The examples' `reference.py` (numpy reference semantics) as a module."""
    path = examples / "reference.py"
    if not path.exists():
        raise SystemExit(f"benchmarks: no {path}; pass --examples DIR (the shared examples)")
    spec = importlib.util.spec_from_file_location("dvm_examples_reference", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _normal(rng: np.random.Generator, shape: Sequence[int], scale: float = 1.0) -> np.ndarray:
    x = rng.standard_normal(tuple(shape), dtype=np.float32)
    return x if scale == 1.0 else x * np.float32(scale)


def make_workloads(examples: Path = DEFAULT_EXAMPLES) -> dict[str, Workload]:
    """Every workload, in report order."""
    import numexpr as ne
    import torch

    ref = load_reference(examples)
    f32 = np.float32
    half, one, zero = f32(0.5), f32(1.0), f32(0.0)
    k0, k1, eps = f32(0.797884583), f32(0.044715), f32(1e-5)

    # ---- inputs ----
    def mm_inputs(shape: Shape, rng: np.random.Generator) -> Arrays:
        m, k, n = shape
        return _normal(rng, (m, k)), _normal(rng, (k, n))

    def addmm_inputs(shape: Shape, rng: np.random.Generator) -> Arrays:
        m, k, n = shape
        return _normal(rng, (m, k), 1 / math.sqrt(k)), _normal(rng, (k, n)), _normal(rng, (n,))

    def ln_inputs(shape: Shape, rng: np.random.Generator) -> Arrays:
        r, c = shape
        return _normal(rng, (r, c)), _normal(rng, (c,)), _normal(rng, (c,))

    def x_inputs(shape: Shape, rng: np.random.Generator) -> Arrays:
        return (_normal(rng, shape),)

    def softmax_inputs(shape: Shape, rng: np.random.Generator) -> Arrays:
        return (_normal(rng, (*shape, 128)),)

    def bert_inputs(shape: Shape, rng: np.random.Generator) -> Arrays:
        b, s = shape
        w = [_normal(rng, (64, 64), 0.125) if i % 2 == 0 else _normal(rng, (64,), 0.1)
             for i in range(8)]  # fmt: skip
        g1, b1 = 1 + _normal(rng, (64,), 0.1), _normal(rng, (64,), 0.1)
        w1, c1 = _normal(rng, (64, 256), 0.125), _normal(rng, (256,), 0.1)
        w2, c2 = _normal(rng, (256, 64), 0.0625), _normal(rng, (64,), 0.1)
        g2, b2 = 1 + _normal(rng, (64,), 0.1), _normal(rng, (64,), 0.1)
        return (_normal(rng, (b, s, 64)), *w, g1, b1, w1, c1, w2, c2, g2, b2)

    def mmoe_inputs(shape: Shape, rng: np.random.Generator) -> Arrays:
        b, e = shape
        return (
            _normal(rng, (b, 32)),
            _normal(rng, (e, 32, 16), 0.2),
            _normal(rng, (e, 1, 16), 0.1),
            _normal(rng, (32, e), 0.2),
            _normal(rng, (32, e), 0.2),
        )

    # ---- torch versions (op for op like reference.py) ----
    def t_gelu(x: torch.Tensor) -> torch.Tensor:
        return 0.5 * x * (1 + torch.tanh(0.797884583 * (x + 0.044715 * x**3)))

    def t_layernorm_(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        mean = x.mean(dim=-1, keepdim=True)
        d = x - mean
        var = (d * d).mean(dim=-1, keepdim=True)
        return d * (1.0 / torch.sqrt(var + 1e-5)) * w + b

    def t_softmax_(x: torch.Tensor, dim: int) -> torch.Tensor:
        e = torch.exp(x - x.amax(dim=dim, keepdim=True))
        return e / e.sum(dim=dim, keepdim=True)

    def t_matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return a @ b

    def t_addmm_relu(x: torch.Tensor, w: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        return torch.relu(torch.addmm(bias, x, w))

    def t_addmm_gelu(x: torch.Tensor, w: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        return t_gelu(torch.addmm(bias, x, w))

    def t_layernorm(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return t_layernorm_(x, w, b)

    def t_ifelse(x: torch.Tensor) -> torch.Tensor:
        y = x + 1 if x.sum() > 0 else x - 1
        return y + x

    def t_gelu_chain(x: torch.Tensor) -> torch.Tensor:
        return t_gelu(x)

    def t_softmax(x: torch.Tensor) -> torch.Tensor:
        return t_softmax_(x, 2)

    def t_bert(x: torch.Tensor, *p: torch.Tensor) -> torch.Tensor:
        wq, bq, wk, bk, wv, bv, wo, bo, g1, b1, w1, c1, w2, c2, g2, b2 = p
        bsz, s, _ = x.shape

        def heads(t: torch.Tensor) -> torch.Tensor:
            return t.reshape(bsz, s, 4, 16).permute(0, 2, 1, 3)

        q, k, v = heads(x @ wq + bq), heads(x @ wk + bk), heads(x @ wv + bv)
        att = t_softmax_((q @ k.transpose(2, 3)) * 0.25, 3)
        c = (att @ v).permute(0, 2, 1, 3).reshape(bsz, s, 64)
        h1 = t_layernorm_(x + (c @ wo + bo), g1, b1)
        f = t_gelu(h1 @ w1 + c1) @ w2 + c2
        return t_layernorm_(h1 + f, g2, b2)

    def t_mmoe(
        x: torch.Tensor, we: torch.Tensor, be: torch.Tensor, g0: torch.Tensor, g1: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        h = torch.relu(x @ we + be)
        p0 = t_softmax_(x @ g0, 1).t()[:, :, None]
        p1 = t_softmax_(x @ g1, 1).t()[:, :, None]
        return (h * p0).sum(dim=0), (h * p1).sum(dim=0)

    # ---- numpy composites not in reference.py ----
    def np_addmm_gelu(x: np.ndarray, w: np.ndarray, bias: np.ndarray) -> np.ndarray:
        return ref.gelu(x @ w + bias)

    # ---- numexpr versions ----
    def ne_addmm_relu(x: np.ndarray, w: np.ndarray, bias: np.ndarray) -> np.ndarray:
        t = x @ w
        return ne.evaluate(
            "where(t + bias > zero, t + bias, zero)",
            local_dict={"t": t, "bias": bias, "zero": zero},
        )

    def ne_addmm_gelu(x: np.ndarray, w: np.ndarray, bias: np.ndarray) -> np.ndarray:
        t = x @ w
        return ne.evaluate(
            "half * (t + bias) * (one + tanh(k0 * ((t + bias) + k1 * (t + bias) ** 3)))",
            local_dict={"t": t, "bias": bias, "half": half, "one": one, "k0": k0, "k1": k1},
        )

    def ne_layernorm(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
        mean = x.mean(axis=-1, keepdims=True)
        d = ne.evaluate("x - mean", local_dict={"x": x, "mean": mean})
        var = ne.evaluate("d * d", local_dict={"d": d}).mean(axis=-1, keepdims=True)
        return ne.evaluate(
            "d * (one / sqrt(var + eps)) * w + b",
            local_dict={"d": d, "var": var, "one": one, "eps": eps, "w": w, "b": b},
        )

    def ne_ifelse(x: np.ndarray) -> np.ndarray:
        expr = "(x + one) + x" if x.sum() > 0 else "(x - one) + x"
        return ne.evaluate(expr, local_dict={"x": x, "one": one})

    def ne_gelu(x: np.ndarray) -> np.ndarray:
        return ne.evaluate(
            "half * x * (one + tanh(k0 * (x + k1 * x ** 3)))",
            local_dict={"x": x, "half": half, "one": one, "k0": k0, "k1": k1},
        )

    def ne_softmax(x: np.ndarray) -> np.ndarray:
        m = x.max(axis=2, keepdims=True)
        e = ne.evaluate("exp(x - m)", local_dict={"x": x, "m": m})
        s = e.sum(axis=2, keepdims=True)
        return ne.evaluate("e / s", local_dict={"e": e, "s": s})

    ex = examples
    w = [
        Workload("matmul", ex / "matmul.mlir", "(M, K, N)", sample_mm, mm_inputs,
                 ref.matmul, t_matmul, None, paper=True, uses_blas=True),
        Workload("layernorm", ex / "layernorm.mlir", "(R, C)", sample_2d, ln_inputs,
                 ref.layernorm, t_layernorm, ne_layernorm, paper=True, uses_blas=False),
        Workload("addmm_relu", ex / "addmm_relu.mlir", "(M, K, N)", sample_mm, addmm_inputs,
                 ref.addmm_relu, t_addmm_relu, ne_addmm_relu, paper=True, uses_blas=True),
        Workload("addmm_gelu", PROGRAMS / "addmm_gelu.mlir", "(M, K, N)", sample_mm,
                 addmm_inputs, np_addmm_gelu, t_addmm_gelu, ne_addmm_gelu, paper=False,
                 uses_blas=True),
        Workload("if_else_add", ex / "if_else_add.mlir", "(R, C)", sample_2d, x_inputs,
                 ref.if_else_add, t_ifelse, ne_ifelse, paper=True, uses_blas=False),
        Workload("gelu", ex / "gelu.mlir", "(R, C)", sample_2d, x_inputs,
                 ref.gelu, t_gelu_chain, ne_gelu, paper=False, uses_blas=False),
        Workload("softmax", ex / "softmax.mlir", "(B, S) of (B, S, 128)", sample_softmax,
                 softmax_inputs, ref.softmax, t_softmax, ne_softmax, paper=False,
                 uses_blas=False),
        Workload("bert_layer", ex / "bert_layer.mlir", "(B, S) of (B, S, 64)", sample_bert,
                 bert_inputs, ref.bert_layer, t_bert, None, paper=True, uses_blas=True),
        Workload("mmoe", ex / "mmoe.mlir", "(B, E)", sample_mmoe, mmoe_inputs,
                 ref.mmoe, t_mmoe, None, paper=True, uses_blas=True),
    ]  # fmt: skip
    return {x.name: x for x in w}
