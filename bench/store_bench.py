"""Store append cost at 1,000 vs 100,000 runs (the `run_index.json` view kept current included), and
filtered query latency at 100,000.

The index rows are bulk-loaded (folders for them need not exist: append cost depends on the
index, not on sibling folders) and the view written once; each measured append is a real, fsynced
run write followed by the view update. For comparison, the cost of rewriting the whole view (what
an append would cost if it rebuilt the view from the index) is measured too.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

from ghost_eval.store import RunFilter, Store
from ghost_eval.store.layout import IndexEntry

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.store.helpers import our_run

CASES = "adefgjmqsv"
MODELS = ("gemini-2.5-flash", "claude-haiku-4-5-20251001", "claude-sonnet-4-6")


def _populate(store: Store, n: int) -> None:
    entries = (
        IndexEntry(
            run_id=f"{CASES[i % 10]}_{MODELS[i % 3]}_bulk{i:07d}",
            use_case_id=CASES[i % 10],
            model_id=MODELS[i % 3],
            system_prompt_hash=f"{i % 7:064x}",
            path=f"{CASES[i % 10]}/{MODELS[i % 3]}/bulk{i:07d}",
        )
        for i in range(n)
    )
    store.adopt_many(entries)
    store.refresh_view()


def _append_ms(store: Store, start: int, repeats: int) -> float:
    times = []
    for k in range(repeats):
        meta, files = our_run(start + k, model="bench-model")
        t = time.perf_counter()
        store.append(meta, files)
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def main() -> None:
    repeats = 30
    with tempfile.TemporaryDirectory() as tmp:
        small = Store(Path(tmp) / "small", create=True)
        _populate(small, 1_000)
        big = Store(Path(tmp) / "big", create=True)
        _populate(big, 100_000)
        # interleave so machine noise hits both sizes alike
        small_ms, big_ms = [], []
        for r in range(3):
            small_ms.append(_append_ms(small, r * repeats, repeats))
            big_ms.append(_append_ms(big, r * repeats, repeats))
        a_small, a_big = statistics.median(small_ms), statistics.median(big_ms)
        flt = RunFilter(use_case="m", model="claude-sonnet-4-6")
        q = []
        for _ in range(21):
            t = time.perf_counter()
            found = big.runs(flt)
            q.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        big.refresh_view()
        view_s = time.perf_counter() - t
        view_mb = (big.root / "run_index.json").stat().st_size / 1e6
    print(f"append + view update, median at 1,000 runs:   {a_small:7.2f} ms")
    print(f"append + view update, median at 100,000 runs: {a_big:7.2f} ms")
    print(f"ratio 100k/1k: {a_big / a_small:.2f}x (the view update copies the file: grows with its size)")
    query_ms = statistics.median(q)
    print(f"filtered query at 100,000 runs ({len(found)} hits): median {query_ms:.1f} ms (target < 200 ms)")
    print(f"full run_index.json view rewrite at 100,000 runs ({view_mb:.1f} MB): {view_s:.2f} s (batch commands only)")


if __name__ == "__main__":
    main()
