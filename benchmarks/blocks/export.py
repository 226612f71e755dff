"""Export the model blocks that `compile_time.py --blocks` compiles, as `.mlir` files here.

Run: .venv/bin/python benchmarks/blocks/export.py   (needs the torch extra)

Each block is a module of tests/test_torch.py (RMSNorm, SwiGLU, nanoGPT's attention, a
GPT-2 block, a mixture of experts) or the LLaMA block below, written the way people
write them, exported with `dvm.torch.export_mlir` at a small example input with dynamic
shapes: one `func.func` per segment of the graph (the LLaMA loop has one per block).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

import torch
from torch import nn

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "tests"))

from test_torch import Block, CausalSelfAttention, MMoE, RMSNorm, SwiGLU, rotate_half  # noqa: E402

import dvm.torch  # noqa: E402

F = nn.functional


class LlamaBlock(nn.Module):
    """RMSNorm, attention with rotary embeddings on the heads, RMSNorm, SwiGLU."""

    def __init__(self, d: int = 32, heads: int = 4) -> None:
        super().__init__()
        self.heads, hd = heads, d // heads
        self.n1, self.n2 = RMSNorm(d), RMSNorm(d)
        self.qkv, self.o = nn.Linear(d, 3 * d, bias=False), nn.Linear(d, d, bias=False)
        self.register_buffer("inv_freq", 1.0 / (10000 ** (torch.arange(0, hd, 2).float() / hd)))
        self.gate, self.up = nn.Linear(d, 64, bias=False), nn.Linear(d, 64, bias=False)
        self.down = nn.Linear(64, d, bias=False)

    def forward(self, x: Any) -> Any:
        b, t, c = x.shape
        q, k, v = self.qkv(self.n1(x)).split(c, dim=2)
        q, k, v = (y.view(b, t, self.heads, c // self.heads).transpose(1, 2) for y in (q, k, v))
        freqs = torch.outer(torch.arange(t, dtype=torch.float32), self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos(), emb.sin()
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        att = F.softmax(q @ k.transpose(-2, -1) / math.sqrt(c // self.heads), dim=-1)
        x = x + self.o((att @ v).transpose(1, 2).reshape(b, t, c))
        h = self.n2(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class LlamaLoop(nn.Module):
    def __init__(self, blocks: int = 4) -> None:
        super().__init__()
        self.blocks = nn.ModuleList(LlamaBlock() for _ in range(blocks))

    def forward(self, x: Any) -> Any:
        for block in self.blocks:
            x = block(x)
        return x


BLOCKS: dict[str, tuple[nn.Module, tuple[int, ...]]] = {
    "rmsnorm": (RMSNorm(), (2, 5, 32)),
    "swiglu": (SwiGLU(), (2, 5, 32)),
    "attention": (CausalSelfAttention(), (2, 5, 32)),
    "gpt2_block": (Block(), (2, 5, 32)),
    "moe": (MMoE(), (10, 16)),
    "llama_loop": (LlamaLoop(), (2, 5, 32)),
}


def main() -> None:
    torch.manual_seed(0)
    for name, (module, shape) in BLOCKS.items():
        text = dvm.torch.export_mlir(module.eval(), torch.randn(*shape))
        (HERE / f"{name}.mlir").write_text(text + "\n")
        print(name, text.count("func.func"), "segments")


if __name__ == "__main__":
    main()
