"""Subprocess body for the shared-store fault tests (a writer that can be raced or killed).

blob_worker.py CONN CONTAINER append MODEL COUNT   append COUNT runs for MODEL
blob_worker.py CONN CONTAINER race GO_FILE TEXT    wait for GO_FILE, then append run 0 with report TEXT
blob_worker.py CONN CONTAINER slow FILES           append run 0 with FILES extra files (killed mid-upload)
blob_worker.py CONN CONTAINER lease                hold the reindex lock's lease, then sleep (killed)
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from ghost_eval.base.errors import RunExistsError
from ghost_eval.store.blob import BlobStore
from tests.store.helpers import our_run

if __name__ == "__main__":
    conn, container, mode, *rest = sys.argv[1:]
    store = BlobStore.open(f"azblob://{container}", conn)
    if mode == "append":
        for n in range(int(rest[1])):
            store.append(*our_run(n, model=rest[0]))
    elif mode == "race":
        go = Path(rest[0])
        while not go.exists():
            time.sleep(0.01)
        meta, files = our_run(0)
        try:
            store.append(meta, {**files, "PROMPT.txt": rest[1]})
        except RunExistsError as exc:
            print(f"refused: {exc}", flush=True)
            sys.exit(3)
    elif mode == "slow":
        meta, files = our_run(0)
        store.append(meta, {**files, **{f"part_{i:04d}.txt": f"part {i}\n" * 1000 for i in range(int(rest[0]))}})
    elif mode == "lease":
        store.container.create_container()
        lock = store.container.get_blob_client("locks/reindex")
        lock.upload_blob(b"", overwrite=False)
        lock.acquire_lease(lease_duration=15)
        print("leased", flush=True)
        time.sleep(600)
