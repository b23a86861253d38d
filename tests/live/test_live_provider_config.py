"""Provider configs and test vars are validated by typed models: a bad one is an error row naming the field, never an
exception in Promptfoo's worker, and a store is never the filesystem root."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from ghost_eval.store import Store
from tests.conftest import REPO
from tests.judge.helpers import demo_copy


def _provider(name: str) -> ModuleType:
    """The provider file as Promptfoo loads it (`file://providers/<name>.py`)."""
    spec = importlib.util.spec_from_file_location(f"provider_{name}", REPO / "providers" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _call(name: str, config: dict[str, Any], variables: dict[str, Any], **context: Any) -> dict[str, Any]:
    result: dict[str, Any] = _provider(name).call_api("", {"config": config}, {"vars": variables, **context})
    return result


@pytest.mark.parametrize(
    ("variables", "context", "field"),
    [
        ({"use_case": "f", "model": "gemini-2.5-flash", "repeat_index": "abc"}, {}, "repeat_index"),
        ({"use_case": "f", "model": "gemini-2.5-flash", "repeat_index": -1}, {}, "repeat_index"),
        ({"use_case": "f", "model": "gemini-2.5-flash"}, {"repeatIndex": -2}, "repeat_index"),
        ({"use_case": ["f"], "model": "gemini-2.5-flash"}, {}, "use_case"),
    ],
)
def test_a_bad_var_is_an_error_row_naming_it(variables: dict[str, Any], context: dict[str, Any], field: str) -> None:
    row = _call("replay", {}, variables, **context)
    assert "output" not in row and f"'{field}'" in row["error"], row


@pytest.mark.parametrize("name", ["replay", "live"])
def test_the_filesystem_root_is_refused_as_a_store(name: str) -> None:
    row = _call(name, {"store": "/", "model": "claude-haiku-4-5"}, {"use_case": "m"})
    assert "'store'" in row["error"] and "filesystem root" in row["error"], row


@pytest.mark.parametrize(
    ("config", "field"),
    [
        ({"limits": {"max_turns": "lots"}}, "limits.max_turns"),
        ({"limits": {"max_turnz": 3}}, "limits.max_turnz"),
        ({"limits": {"run_timeout_s": -5}}, "limits.run_timeout_s"),
        ({"provider": "openai"}, "provider"),
        ({"auto_approve": "sometimes"}, "auto_approve"),
    ],
)
def test_a_bad_live_config_is_an_error_row_naming_the_field(config: dict[str, Any], field: str, tmp_path: Path) -> None:
    row = _call("live", {"store": str(tmp_path / "store"), "model": "claude-haiku-4-5", **config}, {"use_case": "m"})
    assert f"'{field}'" in row["error"], row
    assert not (tmp_path / "store").exists()  # refused before any fault was planted


def test_replay_never_serves_a_report_through_a_symlink(tmp_path: Path) -> None:
    root = demo_copy(tmp_path)
    with Store(root) as store:
        entry = store.runs()[0]
    folder = root / entry.path
    report = next(folder.glob("ghost_report_*.md"))
    secret = tmp_path / "shadow"
    secret.write_text("# Report\nroot:$6$planted-hash:19000:0:99999:7:::\n")
    report.unlink()
    report.symlink_to(secret)
    row = _call("replay", {"store": str(root)}, {"run_id": entry.run_id})
    assert "planted-hash" not in str(row)
    assert "output" not in row and "symbolic link" in row["error"], row
