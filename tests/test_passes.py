"""The passes within the tensor level: symbolic-shapes, fuse, stack.

Differential: every shared example gives the same results (reference
interpreter) before and after each pass, on random shapes with dims 0, 1 and
primes. Structural: the kernels the design asks for (one vector kernel for
LayerNorm, a mix kernel for addmm + relu, ...), guards, options, choices.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import EXAMPLES_DIR, load_reference
from test_conformance import as_tuple, shape_draws, symbols_of
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.passes import PassPipeline
from xdsl.utils.exceptions import DiagnosticException

import dvm
from dvm.dialects import tensor as t
from dvm.dialects.expr import symbol
from dvm.ir import make_context
from dvm.passes import PASSES
from dvm.passes.blocks import schedule
from dvm.passes.symbolic import Guard, GuardKind, function_guards

PIPELINES = ("symbolic-shapes", "symbolic-shapes,fuse", "symbolic-shapes,fuse,stack")
DRAWS = 8
CAPS = {"bert_layer.mlir": 600}


def run_pipeline(module: ModuleOp, spec: str) -> ModuleOp:
    PassPipeline.parse_spec(PASSES, spec).apply(make_context(), module)
    module.verify()
    return module


def lowered(path: Path | str, spec: str) -> ModuleOp:
    return run_pipeline(dvm.parse(path), spec)


def kernels(module: ModuleOp) -> list[t.FusionOp]:
    return [op for op in module.walk() if isinstance(op, t.FusionOp)]


def constants(kernel: t.FusionOp) -> int:
    return sum(op.name == "arith.constant" for op in kernel.body.block.ops)


def kinds(module: ModuleOp) -> list[str]:
    return sorted(k.kind.data for k in kernels(module))


# -- differential: each pass keeps every example's results ----------------------


def _cases() -> list[Any]:
    if not EXAMPLES_DIR.is_dir():
        return [pytest.param("missing", id="examples-missing")]
    return [pytest.param(f, id=Path(f).stem) for f in sorted(load_reference().EXAMPLES)]


@pytest.mark.parametrize("file", _cases())
def test_passes_keep_results(file: str, examples_dir: Path, reference: Any) -> None:
    name, spec, _ = reference.EXAMPLES[file]
    original = dvm.parse(examples_dir / file)
    transformed = {p: lowered(examples_dir / file, p) for p in PIPELINES}
    draws = shape_draws(symbols_of(spec), CAPS.get(file, 50_000), seed=len(file))[:DRAWS]
    for i, dims in enumerate(draws):
        args = reference.make_inputs(spec, dims, np.random.default_rng(i), index_value=i % 3)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            want = as_tuple(dvm.interpret(original, *args, entry=name))
            for pipeline, module in transformed.items():
                got = as_tuple(dvm.interpret(module, *args, entry=name))
                for g, w in zip(got, want, strict=True):
                    assert g.shape == w.shape and g.dtype == w.dtype, (pipeline, dims)
                    np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6, err_msg=pipeline)


@pytest.mark.parametrize("file", _cases())
def test_pass_output_round_trips(file: str, examples_dir: Path) -> None:
    text = str(lowered(examples_dir / file, PIPELINES[-1]))
    assert str(dvm.parse(text)) == text


# -- symbolic shapes -----------------------------------------------------------


LAYERNORM = """
func.func @layernorm(%x: tensor<?x?xf32>, %w: tensor<?xf32>) -> tensor<?x?xf32> {
  %mean = tensor.reduce_mean %x {axes = [1], keepdims = true} : tensor<?x?xf32> -> tensor<?x1xf32>
  %d = tensor.sub %x, %mean : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
  %y = tensor.mul %d, %w : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  func.return %y : tensor<?x?xf32>
}
"""


def test_symbols_guards_and_unification() -> None:
    module = lowered(LAYERNORM, "symbolic-shapes")
    func = next(op for op in module.walk() if isinstance(op, FuncOp))
    x1, w0 = symbol("x_1"), symbol("w_0")
    assert function_guards(func) == [Guard(x1, w0, GuardKind.BROADCAST, "%y = tensor.mul")]
    text = str(module)
    assert "%x: tensor<?x?xf32> {dvm.shape = #dvm.shape<x_0, x_1>}" in text
    assert "dvm.unified = {w_0 = #dvm.expr<x_1>}" in text
    assert "tensor.mul %d, %w {dvm.shape = #dvm.shape<x_0, x_1>}" in text


def test_matmul_contraction_is_an_equal_guard() -> None:
    module = lowered(
        """
        func.func @mm(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
          %c = tensor.matmul %a, %b : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
          func.return %c : tensor<?x?xf32>
        }""",
        "symbolic-shapes",
    )
    check = '{check = #dvm.cond<a_1 == b_0>, kind = "equal", op = "%c = tensor.matmul"}'
    assert check in str(module)


def test_a_guard_that_never_holds_names_the_op() -> None:
    # Each op alone is fine (a `?` meets a static dim); %x has 32 elements (%a has
    # 32 or 1), which %y needs to broadcast with 64.
    text = """
    func.func @f(%a: tensor<?xf32>, %b: tensor<32xf32>, %c: tensor<64xf32>) -> tensor<?xf32> {
      %x = tensor.add %a, %b : (tensor<?xf32>, tensor<32xf32>) -> tensor<?xf32>
      %y = tensor.add %x, %c : (tensor<?xf32>, tensor<64xf32>) -> tensor<?xf32>
      func.return %y : tensor<?xf32>
    }"""
    with pytest.raises(DiagnosticException, match=r"%y = tensor.add: dims 32 and 64 can never"):
        lowered(text, "symbolic-shapes")


def test_symbolic_shapes_is_idempotent() -> None:
    once = str(lowered(LAYERNORM, "symbolic-shapes"))
    assert str(lowered(LAYERNORM, "symbolic-shapes,symbolic-shapes")) == once


# -- fuse ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("file", "expected"),
    [
        ("gelu.mlir", ["vector"]),
        ("layernorm.mlir", ["vector"]),
        ("softmax.mlir", ["vector"]),
        ("addmm_relu.mlir", ["mix"]),
        ("matmul.mlir", ["cube"]),
        ("column_stats.mlir", ["vector"]),
        ("mmoe.mlir", ["cube", "cube", "mix", "vector"]),
        ("bert_layer.mlir", ["cube"] + ["mix"] * 8 + ["vector"]),
    ],
)
def test_kernels_per_example(file: str, expected: list[str], examples_dir: Path) -> None:
    assert kinds(lowered(examples_dir / file, "symbolic-shapes,fuse")) == expected


@pytest.mark.parametrize("file", ["bert_layer.mlir", "mmoe.mlir"])
def test_no_lone_elementwise_op_and_bias_adds_stay_with_their_matmul(
    file: str, examples_dir: Path
) -> None:
    module = lowered(examples_dir / file, "symbolic-shapes,fuse")
    for kernel in kernels(module):
        computing = [op for op in kernel.body.block.ops if not isinstance(op, t.YieldOp)]
        assert not (len(computing) == 1 and isinstance(computing[0], t.BINARY_OPS)), kernel
        for op in computing:
            if isinstance(op, t.MatmulOp):
                users = [u.operation for u in op.result.uses]
                assert all(u.parent_op() is kernel for u in users), (
                    "matmul result leaves its kernel"
                )


def test_fuse_options_limit_kinds_and_size(examples_dir: Path) -> None:
    no_mix = lowered(examples_dir / "addmm_relu.mlir", "symbolic-shapes,fuse{kinds=vector}")
    assert kinds(no_mix) == ["cube", "vector"]
    small = lowered(examples_dir / "gelu.mlir", "symbolic-shapes,fuse{max-ops=3}")
    sizes = [len(list(k.body.block.ops)) - 1 - constants(k) for k in kernels(small)]
    assert sizes == [3, 3, 3]  # GELU's 9 ops, at most 3 per kernel
    with pytest.raises(ValueError, match="unknown kernel kinds"):
        lowered(examples_dir / "gelu.mlir", "fuse{kinds=scalar}")


TWO_NORMS = """
func.func @two_norms(%x: tensor<?x?xf32>, %y: tensor<?x?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %x2 = tensor.mul %x, %x : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %sx = tensor.reduce_sum %x2 {axes = [1]} : tensor<?x?xf32> -> tensor<?xf32>
  %y2 = tensor.mul %y, %y : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %sy = tensor.reduce_sum %y2 {axes = [1]} : tensor<?x?xf32> -> tensor<?xf32>
  func.return %sx, %sy : tensor<?xf32>, tensor<?xf32>
}
"""


@pytest.mark.parametrize("y_shape", [(5, 3), (4, 3), (5, 1), (0, 3)])
def test_guarded_choice_takes_either_branch_correctly(y_shape: tuple[int, int]) -> None:
    module = lowered(TWO_NORMS, "symbolic-shapes,fuse")
    (choice,) = [op for op in module.walk() if isinstance(op, t.ChoiceOp)]
    assert [c.text for c in choice.conditions.data] == ["y_0 == x_0", "y_1 == x_1"]
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 3)).astype(np.float32)
    y = rng.standard_normal(y_shape).astype(np.float32)
    sx, sy = dvm.interpret(module, x, y)
    np.testing.assert_allclose(sx, (x * x).sum(axis=1), rtol=1e-6)
    np.testing.assert_allclose(sy, (y * y).sum(axis=1), rtol=1e-6)


# -- scheduling a block for a rewrite ----------------------------------------------


def test_schedule_makes_each_group_consecutive() -> None:
    """A group of the first and last op, with a user of the first and a producer of
    the last between them: the producer moves before the group, the user after it."""
    module = dvm.parse(
        """func.func @f(%x: tensor<?xf32>, %y: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
          %k1 = tensor.exp %x : tensor<?xf32>
          %u = tensor.neg %k1 : tensor<?xf32>
          %c = tensor.abs %y : tensor<?xf32>
          %k2 = tensor.tanh %c : tensor<?xf32>
          func.return %u, %k2 : tensor<?xf32>, tensor<?xf32>
        }"""
    )
    block = next(op for op in module.walk() if isinstance(op, FuncOp)).body.block
    ops = {op.results[0].name_hint: op for op in block.ops if op.results}
    schedule(block, [[ops["k1"], ops["k2"]]])
    assert [op.results[0].name_hint if op.results else op.name for op in block.ops] == [
        "c",
        "k1",
        "k2",
        "u",
        "func.return",
    ]
    module.verify()


# -- stack -----------------------------------------------------------------------


def stacks(module: ModuleOp) -> list[t.StackOp]:
    return [op for op in module.walk() if isinstance(op, t.StackOp)]


def test_stack_groups_the_qkv_projections_and_the_gates(examples_dir: Path) -> None:
    bert = stacks(lowered(examples_dir / "bert_layer.mlir", PIPELINES[-1]))
    assert [[r.name_hint for r in s.results] for s in bert] == [["q", "k", "v"]]
    mmoe = stacks(lowered(examples_dir / "mmoe.mlir", PIPELINES[-1]))
    assert [[r.name_hint for r in s.results] for s in mmoe] == [["h", "l0", "l1"]]
    assert all(s.mode.data == "parallel" for s in bert + mmoe)


def test_stack_mode_and_limit(examples_dir: Path) -> None:
    spec = "symbolic-shapes,fuse,stack{mode=sequence max-kernels=2}"
    found = stacks(lowered(examples_dir / "bert_layer.mlir", spec))
    # q+k; v stays alone: the scores it once stacked beside are in a guarded choice
    assert [len(s.results) for s in found] == [2]
    assert all(s.mode.data == "sequence" for s in found)
    with pytest.raises(ValueError, match="mode must be one of"):
        lowered(examples_dir / "bert_layer.mlir", "symbolic-shapes,fuse,stack{mode=diagonal}")


def test_op_sets_agree_with_isinstance() -> None:
    """`op in kinds` (the passes' per-class remembered test) says what `isinstance`
    says, for every op class of every dialect, asked twice."""
    from dvm.dialects import DIALECTS, tile
    from dvm.passes.domain import ELEMENTWISE, LAYOUT, MATMULS, OWN_KERNEL, OpSet
    from dvm.passes.fuse import COMPUTE

    classes = [op for factory in DIALECTS.values() for op in factory().operations]
    abstract = (tile.TileUnaryOp, tile.TileBinaryOp, tile.SelectOp)  # bases of many
    for group in (ELEMENTWISE, LAYOUT, MATMULS, OWN_KERNEL, COMPUTE, abstract):
        kinds = OpSet(*group)
        for _ in range(2):
            for cls in classes:
                op = cls.__new__(cls)
                assert (op in kinds) == isinstance(op, group), cls.name


def leaving(ops: list[Any]) -> list[Any]:
    """The results of the computing ops of `ops` that an op after them (or the function's
    return) reads."""
    members = set(ops)
    computing = [op for op in ops if op.name != "arith.constant"]
    return [
        r for op in computing for r in op.results if any(u.operation not in members for u in r.uses)
    ]


@pytest.mark.parametrize("file", ["layernorm.mlir", "gelu.mlir", "bert_layer.mlir"])
def test_an_analysis_resumed_from_a_prefix_finds_the_whole_analysis_domain(
    file: str, examples_dir: Path
) -> None:
    """`fuse` grows a group an op at a time, each analysis taking up the visits of the
    group before: every prefix of a function's ops, analyzed so, has the domain (or the
    refusal) of its analysis from scratch."""
    from dvm.passes.domain import DomainAnalysis, Illegal

    module = lowered(examples_dir / file, "symbolic-shapes")
    func = next(op for op in module.walk() if isinstance(op, FuncOp))
    ops = [op for op in func.body.block.ops if op.name != "func.return"]
    before = None
    resumed = 0
    for n in range(1, len(ops) + 1):
        prefix = ops[:n]
        whole = DomainAnalysis(prefix, leaving(prefix))
        taken_up = DomainAnalysis(prefix, leaving(prefix), resume=before)
        try:
            domain = whole.run()
        except Illegal as e:
            with pytest.raises(Illegal, match=re.escape(str(e))):
                taken_up.run()
            before = None
            continue
        assert taken_up.run() == domain
        assert taken_up.visited == whole.visited
        resumed += before is not None
        before = whole.visited
    assert resumed > 0


def test_an_analysis_without_views_refuses_and_finds_what_one_with_them_does(
    examples_dir: Path,
) -> None:
    """`fuse` analyzes its candidate groups without the views of their loads and stores:
    each run of a function's ops (up to four, and every prefix) is refused, with the
    same words, or given the same domain but for the views, as with them."""
    from dvm.passes.domain import DomainAnalysis, Illegal

    refused = legal = 0
    for file in ["layernorm.mlir", "softmax.mlir", "bert_layer.mlir"]:
        module = lowered(examples_dir / file, "symbolic-shapes")
        func = next(op for op in module.walk() if isinstance(op, FuncOp))
        ops = [op for op in func.body.block.ops if op.name != "func.return"]
        runs = {(0, n) for n in range(1, len(ops) + 1)}
        runs |= {(i, j) for i in range(len(ops)) for j in range(i + 1, min(i + 5, len(ops) + 1))}
        for i, j in sorted(runs):
            group = ops[i:j]
            without = DomainAnalysis(group, leaving(group), views=False)
            try:
                domain = DomainAnalysis(group, leaving(group)).run()
            except Illegal as e:
                with pytest.raises(Illegal, match=re.escape(str(e))):
                    without.run()
                refused += 1
                continue
            found = without.run()
            assert (found.sizes, found.reduced, found.contraction, found.placement) == (
                domain.sizes,
                domain.reduced,
                domain.contraction,
                domain.placement,
            )
            assert not found.loads and not found.stores and not found.takes
            legal += 1
    assert refused > 0 and legal > 0


def test_an_analysis_with_a_kernel_of_its_own_is_not_taken_up() -> None:
    """A concat is a kernel alone, which an analysis asks about the whole group."""
    from dvm.passes.domain import DomainAnalysis, Illegal

    module = lowered(
        """func.func @f(%x: tensor<?xf32>, %y: tensor<?xf32>) -> tensor<?xf32> {
          %c = tensor.concat dim(0) %x, %y : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
          %e = tensor.exp %c : tensor<?xf32>
          func.return %e : tensor<?xf32>
        }""",
        "symbolic-shapes",
    )
    func = next(op for op in module.walk() if isinstance(op, FuncOp))
    concat, exp = [op for op in func.body.block.ops if op.name != "func.return"]
    alone = DomainAnalysis([concat], [concat.results[0]])
    alone.run()
    assert alone.visited is None
    with pytest.raises(Illegal, match="kernel of its own"):
        DomainAnalysis([concat, exp], [exp.results[0]], resume=alone.visited).run()
