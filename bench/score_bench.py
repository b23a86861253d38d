"""`ghost-eval score` throughput and peak memory on a generated store of 10,000 runs (aim: > 1,000 runs/s).

python bench/score_bench.py [--before REV]   # REV: also score the same store with the package as it was at REV
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from revision import checkout
from synthetic_store import build_store

RUNS = 10_000


def _score_once(store: Path, package: Path | None = None) -> tuple[float, float]:
    cli = Path(sys.executable).parent / "ghost-eval"
    env = {**os.environ, "PYTHONPATH": str(package)} if package else None
    start = time.perf_counter()
    proc = subprocess.Popen(
        [str(cli), "score", "--store", str(store), "--format", "jsonl", "--no-write"], stdout=subprocess.DEVNULL, env=env
    )
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit("ghost-eval score failed")
    return elapsed, usage.ru_maxrss / 1024


def _report(label: str, results: list[tuple[float, float]]) -> float:
    secs = statistics.median(r[0] for r in results)
    rss = max(r[1] for r in results)
    print(
        f"{label}: ghost-eval score, {RUNS} runs: median {secs:.2f} s = {RUNS / secs:,.0f} runs/s "
        f"({RUNS / secs / 1000:.2f}x the 1,000 runs/s aim); peak RSS {rss:.0f} MiB"
    )
    return secs


def main() -> None:
    before = sys.argv[sys.argv.index("--before") + 1] if "--before" in sys.argv else None
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        build_store(Path(tmp) / "store", RUNS).close()
        print(f"built a {RUNS}-run store in {time.perf_counter() - t:.1f} s")
        if before is None:
            _report("now", [_score_once(Path(tmp) / "store") for _ in range(3)])
            return
        with checkout(before) as tree:
            runs = [(_score_once(Path(tmp) / "store", tree), _score_once(Path(tmp) / "store")) for _ in range(3)]
        old, new = _report(before, [r[0] for r in runs]), _report("now", [r[1] for r in runs])
        print(f"now takes {new / old:.2f}x the time of {before}")


if __name__ == "__main__":
    main()
