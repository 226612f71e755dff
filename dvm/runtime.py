"""`dvm.compile`: compile a program once, then run it on any shapes.

Compiling runs the whole pipeline (`dvm-pipeline`) once, symbolically, and
turns what is left on the host — the function's control flow, the arithmetic
on scalars (`arith` on `index`, integers and floats, as `dvm.interpret` computes
it), the kernel launches — into plain Python closures (`dvm.host`). Each kernel's
bytecode is decoded and validated once (`dvm.launches`).

A call then does only cheap work:

1. checks the arguments (count, dtypes, ranks, static dims);
2. on a shape not seen before, binds the shape symbols and checks the
   guards (`dvm.guards`); a failed broadcast guard with a side of 1 re-specializes
   (a variant of the program compiled with what that side reads fixed to its
   values, cached: `dvm.variant`), any other failed guard is a clear error; the
   result is cached by shape (LRU); guards over `index` arguments are checked at
   every call, the same way;
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
import os
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from dvm import vm
from dvm.call_errors import FAILURES, fail
from dvm.collectives import SINGLE_PROCESS, World, world_of
from dvm.compile_cache import CompileCache, cache_directory, source_key
from dvm.declared import check_argument, owned
from dvm.errors import CallError, CompileError
from dvm.expr_code import INDEX_MAX, INDEX_MIN, binder_source
from dvm.guard_notes import GuardFailed, GuardNote, symbol_sides
from dvm.launches import Call, known_launch
from dvm.variant import Fixed, Variant
from dvm.vm.device import PRESETS
from dvm.vm.generated import define
from dvm.vm.program import ARRAY_DTYPE, ARRAY_SHAPE

if TYPE_CHECKING:
    from pathlib import Path

    from xdsl.dialects.builtin import ModuleOp

FREEZE_AFTER_FIRST_COMPILE = True
"""Whether the process's first `compile` that loads the compiler's libraries ends by
freezing what is alive (see `freeze_once`); set it False before compiling to leave the
collector alone."""
_frozen: list[bool] = []

MAX_FIXED_VARIANTS = 64
"""The variants with fixed values a program keeps, the least recently used dropped first:
a side of 1 that reads values changing at every call (`n - i` with `i = n - 1`) takes a
new variant at every call, and this bounds the memory they hold."""


class BoundVariant(NamedTuple):
    """What a call signature (argument types, shapes, dtypes) resolved to: the variant
    to run and the values of its symbols. (The VM's `vm.Specialization` is a kernel's
    bytecode bound to launch shapes.)"""

    variant: Variant
    symbols: dict[str, int]
    direct: Callable[[Sequence[Any]], Any] | None = None
    """The whole call as one closure, returning its results as new arrays: once its
    variant's one launch is bound at these shapes (`Variant.lone`,
    `CompiledProgram.run_directly`), or for a variant of several steps that binds no
    symbol during a call, its `variant.Route`."""


_MISSING = object()
"""An argument not given yet (`CompiledProgram.positional`)."""

_NUMPY_SCALARS = itertools.repeat(np.generic)
"""`isinstance`'s second argument for every argument (`map` stops at the arguments' end)."""


class CompiledProgram:
    """A compiled program: call it with numpy arrays (and ints for `index`), in order or
    by the entry's argument names (`program(x, n=3)` for `%x` and `%n`). (A plain class:
    see `launches.Kernel`.)"""

    def __init__(
        self,
        source: ModuleOp | None,
        entry: str | None,
        device: str,
        cache_size: int = 256,
        world: World = SINGLE_PROCESS,
        disk: CompileCache | None = None,
        text: str = "",
        origin: str | Path = "",
        filename: str | None = None,
    ) -> None:
        self.source = source
        """The program (None: not parsed yet, or lowered in place by the generic variant;
        `module` parses `origin` when a variant needs the pipeline)."""
        self.entry = entry
        self.device = device
        self.cache_size = cache_size
        self.world = world
        """The processes its collectives span (`dvm.collectives`)."""
        self.disk = disk
        """The compile cache its variants are looked up in and stored to (None: off)."""
        self.text = text
        """The program's text as the compile cache keys it (with its file name)."""
        self.origin = origin
        """What `compile` was given (a path, or the text read from it when `compile` parsed
        it), parsed when `source` is None."""
        self.filename = filename
        """The name `origin` is parsed under when it is text read from a file."""
        self.variants: OrderedDict[Fixed, Variant] = OrderedDict()
        """The variants built, by what they fix (the generic one's key, `frozenset()`,
        stays first; the others in the order they were last used)."""
        self.cache: OrderedDict[tuple[Any, ...], BoundVariant] = OrderedDict()
        self.lock = threading.Lock()

        # The generic variant (compiled, or read from the compile cache), and what a
        # call needs to check its arguments and find its signature's variant.
        generic = self.variants[frozenset()] = self.build_variant(frozenset())
        self.declared = generic.declared
        """The entry function's name and arguments."""
        types = self.declared.types
        self.arity = len(types)
        self.tensors = {i for i, t_ in enumerate(types) if t_.shape is not None}
        self.checks = [
            (self.declared.where(i), t_, None if t_.shape is None else t_.dtype, t_.shape or ())
            for i, t_ in enumerate(types)
        ]
        """Per argument: where it is (for errors), its type, and for a tensor the numpy
        dtype and declared shape an array must have."""
        self.scalars = [i for i in range(self.arity) if i not in self.tensors]
        """The positions of the `index` and other scalar arguments."""
        self.only_index = all(types[i].index for i in self.scalars)
        """Whether every scalar argument is an `index` (a Python int is its value)."""
        everything = len(self.tensors) == self.arity
        self.signature = signature if everything else tensors_signature(sorted(self.tensors))
        """How a call's cache key is made."""
        self.fast_bind = self.binder(generic)
        """A new signature's symbols in one generated function (None: the full checks)."""
        self.generic = generic
        """The variant that fixes nothing (`variants`' first, never evicted)."""

    @property
    def module(self) -> ModuleOp:
        """The program as IR, parsed at first need (a variant the cache does not hold)."""
        if self.source is None:
            from dvm.ir import parse

            self.source = parse(self.origin, self.filename)
        return self.source

    def arrays(self, args: tuple[Any, ...]) -> tuple[Any, ...]:
        """Numpy scalars given for tensors as 0-d arrays, as `check_arguments`
        accepts them (kernels take arrays only)."""
        if not any(map(isinstance, args, itertools.repeat(np.generic))):
            return args
        return tuple(
            np.asarray(a) if isinstance(a, np.generic) and i in self.tensors else a
            for i, a in enumerate(args)
        )

    def __call__(self, *args: Any, **named: Any) -> Any:
        if named:
            args = self.positional(args, named)
        args, bound = self.specialized(args)
        direct = bound.direct
        if direct is not None:
            try:
                return direct(args)
            except FAILURES as e:
                fail(self.declared, args, e)
        variant = bound.variant
        try:
            call = Call(variant.call_symbols(bound.symbols, args))
        except GuardFailed as failed:
            variant, call = self.fixed_call(args, bound, failed)
        try:  # (the copy of a returned argument too: a huge one's is out of memory)
            outputs = owned(variant.run_in(args, call), args)  # `finish`, without its frame
        except FAILURES as e:  # sizes beyond the machine's or the VM's: name the arguments
            fail(self.declared, args, e)
        lone = variant.lone
        if lone is not None and call.launched is not None and variant is bound.variant:
            self.run_directly(args, bound, known_launch(call.launched, lone, outputs[0]))
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def run_directly(self, args: tuple[Any, ...], bound: BoundVariant, direct: Any) -> None:
        """Have the later calls of the signature of `args` (`bound`'s, whose variant is
        one launch) run that launch as `direct`, once the VM binds it (not None).
        (`fixed_call`'s variants are not the signature's: they keep the general path.)"""
        if direct is not None:
            key = self.signature(args)
            with self.lock:  # (unless evicted meanwhile)
                if self.cache.get(key) is bound:
                    self.cache[key] = bound._replace(direct=direct)

    def profile(
        self, *args: Any, trace: bool = False, **named: Any
    ) -> tuple[Any, list[tuple[str, vm.LaunchStats]]]:
        """Call the program and collect the VM's statistics of every launch
        (with `trace`, each launch's per-core timeline too)."""
        if named:
            args = self.positional(args, named)
        args, bound = self.specialized(args)
        variant = bound.variant
        try:
            call = Call(variant.call_symbols(bound.symbols, args), [], trace)
        except GuardFailed as failed:
            variant, call = self.fixed_call(args, bound, failed)
            call.stats, call.trace = [], trace
        try:
            outputs = self.finish(args, variant.run_in(args, call))
        except FAILURES as e:
            fail(self.declared, args, e)
        assert call.stats is not None
        return outputs, call.stats

    def positional(self, args: tuple[Any, ...], named: dict[str, Any]) -> tuple[Any, ...]:
        """The arguments of a call that names some (`program(x, n=3)`, by the entry's
        argument names without `%`) in order, as a Python function takes them, or a
        CallError naming the argument that is unknown, given twice or missing."""
        names, function = self.declared.names, f"@{self.declared.function}"
        if len(args) > len(names):
            raise CallError(f"{function} takes {len(names)} arguments, got {len(args)} by position")
        values = [*args, *[_MISSING] * (len(names) - len(args))]
        for name, value in named.items():
            if name not in names:
                known = ", ".join(f"%{n}" for n in names if n) or "none"
                raise CallError(f"{function} has no argument %{name} (named arguments: {known})")
            i = names.index(name)
            if values[i] is not _MISSING:
                raise CallError(f"{function} argument {self.declared.label(i)} is given twice")
            values[i] = value
        missing = [self.declared.label(i) for i, v in enumerate(values) if v is _MISSING]
        if missing:
            raise CallError(f"{function} is missing argument {', '.join(missing)}")
        return tuple(values)

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
        try:  # `cached`, without its frame: a cached call's whole lookup
            bound = self.cache.get(key)  # (a new signature raises no KeyError: cold in C)
            if bound is not None:
                self.cache.move_to_end(key)
        except (KeyError, TypeError):  # (evicted by another thread meanwhile; no array)
            bound = None
        if bound is None:
            # numpy scalars given for tensors: their 0-d arrays' signature may be cached
            # (`arrays` asked only then: a new shape's frames are cold)
            if any(map(isinstance, args, _NUMPY_SCALARS)):
                converted = self.arrays(args)
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
        knows only its type (a CallError for an index beyond int64, an i8 beyond i8).
        Index arguments that are all ints in range, as callers pass them, take a few
        C-level calls (a graph from the torch backend passes dozens)."""
        if self.only_index:
            indices = list(map(args.__getitem__, self.scalars))
            if (
                set(map(type, indices)) == {int}
                and min(indices) >= INDEX_MIN
                and max(indices) <= INDEX_MAX
            ):
                return args
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
        return self.declared.check(args)

    def binder(self, variant: Variant) -> Callable[[Sequence[Any]], Any]:
        """The generated fast path of `specialize` for the generic variant."""
        namespace: dict[str, Any] = {
            "_ndarray": np.ndarray,
            **{f"_dt{i}": dtype for i, (_, _, dtype, _) in enumerate(self.checks)},
            "_guards": variant.check_guards,
            "_check": lambda i, a: check_argument(self.checks[i][0], a, self.checks[i][1]),
        }
        arguments = [(dtype, shape, t_.index) for _, t_, dtype, shape in self.checks]
        stretchable = [name for name, _ in variant.stretchable]
        guards = variant.guard_names, len(variant.guards)
        source = binder_source(
            arguments, variant.symbols, *guards, stretchable, symbol_sides(variant.guards)
        )
        origin = f"argument binder: @{self.declared.function}"
        return define(source, "bind", namespace, origin)

    def specialize(self, args: Sequence[Any]) -> BoundVariant:
        """Check the arguments and the guards for a new signature."""
        symbols = self.fast_bind(args)  # (None where a dim is to be fixed)
        if symbols is not None:  # (made in C: a new shape's frames are cold)
            generic = self.generic
            return tuple.__new__(BoundVariant, (generic, symbols, generic.direct(symbols)))
        return self.bound(self.check(args), frozenset())

    def bound(self, values: Sequence[Any], fixed: Fixed) -> BoundVariant:
        """The variant for these checked arguments that fixes `fixed` and whatever its
        guards over argument dims need fixed, and its symbols."""
        while True:
            variant = self.variant(fixed)
            symbols = variant.bind(values)
            failed = variant.failed_guard(symbols)
            if failed is not None:
                fixed = self.respecialize(variant, *failed, symbols, fixed)
            elif not variant.units_to_stretch(symbols) <= fixed:
                fixed |= variant.units_to_stretch(symbols)
            else:
                return BoundVariant(variant, symbols, variant.direct(symbols))

    def fixed_call(
        self, args: tuple[Any, ...], bound: BoundVariant, failed: GuardFailed
    ) -> tuple[Variant, Call]:
        """The variant and call of arguments whose index values fail a guard of the
        signature's variant (`call_symbols`): where it is a broadcast with a side of 1,
        the variant with the index arguments (and dims) that side reads fixed to their
        values, looked for at every such call (the signature's cache knows no index
        values), else the CallError."""
        values = self.check(args)
        variant, fixed = bound.variant, bound.variant.fixed
        while True:
            symbols = variant.bind(values)
            symbols.update((name, values[i]) for i, name in variant.indices)
            fixed = self.respecialize(variant, failed.note, failed.lhs, failed.rhs, symbols, fixed)
            bound = self.bound(values, fixed)
            variant = bound.variant
            try:
                return variant, Call(variant.call_symbols(bound.symbols, args))
            except GuardFailed as again:
                failed = again

    def respecialize(
        self,
        variant: Variant,
        guard: GuardNote,
        lhs: int,
        rhs: int,
        symbols: dict[str, int],
        fixed: Fixed,
    ) -> Fixed:
        """What to fix for a broadcast that a guard assumed away: where a side is 1, the
        argument dims and index arguments it reads, to their values (a static 1 there
        then broadcasts); else a CallError naming the arguments, axes and values that
        disagree. A side that reads a value made on the way cannot be fixed."""
        unit = [names for names, v in zip(guard.reads, (lhs, rhs), strict=True) if v == 1]
        if guard.broadcast and unit:
            names = set(unit[0])
            where = {(i, a, symbols[n]) for i, a, n in variant.symbols if n in names}
            where |= {(i, -1, symbols[n]) for i, n in variant.indices if n in names}
            fixable = {n for *_, n in variant.symbols} | {n for _, n in variant.indices}
            if names and names <= fixable and not where <= fixed:
                return fixed | where
        raise CallError(guard.message(lhs, rhs)) from None  # (not "while handling" a guard's)

    def argument_name(self, i: int) -> str:
        return self.declared.argument_name(i)

    def variant(self, fixed: Fixed) -> Variant:
        with self.lock:
            found = self.variants.get(fixed)
            if found is not None and fixed:
                self.variants.move_to_end(fixed)
        if found is None:
            found = self.build_variant(fixed)
            found.fixed = fixed
            with self.lock:
                self.variants[fixed] = found
                if len(self.variants) > MAX_FIXED_VARIANTS + 1:  # (+ the generic one)
                    del self.variants[next(k for k in self.variants if k)]
        return found

    def build_variant(self, fixed: Fixed) -> Variant:
        """The variant with the argument dims and index arguments `fixed` fixed to their
        values: built from the compile cache's entry when it has a usable one, else by
        the pipeline (then stored)."""
        if self.disk is None:
            return self.lowered(fixed)[0]
        parts = [self.entry, sorted(fixed), self.device, PRESETS[self.device]()]
        key = self.disk.key(self.text, parts)
        # (kernels prepared at their first launch: see `Variant.from_plain`)
        from_plain = partial(Variant.from_plain, ahead=False)
        found = self.disk.load(key, from_plain, self.from_ir_entry)
        if found is not None:
            return found
        variant, plain, module = self.lowered(fixed)
        kernels = [(n, k.program) for n, k in variant.kernels.items()]
        self.disk.store(key, plain, module, kernels)
        return variant

    def lowered(self, fixed: Fixed) -> tuple[Variant, dict[str, Any] | None, ModuleOp]:
        """The variant with `fixed` fixed by the pipeline, its plain form (None: it has
        none) and the lowered module."""
        from dvm import variant_ir

        module = variant_ir.lower(self.to_lower(fixed), self.device, copy=False)
        variant, plain = variant_ir.variant_from_lowered(module, self.entry, world=self.world)
        return variant, plain, module

    def from_ir_entry(self, module: ModuleOp, binaries: dict[str, vm.Program]) -> Variant:
        """The variant of a cache entry that holds the lowered IR (no plain form)."""
        from dvm.variant_ir import variant_from_lowered

        return variant_from_lowered(module, self.entry, binaries, self.world)[0]

    def to_lower(self, fixed: Fixed) -> ModuleOp:
        """A module of the program with `fixed` fixed that the pipeline may rewrite. For
        the generic variant, the parsed program itself when it can be parsed again
        (`origin`, if a later variant needs it): a copy costs more than a parse that
        only variants with fixed values need."""
        from dvm.variant_ir import with_fixed_values

        if fixed:
            return with_fixed_values(self.module, self.entry, fixed)  # (a copy)
        if self.origin:
            module, self.source = self.module, None
            return module
        return self.module.clone()


def signature(args: Sequence[Any]) -> tuple[Any, ...]:
    """The cache key of a call whose arguments are all tensors: each argument's type,
    shape and dtype (the dtype itself: a byte-swapped f32 is no f32), by three C-level
    maps; `mixed_signature` when one is no array."""
    try:
        return (*map(type, args), *map(ARRAY_SHAPE, args), *map(ARRAY_DTYPE, args))
    except AttributeError:
        return mixed_signature(args)


def tensors_signature(tensors: Sequence[int]) -> Callable[[Sequence[Any]], tuple[Any, ...]]:
    """The cache key of a call with index or other scalar arguments: every argument's
    type, and the shape and dtype of those at the positions `tensors`, by C-level maps
    (a graph from the torch backend passes dozens of index arguments);
    `mixed_signature` when one of those is no array."""

    def key(args: Sequence[Any]) -> tuple[Any, ...]:
        try:
            arrays = list(map(args.__getitem__, tensors))
            return (*map(type, args), *map(ARRAY_SHAPE, arrays), *map(ARRAY_DTYPE, arrays))
        except (AttributeError, IndexError):
            return mixed_signature(args)

    return key


def mixed_signature(args: Sequence[Any]) -> tuple[Any, ...]:
    """The cache key of a call with index values (ints) or other non-arrays: per
    argument, an array's type, shape and dtype, or another value's type."""
    return tuple([(type(a), a.shape, a.dtype) if isinstance(a, ARRAYS) else type(a) for a in args])


ARRAYS = (np.ndarray, np.generic)
"""What has a shape and a dtype in a call's signature."""


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
    The process's first compile that loaded the compiler's libraries (any but a compile
    cache hit) ends with a collection and `gc.freeze()` (`freeze_once`;
    `FREEZE_AFTER_FIRST_COMPILE` turns it off).
    """
    preset = device or "host"
    if preset not in PRESETS:
        raise CompileError(f"unknown device {preset!r}; use one of {sorted(PRESETS)}")
    directory = cache_directory(cache)
    module: ModuleOp | None = None
    key_text: str | None = None
    origin: str | Path = src if isinstance(src, str | os.PathLike) else ""
    filename: str | None = None
    if isinstance(src, str | os.PathLike):
        if directory is not None:  # the text and file name, which error messages quote
            key_text = source_key(src)
        if key_text is None:  # no cache, or a file that is no UTF-8 text (the parse says where)
            from dvm.ir import parse, read_source

            # (a later variant parses the text read again, not the file)
            origin, filename = read_source(src)
            module = parse(origin, filename)
    else:
        module = src
        if directory is not None:
            from dvm.compile_cache import printed

            key_text = printed(src)  # a module: as printed, with locations
    program = CompiledProgram(
        module,
        entry,
        preset,
        cache_size,
        world_of(group),
        disk=None if key_text is None or directory is None else CompileCache(directory),
        text=key_text or "",
        origin=origin,
        filename=filename,
    )
    freeze_once()
    return program


def freeze_once() -> None:
    """After the process's first compile: collect the young garbage, then freeze what is
    alive (`gc.freeze`), above all the libraries the compile loaded (sympy, xDSL: far
    more objects than a program makes, and they live as long as the process). The full
    collections that a stream of new shapes triggers now and then (its caches' objects
    grow the old generation) then traverse only what came later, a small part of what
    is alive. What is frozen is never collected: a program compiled first and dropped
    stays, so do the caller's objects alive then that later become unreachable cycles,
    and so does the old generation's garbage, which only a full collection finds (a
    first compile leaves 60 KiB to 1 MiB of it; the full collection would traverse
    every object of the libraries, 40-150 ms, a tenth of a fresh process's start).
    A compile cache hit of a program with a plain form loads neither library: it
    leaves the collector alone (the collection would cost it a millisecond), and the
    first compile that loads them freezes."""
    if FREEZE_AFTER_FIRST_COMPILE and not _frozen and "xdsl" in sys.modules:
        _frozen.append(True)
        gc.collect(1)
        gc.freeze()
