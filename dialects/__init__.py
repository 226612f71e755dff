"""The project's dialects, and the upstream ones its programs use.

`DIALECTS` maps a dialect name to a factory, so that a tool loads only the
dialects a program mentions (xDSL's lazy registration).
"""

from collections.abc import Callable

from xdsl.ir import Dialect

from dvm.dialects import dense  # noqa: F401  (dense constants print exactly: see dense.py)


def _dvm() -> Dialect:
    from dvm.dialects.expr import Dvm

    return Dvm


def _tensor() -> Dialect:
    return tensor_dialect()


def tensor_dialect() -> Dialect:
    """The `tensor` dialect: the ops of `dvm.dialects.tensor` and those of the modules
    that build on it, each a family of its own: data movement (`data_movement`), index
    ops (`index_ops`), reductions and scans (`scans`), shapes as data (`shape_ops`),
    the grouped matmul (`grouped_matmul`) and collectives (`collectives`)."""
    from dvm.dialects.collectives import COLLECTIVE_OPS
    from dvm.dialects.data_movement import DATA_MOVEMENT_OPS
    from dvm.dialects.grouped_matmul import GROUPED_MATMUL_OPS
    from dvm.dialects.index_ops import INDEX_OPS
    from dvm.dialects.scans import SCAN_OPS
    from dvm.dialects.shape_ops import SHAPE_OPS
    from dvm.dialects.tensor import Tensor

    ops = [*Tensor.operations, *DATA_MOVEMENT_OPS, *INDEX_OPS, *SCAN_OPS, *SHAPE_OPS]
    ops += [*GROUPED_MATMUL_OPS, *COLLECTIVE_OPS]
    return Dialect("tensor", ops, list(Tensor.attributes))


def _tile() -> Dialect:
    return tile_dialect()


def tile_dialect() -> Dialect:
    """The `tile` dialect: the ops of `dvm.dialects.tile`, the index ops' tile ops
    (`dvm.dialects.index_ops`), the grouped matmul's (`dvm.dialects.grouped_matmul`) and
    the scans' (`dvm.dialects.scans`)."""
    from dvm.dialects.grouped_matmul import TILE_GROUPED_MATMUL_OPS
    from dvm.dialects.index_ops import INDEX_TILE_OPS
    from dvm.dialects.scans import SCAN_TILE_OPS
    from dvm.dialects.tile import Tile

    ops = [*Tile.operations, *INDEX_TILE_OPS, *TILE_GROUPED_MATMUL_OPS, *SCAN_TILE_OPS]
    return Dialect("tile", ops, list(Tile.attributes))


def _bytecode() -> Dialect:
    from dvm.dialects.bytecode import Bytecode

    return Bytecode


def _builtin() -> Dialect:
    from xdsl.dialects.builtin import Builtin

    return Builtin


def _func() -> Dialect:
    from xdsl.dialects.func import Func

    return Func


def _arith() -> Dialect:
    from xdsl.dialects.arith import Arith

    return Arith


def _scf() -> Dialect:
    from xdsl.dialects.scf import Scf

    return Scf


DIALECTS: dict[str, Callable[[], Dialect]] = {
    "builtin": _builtin,
    "func": _func,
    "arith": _arith,
    "scf": _scf,
    "dvm": _dvm,
    "tensor": _tensor,
    "tile": _tile,
    "bytecode": _bytecode,
}
