"""Integer expressions as generated Python, kept as plain data (`Code`).

`dvm.codegen` prints the shape, guard and size expressions of a program (sympy at
compile time) as Python text: `Code` is that text, the temporaries the expressions share
and each expression's value. This module turns `Code` into functions without sympy, so
that the compile cache can keep it and a cache hit needs neither sympy nor xDSL. Text
read from the cache is untrusted: `checked_code` accepts only integer arithmetic on the
given names (a whitelist of Python syntax), so an entry can never run other code.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from dvm.vm.generated import define

Code = tuple[list[tuple[str, str]], list[str]]
"""(temporaries `_t0`, ... each with its expression's text, in order; each expression's
text): integer expressions of some names, as Python."""

DYNAMIC = -1
"""A dynamic dim in a declared shape (MLIR's `?`)."""

_NODES = (
    ast.Expression,
    ast.BinOp,
    ast.UnaryOp,
    ast.BoolOp,
    ast.Compare,
    ast.IfExp,
    ast.Call,
    ast.Name,
    ast.Load,
    ast.Constant,
    ast.Attribute,
    ast.operator,
    ast.unaryop,
    ast.boolop,
    ast.cmpop,
)
"""The Python syntax an expression's text may use: arithmetic, comparisons, calls."""
_CALLS = {"int", "max", "min", "abs"}
_MATH = {"floor", "ceil"}
_KNOWN_NAMES = _CALLS | _MATH | {"math"}
_NAME = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")


class CodeError(ValueError):
    """Expression text that is not the integer arithmetic `dvm.codegen` prints."""


def checked_code(code: Any, names: Sequence[str]) -> Code:
    """`code` (as read from JSON) once every text in it is integer arithmetic on
    `names` and the temporaries defined before it (a CodeError otherwise)."""
    if not (isinstance(code, list | tuple) and len(code) == 2):
        raise CodeError("expression code is not [temporaries, values]")
    temps, values = code
    if not isinstance(temps, list | tuple) or not isinstance(values, list | tuple):
        raise CodeError("expression code is not [temporaries, values]")
    known = set(names)
    checked_temps: list[tuple[str, str]] = []
    for entry in temps:
        if not (isinstance(entry, list | tuple) and len(entry) == 2):
            raise CodeError("a temporary is not [name, text]")
        name, text = entry
        if not (isinstance(name, str) and name.startswith("_t") and name[2:].isdigit()):
            raise CodeError(f"{name!r} is no temporary's name")
        checked_temps.append((name, checked_expression(text, known)))
        known.add(name)
    return checked_temps, [checked_expression(text, known) for text in values]


GENERATED_KEPT = 1 << 14
"""The most texts `generated` remembers (it starts again when full)."""
_generated: set[str] = set()


def generated(texts: Sequence[str]) -> None:
    """Remember `texts` as this process's own, written by `dvm.codegen`: a compile
    checks the code it has just generated as it would code read from the cache, and
    parsing each text again costs Python's parser tens of microseconds."""
    if len(_generated) + len(texts) > GENERATED_KEPT:
        _generated.clear()
    _generated.update(texts)


def checked_expression(text: Any, names: set[str]) -> str:
    """`text`, once it is an expression of `names` made of `_NODES` only. A text this
    process generated is such an expression: only its names are checked."""
    if not isinstance(text, str):
        raise CodeError("an expression is no text")
    if text in _generated and set(_NAME.findall(text)) <= names | _KNOWN_NAMES:
        return text
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        raise CodeError(f"{text!r} does not parse") from None
    for node in ast.walk(tree):
        if not isinstance(node, _NODES):
            raise CodeError(f"{type(node).__name__} in {text!r}")
        if isinstance(node, ast.Constant) and type(node.value) not in (int, float, bool):
            raise CodeError(f"constant {node.value!r} in {text!r}")
        if isinstance(node, ast.Name) and node.id not in names | _CALLS | {"math"}:
            raise CodeError(f"unknown name {node.id!r} in {text!r}")
        if isinstance(node, ast.Attribute) and not (
            isinstance(node.value, ast.Name) and node.value.id == "math" and node.attr in _MATH
        ):
            raise CodeError(f"attribute {node.attr!r} in {text!r}")
        if isinstance(node, ast.Call) and (node.keywords or not _allowed_callee(node.func)):
            raise CodeError(f"call of {ast.unparse(node.func)} in {text!r}")
    return text


def _allowed_callee(func: ast.expr) -> bool:
    return (isinstance(func, ast.Name) and func.id in _CALLS) or isinstance(func, ast.Attribute)


def code_lines(code: Code) -> tuple[list[str], list[str]]:
    """Lines computing the temporaries of `code`, and each value's text."""
    temps, values = code
    return [f"    {name} = {text}\n" for name, text in temps], values


def function_of_code(
    code: Code, names: Sequence[str], origin: str = "expressions"
) -> Callable[..., tuple[int, ...]]:
    """A plain Python function of the named ints that returns the values of `code`;
    `origin` names it in tracebacks (`vm.generated.define`)."""
    lines, values = code_lines(code)
    body = "".join(f"{v}, " for v in values)
    source = f"def f({', '.join(names)}):\n{''.join(lines)}    return ({body})\n"
    namespace: dict[str, Any] = {"math": math}
    return define(source, "f", namespace, origin)


Sizes = Callable[
    [Sequence[np.ndarray[Any, Any]], dict[str, int]],
    tuple[list[tuple[tuple[int, ...], Any]], list[tuple[int, ...]], list[int]],
]
"""(inputs, the call's symbol values) -> the outputs' (shape, dtype), every argument's
shape (inputs, then outputs) and the params' values."""


def sizes_of_code(
    ranks: Sequence[int],
    names: Sequence[str],
    code: Code,
    outputs: Sequence[tuple[int, np.dtype[Any]]],
    params: Sequence[str],
    origin: str = "sizes",
) -> Sizes:
    """A kernel's `Sizes`: the input dims as locals `di_a`, `names` (params and other
    symbols) read from the call, then the output dims, `code`'s values in order
    (`outputs` gives each output's rank and dtype)."""
    lines = ["def sizes(_I, _Y):\n"]
    for i, rank in enumerate(ranks):
        dims = "".join(f"d{i}_{a}, " for a in range(rank))
        lines.append(f"    ({dims}) = _S{i} = _I[{i}].shape\n")
    lines += [f"    {name} = _Y[{name!r}]\n" for name in names]
    computed, values = code_lines(code)
    lines += computed
    shapes, k = [f"_S{i}" for i in range(len(ranks))], 0
    for j, (rank, _) in enumerate(outputs):
        lines.append(f"    _O{j} = ({''.join(f'{v}, ' for v in values[k : k + rank])})\n")
        shapes.append(f"_O{j}")
        k += rank
    outs = ", ".join(f"(_O{j}, _dt{j})" for j in range(len(outputs)))
    lines.append(f"    return [{outs}], [{', '.join(shapes)}], [{', '.join(params)}]\n")
    namespace: dict[str, Any] = {"math": math}
    namespace |= {f"_dt{j}": dtype for j, (_, dtype) in enumerate(outputs)}
    return define("".join(lines), "sizes", namespace, origin)


INDEX_MIN, INDEX_MAX = -(1 << 63), (1 << 63) - 1
"""The values an `index` argument may take (int64's)."""


def binder_source(
    arguments: Sequence[tuple[np.dtype[Any] | None, tuple[int, ...], bool]],
    symbols: Sequence[tuple[int, int, str]],
    guard_names: Sequence[str],
    guards: int,
) -> str:
    """Python source of a program's binder: `bind(args)` returns the symbol values of the
    generic variant, or None when anything is not as the fast path expects (a wrong
    array, a guard that fails, an index that is no int in range), for the full checks to
    say what and where, or to fix dims to 1. Made only from argument positions, axes and
    static dims (`arguments`: each one's dtype, None for a scalar, declared shape and
    whether it is an `index`)."""
    lines = ["def bind(args):", f"    if len(args) != {len(arguments)}: return None"]
    names = [f"a{i}" for i in range(len(arguments))]
    lines.append(f"    [{', '.join(names)}] = args")
    for i, (dtype, declared, index) in enumerate(arguments):
        if index:  # a plain int in range, in plain-int comparisons (a bool is no int here)
            in_range = f"{INDEX_MIN} <= a{i} <= {INDEX_MAX}"
            lines.append(f"    if type(a{i}) is not int or not {in_range}: return None")
            continue
        if dtype is None:  # another scalar: converted by the full check, which names a bad one
            lines.append(f"    _check({i}, a{i})")
            continue
        # numpy's built-in dtypes are singletons: any other equal one takes the full check
        wrong = f"type(a{i}) is not _ndarray or a{i}.dtype is not _dt{i}"
        if DYNAMIC not in declared:  # a static shape: one tuple comparison
            lines.append(f"    if {wrong} or a{i}.shape != {declared!r}: return None")
            continue
        lines.append(f"    if {wrong}: return None")
        lines.append(f"    d{i} = a{i}.shape")
        tests = [f"len(d{i}) != {len(declared)}"]
        tests += [f"d{i}[{k}] != {n}" for k, n in enumerate(declared) if n != DYNAMIC]
        lines.append(f"    if {' or '.join(tests)}: return None")
    values = {name: f"d{i}[{a}]" for i, a, name in symbols}  # the last occurrence, as `bind`
    if guards:  # each guard's two sides, from the symbols in `guard_names`' order
        lines.append(f"    g = _guards({', '.join(values[n] for n in guard_names)})")
        unequal = " or ".join(f"g[{2 * k}] != g[{2 * k + 1}]" for k in range(guards))
        lines.append(f"    if {unequal}: return None")
    found = ", ".join(f"{name!r}: {v}" for name, v in values.items())
    lines.append(f"    return {{{found}}}")
    return "\n".join(lines) + "\n"
