"""Settings in one place: the environment is read where a process starts, into `ghost_eval.base.settings.Settings`,
and passed in; the README's table of variables is that object's.

Read from the source with `ast`, like `tests/test_layers.py`: a module outside the short lists below that reads
`os.environ` (or calls `read_settings()`) fails here, naming the file and line.
"""

from __future__ import annotations

import ast
from pathlib import Path

from ghost_eval.base.settings import DEFAULTS, Settings, env_names, settings_table
from tests.conftest import REPO

READER = "ghost_eval/base/settings.py"
"""The one module that reads the environment into settings."""

EDGES = {
    "ghost_eval/cli/__init__.py": "the `ghost-eval` command's main",
    "ghost_eval/agent/cli.py": "`python -m ghost_eval.agent`'s main",
    "ghost_eval/promptfoo/grading.py": "the assertions' scoring path, read only when the provider attached no grades "
    "(the attached-grades path imports no pydantic)",
    "providers/": "Promptfoo's providers",
    "assertions/": "Promptfoo's assertions",
    "suites/": "Promptfoo's test generator",
}
"""Where `read_settings()` may be called: where a process (or a Promptfoo call into Python) starts."""

CHILD_ENVIRONMENTS = {
    "ghost_eval/lab/azcli.py": "builds the az CLI's environment from this process's, passed on with the lab's own",
    "ghost_eval/live/run.py": "builds an external agent's environment from this process's, plus its target file",
    "ghost_eval/live/original.py": "runs the original's scripts with this process's environment minus PYTHONPATH",
}
"""Modules that copy the whole environment into a child process's: `{**os.environ}`, `dict(os.environ)` or
`os.environ.items()` only, never one variable read."""

DAEMON = {
    "ghost_eval/lab/reconciler.py": "a lab daemon's main loop reads the ready file its unit manager set for it "
    "(`units.READY_ENV`), a handshake with the process that started it, not a setting",
}

_WHOLE_COPY = "whole copy"


def _env_uses(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, kind) of each use of `os.environ`/`os.getenv`: a whole copy or a read of something in it."""
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    uses = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "os":
            uses += [(node.lineno, f"from os import {a.name}") for a in node.names if a.name in {"environ", "getenv"}]
        if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "os"):
            continue
        if node.attr in {"getenv", "getenvb", "environb", "putenv", "unsetenv"}:
            uses.append((node.lineno, f"os.{node.attr}"))
        elif node.attr == "environ":
            parent = parents[node]
            whole = (
                (isinstance(parent, ast.Dict) and None in parent.keys and node in parent.values)  # {**os.environ}
                or (isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.func.id == "dict")
                or (isinstance(parent, ast.Attribute) and parent.attr in {"items", "copy"})
            )
            uses.append((node.lineno, _WHOLE_COPY if whole else "os.environ read"))
    return sorted(uses)


def _python_files(*folders: str) -> list[Path]:
    return sorted(p for folder in folders for p in (REPO / folder).rglob("*.py"))


def _name(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


def test_only_the_settings_module_reads_the_environment() -> None:
    wrong = []
    for path in _python_files("ghost_eval", "providers", "assertions", "suites"):
        name = _name(path)
        if name == READER or name in DAEMON:
            continue
        for line, kind in _env_uses(ast.parse(path.read_text(encoding="utf-8"))):
            if kind == _WHOLE_COPY and name in CHILD_ENVIRONMENTS:
                continue
            wrong.append(f"{name}:{line}: {kind}")
    assert wrong == [], "read the environment through ghost_eval.base.settings, passed in from the edge"


def test_settings_are_read_at_the_edge_only() -> None:
    callers = []
    for path in _python_files("ghost_eval", "providers", "assertions", "suites"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            called = node.func if isinstance(node, ast.Call) else None
            name = called.id if isinstance(called, ast.Name) else called.attr if isinstance(called, ast.Attribute) else None
            if name == "read_settings":
                callers.append(_name(path))
    outside = sorted({c for c in callers if c != READER and not c.startswith(tuple(EDGES))})
    assert outside == []
    assert {"ghost_eval/cli/__init__.py", "ghost_eval/agent/cli.py", "providers/replay.py"} <= set(callers)


def test_the_allowlists_name_files_that_exist_and_need_it() -> None:
    """An allowance left behind after its module stopped reading the environment is removed, not kept."""
    for name in (*CHILD_ENVIRONMENTS, *DAEMON):
        assert _env_uses(ast.parse((REPO / name).read_text(encoding="utf-8"))), name


def test_the_scan_catches_a_read_and_lets_a_copy_pass() -> None:
    code = "import os\na = os.environ.get('X')\nb = os.environ['Y']\nc = {**os.environ, 'Z': '1'}\nd = dict(os.environ)\n"
    assert _env_uses(ast.parse(code)) == [
        (2, "os.environ read"),
        (3, "os.environ read"),
        (4, _WHOLE_COPY),
        (5, _WHOLE_COPY),
    ]


def test_readme_lists_every_variable_as_the_settings_do() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert settings_table() in readme, "README's Settings table is stale: paste `python -m ghost_eval.base.settings`"
    for field in Settings.model_fields:
        for name in env_names(field):
            assert f"`{name}`" in settings_table()


def test_empty_is_unset_and_the_gemini_key_falls_back() -> None:
    settings = Settings.from_environ(
        {"GHOST_EVAL_STORE": "", "GEMINI_API_KEY": "", "GOOGLE_API_KEY": "key-from-google", "XDG_CACHE_HOME": "/c", "HOME": "/h"}
    )
    assert settings.store is None
    assert settings.gemini_api_key is not None and settings.gemini_api_key.get_secret_value() == "key-from-google"
    assert settings.cache_dir == Path("/c/ghost-eval")
    assert Settings.from_environ({"GHOST_EVAL_CACHE": "/x"}).cache_dir == Path("/x")
    assert "key-from-google" not in repr(settings)  # keys print as asterisks


def test_defaults_are_the_documented_ones() -> None:
    assert DEFAULTS.lab_dir == Path("/run/ghost-eval-lab")
    assert DEFAULTS.target_file == Path("/run/ghost-eval-lab/target.json")
    assert DEFAULTS.mirror == Path.home() / ".cache" / "ghost-eval" / "mirrors"
    assert Settings.from_environ({"GHOST_EVAL_LAB_DIR": "/l"}).target_file == Path("/l/target.json")
