"""Imports run one way: the connection layer sits below the agent and the lab, which sit below live runs.

Read from the source with `ast` (every import, including those inside functions and under TYPE_CHECKING), not by
importing, so a lazy import that runs back up is caught as well as a top-level one.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import REPO

PACKAGE = REPO / "ghost_eval"

FORBIDDEN = {
    "connect": ("agent", "lab", "live", "trials", "judge"),
    "agent": ("live",),
    "lab": ("live",),
}
"""Subpackage → the subpackages it must never import."""


def imported_modules(source: str, module: str, *, is_package: bool = False) -> set[str]:
    """Every module the source of `module` imports, relative imports resolved to absolute names."""
    package = module.split(".") if is_package else module.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            imported = ".".join([*base, *([node.module] if node.module else [])])
            found.add(imported)
            found.update(f"{imported}.{alias.name}" for alias in node.names)
    return found


def _imports_of(path: Path) -> set[str]:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    is_package = parts[-1] == "__init__"
    return imported_modules(path.read_text(), ".".join(parts[:-1] if is_package else parts), is_package=is_package)


def upward_imports(layer: str) -> list[str]:
    """`file: module` for each import from `layer` into a subpackage it must not import."""
    banned = tuple(f"ghost_eval.{name}" for name in FORBIDDEN[layer])
    return [
        f"{path.relative_to(REPO)}: {module}"
        for path in sorted((PACKAGE / layer).rglob("*.py"))
        for module in sorted(_imports_of(path))
        if module in banned or module.startswith(tuple(f"{b}." for b in banned))
    ]


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_no_import_runs_back_up(layer: str) -> None:
    assert (PACKAGE / layer).is_dir()
    assert upward_imports(layer) == []


def test_the_check_sees_relative_lazy_and_from_package_imports() -> None:
    """An import written another way must not slip past; a check that can never fail is no check."""
    source = "def f():\n    from ..live import run\n    from ghost_eval import judge\n    import ghost_eval.trials.trial\n"
    found = imported_modules(source, "ghost_eval.connect.probe")
    assert {"ghost_eval.live.run", "ghost_eval.judge", "ghost_eval.trials.trial"} <= found
    assert imported_modules("from . import ssh\n", "ghost_eval.connect", is_package=True) >= {"ghost_eval.connect.ssh"}
