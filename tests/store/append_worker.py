"""Subprocess body for crash and concurrency tests: append COUNT runs for one model."""

from __future__ import annotations

import sys
from pathlib import Path

from ghost_eval.store import Store
from tests.store.helpers import our_run

if __name__ == "__main__":
    root, model, count = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    store = Store(root, create=True)
    for n in range(count):
        store.append(*our_run(n, model=model))
        print(f"appended {n}", flush=True)
    print("done", flush=True)
