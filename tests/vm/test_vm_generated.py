"""Generated code: its lines show in tracebacks, and its source goes with it."""

from __future__ import annotations

import gc
import linecache
import traceback

import pytest
import vm_programs as P

import dvm.vm as vm
from dvm.vm.generated import define
from dvm.vm.static import static_info
from dvm.vm.unplanned import generated

pytestmark = pytest.mark.usefixtures("young_heap")  # (the tests collect garbage)

RATIO = "def ratio(x):\n    return 1 // x\n"


def test_a_traceback_shows_the_generated_line() -> None:
    ratio = define(RATIO, "ratio", {}, "ratio: example")
    with pytest.raises(ZeroDivisionError) as e:
        ratio(0)
    shown = "".join(traceback.format_exception(e.value))
    assert "<dvm ratio: example #" in shown
    assert "return 1 // x" in shown


def test_the_source_lives_as_long_as_the_function() -> None:
    ratio = define(RATIO, "ratio", {}, "ratio: example")
    filename = ratio.__code__.co_filename
    assert linecache.getline(filename, 2) == "    return 1 // x\n"
    assert define(RATIO, "ratio", {}, "ratio: example").__code__.co_filename != filename
    del ratio
    gc.collect()  # (a generated function and its namespace hold each other)
    assert filename not in linecache.cache


def test_the_filenames_of_functions_gone_are_used_again() -> None:
    """Python keeps each filename it compiled code under: a stream of generated
    functions, each dropped before the next, uses a few of them, not one each."""
    gc.collect()
    filenames = set()
    for _ in range(12):
        ratio = define(RATIO, "ratio", {}, "ratio: example")
        filenames.add(ratio.__code__.co_filename)
        del ratio
        gc.collect()
    assert len(filenames) <= 2


def test_generated_code_is_named_after_its_program() -> None:
    """A program decoded with a name names each function the VM generates for it."""
    program = vm.decode(vm.encode(vm.assemble(P.layernorm(False))), "layernorm")
    vm.prepare(program, vm.DeviceSpec.host())
    static = static_info(program)
    made = generated(program)
    functions = [static.slot_fn.function, *static.fast_paths.values(), made.launch, made.bound]
    origins = [f.__code__.co_filename.rsplit(" #", 1)[0] for f in functions]
    assert origins == [
        "<dvm slots: layernorm",
        "<dvm fast path: layernorm",
        "<dvm unplanned launch: layernorm",
        "<dvm work bound: layernorm",
    ]


def test_a_source_compiled_again_is_reused_under_its_own_name() -> None:
    """The code of a source generated before is reused, each function (and the
    functions it defines) under its own filename, whose lines its traceback shows."""
    source = "def outer(x):\n    def inner(y):\n        return 1 // y\n    return inner(x)\n"
    first = define(source, "outer", {}, "outer: example")
    second = define(source, "outer", {}, "outer: example")
    assert second.__code__.co_code == first.__code__.co_code
    assert second.__code__.co_filename != first.__code__.co_filename
    inner = next(c for c in second.__code__.co_consts if hasattr(c, "co_filename"))
    assert inner.co_filename == second.__code__.co_filename
    del first
    gc.collect()  # the first's filename is free: a third function may take it
    third = define(RATIO, "ratio", {}, "ratio: example")
    with pytest.raises(ZeroDivisionError) as e:
        second(0)
    shown = "".join(traceback.format_exception(e.value))
    assert second.__code__.co_filename in shown
    assert "return 1 // y" in shown
    assert third(1) == 1


def test_kept_code_serves_only_its_own_source() -> None:
    """Kept code is found by the whole source: sources differing in one constant, as two
    kernels' fast paths differ in a tile size, each run their own."""
    functions = [
        define(f"def scaled(x):\n    return x * {k}\n", "scaled", {}, "scaled: example")
        for k in (3, 4, 3)
    ]
    assert [f(2) for f in functions] == [6, 8, 6]
    assert functions[0].__code__.co_code == functions[2].__code__.co_code
    assert functions[0].__code__.co_consts != functions[1].__code__.co_consts


def test_programs_differing_in_operations_share_a_fast_path_source() -> None:
    """The fast path reads a program's tables, not its operations: two programs that
    differ only there (the branches of an `if`, `x + 1` and `x - 1`) share its source and
    code, each function under its own program's name, while a program whose tables differ
    (one slot) gets its own."""
    text = P.layernorm(False)
    variants = [text, text.replace("rsqrt r2, r2", "sqrt r2, r2"), text.replace("= 16", "= 8")]
    device = vm.DeviceSpec.host()
    paths = []
    for i, source in enumerate(variants):
        program = vm.decode(vm.encode(vm.assemble(source)), f"program{i}")
        vm.prepare(program, device)
        paths.append(next(iter(static_info(program).fast_paths.values())))
    names = [f.__code__.co_filename.rsplit(" #", 1)[0] for f in paths]
    assert names == [f"<dvm fast path: program{i}" for i in range(3)]
    assert paths[0].__code__.co_consts == paths[1].__code__.co_consts
    assert paths[0].__code__.co_consts != paths[2].__code__.co_consts
    shapes = [[32, 24], [24], [24], [32, 24]]
    assert paths[0](shapes, [], 1, 0) == paths[1](shapes, [], 1, 0)
