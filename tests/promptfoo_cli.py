"""Running the real `promptfoo eval` from tests and benchmarks: offline, with its own database folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.conftest import REPO

__all__ = ["PROMPTFOO", "promptfoo_env", "run_eval"]

PROMPTFOO = REPO / "node_modules" / ".bin" / "promptfoo"


def promptfoo_env(state: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The Makefile's Promptfoo environment, with the database under `state` and no inherited store."""
    env = {
        **os.environ,
        "PROMPTFOO_CONFIG_DIR": str(state / "promptfoo"),
        "PROMPTFOO_DISABLE_TELEMETRY": "1",
        "PROMPTFOO_DISABLE_UPDATE": "1",
        "PROMPTFOO_DISABLE_SHARING": "1",
        "PROMPTFOO_PYTHON": sys.executable,
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
    }
    env.pop("GHOST_EVAL_STORE", None)
    env.update(extra or {})
    return env


def run_eval(
    config: Path, state: Path, *args: str, extra_env: dict[str, str] | None = None, timeout: float = 600
) -> list[dict[str, Any]]:
    """Evaluate `config` and return its result rows; a run that fails for any reason but failing rows is an error."""
    assert PROMPTFOO.exists(), "promptfoo is not installed: run `make test`, which installs it"
    out = state / "promptfoo-out.json"
    proc = subprocess.run(
        [str(PROMPTFOO), "eval", "-c", str(config), "-o", str(out), "--no-progress-bar", "--no-cache", *args],
        cwd=REPO,
        env=promptfoo_env(state, extra_env),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert proc.returncode in (0, 100), proc.stdout[-3000:] + proc.stderr[-3000:]
    rows: list[dict[str, Any]] = json.loads(out.read_text())["results"]["results"]
    return rows
