from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ghost_eval.store import RunFilter, Store
from ghost_eval.store.verify import verify_store
from tests.conftest import REPO
from tests.store.helpers import our_run

pytestmark = pytest.mark.slow


def _worker(root: Path, model: str, count: int) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen(
        [sys.executable, "-m", "tests.store.append_worker", str(root), model, str(count)],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


@pytest.mark.parametrize("delay", [0.0, 0.002, 0.007, 0.015])
def test_writer_killed_mid_append_leaves_a_consistent_store(tmp_path: Path, delay: float) -> None:
    """Kill the writer once it is appending steadily, at a different point of an append each time."""
    root = tmp_path / "store"
    Store(root, create=True).close()
    proc = _worker(root, "killed-model", 100000)
    assert proc.stdout is not None
    for _ in range(3):
        assert proc.stdout.readline().startswith(b"appended"), proc.stderr.read() if proc.stderr else b""
    time.sleep(delay)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    store = Store(root)
    problems, _ = verify_store(store)
    assert problems == [], "\n".join(map(str, problems))
    survivors = store.runs()
    assert len(survivors) >= 3
    for entry in survivors:
        assert store.read(entry).problems == []
    # the store keeps working after the crash, including for the run id the writer died on
    next_n = len(survivors)
    store.append(*our_run(next_n, model="killed-model"))
    assert verify_store(Store(root))[0] == []


def test_eight_concurrent_writers_lose_nothing(tmp_path: Path) -> None:
    root = tmp_path / "store"
    Store(root, create=True).close()
    procs = [_worker(root, f"model{i}", 200) for i in range(8)]
    for p in procs:
        _out, err = p.communicate(timeout=600)
        assert p.returncode == 0, err.decode()
    store = Store(root)
    runs = store.runs(RunFilter())
    assert len(runs) == 1600
    assert len({r.run_id for r in runs}) == 1600
    for i in range(8):
        assert len(store.runs(RunFilter(model=f"model{i}"))) == 200
    assert verify_store(store)[0] == []
