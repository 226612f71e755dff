"""`torch.compile(..., backend="dvm", dynamic=True)` on LLM modules as people write them
(LLaMA, GPT-2, BERT-style padding, ALiBi, a KV cache, a mixture of experts, LoRA, a
causal-LM loss), over the shapes serving and fine-tuning give them: batch 1, primes,
length 1, growing lengths. Against eager: outputs, gradients, the share of ATen ops on
dvm, no graph compiled past each size class's first (dynamo specializes sizes of 1),
and every later call a replay of a plan (nothing recorded anew)."""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from typing import Any

import pytest

torch = pytest.importorskip("torch")
nn = torch.nn
F = torch.nn.functional

from test_torch_modules_zoo import (  # noqa: E402
    Case,
    assert_same,
    assert_share,
    graphs_of,
    training_steps,
    twins,
)

import dvm.torch  # noqa: E402  (after torch: the extra is optional)

D, HEADS, KV_HEADS, VOCAB, MAX_LEN = 32, 4, 2, 50, 64
HEAD = D // HEADS

# -- LLaMA ------------------------------------------------------------------------------------


class RMSNorm(nn.Module):
    def __init__(self, d: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.eps, self.weight = eps, nn.Parameter(torch.ones(d) + 0.1 * torch.randn(d))

    def forward(self, x: Any) -> Any:
        h = x.float()
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * h.type_as(x)


def rotate_half(x: Any) -> Any:
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


class Rotary(nn.Module):
    """cos and sin caches for every position, sliced by the positions asked for."""

    def __init__(self, dim: int, max_len: int = MAX_LEN, base: float = 10000.0) -> None:
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))
        freqs = torch.outer(torch.arange(max_len).float(), inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("cos_cached", emb.cos(), persistent=False)
        self.register_buffer("sin_cached", emb.sin(), persistent=False)

    def forward(self, q: Any, k: Any, position_ids: Any) -> tuple[Any, Any]:
        cos = self.cos_cached[position_ids].unsqueeze(1)  # (b, 1, t, head)
        sin = self.sin_cached[position_ids].unsqueeze(1)
        return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin


def repeat_kv(x: Any, times: int) -> Any:
    b, heads, t, d = x.shape
    if times == 1:
        return x
    return x[:, :, None, :, :].expand(b, heads, times, t, d).reshape(b, heads * times, t, d)


class LlamaAttention(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.q_proj = nn.Linear(D, HEADS * HEAD, bias=False)
        self.k_proj = nn.Linear(D, KV_HEADS * HEAD, bias=False)
        self.v_proj = nn.Linear(D, KV_HEADS * HEAD, bias=False)
        self.o_proj = nn.Linear(HEADS * HEAD, D, bias=False)
        self.rotary = Rotary(HEAD)

    def forward(self, x: Any, position_ids: Any) -> Any:
        b, t, _ = x.shape
        q = self.q_proj(x).view(b, t, HEADS, HEAD).transpose(1, 2)
        k = self.k_proj(x).view(b, t, KV_HEADS, HEAD).transpose(1, 2)
        v = self.v_proj(x).view(b, t, KV_HEADS, HEAD).transpose(1, 2)
        q, k = self.rotary(q, k, position_ids)
        k, v = repeat_kv(k, HEADS // KV_HEADS), repeat_kv(v, HEADS // KV_HEADS)
        scores = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(HEAD)
        causal = torch.full((t, t), float("-inf")).triu(1)
        weights = F.softmax(scores + causal, dim=-1, dtype=torch.float32).to(q.dtype)
        out = torch.matmul(weights, v).transpose(1, 2).contiguous().reshape(b, t, -1)
        return self.o_proj(out)


def precompute_freqs_cis(dim: int, end: int, theta: float = 10000.0) -> Any:
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    freqs = torch.outer(torch.arange(end).float(), freqs)
    return torch.polar(torch.ones_like(freqs), freqs)  # complex64


def apply_rotary_emb(xq: Any, xk: Any, freqs_cis: Any) -> tuple[Any, Any]:
    """Meta's reference LLaMA rotary: each pair of features a complex number, turned
    by a complex product (complex tensors inside the graph, and saved for backward)."""
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    freqs_cis = freqs_cis.view(1, xq_.shape[1], 1, xq_.shape[-1])
    xq_out = torch.view_as_real(xq_ * freqs_cis).flatten(3)
    xk_out = torch.view_as_real(xk_ * freqs_cis).flatten(3)
    return xq_out.type_as(xq), xk_out.type_as(xk)


class MetaLlamaAttention(nn.Module):
    """Meta's LLaMA attention: a complex `freqs_cis` buffer sliced at `start_pos`."""

    def __init__(self) -> None:
        super().__init__()
        self.wq, self.wk, self.wv, self.wo = (nn.Linear(D, D, bias=False) for _ in range(4))
        self.register_buffer("freqs_cis", precompute_freqs_cis(HEAD, MAX_LEN), persistent=False)

    def forward(self, x: Any, start_pos: int) -> Any:
        b, t, _ = x.shape
        xq, xk, xv = (w(x).view(b, t, HEADS, HEAD) for w in (self.wq, self.wk, self.wv))
        xq, xk = apply_rotary_emb(xq, xk, self.freqs_cis[start_pos : start_pos + t])
        q, k, v = xq.transpose(1, 2), xk.transpose(1, 2), xv.transpose(1, 2)
        scores = q @ k.transpose(2, 3) / math.sqrt(HEAD)
        causal = torch.full((t, t), float("-inf")).triu(1)
        weights = F.softmax(scores.float() + causal, dim=-1).type_as(q)
        return self.wo((weights @ v).transpose(1, 2).reshape(b, t, -1))


class SwiGLU(nn.Module):
    def __init__(self, d: int = D, hidden: int = 48) -> None:
        super().__init__()
        self.gate_proj = nn.Linear(d, hidden, bias=False)
        self.up_proj = nn.Linear(d, hidden, bias=False)
        self.down_proj = nn.Linear(hidden, d, bias=False)

    def forward(self, x: Any) -> Any:
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class LlamaBlock(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.input_norm, self.attn = RMSNorm(D), LlamaAttention()
        self.post_norm, self.mlp = RMSNorm(D), SwiGLU()

    def forward(self, x: Any, position_ids: Any) -> Any:
        x = x + self.attn(self.input_norm(x), position_ids)
        return x + self.mlp(self.post_norm(x))


# -- GPT-2 ------------------------------------------------------------------------------------


class Conv1D(nn.Module):
    """HF's GPT-2 linear: the weight (in, out), `addmm` on the flattened input."""

    def __init__(self, nf: int, nx: int) -> None:
        super().__init__()
        self.nf = nf
        self.weight = nn.Parameter(torch.randn(nx, nf) * 0.02)
        self.bias = nn.Parameter(torch.zeros(nf) + 0.01)

    def forward(self, x: Any) -> Any:
        size_out = x.size()[:-1] + (self.nf,)  # noqa: RUF005  (HF's spelling)
        x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        return x.view(size_out)


class GPT2Attention(nn.Module):
    """HF's: the scale a 0-d tensor of the head's size ** 0.5, the causal mask a slice of
    a registered `tril` buffer, masked by `torch.finfo.min` (or -inf)."""

    def __init__(self, finfo_min: bool = True) -> None:
        super().__init__()
        self.finfo_min = finfo_min
        mask = torch.tril(torch.ones(MAX_LEN, MAX_LEN, dtype=torch.bool))
        self.register_buffer("bias", mask.view(1, 1, MAX_LEN, MAX_LEN), persistent=False)
        self.c_attn, self.c_proj = Conv1D(3 * D, D), Conv1D(D, D)

    def split_heads(self, x: Any) -> Any:
        return x.view(x.size()[:-1] + (HEADS, HEAD)).permute(0, 2, 1, 3)  # noqa: RUF005

    def forward(self, x: Any) -> Any:
        q, k, v = self.c_attn(x).split(D, dim=2)
        q, k, v = self.split_heads(q), self.split_heads(k), self.split_heads(v)
        w = torch.matmul(q, k.transpose(-1, -2))
        w = w / torch.full([], v.size(-1) ** 0.5, dtype=w.dtype, device=w.device)
        t_q, t_k = q.size(-2), k.size(-2)
        causal = self.bias[:, :, t_k - t_q : t_k, :t_k]
        if self.finfo_min:
            floor = torch.full([], torch.finfo(w.dtype).min, dtype=w.dtype, device=w.device)
            w = torch.where(causal, w.to(w.dtype), floor)
        else:
            w = w.masked_fill(~causal, float("-inf"))
        out = torch.matmul(F.softmax(w, dim=-1), v)
        out = out.permute(0, 2, 1, 3).contiguous()
        return self.c_proj(out.view(out.size()[:-2] + (D,)))  # noqa: RUF005


class GPT2MLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.c_fc, self.c_proj = Conv1D(4 * D, D), Conv1D(D, 4 * D)

    def forward(self, x: Any) -> Any:
        return self.c_proj(F.gelu(self.c_fc(x), approximate="tanh"))


class GPT2Block(nn.Module):
    def __init__(self, finfo_min: bool = True) -> None:
        super().__init__()
        self.ln_1, self.attn = nn.LayerNorm(D), GPT2Attention(finfo_min)
        self.ln_2, self.mlp = nn.LayerNorm(D), GPT2MLP()

    def forward(self, x: Any) -> Any:
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


# -- padding masks, ALiBi, scaled_dot_product_attention ---------------------------------------


class PaddedSelfAttention(nn.Module):
    """BERT's additive mask from an int `attention_mask` (1 keeps a token), the scale
    computed from the head's size by `math.sqrt`."""

    def __init__(self) -> None:
        super().__init__()
        self.qkv, self.out = nn.Linear(D, 3 * D), nn.Linear(D, D)

    def forward(self, x: Any, attention_mask: Any) -> Any:
        b, t, _ = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, HEADS, HEAD).permute(2, 0, 3, 1, 4)
        scores = q @ k.transpose(-1, -2) / math.sqrt(q.size(-1))
        additive = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * torch.finfo(x.dtype).min
        out = F.softmax(scores + additive, dim=-1) @ v
        return self.out(out.transpose(1, 2).reshape(b, t, D))


def alibi_slopes(heads: int) -> Any:
    start = 2 ** (-(2 ** -(math.log2(heads) - 3)))
    return torch.tensor([start ** (i + 1) for i in range(heads)])


class AlibiAttention(nn.Module):
    """ALiBi: a per-head linear bias on the distance between positions, causal."""

    def __init__(self) -> None:
        super().__init__()
        self.qkv, self.out = nn.Linear(D, 3 * D), nn.Linear(D, D)
        self.register_buffer("slopes", alibi_slopes(HEADS), persistent=False)

    def forward(self, x: Any) -> Any:
        b, t, _ = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, HEADS, HEAD).permute(2, 0, 3, 1, 4)
        positions = torch.arange(t)
        distance = positions[None, :] - positions[:, None]  # (t, t), key - query
        bias = self.slopes[:, None, None] * distance[None].float()
        scores = q @ k.transpose(-1, -2) * HEAD**-0.5 + bias
        scores = scores.masked_fill(distance[None] > 0, float("-inf"))
        out = scores.softmax(-1) @ v
        return self.out(out.transpose(1, 2).reshape(b, t, D))


class SDPAMasks(nn.Module):
    """`F.scaled_dot_product_attention` with a boolean mask, a float one, `is_causal`."""

    def __init__(self) -> None:
        super().__init__()
        self.qkv = nn.Linear(D, 3 * D)

    def forward(self, x: Any, attention_mask: Any) -> Any:
        b, t, _ = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, HEADS, HEAD).permute(2, 0, 3, 1, 4)
        keep = attention_mask[:, None, None, :].bool() | torch.eye(t, dtype=torch.bool)
        additive = torch.zeros(b, 1, 1, t).masked_fill(attention_mask[:, None, None, :] == 0, -1e4)
        by_bool = F.scaled_dot_product_attention(q, k, v, attn_mask=keep)
        by_float = F.scaled_dot_product_attention(q, k, v, attn_mask=additive)
        causal = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return (by_bool + by_float + causal).transpose(1, 2).reshape(b, t, D)


# -- a KV cache step --------------------------------------------------------------------------


class CachedAttention(nn.Module):
    """One decoding step: positions after the cache's length (GPT-2's `arange(past,
    past + t)`), the new tokens' keys and values joined to the cache's (`torch.cat`
    on the length), the queries against all of them, the new cache out."""

    def __init__(self) -> None:
        super().__init__()
        self.wpe, self.qkv, self.out = (
            nn.Embedding(MAX_LEN, D),
            nn.Linear(D, 3 * D),
            nn.Linear(D, D),
        )

    def forward(self, x: Any, past_k: Any, past_v: Any) -> Any:
        b, t, _ = x.shape
        past = past_k.shape[2]
        x = x + self.wpe(torch.arange(past, past + t, dtype=torch.long))
        q, k, v = self.qkv(x).view(b, t, 3, HEADS, HEAD).permute(2, 0, 3, 1, 4)
        k, v = torch.cat([past_k, k], dim=2), torch.cat([past_v, v], dim=2)
        scores = q @ k.transpose(-1, -2) / math.sqrt(HEAD)
        out = scores.softmax(-1) @ v
        return self.out(out.transpose(1, 2).reshape(b, t, D)), k, v


# -- a mixture of experts, LoRA ---------------------------------------------------------------


class TopKMoE(nn.Module):
    """A top-2 router over 4 experts: softmax, `topk`, the weights renormalized, a
    one-hot dispatch mask per expert, the outputs added back with `index_add_`."""

    def __init__(self, experts: int = 4, top: int = 2) -> None:
        super().__init__()
        self.top, self.router = top, nn.Linear(D, experts, bias=False)
        self.experts = nn.ModuleList(SwiGLU(D, 24) for _ in range(experts))

    def forward(self, x: Any) -> Any:
        b, t, d = x.shape
        tokens = x.reshape(-1, d)
        probabilities = F.softmax(self.router(tokens), dim=-1, dtype=torch.float)
        weights, chosen = torch.topk(probabilities, self.top, dim=-1)
        weights = weights / weights.sum(dim=-1, keepdim=True)
        dispatch = F.one_hot(chosen, num_classes=len(self.experts))  # (n, top, experts)
        gates = torch.zeros_like(probabilities).scatter(1, chosen, weights)  # (n, experts)
        out = torch.zeros_like(tokens)
        for e, expert in enumerate(self.experts):
            routed = dispatch[:, :, e].sum(-1, keepdim=True).to(x.dtype)
            out = out + expert(tokens) * routed * gates[:, e : e + 1]
        dense = torch.zeros_like(tokens).index_add_(0, torch.arange(b * t), out)
        return dense.view(b, t, d)


class LoRALinear(nn.Module):
    def __init__(self, d_in: int, d_out: int, rank: int = 4, alpha: float = 8.0) -> None:
        super().__init__()
        self.base = nn.Linear(d_in, d_out)
        self.base.weight.requires_grad_(False)
        self.base.bias.requires_grad_(False)
        self.lora_A = nn.Parameter(torch.randn(rank, d_in) * 0.1)
        self.lora_B = nn.Parameter(torch.randn(d_out, rank) * 0.1)
        self.scaling = alpha / rank

    def forward(self, x: Any) -> Any:
        return self.base(x) + (x @ self.lora_A.t() @ self.lora_B.t()) * self.scaling


class LoRAAttention(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.q, self.v = LoRALinear(D, D), LoRALinear(D, D)
        self.k, self.o = nn.Linear(D, D), nn.Linear(D, D)
        for p in (*self.k.parameters(), *self.o.parameters()):
            p.requires_grad_(False)

    def forward(self, x: Any) -> Any:
        b, t, _ = x.shape
        q, k, v = (f(x).view(b, t, HEADS, HEAD).transpose(1, 2) for f in (self.q, self.k, self.v))
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.o(out.transpose(1, 2).reshape(b, t, D))


# -- embeddings and a causal-LM loss ----------------------------------------------------------


class SinusoidalPositions(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, D)

    def forward(self, ids: Any, past: int) -> Any:
        t = ids.shape[1]
        position = torch.arange(past, past + t).float()[:, None]
        frequency = torch.exp(torch.arange(0, D, 2).float() * (-math.log(10000.0) / D))
        table = torch.cat([torch.sin(position * frequency), torch.cos(position * frequency)], -1)
        return self.embed(ids) * math.sqrt(D) + table


class TinyCausalLM(nn.Module):
    """Learned positions from `position_ids` (offset by a past length), a GPT-2 block,
    tied output embeddings, and the shifted loss with ignored targets."""

    def __init__(self) -> None:
        super().__init__()
        self.wte, self.wpe = nn.Embedding(VOCAB, D), nn.Embedding(MAX_LEN, D)
        self.block, self.ln_f = GPT2Block(finfo_min=False), nn.LayerNorm(D)

    def forward(self, ids: Any, labels: Any) -> Any:
        position_ids = torch.arange(ids.shape[1], dtype=torch.long).unsqueeze(0)
        h = self.block(self.wte(ids) + self.wpe(position_ids))
        logits = self.ln_f(h) @ self.wte.weight.t()
        shift_logits, shift_labels = logits[:, :-1, :].contiguous(), labels[:, 1:].contiguous()
        loss = F.cross_entropy(
            shift_logits.view(-1, shift_logits.size(-1)), shift_labels.view(-1), ignore_index=-100
        )
        return loss, logits


class SizeScaled(nn.Module):
    """Scales computed from a length that changes per call, as Python floats: dynamo
    makes some tensor ops (`x * t**-0.5`), and passes others as numbers to the op
    (`torch.full`'s value, `masked_fill`'s, `clamp`'s bound), which each call computes
    from its own sizes."""

    def forward(self, x: Any) -> Any:
        t = x.shape[1]
        scaled = x * t**-0.5 + x / math.sqrt(t) + x.sum(1, keepdim=True) / (t * 2.0)
        by_full = x / torch.full([], t**0.5) + x * torch.full([], math.sqrt(t) * 0.5)
        filled = x.masked_fill(x > 1, t * -1.0).clamp(max=t * 0.25)
        return scaled + by_full + filled


# -- the cases --------------------------------------------------------------------------------


def hidden(b: int, t: int) -> tuple[Any, ...]:
    return (torch.randn(b, t, D),)


def with_positions(b: int, t: int) -> tuple[Any, ...]:
    offset = 3  # a past length: the positions continue it
    return torch.randn(b, t, D), (torch.arange(t) + offset).expand(b, t)


def at_start_pos(b: int, t: int) -> tuple[Any, ...]:
    return torch.randn(b, t, D), t + 2  # (a past length, an int)


def padded(b: int, t: int) -> tuple[Any, ...]:
    """An int mask, 1 on tokens and 0 on left padding (the first row's t // 3 first)."""
    mask = torch.ones(b, t, dtype=torch.long)
    mask[0, : t // 3] = 0
    return torch.randn(b, t, D), mask


def cached(b: int, t: int) -> tuple[Any, ...]:
    past = t + 2  # a past length growing with the stream
    return torch.randn(b, 1, D), *(torch.randn(b, HEADS, past, HEAD) for _ in range(2))


def token_ids(b: int, t: int) -> tuple[Any, ...]:
    return torch.randint(0, VOCAB, (b, t)), t + 1  # (a past length, an int)


def labelled(b: int, t: int) -> tuple[Any, ...]:
    ids = torch.randint(0, VOCAB, (b, t + 1))
    labels = ids.masked_fill(torch.rand(b, t + 1) < 0.25, -100)
    return ids, labels


CASES: dict[str, Case] = {
    "llama_block": Case(LlamaBlock, with_positions),
    "meta_llama_complex_rotary": Case(MetaLlamaAttention, at_start_pos),
    # (attention's backward under additive, causal and biased masks trains in the llama
    # block, sdpa_masks, the cache step and test_torch's GPT block: these three train no
    # op of their own, and each training trace costs 10-25 s of torch's shape reasoning)
    "gpt2_block_finfo_min": Case(GPT2Block, hidden, train=False),
    "gpt2_block_neg_inf": Case(lambda: GPT2Block(finfo_min=False), hidden, train=False),
    "padded_self_attention": Case(PaddedSelfAttention, padded, train=False),
    "alibi_attention": Case(AlibiAttention, hidden, train=False),
    "sdpa_masks": Case(SDPAMasks, padded),
    "kv_cache_step": Case(CachedAttention, cached),
    "top2_moe": Case(TopKMoE, hidden),
    "lora_attention": Case(LoRAAttention, hidden),
    "sinusoidal_positions": Case(SinusoidalPositions, token_ids, train=False),
    "causal_lm_loss": Case(TinyCausalLM, labelled),
    "size_scaled": Case(SizeScaled, hidden),
}
"""Per module: how to build it, its inputs at batch b and length t, and what to check."""

CLASSES = [(2, 5), (1, 7), (3, 1), (1, 1)]
"""The size classes dynamo compiles a graph for (it specializes sizes of 1): batch and
length above 1, batch 1, length 1, both 1. Each module meets the first and one other
class in turn, a third of the modules each: a graph costs seconds of dynamo's tracing,
and the importer handles a unit size alike in every module."""

STREAM = [(3, 11), (1, 13), (5, 1), (2, 17), (1, 1)]
"""Later shapes: primes, batch 1, length 1, a growing length: no graph, no plan more.
A module meets those of its two classes."""


def unit_sizes(size: tuple[int, int]) -> tuple[bool, bool]:
    """Which of batch and length are 1: the class dynamo compiles a size into."""
    return size[0] == 1, size[1] == 1


def sizes_for(name: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """The module's two size classes, and the stream's shapes of those classes."""
    turn = list(CASES).index(name) % (len(CLASSES) - 1)
    classes = [CLASSES[0], CLASSES[1 + turn]]
    known = {unit_sizes(size) for size in classes}
    return classes, [size for size in STREAM if unit_sizes(size) in known]


def assert_replayed(before: list[dict[str, Any]], after: list[dict[str, Any]], calls: int) -> None:
    """The calls after `before` compiled no graph and made no plan: each replayed."""
    assert len(after) == len(before), after[len(before) :]
    made = [(r["graph"], r["plans"] - b["plans"]) for b, r in zip(before, after, strict=True)]
    assert all(plans == 0 for _, plans in made), made
    assert sum(r["replayed"] - b["replayed"] for b, r in zip(before, after, strict=True)) >= calls


@pytest.mark.parametrize("name", CASES)
def test_inference_matches_eager_and_replays_over_a_stream_of_shapes(name: str) -> None:
    case = CASES[name]
    model, reference = twins(case.make, "eval")
    classes, stream = sizes_for(name)
    seen: list[list[dict[str, Any]]] = []

    def run() -> None:
        compiled = torch.compile(model, backend="dvm", dynamic=True)
        with torch.no_grad():
            for k, (b, t) in enumerate(classes + stream):
                if k == len(classes):
                    seen.append(copy.deepcopy(dvm.torch.reports()))
                torch.manual_seed(k)
                inputs = case.data(b, t)
                expected = reference(*(x.clone() if torch.is_tensor(x) else x for x in inputs))
                assert_same(compiled(*inputs), expected, case.tolerance)

    reports = graphs_of(run)
    assert_share(reports, case.share)
    first = len(dvm.torch.reports()) - len(reports)
    assert_replayed(seen[0][first:], reports, len(stream))


TRAINING = [(2, 5), (3, 7)]


@pytest.mark.parametrize("name", [name for name, case in CASES.items() if case.train])
def test_a_training_step_gives_eagers_gradients(name: str) -> None:
    case = CASES[name]
    model, reference = twins(case.make, "train")

    reports = graphs_of(lambda: training_steps(case, model, reference, TRAINING))
    assert_share(reports, case.share)
    assert any("backward" in r["graph"] for r in reports), reports
    assert all(r["replayed"] >= len(TRAINING) - 1 for r in reports), reports


# -- generation, dropout, mixed precision, torch's encoder ------------------------------------


class TinyDecoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.wte, self.block = nn.Embedding(VOCAB, D), LlamaBlock()
        self.head = nn.Linear(D, VOCAB, bias=False)

    def forward(self, ids: Any) -> Any:
        b, t = ids.shape
        position_ids = torch.arange(t).expand(b, t)
        return self.head(self.block(self.wte(ids), position_ids))


def test_a_greedy_generation_loop_replays_each_growing_length() -> None:
    """`torch.no_grad()` decoding: the whole prefix again at each step (one token
    longer), the next token the logits' argmax: eager's tokens, one plan per graph."""
    torch.manual_seed(1)
    model = TinyDecoder().eval()
    compiled = torch.compile(model, backend="dvm", dynamic=True)

    def generate(forward: Callable[[Any], Any], ids: Any, steps: int) -> Any:
        for _ in range(steps):
            next_id = forward(ids)[:, -1].argmax(-1, keepdim=True)
            ids = torch.cat([ids, next_id], dim=1)
        return ids

    def run() -> None:
        with torch.no_grad():
            for b, t in [(2, 3), (1, 5)]:
                prompt = torch.randint(0, VOCAB, (b, t))
                assert torch.equal(generate(compiled, prompt, 4), generate(model, prompt, 4))

    reports = graphs_of(run)
    assert_share(reports, 1.0)
    assert len(reports) == 2, reports  # batch > 1, and batch 1
    assert all(r["plans"] == 1 for r in reports), reports


class DropoutBlock(nn.Module):
    def __init__(self, p: float) -> None:
        super().__init__()
        self.up, self.down, self.p = nn.Linear(D, 64), nn.Linear(64, D), p

    def forward(self, x: Any) -> Any:
        return self.down(F.dropout(F.gelu(self.up(x)), self.p, self.training))


def test_dropout_in_training_draws_as_eager_does() -> None:
    """Dropout's draw (`native_dropout`) runs in torch, on torch's generator, and the
    rest of the graph on dvm: from the same seed a training step gives eager's
    outputs and gradients (the same positions dropped)."""
    torch.manual_seed(2)
    model = DropoutBlock(0.25).train()
    reference = copy.deepcopy(model)
    compiled = torch.compile(model, backend="dvm", dynamic=True)

    def run() -> None:
        for k, (b, t) in enumerate([(2, 5), (3, 7), (1, 11)]):
            x = torch.randn(b, t, D)
            torch.manual_seed(k)
            got = compiled(x)
            torch.manual_seed(k)
            expected = reference(x)
            assert_same(got, expected, (1e-5, 1e-6))
            got.square().mean().backward()
            expected.square().mean().backward()
        for (key, p), q in zip(model.named_parameters(), reference.parameters(), strict=True):
            torch.testing.assert_close(p.grad, q.grad, rtol=1e-3, atol=1e-6, msg=key)

    reports = graphs_of(run)
    assert all(r["fallbacks"] in ({}, {"native_dropout": 1}) for r in reports), reports
    assert_share(reports, 0.9)


def test_autocast_to_bfloat16_on_cpu_matches_eager() -> None:
    """`torch.autocast("cpu", torch.bfloat16)`: the linears in bfloat16, the softmax and
    norms as autocast says: outputs within bfloat16's precision of eager's."""
    torch.manual_seed(3)
    model = GPT2Block(finfo_min=False).eval()
    compiled = torch.compile(model, backend="dvm", dynamic=True)

    def run() -> None:
        with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
            for b, t in [(2, 5), (3, 7), (2, 11)]:
                x = torch.randn(b, t, D)
                got, expected = compiled(x), model(x)
                assert got.dtype == expected.dtype
                torch.testing.assert_close(got.float(), expected.float(), rtol=3e-2, atol=3e-2)

    assert_share(graphs_of(run), 0.9)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_a_half_precision_llama_block_matches_eager(dtype: Any) -> None:
    """`.half()` / `.to(bfloat16)` modules: eager's results within the dtype's precision
    (the RMSNorm in float32 as written; matmuls accumulate in float32)."""
    torch.manual_seed(4)
    model = LlamaBlock().to(dtype).eval()
    compiled = torch.compile(model, backend="dvm", dynamic=True)

    def run() -> None:
        with torch.no_grad():
            for b, t in [(2, 5), (3, 7), (2, 11)]:
                x, positions = with_positions(b, t)
                got, expected = compiled(x.to(dtype), positions), model(x.to(dtype), positions)
                assert got.dtype == dtype
                torch.testing.assert_close(got.float(), expected.float(), rtol=2e-2, atol=2e-2)

    assert_share(graphs_of(run), 0.9)


class Encoder(nn.Module):
    """`nn.TransformerEncoder` under a causal mask and a key padding mask: as torch's
    tutorial writes it (a float causal mask beside a boolean padding mask), or with
    both masks boolean and `is_causal=True` said."""

    def __init__(self, nested: bool, tutorial: bool) -> None:
        super().__init__()
        layer = nn.TransformerEncoderLayer(D, HEADS, 64, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 1, enable_nested_tensor=nested)
        self.tutorial = tutorial

    def forward(self, x: Any, attention_mask: Any) -> Any:
        t, padding = x.shape[1], attention_mask == 0
        if self.tutorial:
            causal = nn.Transformer.generate_square_subsequent_mask(t)
            return self.encoder(x, mask=causal, src_key_padding_mask=padding)
        causal = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)
        return self.encoder(x, mask=causal, src_key_padding_mask=padding, is_causal=True)


@pytest.mark.filterwarnings("ignore:Support for mismatched src_key_padding_mask")
@pytest.mark.parametrize("tutorial", [True, False])
@pytest.mark.parametrize(("nested", "train"), [(True, False), (False, True)])
def test_a_transformer_encoder_with_masks_matches_eager(
    nested: bool, train: bool, tutorial: bool
) -> None:
    """torch's encoder checks its masks in Python: a float mask beside a boolean one
    warns (`warnings.warn`), and a mask given without `is_causal` is compared with a
    causal one (`.item()`): either breaks dynamo's graph there, and dynamo runs the
    rest of the encoder in eager (results stay eager's; its graph holds only the masks'
    ops). With boolean masks and `is_causal` said, the whole encoder is one graph on
    dvm: eval's fused layer kernels, or training's ops and their backward.
    `enable_nested_tensor` changes nothing under dynamo (the fast path's nested tensor
    is not built while compiling)."""
    torch.manual_seed(5)
    model = Encoder(nested, tutorial).train(train)
    reference = copy.deepcopy(model)
    compiled = torch.compile(model, backend="dvm", dynamic=True)

    def run() -> None:
        for b, t in [(2, 5), (3, 7), (2, 11)]:
            x, mask = padded(b, t)
            with torch.set_grad_enabled(train):
                got, expected = compiled(x, mask), reference(x, mask)
            assert_same(got, expected, (1e-4, 1e-5))
            if train:
                got.square().mean().backward()
                expected.square().mean().backward()
        if train:
            for (key, p), q in zip(model.named_parameters(), reference.parameters(), strict=True):
                torch.testing.assert_close(p.grad, q.grad, rtol=1e-3, atol=1e-5, msg=key)

    reports = graphs_of(run)
    assert_share(reports, 1.0)
    assert all(r["replayed"] == 2 for r in reports), reports
    layer = 80 if train else 10  # (a layer's ops in training, or its kernel and more)
    assert (sum(r["ops_total"] for r in reports) > layer) == (not tutorial), reports
