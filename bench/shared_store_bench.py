"""The shared store (Azure Blob Storage, here Azurite on this machine) against the local store at 10,000 runs:
append cost and filtered-query cost as ratios, medians of one run. Also the two ways of keeping the shared index
that concurrent writers can extend: one `Append Block` per entry (what the store does) against a lease-guarded
JSON manifest (acquire lease, download, add, upload under the lease, release).

Both stores get 10,000 index entries in bulk (appends depend on the index, not on sibling folders); each measured
append is a real, complete run write.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.store_bench import CASES, MODELS, _populate
from ghost_eval.store import RunFilter, Store
from ghost_eval.store.blob import BlobStore
from ghost_eval.store.layout import IndexEntry
from tests.store.azurite import running_azurite
from tests.store.helpers import our_run

RUNS = 10_000
REPEATS = 25


def _entries(n: int) -> list[IndexEntry]:
    return [
        IndexEntry(
            run_id=f"{CASES[i % 10]}_{MODELS[i % 3]}_bulk{i:07d}",
            use_case_id=CASES[i % 10],
            model_id=MODELS[i % 3],
            system_prompt_hash=f"{i % 7:064x}",
            path=f"{CASES[i % 10]}/{MODELS[i % 3]}/bulk{i:07d}",
        )
        for i in range(n)
    ]


def _median_ms(action: Callable[[int], object], repeats: int = REPEATS) -> float:
    times = []
    for k in range(repeats):
        t = time.perf_counter()
        action(k)
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp, running_azurite(Path(tmp) / "azurite") as conn:
        local = Store(Path(tmp) / "local", create=True)
        _populate(local, RUNS)
        shared = BlobStore.open("azblob://bench", conn)
        shared.container.create_container()
        bulk = _entries(RUNS)
        for i in range(0, RUNS, 2_000):
            shared.adopt_many(bulk[i : i + 2_000])
        flt = RunFilter(use_case="m", model="claude-sonnet-4-6")

        local_append = _median_ms(lambda k: local.append(*our_run(k, model="bench-model")))
        shared_append = _median_ms(lambda k: shared.append(*our_run(k, model="bench-model")))
        local_query = _median_ms(lambda _: local.runs(flt), 11)
        shared_query = _median_ms(lambda _: shared.runs(flt), 11)
        hits = len(shared.runs(flt))

        # The alternative index: a JSON manifest of 10,000 entries, extended under a lease.
        manifest = shared.container.get_blob_client("bench/manifest.json")
        manifest.upload_blob(json.dumps([e.model_dump(mode="json") for e in bulk]).encode())
        extra = _entries(RUNS + REPEATS)[RUNS:]

        def leased(k: int) -> None:
            lease = manifest.acquire_lease(lease_duration=15)
            doc = json.loads(manifest.download_blob(lease=lease).readall())
            doc.append(extra[k].model_dump(mode="json"))
            manifest.upload_blob(json.dumps(doc).encode(), overwrite=True, lease=lease)
            lease.release()

        lease_ms = _median_ms(leased)
        block_ms = _median_ms(lambda k: shared.adopt_many([extra[k]]))
    print(
        f"append one run at {RUNS:,} runs: shared {shared_append:.1f} ms vs local {local_append:.1f} ms "
        f"({shared_append / local_append:.2f}x local)"
    )
    print(
        f"filtered query at {RUNS:,} runs ({hits} hits): shared {shared_query:.1f} ms vs local {local_query:.1f} ms "
        f"({shared_query / local_query:.1f}x local; readers use the local mirror after `store sync`)"
    )
    print(
        f"index extension at {RUNS:,} entries: append block {block_ms:.1f} ms vs lease-guarded manifest {lease_ms:.1f} ms "
        f"({lease_ms / block_ms:.1f}x; the lease also serialises writers)"
    )


if __name__ == "__main__":
    main()
