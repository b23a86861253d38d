"""Promptfoo rescoring of 1,000 stored runs with the baseline assertions, as a ratio against the
replay provider alone (aim: under 3x). Both evals run in this one process's lifetime, alternated."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from synthetic_store import build_store

from ghost_eval.store import RunFilter

REPO = Path(__file__).resolve().parents[1]
RUNS = 1_000


def _config(store: Path, run_ids: list[str], with_assertions: bool) -> dict[str, object]:
    baseline = yaml.safe_load((REPO / "promptfooconfig.yaml").read_text())
    config: dict[str, object] = {
        "description": f"rescoring bench ({'assertions' if with_assertions else 'provider only'})",
        "prompts": baseline["prompts"],
        "providers": [{"id": f"file://{REPO}/providers/replay.py", "label": "replay", "config": {"store": str(store)}}],
        "tests": [{"vars": {"run_id": rid, "symptom": "replayed"}} for rid in run_ids],
    }
    if with_assertions:
        asserts = baseline["defaultTest"]["assert"]
        config["defaultTest"] = {"assert": [{**a, "value": a["value"].replace("file://", f"file://{REPO}/")} for a in asserts]}
    return config


def _eval_seconds(config_path: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    rc = subprocess.run(
        [
            str(REPO / "node_modules/.bin/promptfoo"),
            "eval",
            "-c",
            str(config_path),
            "--no-cache",
            "--no-progress-bar",
            "--no-write",
            "-j",
            "4",
        ],
        env=env,
        cwd=config_path.parent,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    ).returncode
    if rc not in (0, 100):
        raise SystemExit(f"promptfoo eval failed with {rc} on {config_path}")
    return time.perf_counter() - start


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        store = build_store(root / "store", RUNS)
        run_ids = [e.run_id for e in store.runs(RunFilter())]
        env = {
            **os.environ,
            "PROMPTFOO_CONFIG_DIR": str(root / "pf"),
            "PROMPTFOO_DISABLE_TELEMETRY": "1",
            "PROMPTFOO_DISABLE_UPDATE": "1",
            "PROMPTFOO_DISABLE_SHARING": "1",
            "PROMPTFOO_PYTHON": sys.executable,
            "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
        }
        paths = {}
        for name, flag in (("plain", False), ("scored", True)):
            paths[name] = root / f"{name}.yaml"
            paths[name].write_text(yaml.safe_dump(_config(root / "store", run_ids, flag), sort_keys=False))
        times: dict[str, list[float]] = {"plain": [], "scored": []}
        for _ in range(3):
            for name in ("plain", "scored"):
                times[name].append(_eval_seconds(paths[name], env))
    plain, scored = statistics.median(times["plain"]), statistics.median(times["scored"])
    print(f"promptfoo eval, {RUNS} stored runs: replay only median {plain:.1f} s; with baseline assertions {scored:.1f} s")
    print(f"ratio: {scored / plain:.2f}x (aim: under 3x)")


if __name__ == "__main__":
    main()
