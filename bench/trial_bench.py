"""Time per fix trial, split into set-up / capture / verify / fix / reconcile / teardown, median over the demo store's
runs of each case; the target is under 10 s for the OS-layer cases, and every figure is printed as a ratio to it.

    sudo .venv/bin/python bench/trial_bench.py                 # OS-layer cases g, j, m and control-plane a, f
    sudo .venv/bin/python bench/trial_bench.py --cases m --repeat 3

Needs root (the lab). Builds a lab of its own, trials each selected run (verdicts are not stored) and removes the lab.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from ghost_eval.cases import case_key
from ghost_eval.evaluate import load_case_set
from ghost_eval.lab import lab_down, lab_up
from ghost_eval.store import Store, bundled_path
from ghost_eval.trials import try_fix

TARGET_S = 10.0
OS_LAYER = ("g", "j", "m")
PHASES = ("setup", "capture", "verify", "fix", "reconcile", "teardown")
"""`fix` and `verify` run the run's own commands (a `ping -c 50 -i 0.2` takes 10 s whatever the trial does); the rest
is the trial's machinery, reported apart as `machinery`."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", default="g,j,m,a,f", help="case ids, comma-separated")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--verbose", action="store_true", help="print every trial's phases")
    args = parser.parse_args()
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
                verdict = try_fix(record, case, target)
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
