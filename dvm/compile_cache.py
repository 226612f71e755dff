"""The persistent compile cache: what `dvm-pipeline` made of a program, kept on disk.

A compile spends most of its time in the pipeline. The cache keeps the pipeline's
result in one file per program variant: the variant as plain data (`dvm.host_export`:
its arguments, symbols, guards, kernels' declarations and host steps, expressions as
generated integer arithmetic) and the kernels as a `.dvmb` module file. A later compile
of the same program, in this process or another, builds the program from them with
numpy alone: no parse, no pass, no import of xDSL or sympy. A variant whose host
function has no plain form is kept as its lowered `.mlir` text instead (its bytecode
programs reduced to their argument declarations, each op's source location beside it),
which a hit parses.

An entry is named by its key: a hash of the program (its text and file name, or the
printed module), the entry function, the argument dims and index values fixed, the device spec and
the compiler's version (a hash of the names, sizes and modification times of the
compiler's source files, as Python's bytecode cache tells a changed source, so an entry
of another version of dvm is not read). A file is untrusted input: it holds data and bytecode,
never code, and is read as the compiler reads any program (its header and checksum
checked, every expression checked to be integer arithmetic, every step and slot checked,
every kernel decoded and validated by the VM's loader and checked against the arguments
declared for it, the host steps validated as a whole by `dvm.host_validate`: nothing is
read before it is written, every value has the type its reader takes). An entry that
fails any of that (truncated, corrupt, of an older format, a kernel the VM refuses,
steps that read what nothing wrote) is reported with a `CacheWarning` and rebuilt.
Entries are written to a temporary file then renamed (`os.replace`), so concurrent
processes read whole entries only.

What the checks cannot tell is a wrong number: an entry whose constants, expressions or
kernel instructions were rewritten and signed again (the checksum tells damage, not
intent) loads and computes what it says. It can run nothing but the VM's instructions
and integer arithmetic, nor fail a call otherwise than a program can; the folder must be
one only its user writes, as for any cache of compiled code.

Where: `$DVM_CACHE_DIR`, else `$XDG_CACHE_HOME/dvm`, else `~/.cache/dvm`.
`DVM_CACHE=off` (or `dvm.compile(..., cache=False)`, `dvm-run --no-cache`) turns it off.
Its size is bounded: at most once an hour, a store trims the folder to `$DVM_CACHE_MAX_MB`
(256 by default; 0: no bound), the entries least recently written or read first, and
deletes the temporary files of writers that died. Clearing it is deleting the folder.
See docs/performance.md, "The compile cache".
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import os
import warnings
from collections.abc import Callable, Iterable
from functools import cache
from typing import TYPE_CHECKING, Any, TypeVar

from dvm.vm import Program
from dvm.vm.binary import decode_module, encode_programs

if TYPE_CHECKING:
    from xdsl.dialects.builtin import LocationAttr, ModuleOp

try:  # CPython's own SHA-256, which `hashlib` falls back to: importing `hashlib` loads
    # OpenSSL, 2-3 ms of a fresh process's hit (the digests are the same)
    from _sha256 import sha256  # pyright: ignore[reportMissingImports] (no stub)
except ImportError:  # (named `_sha2` from Python 3.12 on)
    from hashlib import sha256

MAGIC = b"DVMC 2\n"
"""The first bytes of an entry: the format and its version."""
LOWERED_NAME = "<dvm compile cache>"
"""The file name the lowered text is parsed under (its ops then get the locations the
entry records for them)."""
COMPILER_PACKAGES = ("", "dialects", "passes", "lowering", "vm")
"""The packages of `dvm` whose source decides what a compile makes."""

DEFAULT_MAX_MB = 256
"""The folder's bound when `$DVM_CACHE_MAX_MB` does not give one."""
TRIM_MARKER = ".trimmed"
"""The file whose modification time says when the folder was last trimmed."""
TRIM_INTERVAL = 3600.0
"""Seconds between two trims of a folder (a trim lists and stats every entry)."""
TRIM_TO = 0.8
"""A trim leaves the folder at this fraction of its bound, so the next stores fit."""

T = TypeVar("T")


class CacheWarning(UserWarning):
    """A compile cache entry could not be used (it was rebuilt), or not written."""


def cache_directory(enabled: bool | None = None) -> str | None:
    """The folder of the compile cache, or None when it is off (`enabled` False, or
    None and `DVM_CACHE=off`). (Paths here are `os.path` strings: a hit imports no
    `pathlib`, which would cost it 3 ms.)"""
    if enabled is False or (enabled is None and os.environ.get("DVM_CACHE") == "off"):
        return None
    given = os.environ.get("DVM_CACHE_DIR")
    if given:
        return given
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "dvm")


@cache
def compiler_version() -> str:
    """A hash of the xDSL and sympy versions (which print and simplify the IR) and of
    the compiler's source files: it changes whenever the compiler may lower differently."""
    versions = [installed_version(name) for name in ("xdsl", "sympy")]
    digest = sha256(" ".join(versions).encode())
    for package in COMPILER_PACKAGES:
        name = f"dvm.{package}" if package else "dvm"
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.submodule_search_locations is not None
        digest.update(source_stamps(next(iter(spec.submodule_search_locations))))
    return digest.hexdigest()


def source_stamps(folder: str | os.PathLike[str]) -> bytes:
    """The name, size and modification time of each Python file in `folder` (as
    `glob("*.py")` finds them: hidden files are none): how Python's bytecode cache tells
    a changed source file, without reading the files (reading the compiler's hundred
    files costs a fresh process's hit milliseconds; `os.scandir`, a third of what
    `glob` and its `Path` objects cost)."""
    with os.scandir(folder) as entries:
        found = [(e.name, e.stat()) for e in entries if e.name.endswith(".py") and e.name[0] != "."]
    name = os.path.basename(folder)
    stamps = [f"{name}/{n} {st.st_size} {st.st_mtime_ns}\0" for n, st in sorted(found)]
    return "".join(stamps).encode()


def source_key(source: str | os.PathLike[str]) -> str | None:
    """How the cache keys a program given as text or a file: its text and the file name
    error messages quote (`dvm.ir.read_source`'s); None when the file cannot be read
    as UTF-8 text (its parse says why and where)."""
    if not isinstance(source, str) or ("\n" not in source and source.endswith(".mlir")):
        try:
            with open(source, "rb") as file:
                return f"{file.read().decode()}\0{source}"
        except (OSError, UnicodeDecodeError):
            return None
    return f"{source}\0<string>"


def installed_version(package: str) -> str:
    """The installed version of `package`, without importing it (nor the slow
    `importlib.metadata`): the name of its `.dist-info` folder beside it; else the
    modification time of its `__init__.py`, which changes as it is installed again."""
    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None:
        return "none"
    prefix = f"{package}-"
    for entry in sorted(os.listdir(os.path.dirname(os.path.dirname(spec.origin)))):
        if entry.startswith(prefix) and entry.endswith(".dist-info"):
            return entry[len(prefix) : -len(".dist-info")]
    return str(os.stat(spec.origin).st_mtime_ns)


def printed(module: ModuleOp) -> str:
    """`module` as text, each op with its source location (`loc(...)`)."""
    from xdsl.printer import Printer

    stream = io.StringIO()
    Printer(stream=stream, print_debuginfo=True).print_op(module)
    return stream.getvalue()


class CompileCache:
    """The cache's entries in one folder."""

    def __init__(self, directory: str):
        self.directory = directory

    @staticmethod
    def key(program: str, parts: Iterable[object]) -> str:
        """The name of the entry for `program`'s text and what else decides the result
        (entry function, dims and index values fixed, device spec)."""
        digest = sha256(compiler_version().encode())
        digest.update(json.dumps([str(p) for p in parts]).encode())
        digest.update(program.encode("utf-8", "surrogatepass"))
        return digest.hexdigest()

    def path(self, key: str) -> str:
        return os.path.join(self.directory, f"{key}.dvmc")

    def load(
        self,
        key: str,
        plain: Callable[[dict[str, Any], dict[str, Program]], T],
        lowered: Callable[[ModuleOp, dict[str, Program]], T],
    ) -> T | None:
        """What the entry `key` holds, built: `plain` applied to its plain form
        (`dvm.host_export`) and its kernels' programs, or for an entry of a program
        with no plain form, `lowered` applied to its lowered module and programs; None
        when there is no entry, or it is unusable (a `CacheWarning`)."""
        path = self.path(key)
        try:
            with open(path, "rb") as file:
                data = file.read()
        except FileNotFoundError:
            return None
        except OSError as e:
            warnings.warn(f"dvm compile cache: cannot read {path}: {e}", CacheWarning, 3)
            return None
        with contextlib.suppress(OSError):  # (a folder it may read but not write)
            os.utime(path)  # a hit marks the entry used, so that a trim keeps it
        try:
            header, text, binaries = entry_contents(data, key)
            programs = dict(decode_module(binaries))
            if header.get("plain"):
                form = json.loads(text)
                if not isinstance(form, dict):
                    raise ValueError("its plain form is no object")
                return plain(form, programs)
            return lowered(lowered_module(text, header.get("locations")), programs)
        except Exception as e:  # untrusted input: whatever fails, rebuild
            reason = f"{type(e).__name__}: {e}".splitlines()[0]
            warnings.warn(
                f"dvm compile cache: rebuilt {path}, which is unusable ({reason})",
                CacheWarning,
                3,
            )
            return None

    def store(
        self,
        key: str,
        plain: dict[str, Any] | None,
        lowered: ModuleOp,
        kernels: Iterable[tuple[str, Program]],
    ) -> None:
        """Write the entry `key` atomically: the variant's plain form, or when it has
        none the host function of `lowered` (its programs' declarations only: they are
        built, and `lowered` is changed so), then the kernels' programs as a module file.
        A failure (a read-only folder, a full disk) is reported as a `CacheWarning`, and
        the compile goes on."""
        header: dict[str, Any] = {"key": key, "plain": plain is not None}
        if plain is None:
            declarations_only(lowered)
            header["locations"] = [location_entry(op.location) for op in lowered.walk()]
            text = str(lowered).encode()
        else:
            text = json.dumps(plain, separators=(",", ":")).encode()
        body = text + encode_programs(list(kernels))
        header.update(text=len(text), sha256=sha256(body).hexdigest())
        data = MAGIC + json.dumps(header).encode() + b"\n" + body
        import tempfile  # (only a store needs it: a hit spares its import, shutil's, random's)

        try:
            os.makedirs(self.directory, exist_ok=True)
            handle, temporary = tempfile.mkstemp(".tmp", f"{key}.", self.directory)
            try:
                with os.fdopen(handle, "wb") as file:
                    file.write(data)
                os.replace(temporary, self.path(key))
            except BaseException:
                os.unlink(temporary)
                raise
            self.trim_if_due()
        except OSError as e:
            warnings.warn(f"dvm compile cache: cannot write {self.directory}: {e}", CacheWarning, 3)

    def trim_if_due(self) -> None:
        """Trim the folder if the last trim (by any process) is an hour old."""
        import time

        marker = os.path.join(self.directory, TRIM_MARKER)
        now = time.time()
        try:
            if now - os.stat(marker).st_mtime < TRIM_INTERVAL:
                return
        except FileNotFoundError:
            pass
        with open(marker, "a"):
            pass
        os.utime(marker, (now, now))
        self.trim(max_bytes(), now)

    def trim(self, limit: int, now: float) -> None:
        """Delete the entries least recently written or read until the folder holds
        `TRIM_TO` of `limit` bytes (when it holds more than `limit`; 0: no bound),
        and temporary files older than `TRIM_INTERVAL` (their writer died). Another
        process may delete the same files at once, or be reading one: it has it open,
        or it misses and compiles again."""
        entries: list[tuple[float, int, str]] = []
        with os.scandir(self.directory) as listing:
            for item in listing:
                stat = item.stat()
                if item.name.endswith(".dvmc"):
                    entries.append((stat.st_mtime, stat.st_size, item.path))
                elif item.name.endswith(".tmp") and now - stat.st_mtime > TRIM_INTERVAL:
                    delete(item.path)
        total = sum(size for _, size, _ in entries)
        if limit <= 0 or total <= limit:
            return
        for _, size, path in sorted(entries):
            if total <= limit * TRIM_TO:
                break
            delete(path)
            total -= size


def max_bytes() -> int:
    """The folder's bound, `$DVM_CACHE_MAX_MB` in bytes (a malformed value: a
    `CacheWarning`, and the default)."""
    given = os.environ.get("DVM_CACHE_MAX_MB", "")
    try:
        megabytes = float(given) if given else DEFAULT_MAX_MB
        if not megabytes >= 0:  # (also NaN)
            raise ValueError
    except ValueError:
        warnings.warn(
            f"dvm compile cache: DVM_CACHE_MAX_MB={given!r} is no number of megabytes "
            f"(>= 0); the bound is {DEFAULT_MAX_MB}",
            CacheWarning,
            4,
        )
        megabytes = DEFAULT_MAX_MB
    return int(min(megabytes, 2**40) * 2**20)


def delete(path: str) -> None:
    """Delete `path` unless another process did."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def declarations_only(module: ModuleOp) -> ModuleOp:
    """`module` with its bytecode programs emptied but for their arguments' declarations
    (what `launches.Kernel` reads beside the program)."""
    from dvm.dialects import bytecode as bc

    for program in module.ops:
        if isinstance(program, bc.ProgramOp):
            for op in list(program.body.block.ops):
                if not isinstance(op, bc.ArgOp):
                    op.detach()
                    op.erase()
    return module


def entry_contents(data: bytes, key: str) -> tuple[dict[str, Any], str, bytes]:
    """The header, the text (plain form or lowered module) and the module file an entry
    holds, once its header says it is whole and the entry of `key` (a ValueError
    otherwise)."""
    if not data.startswith(MAGIC):
        raise ValueError("not a dvm compile cache entry of this format")
    header_line, newline, body = data[len(MAGIC) :].partition(b"\n")
    if not newline:
        raise ValueError("truncated header")
    header = json.loads(header_line)
    if not isinstance(header, dict) or header.get("key") != key:
        raise ValueError("the entry of another program, device or compiler version")
    if header.get("sha256") != sha256(body).hexdigest():
        raise ValueError("its contents do not match their checksum (truncated or corrupt)")
    split = header.get("text")
    if not isinstance(split, int) or not 0 <= split <= len(body):
        raise ValueError("no length of its text")
    return header, body[:split].decode(), body[split:]


def location_entry(location: LocationAttr) -> list[Any] | None:
    """How an entry records an op's source location: [file, line, column], or None."""
    from xdsl.dialects.builtin import FileLineColLoc

    if isinstance(location, FileLineColLoc):
        return [location.filename.data, location.line.data, location.column.data]
    return None


def lowered_module(text: str, locations: Any) -> ModuleOp:
    """The lowered module of an entry's text, parsed and verified, each op at the source
    location recorded for it (the locations error messages name)."""
    from xdsl.dialects.builtin import FileLineColLoc, IntAttr, StringAttr, UnknownLoc

    from dvm.ir import parse

    if not isinstance(locations, list):
        raise ValueError("no locations of its ops")
    module = parse(text, LOWERED_NAME)
    ops = list(module.walk())
    if len(ops) != len(locations):
        raise ValueError(f"{len(locations)} locations for {len(ops)} ops")
    for op, entry in zip(ops, locations, strict=True):
        if entry is None:
            op.location = UnknownLoc()
        else:
            filename, line, column = entry
            op.location = FileLineColLoc(StringAttr(filename), IntAttr(line), IntAttr(column))
    return module
