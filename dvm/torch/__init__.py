"""`dvm.torch`: a `torch.compile` backend, `torch.compile(model, backend="dvm")`.

torch (an optional extra: `pip install -e '.[torch]'`) traces the model with
dynamo; AOTAutograd lowers the graph to core ATen ops, functional, split into a
forward and (for training) a backward graph; each graph runs on `GraphRunner`,
which records its ops on lazy arrays (`dvm.lazy`): one program per graph
structure, compiled once and specialized per shape. Ops the dialect cannot
express run in torch between programs. See docs/torch.md.
"""

from __future__ import annotations

import itertools
from typing import Any

import torch
from functorch.compile import make_boxed_func  # pyright: ignore[reportPrivateImportUsage]
from torch import fx
from torch._decomp import core_aten_decompositions
from torch._dynamo.backends.common import aot_autograd
from torch._guards import detect_fake_mode
from torch._subclasses.fake_tensor import disable_fake_tensor_cache
from torch.nn.attention import SDPBackend, sdpa_kernel

from dvm.lazy.segment import WATCHERS
from dvm.torch.graph import REPORTS, GraphRunner

__all__ = ["backend", "export_mlir", "reports"]

_graphs = itertools.count()


def compiler(kind: str) -> Any:
    def compile_graph(module: fx.GraphModule, example_inputs: Any) -> Any:
        return make_boxed_func(GraphRunner(module, f"graph {next(_graphs)} ({kind})"))

    return compile_graph


def weight_norm_backward(
    grad_w: torch.Tensor, v: torch.Tensor, g: torch.Tensor, norms: torch.Tensor, dim: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """The gradients of weight normalization's `w = v * (g / norms)`, `norms` the 2-norm
    of `v` over every dim but `dim` (kept as 1s): torch's table writes the forward as
    core ops, but autograd differentiates the op above it, whose backward it has no rule
    for (`nn.utils.parametrizations.weight_norm`, wav2vec2's positional convolution)."""
    others = [d for d in range(v.dim()) if d != dim % v.dim()]
    grad_w_dot_v = (grad_w * v).sum(others, keepdim=True)
    grad_v = (g / norms) * (grad_w - v * (grad_w_dot_v / (norms * norms)))
    return grad_v.to(v.dtype), (grad_w_dot_v / norms).to(g.dtype)


def decompositions() -> dict[Any, Any]:
    """torch's core ATen table, without its rule for the CPU flash-attention kernel: that
    rule writes the kernel as math below autograd, and the kernel's backward then reads
    the attention weights where it expects their log-sum-exp (wrong gradients). The
    kernel, if a graph has it, runs in torch; `with_math_attention` keeps it out. With a
    rule for weight normalization's backward (`weight_norm_backward`)."""
    table = dict(core_aten_decompositions())
    table.pop(torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default, None)
    table[torch.ops.aten._weight_norm_interface_backward.default] = weight_norm_backward
    return table


def with_math_attention(compile_graph: Any) -> Any:
    """`compile_graph` tracing `scaled_dot_product_attention` as its math (matmuls, a
    softmax) rather than a fused kernel, so the attention is recorded like any other ops
    and a backward graph differentiates that math."""

    def compile_with_math(module: fx.GraphModule, example_inputs: Any) -> Any:
        with sdpa_kernel(SDPBackend.MATH):
            return compile_graph(module, example_inputs)

    return compile_with_math


def without_fake_tensor_cache(compile_graph: Any) -> Any:
    """`compile_graph` with the fake tensors' dispatch cache off while AOTAutograd
    traces: with symbolic sizes nearly every op misses it, and each miss rebuilds its
    output once more to check the entry (`empty_strided` over symbolic sizes: torch's
    issue 191500), an eighth of AOTAutograd's time (docs/torch.md). The cache changes
    no graph; dynamo's own tracing keeps it."""

    def compile_uncached(module: fx.GraphModule, example_inputs: Any) -> Any:
        fake_mode = detect_fake_mode(example_inputs)
        if fake_mode is None:
            return compile_graph(module, example_inputs)
        with disable_fake_tensor_cache(fake_mode):
            return compile_graph(module, example_inputs)

    return compile_uncached


DECOMPOSITIONS = decompositions()
"""ATen ops written as core ATen ops (so the handlers cover few ops)."""

backend = with_math_attention(
    without_fake_tensor_cache(
        aot_autograd(
            fw_compiler=compiler("forward"),
            bw_compiler=compiler("backward"),
            decompositions=DECOMPOSITIONS,
        )
    )
)
"""The backend registered as `dvm` (entry point `torch_dynamo_backends`)."""


def reports() -> list[dict[str, Any]]:
    """Per compiled graph, after its first call: `ops_total`, `ops_on_dvm`, and the
    ops that ran in torch (`fallbacks`, by name, with their counts)."""
    return [report.as_dict() for report in REPORTS]


SPLIT_MARKER = "\n// -----\n"
"""Between two segments' programs in `export_mlir`'s text: each is a module of its own."""


def export_mlir(model: Any, *example_inputs: Any, dynamic: bool = True) -> str:
    """The `.mlir` text of the programs `model(*example_inputs)` runs (forward,
    inference), each as `dvm-opt` reads it: one per segment of the graph between
    ops that run in torch (one, when every op records). Segments are separated by
    `// -----` lines, MLIR's split marker (`dvm-opt --split-input-file`)."""
    texts: list[str] = []
    exporting = with_math_attention(
        without_fake_tensor_cache(
            aot_autograd(fw_compiler=compiler("export"), decompositions=DECOMPOSITIONS)
        )
    )
    WATCHERS.append(texts.append)
    try:
        with torch.no_grad():
            torch.compile(model, backend=exporting, dynamic=dynamic)(*example_inputs)
    finally:
        WATCHERS.remove(texts.append)
    return SPLIT_MARKER.join(texts)
