"""No test edits `sys.path`: `bench` is a package the test configuration makes importable (`pythonpath = ["."]`),
so tests import its helpers by name (`from bench.synthetic_store import build_store`). A test that needs a module of
its own on the path for the duration (a team's checks) uses pytest's `monkeypatch.syspath_prepend`, which is undone."""

from __future__ import annotations

import ast

from tests.conftest import REPO


def sys_path_edits(source: str) -> list[int]:
    """Lines that touch `sys.path` itself (insert, append, remove, assign, …)."""
    return sorted(
        node.lineno
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Attribute) and node.attr == "path" and isinstance(node.value, ast.Name) and node.value.id == "sys"
    )


def test_no_test_edits_sys_path() -> None:
    found = [
        f"{path.relative_to(REPO)}:{line}"
        for path in sorted((REPO / "tests").rglob("*.py"))
        for line in sys_path_edits(path.read_text(encoding="utf-8"))
    ]
    assert found == []


def test_the_scan_sees_an_edit() -> None:
    assert sys_path_edits("import sys\nsys.path.insert(0, 'bench')\nfrom x import y\n") == [2]
