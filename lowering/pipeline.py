"""`dvm-pipeline`: the whole default lowering, tensor dialect to bytecode."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from dvm.lowering.tensor_to_tile import DEVICES, ConvertTensorToTilePass
from dvm.lowering.tile_to_bytecode import ConvertTileToBytecodePass
from dvm.passes.arg_reductions import ExpandArgReductionsPass
from dvm.passes.branch_sinking import SinkIntoBranchesPass
from dvm.passes.dedupe_kernels import DedupeKernelsPass
from dvm.passes.fuse import FusePass
from dvm.passes.stack import StackPass
from dvm.passes.symbolic_shapes import SymbolicShapesPass


@dataclass(frozen=True)
class DvmPipelinePass(ModulePass):
    """symbolic-shapes, expand-arg-reductions, sink-into-branches, fuse, stack,
    convert-tensor-to-tile{device}, dedupe-kernels, convert-tile-to-bytecode: from a
    tensor program to VM bytecode, with each pass's default options. Spell the passes out
    to change one of them."""

    name = "dvm-pipeline"

    device: str = "host"
    """The device preset to tile for: `host` or `ascend910b`."""

    def __post_init__(self) -> None:
        if self.device not in DEVICES:
            raise ValueError(f"dvm-pipeline: unknown device {self.device!r}; use {sorted(DEVICES)}")

    def stages(self) -> list[ModulePass]:
        """The passes it runs, in order."""
        return [
            SymbolicShapesPass(),
            ExpandArgReductionsPass(),
            SinkIntoBranchesPass(),
            FusePass(),
            StackPass(),
            ConvertTensorToTilePass(device=self.device),
            DedupeKernelsPass(),
            ConvertTileToBytecodePass(),
        ]

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for stage in self.stages():
            stage.apply(ctx, op)
