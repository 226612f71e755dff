"""`dvm.compile`: compile a program once, then run it on any shapes.

Compiling runs the whole pipeline (`dvm-pipeline`) once, symbolically, and
turns what is left on the host — the function's control flow, the arithmetic
on scalars (`arith` on `index`, integers and floats, as `dvm.interpret` computes
it), the kernel launches — into plain Python closures (`dvm.host`). Each kernel's
bytecode is decoded and validated once (`dvm.launches`).

A call then does only cheap work:

1. checks the arguments (count, dtypes, ranks, static dims);
2. on a shape not seen before, binds the shape symbols and checks the
   guards (`dvm.guards`); a failed broadcast guard whose dim is 1 re-specializes
   (a variant of the program compiled with that dim fixed to 1, cached:
   `dvm.variant`), any other failed guard is a clear error; the result is cached
   by shape (LRU);
3. runs the host closures: `scf.if` takes one branch from a value read on
   the host, loops run on the host, each `tile.launch` evaluates its
   precompiled output shapes (`dvm.codegen`) and runs its bytecode on the VM,
   which specializes the bytecode template for new shapes by evaluating its slots.

No xDSL object is built or interpreted after `compile` returns. This module holds
`compile` and the `CompiledProgram` it returns: the signature cache and the checks and
variants of a new signature.
"""

from __future__ import annotations

import gc
import itertools
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import sympy
from xdsl.dialects.builtin import FunctionType, ModuleOp, TensorType
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute
from xdsl.rewriter import Rewriter

from dvm import vm
from dvm.arguments import (
    argument_label,
    check_argument,
    check_arguments,
    find_entry,
    numpy_dtype,
    owned,
)
from dvm.call_errors import FAILURES, fail
from dvm.codegen import binder_source
from dvm.collectives import SINGLE_PROCESS, World, world_of
from dvm.compile_cache import CompileCache, cache_directory, printed
from dvm.dialects import tensor as t
from dvm.errors import CallError, CompileError
from dvm.guards import describe_guard
from dvm.ir import parse, read_source
from dvm.launches import Call
from dvm.lowering.tensor_to_tile import DEVICES
from dvm.passes.symbolic import Guard, GuardKind
from dvm.variant import Variant, lower
from dvm.vm.generated import define
from dvm.vm.program import ARRAY_DTYPE, ARRAY_SHAPE

FREEZE_AFTER_FIRST_COMPILE = True
"""Whether the first `compile` of the process ends by freezing what is alive (see
`freeze_once`); set it False before compiling to leave the collector alone."""
_frozen: list[bool] = []


@dataclass
class BoundVariant:
    """What a call signature (argument types, shapes, dtypes) resolved to: the variant
    to run and the values of its symbols. (The VM's `vm.Specialization` is a kernel's
    bytecode bound to launch shapes.)"""

    variant: Variant
    symbols: dict[str, int]


@dataclass
class CompiledProgram:
    """A compiled program: call it with numpy arrays (and ints for `index`)."""

    source: ModuleOp
    entry: str | None
    device: str
    cache_size: int = 256
    world: World = SINGLE_PROCESS
    """The processes its collectives span (`dvm.collectives`)."""
    variants: dict[frozenset[tuple[int, int]], Variant] = field(default_factory=dict)
    cache: OrderedDict[tuple[Any, ...], BoundVariant] = field(default_factory=OrderedDict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    disk: CompileCache | None = None
    """The compile cache its variants are looked up in and stored to (None: off)."""
    text: str = ""
    """The program's text as the compile cache keys it (with its file name)."""

    def __post_init__(self) -> None:
        self.variants[frozenset()] = self.build_variant(frozenset())
        self.func = find_entry(self.source, self.entry)
        self.arity = len(self.func.args)
        self.tensors = {
            i
            for i, t_ in enumerate(self.func.function_type.inputs.data)
            if isinstance(t_, TensorType)
        }
        self.checks = argument_checks(self.func)
        self.scalars = [i for i in range(self.arity) if i not in self.tensors]
        """The positions of the `index` and other scalar arguments."""
        self.signature = signature if len(self.tensors) == self.arity else mixed_signature
        """How a call's cache key is made (index arguments: per argument, no exception)."""
        self.fast_bind = self.binder(self.variants[frozenset()])
        """A new signature's symbols in one generated function (None: the full checks)."""

    def arrays(self, args: tuple[Any, ...]) -> tuple[Any, ...]:
        """Numpy scalars given for tensors as 0-d arrays, as `check_arguments`
        accepts them (kernels take arrays only)."""
        if not any(map(isinstance, args, itertools.repeat(np.generic))):
            return args
        return tuple(
            np.asarray(a) if isinstance(a, np.generic) and i in self.tensors else a
            for i, a in enumerate(args)
        )

    def __call__(self, *args: Any) -> Any:
        args, bound = self.specialized(args)
        variant = bound.variant
        call = Call(variant.call_symbols(bound.symbols, args))
        try:
            outputs = variant.run_in(args, call)
        except FAILURES as e:  # sizes beyond the machine's or the VM's: name the arguments
            fail(self.func, args, e)
        return self.finish(args, outputs)

    def profile(
        self, *args: Any, trace: bool = False
    ) -> tuple[Any, list[tuple[str, vm.LaunchStats]]]:
        """Call the program and collect the VM's statistics of every launch
        (with `trace`, each launch's per-core timeline too)."""
        args, bound = self.specialized(args)
        variant = bound.variant
        call = Call(variant.call_symbols(bound.symbols, args), [], trace)
        try:
            outputs = self.finish(args, variant.run_in(args, call))
        except FAILURES as e:
            fail(self.func, args, e)
        assert call.stats is not None
        return outputs, call.stats

    @staticmethod
    def finish(args: Sequence[Any], outputs: list[Any]) -> Any:
        """The results, each an array of its own (never an argument, a constant of the
        program, its kept memory or another result; scalars are immutable: an `index`
        is a Python int); one value or a tuple."""
        outputs = owned(outputs, args)
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def specialized(self, args: tuple[Any, ...]) -> tuple[tuple[Any, ...], BoundVariant]:
        """The arguments as the kernels take them, and the cached bound variant of their
        signature, or a new one."""
        key = self.signature(args)
        bound = self.cached(key)
        if bound is None:
            converted = self.arrays(args)
            if converted is not args:  # numpy scalars given for tensors: their 0-d arrays'
                args, key = converted, self.signature(converted)
                bound = self.cached(key)
            if bound is None:
                bound = self.specialize(args)
                with self.lock:
                    self.cache[key] = bound
                    if len(self.cache) > self.cache_size:
                        self.cache.popitem(last=False)
        if self.scalars:
            args = self.scalar_values(args)
        return args, bound

    def scalar_values(self, args: tuple[Any, ...]) -> tuple[Any, ...]:
        """The arguments with each scalar one as its run-time value (a Python int for an
        `index`, a numpy scalar of its type), checked at every call: a cached signature
        knows only its type (a CallError for an index beyond int64, an i8 beyond i8)."""
        values = list(args)
        for i in self.scalars:
            where, type_, _, _ = self.checks[i]
            values[i] = check_argument(where, args[i], type_)
        return tuple(values)

    def cached(self, key: tuple[Any, ...]) -> BoundVariant | None:
        """The cached bound variant of a signature, if any (now the most recent)."""
        cache = self.cache
        try:  # each a C call, atomic under the GIL: no lock (a key evicted between: a miss)
            bound = cache[key]
            cache.move_to_end(key)
        except KeyError:
            return None
        except TypeError:  # an unhashable `shape`: no array, which the checks will say
            return None
        return bound

    def check(self, args: Sequence[Any]) -> tuple[Any, ...]:
        """The arguments as run-time values, or a CallError naming what is wrong (the full
        checks, for a signature the generated binder declined)."""
        return check_arguments(self.func, args)

    def binder(self, variant: Variant) -> Callable[[Sequence[Any]], Any]:
        """The generated fast path of `specialize` for the generic variant."""
        namespace: dict[str, Any] = {
            "_ndarray": np.ndarray,
            **{f"_dt{i}": dtype for i, (_, _, dtype, _) in enumerate(self.checks)},
            "_guards": variant.check_guards,
            "_check": lambda i, a: check_argument(self.checks[i][0], a, self.checks[i][1]),
        }
        source = binder_source(
            self.checks, variant.symbols, variant.guard_names, len(variant.guards)
        )
        return define(source, "bind", namespace, f"argument binder: @{self.func.sym_name.data}")

    def specialize(self, args: Sequence[Any]) -> BoundVariant:
        """Check the arguments and the guards for a new signature."""
        symbols = self.fast_bind(args)
        generic = self.variants[frozenset()]
        if symbols is not None and not generic.units_to_stretch(symbols):
            return BoundVariant(generic, symbols)
        values = self.check(args)
        ones: frozenset[tuple[int, int]] = frozenset()
        while True:
            variant = self.variant(ones)
            symbols = variant.bind(values)
            failed = variant.failed_guard(symbols)
            if failed is not None:
                ones = self.respecialize(variant, failed, symbols, ones)
            elif not variant.units_to_stretch(symbols) <= ones:
                ones |= variant.units_to_stretch(symbols)
            else:
                return BoundVariant(variant, symbols)

    def respecialize(
        self,
        variant: Variant,
        failed: tuple[Guard, int, int],
        symbols: dict[str, int],
        ones: frozenset[tuple[int, int]],
    ) -> frozenset[tuple[int, int]]:
        """The dims to fix to 1 for a broadcast that a guard assumed away, or
        a CallError naming the arguments, axes and values that disagree."""
        guard, lhs, rhs = failed
        sides = [(guard.lhs, lhs), (guard.rhs, rhs)]
        unit = [e for e, v in sides if v == 1 and isinstance(e, sympy.Symbol)]
        if guard.kind is GuardKind.BROADCAST and unit:
            where = {(i, a) for i, a, name in variant.symbols if name == str(unit[0])}
            if not where <= ones:
                return ones | where
        raise CallError(self.describe_failure(variant, guard, lhs, rhs))

    def describe_failure(self, variant: Variant, guard: Guard, lhs: int, rhs: int) -> str:
        """Which op needs which dims equal, and which argument axes disagree."""
        return describe_guard(self.func, variant.symbols, guard, lhs, rhs)

    def argument_name(self, i: int) -> str:
        name = self.func.body.block.args[i].name_hint
        return f"%{name}" if name else f"argument {i}"

    def variant(self, ones: frozenset[tuple[int, int]]) -> Variant:
        with self.lock:
            found = self.variants.get(ones)
        if found is None:
            found = self.build_variant(ones)
            with self.lock:
                self.variants[ones] = found
        return found

    def build_variant(self, ones: frozenset[tuple[int, int]]) -> Variant:
        """The variant with the argument dims `ones` fixed to 1: lowered from the compile
        cache's entry when it has a usable one, else by the pipeline (then stored)."""
        if self.disk is None:
            return Variant.build(self.unit_dims(ones), self.entry, self.device, self.world)
        parts = [self.entry, sorted(ones), self.device, DEVICES[self.device]()]
        key = self.disk.key(self.text, parts)
        found = self.disk.load(key, lambda m, b: Variant.from_lowered(m, self.entry, b, self.world))
        if found is not None:
            return found
        module = lower(self.unit_dims(ones), self.device)
        variant = Variant.from_lowered(module, self.entry, world=self.world)
        self.disk.store(key, module, [(n, k.program) for n, k in variant.kernels.items()])
        return variant

    def unit_dims(self, ones: frozenset[tuple[int, int]]) -> ModuleOp:
        return with_unit_dims(self.source, self.entry, ones) if ones else self.source


def argument_checks(
    func: FuncOp,
) -> list[tuple[str, Attribute, np.dtype[Any] | None, tuple[int, ...]]]:
    """Per argument of `func`: where it is (for errors), its type, and for a tensor
    the numpy dtype and declared shape an array must have."""
    checks: list[tuple[str, Attribute, np.dtype[Any] | None, tuple[int, ...]]] = []
    for i, type_ in enumerate(func.function_type.inputs.data):
        where = f"@{func.sym_name.data} argument {argument_label(func, i)}"
        if isinstance(type_, TensorType):
            checks.append((where, type_, numpy_dtype(type_), tuple(type_.get_shape())))
        else:
            checks.append((where, type_, None, ()))
    return checks


def signature(args: Sequence[Any]) -> tuple[Any, ...]:
    """The cache key of a call whose arguments are all tensors: each argument's type,
    shape and dtype (the dtype itself: a byte-swapped f32 is no f32), by three C-level
    maps; `mixed_signature` when one is no array."""
    try:
        return (*map(type, args), *map(ARRAY_SHAPE, args), *map(ARRAY_DTYPE, args))
    except AttributeError:
        return mixed_signature(args)


def mixed_signature(args: Sequence[Any]) -> tuple[Any, ...]:
    """The cache key of a call with index values (ints) or other non-arrays: per
    argument, an array's type, shape and dtype, or another value's type."""
    return tuple([(type(a), a.shape, a.dtype) if isinstance(a, ARRAYS) else type(a) for a in args])


ARRAYS = (np.ndarray, np.generic)
"""What has a shape and a dtype in a call's signature."""


def with_unit_dims(
    source: ModuleOp, entry: str | None, ones: frozenset[tuple[int, int]]
) -> ModuleOp:
    """A copy of the program whose entry has the given argument dims fixed to 1.

    Such an argument gets the narrower type, and its uses see it through a
    `tensor.convert` back to the declared type (the same element type, so
    no conversion; it fuses into the kernels that use it). Every op thus
    keeps the types it was written with, which ops whose result type must
    be their operand's (unary ops), `scf.yield` and `func.return` require.
    """
    module = source.clone()
    func = find_entry(module, entry)
    block = func.body.block
    types = list(func.function_type.inputs.data)
    for i in sorted({i for i, _ in ones}):
        old = types[i]
        assert isinstance(old, TensorType)
        shape = [1 if (i, axis) in ones else d for axis, d in enumerate(old.get_shape())]
        types[i] = TensorType(old.element_type, shape)
        arg = Rewriter.replace_value_with_new_type(block.args[i], types[i])
        view = t.ConvertOp.create(operands=[arg], result_types=[old])
        first = block.first_op
        assert first is not None
        block.insert_op_before(view, first)
        arg.replace_uses_with_if(view.result, lambda use, view=view: use.operation is not view)
    func.function_type = FunctionType.from_lists(types, func.function_type.outputs.data)
    module.verify()
    return module


def compile(
    src: str | Path | ModuleOp,
    entry: str | None = None,
    device: str | None = None,
    cache_size: int = 256,
    group: Any = None,
    cache: bool | None = None,
) -> CompiledProgram:
    """Compile `.mlir` text, a path or a module once; returns a callable.

    `device` is a preset name (`host`, the default, or `ascend910b`).
    `cache_size` bounds the signatures kept (least recently used go).
    `group` is the `torch.distributed` process group the program's collectives span
    (None: the default group if torch's is initialized, else the process alone; see
    docs/distributed.md).
    `cache` says whether to use the compile cache on disk (`dvm.compile_cache`;
    None: unless the environment's `DVM_CACHE` is `off`).
    The process's first compile ends with a collection and `gc.freeze()`
    (`freeze_once`; `FREEZE_AFTER_FIRST_COMPILE` turns it off).
    """
    preset = device or "host"
    if preset not in DEVICES:
        raise CompileError(f"unknown device {preset!r}; use one of {sorted(DEVICES)}")
    module = src if isinstance(src, ModuleOp) else parse(src)
    directory = cache_directory(cache)
    disk = text = None
    if directory is not None:
        disk = CompileCache(directory)
        # the text and file name, which error messages quote (a module: as printed)
        text = printed(module) if isinstance(src, ModuleOp) else "\0".join(read_source(src))
    program = CompiledProgram(
        module, entry, preset, cache_size, world_of(group), disk=disk, text=text or ""
    )
    freeze_once()
    return program


def freeze_once() -> None:
    """After the process's first compile: collect the garbage, then freeze what is alive
    (`gc.freeze`), above all the libraries the compile loaded (sympy, xDSL: far more
    objects than a program makes, and they live as long as the process). The full
    collections that a stream of new shapes triggers now and then (its caches' objects
    grow the old generation) then traverse only what came later, a small part of what
    is alive. What is frozen is never collected: a program compiled first and dropped
    stays, and so do the caller's objects alive then that later become unreachable
    cycles."""
    if FREEZE_AFTER_FIRST_COMPILE and not _frozen:
        _frozen.append(True)
        gc.collect()
        gc.freeze()
