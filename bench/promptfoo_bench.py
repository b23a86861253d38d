"""Promptfoo rescoring of 1,000 stored runs with the baseline assertions, as a ratio against the
replay provider alone (aim: under 3x). Both evals run in this one process's lifetime, alternated."""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "bench"), str(REPO)]
from synthetic_store import build_store  # noqa: E402

from ghost_eval.store import RunFilter  # noqa: E402
from tests.promptfoo_cli import PROMPTFOO, promptfoo_env  # noqa: E402

RUNS = 1_000


def _config(store: Path, run_ids: list[str], default_test: object) -> dict[str, object]:
    baseline = yaml.safe_load((REPO / "promptfooconfig.yaml").read_text())
    config: dict[str, object] = {
        "description": "rescoring bench",
        "prompts": baseline["prompts"],
        "providers": [{"id": f"file://{REPO}/providers/replay.py", "label": "replay", "config": {"store": str(store)}}],
        "tests": [{"vars": {"run_id": rid, "symptom": "replayed"}} for rid in run_ids],
    }
    if default_test is not None:
        config["defaultTest"] = default_test
    return config


def _eval_seconds(config_path: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    rc = subprocess.run(
        [
            str(PROMPTFOO),
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
        env = promptfoo_env(root)
        variants = {
            "replay only": None,
            "baseline assertions (assertions/grades.yaml)": f"file://{REPO}/assertions/grades.yaml",
        }
        paths = {}
        for i, (name, default_test) in enumerate(variants.items()):
            paths[name] = root / f"config{i}.yaml"
            paths[name].write_text(yaml.safe_dump(_config(root / "store", run_ids, default_test), sort_keys=False))
        times: dict[str, list[float]] = {name: [] for name in variants}
        for _ in range(3):
            for name in variants:
                times[name].append(_eval_seconds(paths[name], env))
    base = statistics.median(times["replay only"])
    for name in variants:
        median = statistics.median(times[name])
        print(f"promptfoo eval, {RUNS} stored runs, {name}: median {median:.1f} s = {median / base:.2f}x replay only")
    print("aim: baseline assertions under 3x replay only")


if __name__ == "__main__":
    main()
