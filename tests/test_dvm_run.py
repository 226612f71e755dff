"""`dvm-run`: run a function of a `.mlir` file on the VM, from the command line.

The tool is called in-process (`dvm_run.main([...])`, output read with
capsys); one test runs the installed console script as a subprocess, to see
that it is installed and that an error there is one line and exit code 1.

The promise: good input exits 0 and prints (or saves) the results, `--check`
says "ok" per result, `--stats` and `--trace` report the VM's work; bad
input exits 1 with a one-line `dvm-run: error: ...` on stderr, never a
Python traceback.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dvm.tools import dvm_run

LAYERNORM = """\
func.func @layernorm(%x: tensor<?x?xf32>, %w: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?x?xf32> {
  %eps = arith.constant dense<9.99999974E-6> : tensor<f32>
  %mean = tensor.reduce_mean %x {axes = [1], keepdims = true} : tensor<?x?xf32> -> tensor<?x1xf32>
  %d = tensor.sub %x, %mean : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
  %d2 = tensor.mul %d, %d : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %var = tensor.reduce_mean %d2 {axes = [1], keepdims = true} : tensor<?x?xf32> -> tensor<?x1xf32>
  %ve = tensor.add %var, %eps : (tensor<?x1xf32>, tensor<f32>) -> tensor<?x1xf32>
  %r = tensor.rsqrt %ve : tensor<?x1xf32>
  %n = tensor.mul %d, %r : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
  %s = tensor.mul %n, %w : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  %y = tensor.add %s, %b : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  func.return %y : tensor<?x?xf32>
}
"""

LOOP = """\
func.func @residual_loop(%x: tensor<?x?xf32>, %w: tensor<?x?xf32>, %n: index) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %half = arith.constant dense<5.000000e-01> : tensor<f32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> (tensor<?x?xf32>) {
    %m = tensor.matmul %acc, %w : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
    %t = tensor.tanh %m : tensor<?x?xf32>
    %h = tensor.mul %t, %half : (tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xf32>
    %next = tensor.add %acc, %h : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
    scf.yield %next : tensor<?x?xf32>
  }
  func.return %r : tensor<?x?xf32>
}
"""

STATS = """\
func.func @stats(%x: tensor<?x?xf32>, %k: tensor<?xi32>)
    -> (tensor<?xf32>, tensor<?xf32>, tensor<f32>) {
  %s = tensor.reduce_sum %x {axes = [0]} : tensor<?x?xf32> -> tensor<?xf32>
  %m = tensor.reduce_max %x {axes = [0]} : tensor<?x?xf32> -> tensor<?xf32>
  %kf = tensor.convert %k : tensor<?xi32> -> tensor<?xf32>
  %t = tensor.reduce_sum %kf {axes = [0]} : tensor<?xf32> -> tensor<f32>
  func.return %s, %m, %t : tensor<?xf32>, tensor<?xf32>, tensor<f32>
}
"""

TWO_FUNCTIONS = """\
func.func @neg(%x: tensor<?xf32>) -> tensor<?xf32> {
  %y = tensor.neg %x : tensor<?xf32>
  func.return %y : tensor<?xf32>
}
func.func @abs(%x: tensor<?xf32>) -> tensor<?xf32> {
  %y = tensor.abs %x : tensor<?xf32>
  func.return %y : tensor<?xf32>
}
"""


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    """The programs above as files in a temporary folder."""
    paths = {}
    for name, text in {
        "layernorm": LAYERNORM,
        "loop": LOOP,
        "stats": STATS,
        "two": TWO_FUNCTIONS,
    }.items():
        path = tmp_path / f"{name}.mlir"
        path.write_text(text)
        paths[name] = str(path)
    return paths


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = dvm_run.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def assert_clean_error(code: int, out: str, err: str, *words: str) -> None:
    """Exit code 1 and one line `dvm-run: error: ...` naming `words`, no traceback."""
    assert code == 1, (out, err)
    assert "Traceback" not in err and "Traceback" not in out
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("dvm-run: error: "), err
    for word in words:
        assert word in lines[0], (word, err)


# --------------------------------------------------------------------------
# Good runs
# --------------------------------------------------------------------------


def test_random_inputs_by_shapes(files: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, files["layernorm"], "--shapes", "4x8", "8", "8")
    assert code == 0, err
    assert out.startswith("result 0: (4, 8) float32\n")
    rows = [line for line in out.splitlines()[1:] if line.strip()]
    assert len(rows) == 4
    values = np.array([float(v) for row in rows for v in row.strip(" []").split()])
    assert values.shape == (32,) and np.all(np.isfinite(values))
    assert err == ""


def test_random_inputs_are_reproducible_by_seed(
    files: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    outputs = [
        run(capsys, files["layernorm"], "--shapes", "3x5", "5", "5", "--seed", seed)[1]
        for seed in ("1", "1", "2")
    ]
    assert outputs[0] == outputs[1] != outputs[2]


def test_inputs_from_npy_files(
    files: dict[str, str], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 6)).astype(np.float32)
    w, b = np.full(6, 2, np.float32), np.full(6, 0.5, np.float32)
    names = []
    for name, array in (("x", x), ("w", w), ("b", b)):
        np.save(tmp_path / f"{name}.npy", array)
        names.append(str(tmp_path / f"{name}.npy"))
    prefix = str(tmp_path / "out")
    code, out, err = run(capsys, files["layernorm"], "--inputs", *names, "--save", prefix)
    assert code == 0, err
    assert f"result 0: (5, 6) float32 -> {prefix}0.npy" in out
    got = np.load(prefix + "0.npy")
    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    want = (x - mean) / np.sqrt(var + np.float32(1e-5)) * w + b
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_index_argument(
    files: dict[str, str], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    x = np.ones((2, 3), np.float32)
    w = np.eye(3, dtype=np.float32)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "w.npy", w)
    inputs = [str(tmp_path / "x.npy"), str(tmp_path / "w.npy")]
    results = {}
    for n in (0, 1, 3):
        prefix = str(tmp_path / f"n{n}_")
        code, _, err = run(
            capsys, files["loop"], "--inputs", *inputs, "--index", str(n), "--save", prefix
        )
        assert code == 0, err
        results[n] = np.load(prefix + "0.npy")
    np.testing.assert_array_equal(results[0], x)  # no iteration
    expected = x
    for _ in range(3):
        expected = expected + np.float32(0.5) * np.tanh(expected @ w)
    np.testing.assert_allclose(results[3], expected, rtol=1e-5)
    assert not np.allclose(results[1], results[3])


def test_check_says_ok(files: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, files["stats"], "--shapes", "7x0", "5", "--check")
    assert code == 0, err
    checks = [line for line in out.splitlines() if line.startswith("check result")]
    assert len(checks) == 3
    assert all(": ok (max |difference|" in line for line in checks)


def test_check_with_index_on_the_other_device(
    files: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(
        capsys,
        files["loop"],
        "--shapes",
        "13x9",
        "9x9",
        "--index",
        "2",
        "--check",
        "--device",
        "ascend910b",
    )
    assert code == 0, err
    assert "check result 0: ok" in out


def test_stats_print_instruction_counts(
    files: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, files["layernorm"], "--shapes", "16x32", "32", "32", "--stats")
    assert code == 0, err
    lines = [line for line in out.splitlines() if line.startswith("@")]
    assert lines, out
    for line in lines:
        count = int(line.split(": ")[1].split(" instructions")[0])
        assert count > 0
        for what in ("load ", "tiles on", "read ", "wrote ", "peak local", " ms"):
            assert what in line, line


def test_trace_writes_chrome_json(
    files: dict[str, str], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    trace = tmp_path / "trace.json"
    code, out, err = run(
        capsys, files["layernorm"], "--shapes", "64x40", "40", "40", "--trace", str(trace)
    )
    assert code == 0, err
    assert f"trace -> {trace}" in out
    events = json.loads(trace.read_text())["traceEvents"]
    assert events, "no events"
    for event in events:
        assert event["ph"] == "X" and event["dur"] >= 0 and event["ts"] >= 0
        assert event["name"].startswith("layernorm")
        assert isinstance(event["tid"], int)


def test_entry_chooses_a_function(
    files: dict[str, str], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    np.save(tmp_path / "x.npy", np.array([-1.5, 2.0], np.float32))
    x = str(tmp_path / "x.npy")
    for entry, expected in (("neg", [1.5, -2.0]), ("@abs", [1.5, 2.0])):
        prefix = str(tmp_path / entry.strip("@"))
        code, _, err = run(capsys, files["two"], "--entry", entry, "--inputs", x, "--save", prefix)
        assert code == 0, err
        np.testing.assert_array_equal(np.load(prefix + "0.npy"), expected)


def test_scalar_shape(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "scalar.mlir"
    path.write_text(
        "func.func @f(%x: tensor<f32>, %y: tensor<?xf32>) -> tensor<?xf32> {\n"
        "  %z = tensor.add %x, %y : (tensor<f32>, tensor<?xf32>) -> tensor<?xf32>\n"
        "  func.return %z : tensor<?xf32>\n}\n"
    )
    code, out, err = run(capsys, str(path), "--shapes", "scalar", "3", "--check")
    assert code == 0, err
    assert "result 0: (3,) float32" in out and "check result 0: ok" in out


# --------------------------------------------------------------------------
# Bad input: exit 1, one line, no traceback
# --------------------------------------------------------------------------


def test_wrong_number_of_shapes(files: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, files["layernorm"], "--shapes", "4x8", "8")
    assert_clean_error(code, out, err, "3 tensors", "got 2")


def test_wrong_number_of_inputs(
    files: dict[str, str], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    np.save(tmp_path / "x.npy", np.ones((2, 2), np.float32))
    code, out, err = run(capsys, files["layernorm"], "--inputs", str(tmp_path / "x.npy"))
    assert_clean_error(code, out, err, "3 tensors", "got 1")


@pytest.mark.parametrize("shape", ["4xq", "4x-8", "4x", "x", "4.5"])
def test_bad_shape_text(
    shape: str, files: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, files["layernorm"], "--shapes", shape, "8", "8")
    assert_clean_error(code, out, err, repr(shape))


def test_missing_npy_file(
    files: dict[str, str], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    missing = str(tmp_path / "nope.npy")
    code, out, err = run(capsys, files["layernorm"], "--inputs", missing, missing, missing)
    assert_clean_error(code, out, err, "nope.npy")


def test_corrupt_npy_file(
    files: dict[str, str], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bad = tmp_path / "bad.npy"
    bad.write_bytes(b"\x93NUMPY\x01\x00garbage that is not a header")
    text = tmp_path / "text.npy"
    text.write_text("1 2 3\n")
    for path in (bad, text):
        code, out, err = run(
            capsys, files["layernorm"], "--inputs", str(path), str(path), str(path)
        )
        assert_clean_error(code, out, err, path.name)


def test_guard_failure(files: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, files["layernorm"], "--shapes", "4x8", "5", "8")
    assert_clean_error(code, out, err, "%x", "%w", "8", "5")


def test_wrong_dtype_from_file(
    files: dict[str, str], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    np.save(tmp_path / "x.npy", np.ones((2, 3), np.float64))
    np.save(tmp_path / "w.npy", np.ones(3, np.float32))
    w = str(tmp_path / "w.npy")
    code, out, err = run(capsys, files["layernorm"], "--inputs", str(tmp_path / "x.npy"), w, w)
    assert_clean_error(code, out, err, "%x", "float64")


def test_missing_index(files: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, files["loop"], "--shapes", "2x3", "3x3")
    assert_clean_error(code, out, err, "--index")


def test_too_many_index_values(files: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, files["loop"], "--shapes", "2x3", "3x3", "--index", "2", "5")
    assert_clean_error(code, out, err, "1 index arguments", "got 2 --index values")


@pytest.mark.parametrize(
    ("shape", "says"),
    [  # 256 TiB of float64 normals, beyond the address space; then beyond numpy
        ("16777216x2097152", "Unable to allocate"),
        ("99999999999x99999999999", "too big"),
        ("4x99999999999999999999", "dimension"),
    ],
)
def test_random_input_too_large_for_memory(
    shape: str, says: str, files: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, files["layernorm"], "--shapes", shape, "8", "8")
    assert_clean_error(code, out, err, f"random tensor<?x?xf32> of shape {shape}", says)


def test_missing_program_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, err = run(capsys, str(tmp_path / "absent.mlir"), "--shapes", "2")
    assert_clean_error(code, out, err, "absent.mlir")


BAD_PROGRAMS = {
    "does not parse": (
        "func.func @f(%x: tensor<?xf32>) {\n  %y = tensor.nope %x\n}\n",
        ":2:20: Operation tensor.nope is not registered",
    ),
    "does not verify": (
        "func.func @f(%x: tensor<?xf32>) -> tensor<?xf32> {\n"
        "  %y = tensor.reduce_sum %x {axes = [1]} : tensor<?xf32> -> tensor<?xf32>\n"
        "  func.return %y : tensor<?xf32>\n}\n",
        ":2:3: 'tensor.reduce_sum' axis 1 is out of range",
    ),
}


@pytest.mark.parametrize("kind", list(BAD_PROGRAMS))
def test_bad_program_is_located(
    kind: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """`dvm-run: error: file:line:col: message`, then the source line."""
    text, message = BAD_PROGRAMS[kind]
    path = tmp_path / "bad.mlir"
    path.write_text(text)
    code, out, err = run(capsys, str(path), "--shapes", "2")
    assert code == 1 and out == "" and "Traceback" not in err
    assert err.startswith(f"dvm-run: error: {path}{message}"), err
    assert text.splitlines()[1] in err  # the source line


def test_unknown_device_and_entry(
    files: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, files["layernorm"], "--shapes", "4x8", "8", "8", "--device", "tpu")
    assert_clean_error(code, out, err, "tpu")
    code, out, err = run(capsys, files["two"], "--shapes", "3")
    assert_clean_error(code, out, err, "@neg", "@abs")


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("--seed", "-1", "-1: a seed must be >= 0"),
        ("--seed", "x", "'x' is not an integer"),
        ("--timeout", "-1", "-1: the timeout must be a positive number of seconds"),
        ("--timeout", "nan", "nan: the timeout must be a positive number of seconds"),
    ],
)
def test_bad_seed_or_timeout_names_the_flag(
    flag: str, value: str, message: str, files: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    """Rejected as they are read, not by numpy's generator or the process group later."""
    code = dvm_run.main([files["layernorm"], "--shapes", "2x8", "8", "8", flag, value])
    assert code == 1
    assert f"argument {flag}: {message}" in capsys.readouterr().err


def test_usage_error_exits_1(files: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    code = dvm_run.main([files["layernorm"], "--shapes", "2", "--inputs", "a.npy"])
    assert code == 1
    assert "not allowed with" in capsys.readouterr().err


def test_console_script(files: dict[str, str], tmp_path: Path) -> None:
    """The installed `dvm-run`: a guard failure is one line on stderr, exit 1."""
    script = Path(sys.executable).parent / "dvm-run"
    result = subprocess.run(
        [str(script), files["layernorm"], "--shapes", "4x8", "5", "8"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1
    assert result.stdout == ""
    assert_clean_error(result.returncode, result.stdout, result.stderr, "%w", "5")
