"""The persistent compile cache (`dvm.compile_cache`): a second compile of a program
reads the pipeline's result from disk and behaves as the first; an entry that cannot
be trusted (truncated, random bytes, another compiler's, a kernel the VM refuses) is
reported with a `CacheWarning` and rebuilt; concurrent processes share the folder.

Every test uses a temporary folder (`cache_dir`), never the user's cache.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import dvm
import dvm.runtime
import dvm.variant_ir
from dvm.compile_cache import MAGIC, CacheWarning, entry_contents, source_stamps
from dvm.errors import ExecutionError
from dvm.expr_code import CodeError, checked_code, function_of_code
from dvm.lowering.bytecode_to_vm import decode_module, encode_programs
from dvm.tools import dvm_run

GELU_LOOP = """\
func.func @main(%x: tensor<?x?xf32>, %w: tensor<?xf32>, %n: index) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %i = %c0 to %c4 step %n iter_args(%a = %x) -> (tensor<?x?xf32>) {
    %g = tensor.tanh %a : tensor<?x?xf32>
    %b = tensor.add %g, %w : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
    scf.yield %b : tensor<?x?xf32>
  }
  func.return %r : tensor<?x?xf32>
}
"""


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The compile cache on, in a temporary folder."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("DVM_CACHE_DIR", str(folder))
    monkeypatch.delenv("DVM_CACHE", raising=False)
    return folder


def inputs(rng: np.random.Generator, rows: int = 3, cols: int = 5) -> tuple[Any, ...]:
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    return x, rng.standard_normal(cols).astype(np.float32), 1


def entries(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.dvmc")) if folder.exists() else []


def no_pipeline(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make a compile that runs the pipeline fail (a hit must not)."""

    def refuse(*_: Any, **__: Any) -> Any:
        raise AssertionError("the pipeline ran on a cache hit")

    monkeypatch.setattr(dvm.variant_ir, "lower", refuse)


def test_second_compile_reads_the_entry(
    cache_dir: Path, rng: np.random.Generator, monkeypatch: pytest.MonkeyPatch
) -> None:
    args = inputs(rng)
    expected = dvm.compile(GELU_LOOP, cache=False)(*args)
    assert entries(cache_dir) == []  # cache=False writes nothing
    dvm.compile(GELU_LOOP)
    (entry,) = entries(cache_dir)
    assert entry.read_bytes().startswith(MAGIC)
    no_pipeline(monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CacheWarning)
        np.testing.assert_array_equal(dvm.compile(GELU_LOOP)(*args), expected)


def test_a_hit_reports_errors_at_the_source_location(cache_dir: Path) -> None:
    """Errors name the program's file, line and column, as without the cache (the
    entry records each op's location)."""
    x, w = np.ones((2, 3), np.float32), np.ones(3, np.float32)
    messages = []
    for _ in range(2):
        with pytest.raises(ExecutionError) as error:
            dvm.compile(GELU_LOOP)(x, w, 0)
        messages.append(str(error.value))
    assert len(entries(cache_dir)) == 1
    assert messages[0] == messages[1]
    assert messages[0].startswith("<string>:4:3: %r = scf.for: step must be positive")


def test_variants_and_devices_have_entries_of_their_own(
    cache_dir: Path, rng: np.random.Generator, examples_dir: Path
) -> None:
    """A unit dim's variant and another device each get an entry; their hits compute
    what the compiles without the cache do."""
    program = examples_dir / "layernorm.mlir"
    x = rng.standard_normal((4, 1)).astype(np.float32)
    w, b = rng.standard_normal(8).astype(np.float32), rng.standard_normal(8).astype(np.float32)
    for device in ("host", "ascend910b"):
        expected = dvm.compile(program, device=device, cache=False)(x, w, b)
        for _ in range(2):
            got = dvm.compile(program, device=device)(x, w, b)
            np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)
    assert len(entries(cache_dir)) == 4  # per device: the generic variant and x_1 = 1


def test_the_key_holds_the_text_and_its_file_name(cache_dir: Path, tmp_path: Path) -> None:
    first, second = tmp_path / "a.mlir", tmp_path / "b.mlir"
    first.write_text(GELU_LOOP)
    second.write_text(GELU_LOOP)
    dvm.compile(first)
    dvm.compile(second)
    dvm.compile(GELU_LOOP.replace("%c4 = arith.constant 4", "%c4 = arith.constant 5"))
    assert len(entries(cache_dir)) == 3


def test_the_compiler_version_sees_each_source_file_change(tmp_path: Path) -> None:
    """An edit changes a source file's size or modification time (which is all the
    compiler's version reads of it), and a new or removed file its list."""
    source = tmp_path / "fuse.py"
    source.write_text("X = 1\n")
    (tmp_path / "notes.txt").write_text("not a source file")
    stamps = [source_stamps(tmp_path)]
    source.write_text("X = 12\n")
    stamps.append(source_stamps(tmp_path))
    later = source.stat().st_mtime_ns + 1_000_000
    source.write_text("X = 13\n")  # the same size
    os.utime(source, ns=(later, later))
    stamps.append(source_stamps(tmp_path))
    (tmp_path / "tile.py").write_text("")
    stamps.append(source_stamps(tmp_path))
    (tmp_path / "notes.txt").write_text("still not one")
    assert len(set(stamps)) == 4
    assert source_stamps(tmp_path) == stamps[-1]


def test_the_environment_turns_it_off_and_cache_true_on(
    cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DVM_CACHE", "off")
    dvm.compile(GELU_LOOP)
    assert entries(cache_dir) == []
    dvm.compile(GELU_LOOP, cache=True)
    assert len(entries(cache_dir)) == 1


def rewrite(entry: Path, **change: Any) -> None:
    """Rewrite an entry whole (a right checksum) with its text, kernels or header changed."""
    data = entry.read_bytes()
    header = json.loads(data[len(MAGIC) :].partition(b"\n")[0])
    _, text, kernels = entry_contents(data, header["key"])
    text = change.get("text", text)
    body = text.encode() + change.get("kernels", lambda k: k)(kernels)
    header.update(text=len(text.encode()), sha256=hashlib.sha256(body).hexdigest())
    header.update(change.get("header", {}))
    entry.write_bytes(MAGIC + json.dumps(header).encode() + b"\n" + body)


def plain_changed(entry: Path, change: Any) -> str:
    """The entry's plain form (JSON text) after `change` edited it in place."""
    data = entry.read_bytes()
    header = json.loads(data[len(MAGIC) :].partition(b"\n")[0])
    assert header["plain"]
    form = json.loads(entry_contents(data, header["key"])[1])
    change(form)
    return json.dumps(form)


def foreign_code(form: dict[str, Any]) -> None:
    """A kernel's output size that would run other code than arithmetic."""
    kernel = next(k for k in form["kernels"].values() if k["sizes"][1])
    kernel["sizes"][1][0] = "__import__('os').getpid()"


def unknown_step(form: dict[str, Any]) -> None:
    form["steps"][0][0] = "exec"


def huge_rank(form: dict[str, Any]) -> None:
    """A kernel's first argument of rank 2**63 - 1 (its dims' names would count to it)."""
    kernel = next(iter(form["kernels"].values()))
    kernel["args"][0][1] = 2**63 - 1


def slot_out_of_range(form: dict[str, Any]) -> None:
    form["results"] = [form["slots"]]


def kernel_without_registers(kernels: bytes) -> bytes:
    """The module file with its first program's registers gone: it decodes, but the
    VM's validation refuses its instructions."""
    programs = decode_module(kernels)
    name, program = programs[0]
    broken = program.replace(registers=(), offsets=None)
    return encode_programs([(name, broken), *programs[1:]])


def kernel_of_other_arguments(kernels: bytes) -> bytes:
    """The module file with a program's binary under the name of one that takes other
    arguments (the binary validates, but is not the kernel the host launches)."""
    programs = decode_module(kernels)
    (first, program), *rest = programs
    other = next(p for _, p in rest if p.args != program.args)
    return encode_programs([(first, other), *rest])


CORRUPTIONS = {
    "truncated": lambda e: e.write_bytes(e.read_bytes()[:-100]),
    "random bytes": lambda e: e.write_bytes(np.random.default_rng(7).bytes(2000)),
    "empty": lambda e: e.write_bytes(b""),
    "another compiler's": lambda e: rewrite(e, header={"key": "0" * 64}),
    "text that does not parse": lambda e: rewrite(e, text="func.func @main("),
    "a kernel the VM refuses": lambda e: rewrite(e, kernels=kernel_without_registers),
    "a kernel of other arguments": lambda e: rewrite(e, kernels=kernel_of_other_arguments),
    "code that is no arithmetic": lambda e: rewrite(e, text=plain_changed(e, foreign_code)),
    "a step of no kind": lambda e: rewrite(e, text=plain_changed(e, unknown_step)),
    "a slot out of range": lambda e: rewrite(e, text=plain_changed(e, slot_out_of_range)),
    "a rank beyond the VM's": lambda e: rewrite(e, text=plain_changed(e, huge_rank)),
    "the format before": lambda e: e.write_bytes(b"DVMC 1\n" + e.read_bytes()[len(MAGIC) :]),
}


@pytest.mark.parametrize("corrupt", CORRUPTIONS.values(), ids=CORRUPTIONS.keys())
def test_an_unusable_entry_is_rebuilt_and_reported(
    cache_dir: Path, rng: np.random.Generator, corrupt: Any, examples_dir: Path
) -> None:
    program = examples_dir / "if_else_add.mlir"  # several kernels
    compiled = dvm.compile(program)
    (entry,) = entries(cache_dir)
    args = [rng.standard_normal(s).astype(np.float32) for s in shapes(compiled)]
    expected = compiled(*args)
    corrupt(entry)
    with pytest.warns(CacheWarning, match=f"rebuilt {entry}"):
        again = dvm.compile(program)
    np.testing.assert_allclose(again(*args), expected, rtol=1e-6, atol=1e-6)
    with warnings.catch_warnings():  # rewritten: usable again
        warnings.simplefilter("error", CacheWarning)
        dvm.compile(program)


def step_of(form: dict[str, Any], kind: str) -> list[Any]:
    """The first top-level step of `kind` in `form` (`if_else_add`'s: a choice, an
    extract of the branch's condition, an `if` of two launches)."""
    return next(s for s in form["steps"] if s[0] == kind)


def branch_launch(form: dict[str, Any]) -> list[Any]:
    """The launch of the `if`'s `then` branch."""
    return step_of(form, "if")[2][0][0]


def read_before_written(form: dict[str, Any]) -> None:
    """The condition extracted before the choice that computes it has run."""
    form["steps"][:2] = form["steps"][1::-1]


def read_of_a_branch_value(form: dict[str, Any]) -> None:
    """The function's result read from a slot only a branch writes (a region's own)."""
    form["results"] = branch_launch(form)[3]


def written_twice(form: dict[str, Any]) -> None:
    """A branch's launch writing over the argument it reads."""
    step = step_of(form, "if")
    branch_launch(form)[3] = [0]
    step[2][1] = [0]


def launch_of_another_type(form: dict[str, Any]) -> None:
    """A launch taking the condition (a rank-0 bool tensor) for its rank-2 f32 input."""
    branch_launch(form)[2] = [step_of(form, "extract")[2]]


def launch_of_no_kernel(form: dict[str, Any]) -> None:
    branch_launch(form)[1] = "no_such_kernel"


def extract_of_another_rank(form: dict[str, Any]) -> None:
    extract = step_of(form, "extract")
    extract[3] = [extract[2]]


def more_results_than_yielded(form: dict[str, Any]) -> None:
    step_of(form, "if")[4].append(form["slots"] - 1)


def place_out_of_range(form: dict[str, Any]) -> None:
    form["places"] = 1
    branch_launch(form)[4] = [5]


def choice_on_an_unbound_symbol(form: dict[str, Any]) -> None:
    step_of(form, "choice")[1].append("q_0")


def guard_on_an_unknown_symbol(form: dict[str, Any]) -> None:
    form["guards"] = {
        "names": ["q_0"],
        "code": [[], ["q_0", "1"]],
        "notes": [[False, [None, None], "@f: ", [None, None]]],
    }


def bind_to_an_axis_of_a_scalar(form: dict[str, Any]) -> None:
    steps = form["steps"]
    extract = step_of(form, "extract")
    steps[steps.index(extract)] = ["bind", extract, [[extract[4], 0, "q_0"]], None]
    form["late"] = True


def sizes_of_fewer_dims(form: dict[str, Any]) -> None:
    """A kernel's output sizes one short of its outputs' dims."""
    sizes = next(k for k in form["kernels"].values() if k["sizes"][1])["sizes"]
    sizes[1] = sizes[1][:-1]


def sizes_divided_by_0(form: dict[str, Any]) -> None:
    """A kernel's output size divided by a difference that is 0 at every call."""
    sizes = next(k for k in form["kernels"].values() if k["sizes"][1])["sizes"]
    sizes[1][0] = f"({sizes[1][0]}) // ({sizes[1][0]} - {sizes[1][0]})"


FORGERIES = {
    "a slot read before it is written": read_before_written,
    "a slot only a branch writes": read_of_a_branch_value,
    "a slot written twice": written_twice,
    "a launch input of another type": launch_of_another_type,
    "a launch of no kernel": launch_of_no_kernel,
    "an extract of another rank": extract_of_another_rank,
    "more results than yielded": more_results_than_yielded,
    "an arena place out of range": place_out_of_range,
    "a choice on an unbound symbol": choice_on_an_unbound_symbol,
    "a guard on an unknown symbol": guard_on_an_unknown_symbol,
    "a bind to an axis of a scalar": bind_to_an_axis_of_a_scalar,
    "output sizes of fewer dims": sizes_of_fewer_dims,
    "an output size divided by 0": sizes_divided_by_0,
}


@pytest.mark.parametrize("forge", FORGERIES.values(), ids=FORGERIES.keys())
def test_a_forged_entry_is_refused_as_it_loads(
    cache_dir: Path, rng: np.random.Generator, forge: Any, examples_dir: Path
) -> None:
    """An entry whose plain form was edited and signed again (its checksum right) is
    refused by the validation of its steps (`dvm.host_validate`), not run into a
    Python error, nor a wrong result, at a call."""
    program = examples_dir / "if_else_add.mlir"
    compiled = dvm.compile(program)
    (entry,) = entries(cache_dir)
    args = [rng.standard_normal(s).astype(np.float32) for s in shapes(compiled)]
    expected = compiled(*args)
    rewrite(entry, text=plain_changed(entry, forge))
    with pytest.warns(CacheWarning, match=f"rebuilt {entry}"):
        again = dvm.compile(program)
    np.testing.assert_allclose(again(*args), expected, rtol=1e-6, atol=1e-6)


TAKE = """\
func.func @main(%x: tensor<?x3xf32>, %i: tensor<2xi32>) -> tensor<?x2xf32> {
  %y = tensor.take %x, %i dim(1) : (tensor<?x3xf32>, tensor<2xi32>) -> tensor<?x2xf32>
  func.return %y : tensor<?x2xf32>
}
"""


def test_a_forged_lowered_entry_is_refused_as_it_loads(cache_dir: Path) -> None:
    """An entry of a program with no plain form (a take checks its indices at each
    launch) holds the lowered IR: edited so that its kernel's output dim is a symbol
    nothing binds, it is refused as the host steps are built, not run into a Python
    error at the first call."""
    compiled = dvm.compile(TAKE)
    (entry,) = entries(cache_dir)
    header = json.loads(entry.read_bytes()[len(MAGIC) :].partition(b"\n")[0])
    assert not header["plain"]
    text = entry_contents(entry.read_bytes(), header["key"])[1]
    assert text.count("f32 [x_0, 2]") == 1
    rewrite(entry, text=text.replace("f32 [x_0, 2]", "f32 [q_0, 2]"))
    with pytest.warns(CacheWarning, match=r"unusable .*@main_k0 reads \['q_0'\], unbound"):
        again = dvm.compile(TAKE)
    x, i = np.arange(12, dtype=np.float32).reshape(4, 3), np.array([2, 0], np.int32)
    np.testing.assert_array_equal(again(x, i), compiled(x, i))
    np.testing.assert_array_equal(again(x, i), x[:, [2, 0]])


def test_a_hit_prepares_each_kernel_at_its_first_launch(
    cache_dir: Path, rng: np.random.Generator, examples_dir: Path
) -> None:
    """A hit generates no kernel's Python (its unplanned launch, its fast path, its
    output sizes): a kernel's first launch does (its fast path, after a few shapes),
    and computes what the compile's kernels, prepared ahead (their fast paths), compute.
    The kernels of the branch not taken stay unprepared."""

    def prepared(program: dvm.runtime.CompiledProgram) -> set[str]:
        kernels = program.variants[frozenset()].kernels.items()
        return {
            n
            for n, k in kernels
            if k.specializer.static.fast_paths or k.specializer.static.unplanned
        }

    def sized(program: dvm.runtime.CompiledProgram) -> set[str]:
        """The kernels whose output sizes' function is made (a cached property)."""
        kernels = program.variants[frozenset()].kernels.items()
        return {n for n, k in kernels if "sizes" in vars(k)}

    path = examples_dir / "if_else_add.mlir"  # an `scf.if`: kernels per branch
    compiled = dvm.compile(path)
    hit = dvm.compile(path)
    ahead = prepared(compiled)  # (all but a fallback, prepared at its first launch)
    assert ahead and prepared(hit) == set()
    assert sized(compiled) == set(compiled.variants[frozenset()].kernels) and not sized(hit)
    args = [rng.standard_normal(s).astype(np.float32) for s in shapes(hit)]
    np.testing.assert_allclose(hit(*args), compiled(*args), rtol=1e-6, atol=1e-6)
    assert set() < prepared(hit) < ahead
    assert set() < sized(hit) < sized(compiled)


def shapes(program: dvm.runtime.CompiledProgram) -> list[tuple[int, ...]]:
    """Small argument shapes for `program`: each dynamic dim 4."""
    return [tuple(4 if d < 0 else d for d in shape) for *_, shape in program.checks]


CONCURRENT = """\
import sys
import numpy as np
import dvm
program = dvm.compile(sys.argv[1])
x = np.ones((2, 3), np.float32)
print(float(program(x, np.ones(3, np.float32), 1).sum()))
"""


def test_processes_compiling_at_once_share_the_folder(cache_dir: Path, tmp_path: Path) -> None:
    source = tmp_path / "loop.mlir"
    source.write_text(GELU_LOOP)
    env = {**os.environ, "PYTHONWARNINGS": "error::UserWarning"}
    command = [sys.executable, "-c", CONCURRENT, str(source)]
    runs = [subprocess.Popen(command, env=env, stdout=subprocess.PIPE) for _ in range(2)]
    outputs = [run.communicate(timeout=300)[0] for run in runs]
    assert [run.returncode for run in runs] == [0, 0]
    assert len(set(outputs)) == 1
    assert [p.suffix for p in entries(cache_dir)] == [".dvmc"]
    assert not list(cache_dir.glob("*.tmp"))  # no temporary file left
    done = subprocess.run(command, env=env, stdout=subprocess.PIPE, check=True, timeout=300)
    assert done.stdout == outputs[0]


def aged(path: Path, seconds: float) -> Path:
    """`path`, its modification time set `seconds` in the past."""
    when = time.time() - seconds
    os.utime(path, (when, when))
    return path


def test_a_store_trims_the_folder_to_its_bound_least_recently_used_first(
    cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past `DVM_CACHE_MAX_MB`, a store deletes the entries least recently written or
    read (a hit counts as a use) down to 80% of the bound, and temporary files an hour
    old; never the entry it wrote. A second store within the hour does not trim."""
    cache_dir.mkdir()
    marker = cache_dir / ".trimmed"
    marker.touch()  # trimmed just now: the first store leaves the folder as it is
    monkeypatch.setenv("DVM_CACHE_MAX_MB", str(100_000 / 2**20))
    old = [cache_dir / f"{i:064x}.dvmc" for i in range(6)]
    for i, path in enumerate(old):
        path.write_bytes(bytes(20_000))
        aged(path, 7200 - i)  # old[0] the least recently used
    dvm.compile(GELU_LOOP)
    (written,) = set(entries(cache_dir)) - set(old)
    aged(written, 9000)
    dead, live = cache_dir / "a.dvmc.1.tmp", cache_dir / "b.dvmc.2.tmp"
    dead.write_bytes(b"x")
    live.write_bytes(b"x")
    aged(dead, 3700)
    aged(marker, 3700)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CacheWarning)
        dvm.compile(GELU_LOOP)  # a hit: `written` becomes the most recently used
        dvm.compile(GELU_LOOP.replace("tanh", "exp"))  # a store: the trim
    removed = [p for p in old if not p.exists()]
    assert removed and removed == old[: len(removed)] and written.exists()
    total = sum(p.stat().st_size for p in entries(cache_dir))
    assert total <= 80_000 < total + 20_000  # no more deleted than needed
    assert not dead.exists() and live.exists()
    survivors = entries(cache_dir)
    monkeypatch.setenv("DVM_CACHE_MAX_MB", "0.001")
    dvm.compile(GELU_LOOP.replace("tanh", "abs"))  # within the hour: no trim
    assert set(survivors) < set(entries(cache_dir))


@pytest.mark.parametrize("value", ["lots", "-1", "nan"])
def test_a_malformed_bound_is_reported_and_the_default_kept(
    cache_dir: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("DVM_CACHE_MAX_MB", value)
    with pytest.warns(CacheWarning, match=f"DVM_CACHE_MAX_MB='{value}' is no number"):
        dvm.compile(GELU_LOOP)
    assert len(entries(cache_dir)) == 1


def test_dvm_run_no_cache(cache_dir: Path, tmp_path: Path) -> None:
    source = tmp_path / "loop.mlir"
    source.write_text(GELU_LOOP)
    argv = [str(source), "--shapes", "2x3", "3", "--index", "1"]
    assert dvm_run.main([*argv, "--no-cache"]) == 0
    assert entries(cache_dir) == []
    assert dvm_run.main(argv) == 0
    assert len(entries(cache_dir)) == 1


HIT_IMPORTS = """\
import gc
import sys
import numpy as np
import dvm
program = dvm.compile(sys.argv[1])
assert "tempfile" not in sys.modules, "not a hit: the entry was written"
assert "pathlib" not in sys.modules, "a cache hit imported pathlib"
if sys.version_info < (3, 12):  # (where CPython's own SHA-256 is `_sha256`)
    assert "_hashlib" not in sys.modules, "a cache hit loaded OpenSSL"
assert gc.get_freeze_count() == 0, "a cache hit froze what was alive"
args = [np.ones([3 if d < 0 else d for d in shape], dtype) for *_, dtype, shape in program.checks]
np.testing.assert_allclose(program(*args), dvm.compile(sys.argv[1], cache=False)(*args))
later = {"dvm.vm.planner", "dvm.vm.planned", "dvm.vm.stats"} & set(sys.modules)
assert not later, f"an unplanned first call imported {later}"
"""


def test_a_hit_and_its_first_call_import_only_what_they_need(
    cache_dir: Path, examples_dir: Path
) -> None:
    """A fresh process's hit never imports `pathlib` (3 ms of its own imports: the cache
    and the package use `os.path`) nor OpenSSL (`hashlib`'s, 3 ms), and leaves the
    collector alone; its first call, whose launch runs unplanned, imports neither the
    planner, the planned executor nor the launch statistics."""
    path = str(examples_dir / "gelu.mlir")
    dvm.compile(path)  # writes the entry
    subprocess.run([sys.executable, "-c", HIT_IMPORTS, path], check=True, timeout=300)


HIT_WITHOUT_COMPILER = """\
import sys
import numpy as np
import dvm
programs, arguments = sys.argv[1].split(","), np.load(sys.argv[2])
compiled = [dvm.compile(name.split("@")[0], device=name.split("@")[1]) for name in programs]
later = {"dvm.vm.specialize", "dvm.vm.static", "dvm.vm.launch", "dvm.vm.unplanned"}
assert not later & set(sys.modules), f"a cache hit imported {later & set(sys.modules)}"
results = {}
for k, program in enumerate(compiled):
    for j in range(2):
        args = [arguments[f"{k}_{j}_{i}"] for i in range(len(program.checks))]
        args = [a.item() if a.dtype == np.int64 else a for a in args]  # index values
        results[f"{k}_{j}"] = program(*args)
loaded = sorted({m.split(".")[0] for m in sys.modules} & {"xdsl", "sympy"})
assert not loaded, f"a cache hit imported {loaded}"
np.savez(sys.argv[3], **results)
"""


def test_a_hit_in_a_fresh_process_needs_neither_xdsl_nor_sympy(
    cache_dir: Path, tmp_path: Path, examples_dir: Path
) -> None:
    """Hits of programs with stacks, choices, `scf.if` and `scf.for`, on both presets,
    and of a variant with a dim fixed to 1, compute what compiles without the cache do,
    in a process that never imports xDSL or sympy (nor, until a call, the VM's
    specializer and executors)."""
    rng = np.random.default_rng(33)
    names = [
        f"{examples_dir / program}.mlir@{device}"
        for program in ("bert_layer", "if_else_add", "residual_loop", "layernorm", "mmoe")
        for device in ("host", "ascend910b")
    ]
    arguments, expected = {}, {}
    for k, name in enumerate(names):
        path, device = name.split("@")
        dvm.compile(path, device=device)  # writes the entry
        reference = dvm.compile(path, device=device, cache=False)
        for j, fill in enumerate((3, 1)):  # the generic variant, then dims of 1
            shape = [tuple(fill if d < 0 else d for d in s) for *_, s in reference.checks]
            if "mmoe" in path or "bert" in path:
                shape = [tuple(2 if d < 0 else d for d in s) for *_, s in reference.checks]
            args = [
                rng.standard_normal(s).astype(np.float32) if dtype is not None else 2
                for s, (_, _, dtype, _) in zip(shape, reference.checks, strict=True)
            ]
            for i, a in enumerate(args):
                arguments[f"{k}_{j}_{i}"] = np.asarray(a)
            dvm.compile(path, device=device)(*args)  # writes a variant's entry
            expected[f"{k}_{j}"] = reference(*args)
    np.savez(tmp_path / "arguments.npz", **arguments)
    command = [sys.executable, "-c", HIT_WITHOUT_COMPILER, ",".join(names)]
    command += [str(tmp_path / "arguments.npz"), str(tmp_path / "results.npz")]
    env = {**os.environ, "PYTHONWARNINGS": "error::UserWarning"}
    subprocess.run(command, env=env, check=True, timeout=600)
    got = np.load(tmp_path / "results.npz")
    for key, value in expected.items():
        np.testing.assert_allclose(got[key], value, rtol=1e-5, atol=1e-5, err_msg=key)


@pytest.mark.parametrize(
    "text",
    [
        "__import__('os').getpid()",
        "x.__class__",
        "open('f')",
        "(lambda: 1)()",
        "[x for x in ()]",
        "'text'",
        "y + 1",  # a name nobody defined
        "math.pi.__class__",
        "int(x, base=2)",
        "x // 0",  # a division by what may be 0, unless an `if` tests it (below)
        "1 / (x - x)",
        "x % (x - 1)",
        "(x // x if x + 1 else 0)",
        "1 << (1 << 40)",  # an operator codegen does not print, this one without end
        "x ** (2 ** 40)",  # a power beyond a small literal
        "x ** x",
    ],
)
def test_cached_code_is_integer_arithmetic_only(text: str) -> None:
    """An entry's expressions run as Python: anything but arithmetic on known names, that
    can raise or run without end, is refused before it is compiled."""
    with pytest.raises(CodeError):
        checked_code([[], [text]], ["x"])


@pytest.mark.parametrize(
    "text",
    ["x // 3", "x % -2", "x // max(1, x - 5)", "((x // (x - 1)) if (x - 1) else 0)",
     "(-(-(x) // (x + 1)) if (x + 1) else 0)", "x ** 2 // 7"],
)  # fmt: skip
def test_cached_code_divides_by_what_cannot_be_0(text: str) -> None:
    """Quotients as `dvm.codegen` prints them (by a nonzero literal, a `max` of a positive
    one, or under an `if` that tests the divisor) are accepted, and run."""
    from dvm.expr_code import function_of_code

    code = checked_code([[], [text]], ["x"])
    f = function_of_code(code, ["x"])
    assert f(1) == (eval(text, {}, {"x": 1}),)


def test_code_this_process_generated_is_checked_for_its_names_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What `codegen` generated is not parsed again when a compile checks it, but a
    name the caller does not know is refused all the same."""
    import ast

    import sympy

    from dvm.codegen import expression_code

    x, y = sympy.symbols("x y", integer=True, nonnegative=True)
    code = expression_code([sympy.Max(x, y) + 2 * sympy.floor(x / 7)])
    parsed: list[str] = []
    parse = ast.parse
    monkeypatch.setattr(ast, "parse", lambda text, **k: parsed.append(text) or parse(text, **k))
    assert checked_code(code, ["x", "y"]) == code and not parsed
    with pytest.raises(CodeError):
        checked_code(code, ["x"])
    with pytest.raises(CodeError):  # no generated text: parsed and checked whole
        checked_code([[], ["max(x, y).__class__"]], ["x", "y"])
    assert parsed


def test_a_text_checked_once_is_checked_again_for_its_names_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An entry repeats its texts (every kernel's `int(d0_0)`): the first is parsed and
    checked whole, the next ones only for their names, which must still be known."""
    import ast

    parsed: list[str] = []
    parse = ast.parse
    monkeypatch.setattr(ast, "parse", lambda text, **k: parsed.append(text) or parse(text, **k))
    text = "int(math.floor(z_17 // 3) + max(z_17, 2))"
    assert checked_code([[], [text, text]], ["z_17"]) == ([], [text, text])
    assert parsed == [text]
    with pytest.raises(CodeError):
        checked_code([[], [text]], ["x"])


def test_cached_code_accepts_what_codegen_prints() -> None:
    code = [
        [["_t0", "max(x, 4)"]],
        ["int((((x + _t0) // (-_t0)) if (-_t0) else 0))", "int(min(_t0, math.floor(x)))"],
    ]
    assert function_of_code(checked_code(code, ["x"]), ["x"])(7) == (-2, 7)
