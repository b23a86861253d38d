"""Time per fix trial, split into set-up / capture / verify / fix / reconcile / teardown, median over the demo store's
runs of each case; the target is under 10 s for the OS-layer cases, and every figure is printed as a ratio to it.

    sudo .venv/bin/python bench/trial_bench.py                 # OS-layer cases g, j, m and control-plane a, f
    sudo .venv/bin/python bench/trial_bench.py --cases m --repeat 3
    sudo .venv/bin/python bench/trial_bench.py --before REV --repeat 3   # now against the package at REV

Needs root (the lab). Builds a lab of its own, trials each selected run (verdicts are not stored) and removes the lab.
With `--before REV` the same trials also run with the package as it was at REV (a temporary git worktree), the two
alternating round by round, and each median (lab up, lab down, trial total) closes with the ratio now/before.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from revision import checkout

from ghost_eval.cases.case import case_key
from ghost_eval.evaluation.evaluate import load_case_set
from ghost_eval.lab import lab_down, lab_up
from ghost_eval.store import Store, bundled_path
from ghost_eval.trials import try_fix

TARGET_S = 10.0
OS_LAYER = ("g", "j", "m")
PHASES = ("setup", "capture", "verify", "fix", "reconcile", "teardown")
"""`fix` and `verify` run the run's own commands (a `ping -c 50 -i 0.2` takes 10 s whatever the trial does); the rest
is the trial's machinery, reported apart as `machinery`."""


def _round(cases: str, package: Path | None) -> dict[str, list[float]]:
    """One round of `--measure` in a process of its own, with the package at `package` (None: now)."""
    env = {**os.environ, "PYTHONPATH": str(package)} if package else dict(os.environ)
    argv = [sys.executable, __file__, "--cases", cases, "--measure"]
    # the lab starts its daemons with `python -m`, which puts the working folder first on sys.path: run in the tree
    cwd = package or Path(__file__).resolve().parents[1]
    proc = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"a round with the package at {package or 'now'} failed: {proc.stderr.strip()[-2000:]}")
    result: dict[str, list[float]] = json.loads(proc.stdout.splitlines()[-1])
    return result


def _compare(cases: str, before: str, repeat: int) -> None:
    figures: dict[str, dict[str, list[float]]] = {"now": {}, "before": {}}
    with checkout(before) as tree:
        for _ in range(repeat):
            for label, package in (("now", None), ("before", tree)):
                for key, values in _round(cases, package).items():
                    figures[label].setdefault(key, []).extend(values)
    print(f"{'median':<14}{'now':>9}{'before':>9}{'now/before':>12}")
    for key in ("lab up", "lab down", "trial total"):
        now, old = statistics.median(figures["now"][key]), statistics.median(figures["before"][key])
        print(f"{key:<14}{now:>8.2f}s{old:>8.2f}s{now / old:>12.2f}")


def _measure(wanted: list[str]) -> None:
    """One round for `--before`: one lab, each selected run trialled once; prints one JSON line of seconds."""
    cases = load_case_set()[0]
    store = Store(bundled_path("demo_store"))
    state = Path(tempfile.mkdtemp(prefix="ghost-eval-bench-"))
    figures: dict[str, list[float]] = {"lab up": [], "lab down": [], "trial total": []}
    start = time.monotonic()
    target = lab_up(state)
    figures["lab up"].append(time.monotonic() - start)
    try:
        for entry in store.runs():
            case = cases.get(case_key(entry.use_case_id))
            if case is not None and case.id in wanted:
                start = time.monotonic()
                try_fix(store.read(entry), case, target, lab_dir=state)
                figures["trial total"].append(time.monotonic() - start)
    finally:
        start = time.monotonic()
        lab_down(state)
        figures["lab down"].append(time.monotonic() - start)
    print(json.dumps(figures))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", default="g,j,m,a,f", help="case ids, comma-separated")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--verbose", action="store_true", help="print every trial's phases")
    parser.add_argument("--before", metavar="REV", help="also measure the package at REV; print now/before")
    parser.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        _measure(args.cases.split(","))
        return
    if args.before:
        _compare(args.cases, args.before, args.repeat)
        return
    wanted = args.cases.split(",")
    cases = load_case_set()[0]
    store = Store(bundled_path("demo_store"))
    state = Path(tempfile.mkdtemp(prefix="ghost-eval-bench-"))
    started = time.monotonic()
    target = lab_up(state)
    print(f"lab up in {time.monotonic() - started:.1f} s (not counted per trial)")
    per_case: dict[str, list[dict[str, float]]] = {c: [] for c in wanted}
    try:
        for entry in store.runs():
            case = cases.get(case_key(entry.use_case_id))
            if case is None or case.id not in wanted:
                continue
            record = store.read(entry)
            for _ in range(args.repeat):
                start = time.monotonic()
                verdict = try_fix(record, case, target, lab_dir=state)
                timings = dict(verdict.timings_s)
                timings["total"] = time.monotonic() - start
                timings["machinery"] = timings["total"] - timings.get("fix", 0.0) - timings.get("verify", 0.0)
                per_case[case.id].append(timings)
                if args.verbose:
                    print(entry.run_id, {k: round(v, 2) for k, v in timings.items()})
                if not verdict.teardown_ok:
                    lab_down(state)
                    target = lab_up(state)
    finally:
        lab_down(state)
    print(f"{'case':<6}{'trials':>7}" + "".join(f"{p:>11}" for p in (*PHASES, "total", "machinery")) + f"{'total/10s':>11}")
    for case_id, rows in per_case.items():
        if not rows:
            continue
        medians = {p: statistics.median(r.get(p, 0.0) for r in rows) for p in (*PHASES, "total", "machinery")}
        layer = "os" if case_id in OS_LAYER else "cp"
        print(
            f"{case_id + ' ' + layer:<6}{len(rows):>7}"
            + "".join(f"{medians[p]:>10.2f}s" for p in (*PHASES, "total", "machinery"))
            + f"{medians['total'] / TARGET_S:>11.2f}"
        )
    for what in ("total", "machinery"):
        values = [r[what] for c in OS_LAYER if c in per_case for r in per_case[c]]
        if values:
            median = statistics.median(values)
            print(f"OS-layer median per trial, {what}: {median:.2f} s = {median / TARGET_S:.2f} x the 10 s target")


if __name__ == "__main__":
    main()
