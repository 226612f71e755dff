"""Passes that stay within a level, registered by name.

`PASSES` maps each `-p` name of `dvm-opt` (and of the Python pipeline API)
to a factory that imports the pass class only when a pipeline names it.
"""

import importlib
from collections.abc import Callable

from xdsl.passes import ModulePass


def lazy_pass(module: str, name: str) -> Callable[[], type[ModulePass]]:
    """A factory that imports `module.name` (a `ModulePass`) on first use."""

    def load() -> type[ModulePass]:
        cls = getattr(importlib.import_module(module), name)
        assert issubclass(cls, ModulePass)
        return cls

    return load


PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    "symbolic-shapes": lazy_pass("dvm.passes.symbolic_shapes", "SymbolicShapesPass"),
    "expand-arg-reductions": lazy_pass("dvm.passes.arg_reductions", "ExpandArgReductionsPass"),
    "sink-into-branches": lazy_pass("dvm.passes.branch_sinking", "SinkIntoBranchesPass"),
    "fuse": lazy_pass("dvm.passes.fuse", "FusePass"),
    "stack": lazy_pass("dvm.passes.stack", "StackPass"),
    "dedupe-kernels": lazy_pass("dvm.passes.dedupe_kernels", "DedupeKernelsPass"),
    "convert-tensor-to-tile": lazy_pass("dvm.lowering.tensor_to_tile", "ConvertTensorToTilePass"),
    "convert-tile-to-bytecode": lazy_pass(
        "dvm.lowering.tile_to_bytecode", "ConvertTileToBytecodePass"
    ),
    "dvm-pipeline": lazy_pass("dvm.lowering.pipeline", "DvmPipelinePass"),
}
