"""The pass-pipeline API: the same pass names and syntax as `dvm-opt -p`.

    import dvm.pipeline as pipeline
    module = dvm.parse("layernorm.mlir")
    pipeline.run(module, "symbolic-shapes,fuse{kinds=vector max-ops=16},stack")
    print(module)                                  # the fused program

    p = pipeline.parse("dvm-pipeline{device=ascend910b}")
    p.apply(pipeline.context(), module)            # an xDSL PassPipeline

`passes()` lists the names; each pass's options are its dataclass fields,
written with dashes (`max-ops`), separated by spaces inside `{}`.
"""

from __future__ import annotations

from pathlib import Path

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import PassPipeline
from xdsl.utils.exceptions import ArgSpecParseError

from dvm.ir import make_context
from dvm.ir import parse as parse_program
from dvm.passes import PASSES

__all__ = ["context", "parse", "passes", "run"]


def passes() -> list[str]:
    """The pass names a pipeline may use."""
    return list(PASSES)


def parse(spec: str) -> PassPipeline:
    """A pipeline from its text, e.g. `"symbolic-shapes,fuse{max-ops=8}"`;
    raises ValueError naming an unknown pass or option, or the place of a syntax error."""
    try:
        return PassPipeline.parse_spec(PASSES, spec)
    except ArgSpecParseError as e:  # (xDSL's is a BaseException: `except Exception` misses it)
        raise ValueError(str(e)) from None


def context() -> Context:
    """A context with the project's dialects, for `PassPipeline.apply`."""
    return make_context()


def run(module: ModuleOp | str | Path, spec: str) -> ModuleOp:
    """Run a pipeline on a module (or on `.mlir` text or a path) and verify it."""
    target = module if isinstance(module, ModuleOp) else parse_program(module)
    parse(spec).apply(context(), target)
    target.verify()
    return target
