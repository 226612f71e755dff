"""`torch.compile(model, backend="dvm", dynamic=True)` on modules written the way
people write them: inference over a stream of batch sizes and lengths against
eager, one training step each (gradients against eager), and the share of ops
that ran on dvm."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")
nn = torch.nn
F = torch.nn.functional

import dvm.torch  # noqa: E402  (after torch: the extra is optional)
from dvm import lazy  # noqa: E402
from dvm.torch import aten_index  # noqa: E402


class CausalSelfAttention(nn.Module):
    """nanoGPT's attention: fused QKV split, views, transposes, a causal buffer slice."""

    def __init__(self, d: int = 32, heads: int = 4, block: int = 64) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.register_buffer("mask", torch.tril(torch.ones(block, block)).view(1, 1, block, block))

    def forward(self, x: Any) -> Any:
        b, t, c = x.size()
        q, k, v = self.qkv(x).split(c, dim=2)
        q = q.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        k = k.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        v = v.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.mask[:, :, :t, :t] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(b, t, c)
        return self.proj(y)


class Block(nn.Module):
    """A GPT block: LayerNorm, attention, LayerNorm, GELU MLP."""

    def __init__(self, d: int = 32) -> None:
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn = CausalSelfAttention(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x: Any) -> Any:
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class FusedAttentionBlock(nn.Module):
    """LayerNorm and attention through `F.scaled_dot_product_attention` (causal)."""

    def __init__(self, d: int = 32, heads: int = 4) -> None:
        super().__init__()
        self.heads, self.ln = heads, nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)

    def forward(self, x: Any) -> Any:
        b, t, c = x.size()
        q, k, v = (
            y.view(b, t, self.heads, c // self.heads).transpose(1, 2)
            for y in self.qkv(self.ln(x)).split(c, dim=2)
        )
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return x + self.proj(y.transpose(1, 2).contiguous().view(b, t, c))


class RMSNorm(nn.Module):
    def __init__(self, d: int = 32, eps: float = 1e-6) -> None:
        super().__init__()
        self.eps, self.weight = eps, nn.Parameter(torch.ones(d))

    def forward(self, x: Any) -> Any:
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class SwiGLU(nn.Module):
    """LLaMA's MLP after an RMSNorm: SiLU gate times an up projection."""

    def __init__(self, d: int = 32) -> None:
        super().__init__()
        self.norm = RMSNorm(d)
        self.gate, self.up, self.down = nn.Linear(d, 64), nn.Linear(d, 64), nn.Linear(64, d)

    def forward(self, x: Any) -> Any:
        h = self.norm(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


def rotate_half(x: Any) -> Any:
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


class Rotary(nn.Module):
    """Rotary embeddings with `rotate_half`, the tables from positions in the model."""

    def __init__(self, d: int = 16) -> None:
        super().__init__()
        self.register_buffer("inv_freq", 1.0 / (10000 ** (torch.arange(0, d, 2).float() / d)))
        self.proj = nn.Linear(d, d)

    def forward(self, x: Any) -> Any:
        t = torch.arange(x.shape[1], dtype=torch.float32)
        freqs = torch.outer(t, self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        x = self.proj(x)
        return x * emb.cos() + rotate_half(x) * emb.sin()


class Embedding(nn.Module):
    """Token embeddings plus positions (`arange`), then LayerNorm."""

    def __init__(self, vocab: int = 50, d: int = 32, block: int = 64) -> None:
        super().__init__()
        self.tokens, self.positions = nn.Embedding(vocab, d), nn.Embedding(block, d)
        self.ln = nn.LayerNorm(d)

    def forward(self, ids: Any) -> Any:
        positions = torch.arange(ids.shape[1])
        return self.ln(self.tokens(ids) + self.positions(positions))


class MMoE(nn.Module):
    """Multi-gate mixture of experts: dense experts, a softmax gate per task."""

    def __init__(self, d: int = 16, experts: int = 4, tasks: int = 2) -> None:
        super().__init__()
        self.experts = nn.ModuleList(
            nn.Sequential(nn.Linear(d, 32), nn.ReLU()) for _ in range(experts)
        )
        self.gates = nn.ModuleList(nn.Linear(d, experts) for _ in range(tasks))
        self.towers = nn.ModuleList(nn.Linear(32, 1) for _ in range(tasks))

    def forward(self, x: Any) -> Any:
        e = torch.stack([expert(x) for expert in self.experts], dim=1)
        outs = []
        for gate, tower in zip(self.gates, self.towers, strict=True):
            w = F.softmax(gate(x), dim=-1).unsqueeze(-1)
            outs.append(torch.sigmoid(tower((w * e).sum(1))))
        return torch.cat(outs, dim=-1)


class BertLayer(nn.Module):
    """A BERT encoder layer: bidirectional attention under a padding mask (additive,
    from a 0/1 mask as Hugging Face builds it), residual LayerNorms, a GELU FFN."""

    def __init__(self, d: int = 32, heads: int = 4) -> None:
        super().__init__()
        self.heads = heads
        self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.ffn = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x: Any) -> Any:
        b, t, c = x.shape
        mask = torch.ones(b, t)
        mask[:, -1:] = 0  # the last token is padding
        bias = (1.0 - mask[:, None, None, :]) * torch.finfo(x.dtype).min

        def heads(y: Any) -> Any:
            return y.view(b, t, self.heads, c // self.heads).permute(0, 2, 1, 3)

        scores = heads(self.q(x)) @ heads(self.k(x)).transpose(-1, -2) / math.sqrt(c // self.heads)
        context = (F.softmax(scores + bias, dim=-1) @ heads(self.v(x))).permute(0, 2, 1, 3)
        x = self.ln1(x + self.o(context.reshape(b, t, c)))
        return self.ln2(x + self.ffn(x))


def floats(b: int, t: int, d: int) -> Any:
    return torch.randn(b, t, d)


MODULES: dict[str, tuple[Callable[[], Any], Callable[[int, int], Any], float]] = {
    "gpt_block": (Block, lambda b, t: floats(b, t, 32), 1.0),
    "sdpa_block": (FusedAttentionBlock, lambda b, t: floats(b, t, 32), 1.0),
    "swiglu": (SwiGLU, lambda b, t: floats(b, t, 32), 1.0),
    "rotary": (Rotary, lambda b, t: floats(b, t, 16), 1.0),
    "embedding": (Embedding, lambda b, t: torch.randint(0, 50, (b, t)), 1.0),
    "mmoe": (MMoE, lambda b, t: torch.randn(b * t, 16), 1.0),
    "bert_layer": (BertLayer, lambda b, t: floats(b, t, 32), 1.0),
}
"""Per module: how to build it, an input for batch b and length t, and the share of
its forward graph's ops that must run on dvm."""

STREAM = [(2, 5), (3, 7), (2, 13), (1, 1), (4, 2), (0, 3), (5, 11), (2, 5)]
"""Batch sizes and lengths: primes, 1 and 0 (dynamo compiles a graph of its own for
a size of 0 or 1), and sizes met again after another graph ran."""


ONE_PROGRAM_ONE_OUTPUT = {"gpt_block", "rotary", "mmoe"}
"""Modules whose first graph is one program with one output: an intermediate no later
op reads is not an output of its program (an output is stored, which would cost its
kernel the traffic fusion saves)."""


@contextlib.contextmanager
def programs_run() -> Iterator[list[str]]:
    """The texts of the programs run inside the block."""
    from dvm.lazy.segment import WATCHERS

    texts: list[str] = []
    WATCHERS.append(texts.append)
    try:
        yield texts
    finally:
        WATCHERS.remove(texts.append)


MOST_KERNELS = {"bert_layer": 15, "gpt_block": 14, "swiglu": 4}
"""The most launches the program of each module's first graph makes: the flatten and
unflatten around each linear layer and the heads' batched matmuls stop no kernel
(when they stopped fusion: 21, 22 and 6)."""


def outputs_of_programs(texts: list[str]) -> list[int]:
    """The number of outputs of each function of the programs' texts."""
    from xdsl.dialects.func import FuncOp

    funcs = [op for text in texts for op in dvm.parse(text).walk() if isinstance(op, FuncOp)]
    return [len(f.function_type.outputs) for f in funcs]


@pytest.mark.parametrize("name", MODULES)
def test_inference_over_a_stream_of_shapes(name: str) -> None:
    """Eager's results at every size; each later call of the first graph's sizes (none
    0 or 1) replays the plan of its first call, recording nothing. The first call's
    programs (those `export_mlir` gives: the same trace, under no_grad) have the
    outputs and launches fusion leaves."""
    from dvm import lazy

    make, data, share = MODULES[name]
    torch.manual_seed(0)
    model = make().eval()
    torch._dynamo.reset()  # a graph of its own (dynamo reuses one across instances)
    first = len(dvm.torch.reports())
    compiled = torch.compile(model, backend="dvm", dynamic=True)
    first_programs: list[str] = []  # (the first call's)
    with torch.no_grad():
        for k, (b, t) in enumerate(STREAM):
            x = data(b, t)
            recorded = lazy.stats()["ops_recorded"]
            with programs_run() as programs:
                torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-5)
            if k == 0:
                first_programs = programs
            if k and min(b, t) > 1:
                assert lazy.stats()["ops_recorded"] == recorded, (b, t)
    if name in ONE_PROGRAM_ONE_OUTPUT:
        assert outputs_of_programs(first_programs) == [1], first_programs
    if name in MOST_KERNELS:
        program = dvm.compile(dvm.torch.SPLIT_MARKER.join(first_programs))
        assert program.variants[frozenset()].launches <= MOST_KERNELS[name]
    reports = dvm.torch.reports()[first:]
    for report in reports:
        assert report["ops_on_dvm"] >= share * report["ops_total"], report
    replays = sum(min(b, t) > 1 for b, t in STREAM[1:])
    assert (reports[0]["plans"], reports[0]["replayed"]) == (1, replays), reports[0]


def test_a_branch_on_sizes_taken_otherwise_records_again() -> None:
    """The slice handler clamps the end to the dim: where a call's sizes take the other
    branch, the plan's guard fails and the call records (and plans) anew."""
    from dvm.torch.graph import GraphRunner

    aten = torch.ops.aten

    def f(x: Any, end: int) -> Any:
        return (aten.mul.Tensor(aten.slice.Tensor(x, 1, 0, end), 2),)

    runner = GraphRunner(torch.fx.symbolic_trace(f), "sliced")
    for columns in (10, 12, 5, 3, 11):
        x = torch.randn(3, columns)
        (out,) = runner(x, 8)
        torch.testing.assert_close(out, x[:, :8] * 2)
    assert (runner.report.plans, runner.report.replayed) == (2, 3)


def test_a_replayed_embedding_checks_its_indices() -> None:
    model = Embedding().eval()
    compiled = torch.compile(model, backend="dvm", dynamic=True)
    with torch.no_grad():
        for t in (3, 5):
            ids = torch.randint(0, 50, (2, t))
            torch.testing.assert_close(compiled(ids), model(ids))
        ids = torch.randint(0, 50, (2, 7))
        ids[1, 2] = 50
        with pytest.raises(IndexError):
            compiled(ids)


TRAINED = [name for name in MODULES if name != "bert_layer"]
"""The modules trained: bert_layer's backward has gpt_block's parts (attention,
LayerNorm, GELU) and would be the suite's slowest case."""


@pytest.mark.parametrize("name", TRAINED)
def test_a_training_step_gives_torchs_gradients(name: str) -> None:
    from dvm import lazy
    from dvm.lazy.segment import PROGRAMS

    make, data, _ = MODULES[name]
    torch.manual_seed(1)
    torch._dynamo.reset()
    lazy.reset()
    model = make()
    reference = make()
    reference.load_state_dict(model.state_dict())
    compiled = torch.compile(model, backend="dvm", dynamic=True)
    for b, t in [(2, 5), (3, 11), (5, 7)]:
        x = data(b, t)
        compiled(x).square().mean().backward()
        reference(x).square().mean().backward()
    for (key, p), q in zip(model.named_parameters(), reference.parameters(), strict=True):
        assert p.grad is not None, key
        torch.testing.assert_close(p.grad, q.grad, rtol=1e-4, atol=1e-5, msg=key)
    # the 1s of torch's graphs (a keepdim mean saved for the backward, a causal mask
    # of 1 x 1 x n x n) are static in the programs: no unit-dim variant is compiled
    variants = [len(c.program.variants) for c in PROGRAMS.values() if c.program is not None]
    assert variants and set(variants) == {1}, variants


def test_factories_and_any_record() -> None:
    """`arange` (with a start, a step, a float dtype), `full`, `full_like` and `any` on
    sizes of the call are recorded (an iota, broadcast constants, a reduction)."""

    def f(x: Any) -> Any:
        n = x.shape[0]
        steps = torch.arange(1, 3 * n + 1, 3) + torch.arange(n, dtype=torch.float32) * 0.5
        filled = torch.full((n, 2), 1.5) + torch.full_like(x, 2.0)[:, :2]
        return steps[:, None] * filled, (x > 0).any(-1), torch.arange(n)

    compiled = torch.compile(f, backend="dvm", dynamic=True)
    first = len(dvm.torch.reports())
    for n in (2, 3, 7, 1, 0):
        x = torch.randn(n, 4, generator=torch.Generator().manual_seed(n))
        for got, want in zip(compiled(x), f(x), strict=True):
            torch.testing.assert_close(got, want)
    for report in dvm.torch.reports()[first:]:
        assert report["ops_on_dvm"] == report["ops_total"], report


def test_max_and_min_record() -> None:
    """`max`/`min` of a whole tensor, and along a dim as values and indices (the first
    index on ties, as torch's)."""

    def f(x: Any) -> Any:
        values, indices = x.max(dim=1)
        low, where = torch.min(x, -1, keepdim=True)
        return x.max() + x.min(), values, indices, low, where

    compiled = torch.compile(f, backend="dvm", dynamic=True)
    first = len(dvm.torch.reports())
    for shape in [(3, 5), (4, 7), (1, 3), (6, 1), (2, 13)]:
        generator = torch.Generator().manual_seed(shape[1])
        x = torch.randint(-3, 4, shape, generator=generator).float()  # (ties)
        for got, want in zip(compiled(x), f(x), strict=True):
            torch.testing.assert_close(got, want)
    for report in dvm.torch.reports()[first:]:
        assert report["ops_on_dvm"] == report["ops_total"], report


def test_slice_writes_record() -> None:
    """In-place writes to slices (a KV cache's update, a strided fill), which
    functionalization makes `slice_scatter`s: each an insert_slice."""

    def f(cache: Any, new: Any) -> Any:
        out = cache.clone()
        out[:, 1 : 1 + new.shape[1]] = new * 2
        out[:, ::3] = -1.0
        return out

    compiled = torch.compile(f, backend="dvm", dynamic=True)
    first = len(dvm.torch.reports())
    for b, t, n in [(2, 9, 4), (3, 7, 6), (1, 5, 2), (4, 13, 0), (2, 2, 1)]:
        generator = torch.Generator().manual_seed(t)
        cache, new = torch.randn(b, t, generator=generator), torch.randn(b, n, generator=generator)
        torch.testing.assert_close(compiled(cache, new), f(cache, new))
    for report in dvm.torch.reports()[first:]:
        assert report["ops_on_dvm"] == report["ops_total"], report


def test_a_computed_index_out_of_range_is_an_index_error() -> None:
    """Positions past the embedding's rows: an `IndexError`, as in eager."""
    torch.manual_seed(0)
    model = Embedding(block=8).eval()
    compiled = torch.compile(model, backend="dvm", dynamic=True)
    with torch.no_grad():
        for t in (3, 8, 5):
            ids = torch.randint(0, 50, (2, t))
            torch.testing.assert_close(compiled(ids), model(ids))
        with pytest.raises(IndexError, match=r"tensor\.take: index 8 is out of range"):
            compiled(torch.randint(0, 50, (2, 9)))


def test_the_backend_is_registered_by_name() -> None:
    from torch._dynamo import list_backends

    assert "dvm" in list_backends()
    assert dvm.torch.backend is not None


def test_aot_autograd_traces_without_the_fake_tensor_cache() -> None:
    """The backend's AOTAutograd step runs with the graph's fake mode's dispatch cache
    off, and leaves the cache as it found it (dynamo's tracing uses it)."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    seen: list[bool | None] = []

    def compile_graph(module: Any, example_inputs: Any) -> str:
        mode = getattr(example_inputs[0], "fake_mode", None)
        seen.append(None if mode is None else mode.cache_enabled)
        return "compiled"

    fake_mode = FakeTensorMode()
    with fake_mode:
        example = torch.empty(2, 3)
    was = fake_mode.cache_enabled
    compiled = dvm.torch.without_fake_tensor_cache(compile_graph)
    assert compiled(None, [example]) == "compiled"
    assert seen == [False] and fake_mode.cache_enabled == was
    assert compiled(None, [torch.ones(2)]) == "compiled"  # (no fake mode: called as is)
    assert seen == [False, None]


def test_an_op_dvm_lacks_runs_in_torch_and_is_reported() -> None:
    def f(x: Any) -> Any:
        return torch.polygamma(6, torch.relu(x) * 2 + 1) + 1  # (orders above 5 run in torch)

    x = torch.randn(5, 5)
    first = len(dvm.torch.reports())
    torch.testing.assert_close(torch.compile(f, backend="dvm", dynamic=True)(x), f(x))
    report = dvm.torch.reports()[first]
    assert report["fallbacks"] and 0 < report["ops_on_dvm"] < report["ops_total"]


def test_export_mlir_is_a_program_dvm_reads() -> None:
    import dvm

    text = dvm.torch.export_mlir(SwiGLU(), torch.randn(2, 3, 32))
    assert "tensor.matmul" in text and "tensor.sigmoid" in text
    dvm.parse(text)


def test_export_mlir_of_several_segments_is_split_for_dvm_opt() -> None:
    """An op that runs in torch cuts the graph: each segment's program, between
    `// -----` markers, is one `dvm-opt --split-input-file` lowers on its own."""
    from lit_shell import dvm_opt

    def f(x: Any) -> Any:
        return torch.polygamma(6, torch.relu(x) * 2 + 1).exp() + 1

    text = dvm.torch.export_mlir(f, torch.randn(5, 6))
    assert text.count("func.func @segment") == 2 and text.count("// -----") == 1
    outcome = dvm_opt(["--split-input-file", "-p", "dvm-pipeline"], text)
    assert outcome.code == 0, outcome.stderr
    assert outcome.stdout.count("// -----") == 1 and outcome.stdout.count("func.func") == 2


def test_a_cube_is_multiplies() -> None:
    """GELU's `x ** 3` becomes two multiplies (a `pow` per element is many times
    slower), with torch's result."""
    import dvm

    def gelu(x: torch.Tensor) -> torch.Tensor:
        return 0.5 * x * (1 + torch.tanh(0.797884583 * (x + 0.044715 * x**3)))

    x = torch.randn(7, 5, generator=torch.Generator().manual_seed(0))
    text = dvm.torch.export_mlir(gelu, x)
    assert "tensor.pow" not in text and text.count("tensor.mul") >= 5
    torch.testing.assert_close(torch.compile(gelu, backend="dvm", dynamic=True)(x), gelu(x))


def test_views_and_copies_cost_no_kernel() -> None:
    """torch's whole-tensor views, slices and clones of a value the program makes are
    that value: no `tensor.convert` between ops that fuse (each one cost a kernel)."""
    import dvm

    def gates(x: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
        p = torch.softmax(x @ g, dim=1).t()[:, :].clone()
        return (p[:, :, None] * 2.0).sum(dim=0)

    rng = torch.Generator().manual_seed(0)
    x, g = torch.randn(9, 4, generator=rng), torch.randn(4, 3, generator=rng)
    text = dvm.torch.export_mlir(gates, x, g)
    assert "tensor.convert" not in text
    torch.testing.assert_close(torch.compile(gates, backend="dvm", dynamic=True)(x, g), gates(x, g))


def test_sizes_the_graph_fixes_are_static_in_the_program() -> None:
    """A module's weights and the hidden size are fixed ints in dynamo's graph: the
    program's types say them (the compiler fuses and tiles with them), while the batch
    and the length stay `?`; another length replays the same program."""
    import dvm

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.GELU(approximate="tanh")).eval()
    text = dvm.torch.export_mlir(model, torch.randn(3, 5, 8))
    assert "tensor<16x8xf32>" in text and "tensor<16xf32>" in text
    assert "x8xf32>" in text.split("->")[0]
    compiled = torch.compile(model, backend="dvm", dynamic=True)
    with torch.no_grad():
        for length in (5, 7, 2):
            x = torch.randn(3, length, 8)
            torch.testing.assert_close(compiled(x), model(x))


def test_tensors_cross_without_copies() -> None:
    from dvm.torch.convert import to_numpy, to_torch

    for dtype in (torch.float32, torch.bfloat16, torch.int64):
        t = torch.arange(6).to(dtype)
        array = to_numpy(t)
        assert array.ctypes.data == t.data_ptr()
        assert to_torch(array).data_ptr() == t.data_ptr()


def test_a_replayed_torch_op_reads_a_constant_of_the_graph() -> None:
    """A module's constant (a `get_attr` node) that an op running in torch reads is a
    tensor again when the plan replays that op."""
    from dvm.torch.graph import GraphRunner

    aten = torch.ops.aten

    class Masked(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.register_buffer("table", torch.arange(16.0).view(4, 4))

        def forward(self, x: Any) -> Any:
            return (aten.lerp.Scalar(x, self.table, 0.25),)

    runner = GraphRunner(torch.fx.symbolic_trace(Masked()), "masked")
    for rows in (3, 5, 2):
        x = torch.randn(rows, 4, 4)
        (out,) = runner(x)
        torch.testing.assert_close(out, torch.lerp(x, torch.arange(16.0).view(4, 4), 0.25))
    assert (runner.report.plans, runner.report.replayed) == (1, 2)


def test_a_variance_replays_its_plan() -> None:
    """var and std divide by their count of elements, a size that replay computes
    anew (numpy's var would read it as a plain float: no plan)."""

    def f(x: Any) -> Any:
        return x.var(dim=-1, keepdim=True) + x.std(0)

    first = len(dvm.torch.reports())
    compiled = torch.compile(f, backend="dvm", dynamic=True)
    torch.manual_seed(3)
    with torch.no_grad():
        for rows, columns in [(3, 8), (4, 8), (5, 6), (7, 3)]:
            x = torch.randn(rows, columns)
            torch.testing.assert_close(compiled(x), f(x))
    (report,) = dvm.torch.reports()[first:]
    assert (report["plans"], report["replayed"]) == (1, 3), report


@torch.library.custom_op("dvm_test::positive_rows", mutates_args=())
def positive_rows(x: torch.Tensor) -> torch.Tensor:
    """The rows whose first element is positive (a size known only from the data),
    counting its calls."""
    CALLS.append(x.shape)
    return x[x[:, 0] > 0].clone()


CALLS: list[Any] = []


def test_a_guard_failing_after_a_torch_op_does_not_run_it_again() -> None:
    """A guard on the sizes of a torch op's result fails after the op ran: the call
    records anew, reading that result rather than running the op a second time (it
    may draw random numbers, or be a collective)."""
    from dvm.torch.graph import GraphRunner

    aten = torch.ops.aten

    def f(x: Any) -> Any:
        rows = torch.ops.dvm_test.positive_rows.default(x)
        return (aten.mul.Tensor(aten.slice.Tensor(rows, 0, 0, 4), 2),)

    runner = GraphRunner(torch.fx.symbolic_trace(f), "positive rows")
    CALLS.clear()
    for signs in ([1, 1, 1, 1, 1, -1], [1, -1, 1, -1, -1], [1, 1, -1, 1, 1, 1, 1], [-1, 1]):
        x = torch.rand(len(signs), 3) * torch.tensor(signs, dtype=torch.float32)[:, None]
        (out,) = runner(x)
        torch.testing.assert_close(out, x[x[:, 0] > 0][:4] * 2)
    assert len(CALLS) == 4
    assert (runner.report.plans, runner.report.replayed) == (2, 2)


def test_a_constant_output_is_the_callers_own_at_each_call() -> None:
    """A constant a graph returns (here a `scalar_tensor`) is kept by the plan: each
    call, recorded or replayed, returns a copy, so writing to one call's output
    changes no later call's."""
    from dvm.torch.graph import GraphRunner

    aten = torch.ops.aten

    def f(x: Any) -> Any:
        three = aten.scalar_tensor.default(3.0)
        return (aten.mul.Tensor(x, three), three)

    runner = GraphRunner(torch.fx.symbolic_trace(f), "constant output")
    for rows in (2, 3, 4):
        x = torch.randn(rows)
        scaled, three = runner(x)
        torch.testing.assert_close(scaled, x * 3)
        assert three.item() == 3.0
        three.add_(1)
    assert (runner.report.plans, runner.report.replayed) == (1, 2)


def test_a_high_rank_repeat_by_sizes_of_the_call_compiles() -> None:
    """A repeat by counts that are sizes of the call broadcasts over a unit dim before
    each repeated dim: as many at a time as the VM's 8 dims allow (a 6-d tensor repeated
    along every dim was a 12-d program, which ran in numpy)."""

    def f(x: Any, y: Any) -> Any:
        rows, cols = y.shape
        return x.repeat(rows, 2, 1, cols, rows, cols), x[0].tile((rows, 1, 1, 1, cols))

    compiled = torch.compile(f, backend="dvm", dynamic=True)
    failed = lazy.stats()["failed"]
    for rows, cols in [(3, 2), (2, 1), (1, 4)]:
        generator = torch.Generator().manual_seed(rows)
        x, y = torch.randn(2, 1, 3, 1, 2, 2, generator=generator), torch.zeros(rows, cols)
        for got, want in zip(compiled(x, y), f(x, y), strict=True):
            assert torch.equal(got, want)
    assert lazy.stats()["failed"] == failed


def test_gathers_flips_repeats_norms_and_shifts_record() -> None:
    """`gather` (cross entropy's), `index_select`, `flip` (of a 0-d tensor too: a copy),
    `repeat`, vector norms and integer shifts and xor record; an index of the call is
    checked on each replay."""

    def f(x: Any, target: Any, rows: Any) -> Any:
        loss = F.cross_entropy(x, target, reduction="none")
        picked = x.index_select(0, rows).flip(-1).repeat(1, 2)
        norms = torch.stack(
            [torch.linalg.vector_norm(x, p, dim=-1) for p in (1, 2, 3.5, math.inf, -math.inf)]
        )
        bits = (target << 2) ^ (target >> 1)
        return loss, picked, norms, bits, loss.sum().flip(0)

    compiled = torch.compile(f, backend="dvm", dynamic=True)
    first = len(dvm.torch.reports())
    for n, classes in [(4, 5), (7, 3), (1, 6), (13, 5)]:
        generator = torch.Generator().manual_seed(n)
        x = torch.randn(n, classes, generator=generator)
        target = torch.randint(0, classes, (n,), generator=generator)
        rows = torch.randint(0, n, (3,), generator=generator)
        for got, want in zip(compiled(x, target, rows), f(x, target, rows), strict=True):
            torch.testing.assert_close(got, want)
    for report in dvm.torch.reports()[first:]:
        assert report["ops_on_dvm"] == report["ops_total"], report
    x, target = torch.randn(5, 4), torch.randint(0, 4, (5,))
    with pytest.raises(IndexError):
        compiled(x, target, torch.tensor([0, 5, 1]))


def test_a_gather_of_a_smaller_index_runs_in_torch() -> None:
    """torch's `gather` takes an index smaller than the input in the other dims:
    `take_along_axis` does not, so such a gather runs in torch, on a replay too."""

    def f(x: Any, index: Any) -> Any:
        return torch.gather(x * 2, 1, index) + 1

    compiled = torch.compile(f, backend="dvm", dynamic=True)
    for n, k in [(4, 4), (6, 6), (6, 3), (5, 1), (7, 7)]:
        generator = torch.Generator().manual_seed(n + k)
        x = torch.randn(n, 5, generator=generator)
        index = torch.randint(0, 5, (k, 2), generator=generator)
        torch.testing.assert_close(compiled(x, index), f(x, index))


def test_a_top_k_router_records() -> None:
    """A mixture-of-experts router: softmax, the top 2 experts and their weights
    renormalized; `topk`'s values and indices both come from `tensor.top_k`."""

    def route(logits: Any) -> Any:
        weights, experts = torch.topk(logits.softmax(-1), 2, dim=-1)
        return weights / weights.sum(-1, keepdim=True), experts

    compiled = torch.compile(route, backend="dvm", dynamic=True)
    first = len(dvm.torch.reports())
    for tokens, n in [(5, 8), (1, 4), (13, 8), (7, 2)]:
        generator = torch.Generator().manual_seed(tokens)
        logits = torch.randperm(tokens * n, generator=generator).float().view(tokens, n) / 7
        for got, want in zip(compiled(logits), route(logits), strict=True):
            torch.testing.assert_close(got, want)
    for report in dvm.torch.reports()[first:]:
        assert report["ops_on_dvm"] == report["ops_total"], report


def test_activations_divisions_scans_and_indexing_record() -> None:
    """leaky_relu, elu, hardtanh; `//` and `div` with each rounding mode (floats as
    torch rounds them, integers by a nonzero number); cumprod; a size used as a number
    (`math.sqrt(d)`: scalar_tensor, computed anew on a replay); `x[:, ids]`, whose
    computed negative ids count from the end as torch's do."""

    def f(x: Any, ids: Any) -> Any:
        d = x.shape[1]
        acts = F.leaky_relu(x, 0.2) + F.elu(x) + F.hardtanh(x, -0.5, 0.5)
        floor = torch.div(x, 0.3, rounding_mode="floor") + x // -0.7
        trunc = torch.div(x, 0.7, rounding_mode="trunc")
        q = ids * 7 - 20
        ints = (
            q // 3
            + torch.div(q, -4, rounding_mode="trunc")
            + torch.div(q, 5, rounding_mode="floor")
        )
        scaled = x / math.sqrt(d)
        rolled = x[:, torch.arange(d) - 1]
        return acts + floor + trunc + scaled + rolled, ints, torch.cumprod(x * 0.5, 1), x[:, ids]

    compiled = torch.compile(f, backend="dvm", dynamic=True)
    first = len(dvm.torch.reports())
    for n, d in [(4, 5), (7, 3), (1, 6), (13, 2)]:
        generator = torch.Generator().manual_seed(n)
        x = torch.randn(n, d, generator=generator) * 3
        ids = torch.randint(0, d, (4,), generator=generator)
        for got, want in zip(compiled(x, ids), f(x, ids), strict=True):
            torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-6)
    for report in dvm.torch.reports()[first:]:
        assert report["ops_on_dvm"] == report["ops_total"], report


def test_index_put_and_index_add_record_as_scatter_add() -> None:
    """An embedding's gradient (`index_put` with accumulate, equal ids adding up) and
    `index_add` record as `tensor.scatter_add`; an id out of range is an IndexError."""
    torch.manual_seed(0)
    model = nn.Embedding(11, 6)
    reference = nn.Embedding(11, 6)
    reference.load_state_dict(model.state_dict())
    compiled = torch.compile(lambda ids: model(ids).square().sum(), backend="dvm", dynamic=True)
    first = len(dvm.torch.reports())
    for b, t in [(2, 5), (3, 7), (1, 13)]:
        ids = torch.randint(0, 11, (b, t), generator=torch.Generator().manual_seed(t))
        model.zero_grad()
        reference.zero_grad()
        compiled(ids).backward()
        reference(ids).square().sum().backward()
        torch.testing.assert_close(model.weight.grad, reference.weight.grad)

    def add(x: Any, ids: Any, rows: Any) -> Any:
        return x.index_add(0, ids, rows * 2) + x.index_add(1, ids % x.shape[1], rows.T, alpha=3)

    added = torch.compile(add, backend="dvm", dynamic=True)
    for n in (5, 9, 13):
        generator = torch.Generator().manual_seed(n)
        x, rows = torch.randn(n, n, generator=generator), torch.randn(4, n, generator=generator)
        ids = torch.randint(0, n, (4,), generator=generator)
        torch.testing.assert_close(added(x, ids, rows), add(x, ids, rows))
    for report in dvm.torch.reports()[first:]:
        assert report["ops_on_dvm"] == report["ops_total"], report
    with pytest.raises(IndexError):
        added(torch.randn(5, 5), torch.tensor([0, 5, 1, 2]), torch.randn(4, 5))


def test_index_put_of_values_broadcast_before_a_sync_point() -> None:
    """A broadcast that a flush computed holds no operands any more: `index_put` asks
    whether its values are one number broadcast, and must not look for the operand."""
    x = lazy.asarray(np.zeros((3, 4), np.float32)) * 1
    row = lazy.asarray(np.arange(4, dtype=np.float32)) + 1
    values = lazy.asarray(np.broadcast_to(row, (3, 4)))  # (lazy: numpy's protocol)
    ids = lazy.asarray(np.array([2, 0, 1]))
    lazy.sync()
    assert values._node.op == "broadcast_to" and not values._node.operands
    written = np.asarray(aten_index.index_put(x, [ids], values))
    np.testing.assert_array_equal(written, np.tile(np.arange(1, 5, dtype=np.float32), (3, 1)))


def test_one_hot_records_its_range_checks() -> None:
    """`F.one_hot` checks its classes are in range (`_assert_async`): on dvm, on each
    call, with eager's error for a class out of range, a replayed call's too."""

    def encode(labels: Any, scale: Any) -> Any:
        return F.one_hot(labels * 1, 6).float() * scale

    compiled = torch.compile(encode, backend="dvm", dynamic=True)
    first = len(dvm.torch.reports())
    for n in (4, 9, 5, 13):
        generator = torch.Generator().manual_seed(n)
        labels = torch.randint(0, 6, (n, 3), generator=generator)
        scale = torch.randn(n, 3, 1, generator=generator)
        torch.testing.assert_close(compiled(labels, scale), encode(labels, scale))
    reports = dvm.torch.reports()[first:]
    assert reports and all(r["ops_on_dvm"] == r["ops_total"] for r in reports), reports
    for bad, message in [(6, "smaller than num_classes"), (-1, "non-negative")]:
        labels = torch.randint(0, 6, (5, 3), generator=torch.Generator().manual_seed(bad))
        labels[3, 1] = bad
        with pytest.raises(RuntimeError, match=message):
            encode(labels, torch.ones(5, 3, 1))  # (eager's error, as the backend's)
        with pytest.raises(RuntimeError, match=message):
            compiled(labels, torch.ones(5, 3, 1))
