"""The layout docs/architecture.md describes: packages that import only downward,
modules without import cycles, and every module named in the "Layout" section."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("vm", "dialects", "passes", "lowering", "dvm")
"""Bottom to top: a package may import the ones before it, never one after."""
BOTTOM = {"dvm.errors", "dvm.numerics"}
"""Modules of `dvm` that import nothing of the project, so any package may use them."""


def module_files() -> dict[str, Path]:
    """Every product module by its import name (`dialects/tile.py` is `dvm.dialects.tile`)."""
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if package == "dvm" and parts[1] == "examples":
                continue
            if package != "dvm":
                parts.insert(0, "dvm")
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


MODULES = module_files()


@cache
def imports(module: str) -> frozenset[str]:
    """The project modules `module` imports anywhere in its text (inside functions too)."""
    found = set()
    for node in ast.walk(ast.parse(MODULES[module].read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"{node.module}.{alias.name}" for alias in node.names]
            submodules = [n for n in names if n in MODULES]
            found |= set(submodules) if submodules else {node.module}
    return frozenset(m for m in found if m in MODULES and m != module)


def package_rank(module: str) -> int:
    if module in BOTTOM:
        return -1
    parts = module.split(".")
    name = parts[1] if len(parts) > 1 and parts[1] in PACKAGES else "dvm"
    return PACKAGES.index(name)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_a_module_imports_no_package_above_its_own(module: str) -> None:
    upward = sorted(m for m in imports(module) if package_rank(m) > package_rank(module))
    assert not upward, f"{module} imports {upward}, above its package"


def test_no_import_cycle() -> None:
    graph = {m: imports(m) for m in MODULES}
    done: set[str] = set()

    def visit(module: str, path: list[str]) -> None:
        if module in path:
            cycle = [*path[path.index(module) :], module]
            pytest.fail(f"import cycle: {' -> '.join(cycle)}")
        if module in done:
            return
        for target in sorted(graph[module]):
            visit(target, [*path, module])
        done.add(module)

    for module in sorted(graph):
        visit(module, [])


def test_the_layout_section_names_every_module() -> None:
    text = (ROOT / "docs" / "architecture.md").read_text()
    section = text[text.index("## Layout, file by file") :]
    missing = [
        str(path.relative_to(ROOT))
        for path in MODULES.values()
        if f"`{path.relative_to(ROOT)}`" not in section
        and path.stat().st_size  # (an empty `__init__.py` has nothing to say)
    ]
    assert not missing, f"docs/architecture.md's layout does not name {missing}"
