"""`ghost-eval score` throughput and peak memory on a generated store of 10,000 runs (aim: > 1,000 runs/s)."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from synthetic_store import build_store

RUNS = 10_000


def _score_once(store: Path) -> tuple[float, float]:
    cli = Path(sys.executable).parent / "ghost-eval"
    start = time.perf_counter()
    proc = subprocess.Popen(
        [str(cli), "score", "--store", str(store), "--format", "jsonl", "--no-write"], stdout=subprocess.DEVNULL
    )
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit("ghost-eval score failed")
    return elapsed, usage.ru_maxrss / 1024


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        build_store(Path(tmp) / "store", RUNS).close()
        print(f"built a {RUNS}-run store in {time.perf_counter() - t:.1f} s")
        results = [_score_once(Path(tmp) / "store") for _ in range(3)]
    secs = statistics.median(r[0] for r in results)
    rss = max(r[1] for r in results)
    print(
        f"ghost-eval score, {RUNS} runs: median {secs:.2f} s = {RUNS / secs:,.0f} runs/s "
        f"({RUNS / secs / 1000:.2f}x the 1,000 runs/s aim); peak RSS {rss:.0f} MiB"
    )


if __name__ == "__main__":
    main()
