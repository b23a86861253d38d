"""`ghost-eval score` on a store holding one run with a huge report: wall time and peak memory, as a ratio against
the baseline (the same store scored by another checkout, `--baseline`, e.g. one made with `git archive <commit>`).

Each figure is one `score --no-write --jobs 1` in a fresh process (the peak is that process's VmHWM).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from ghost_eval.store import RunFilter, Store  # noqa: E402
from tests.store.helpers import our_run  # noqa: E402


def _store(root: Path, megabytes: float) -> None:
    """Two runs: a normal one and one whose report is a demo report of case m repeated to `megabytes` MB (scoring
    time grows faster than such a text: every heading and action is matched again and again)."""
    demo = Store(REPO / "demo_store")
    body = demo.read(demo.runs(RunFilter(use_case="m"))[0]).report or ""
    with Store(root, create=True) as store:
        store.append(*our_run(0))
        meta, files = our_run(1)
        name = next(n for n in files if n.startswith("ghost_report_"))
        files[name] = body * int(megabytes * 1024 * 1024 / len(body))
        store.append(meta, files)


_MAIN = (
    "import atexit, sys; atexit.register(lambda: sys.stderr.write(open('/proc/self/status').read())); "
    "from ghost_eval.cli import main; sys.exit(main())"
)
"""The CLI, printing the process's own peak (VmHWM) at exit: `ru_maxrss` would carry the parent's across the exec."""


def _score(code: Path, root: Path) -> tuple[float, float]:
    """Seconds and peak MB of one scoring pass by the checkout at `code`."""
    cmd = [sys.executable, "-c", _MAIN, "score", "--store", str(root), "--no-write", "--jobs", "1", "--format", "jsonl"]
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=code, env={**os.environ, "PYTHONPATH": str(code)}, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    scored = sum(1 for line in done.stdout.splitlines() if line.startswith("{"))
    problems = [line[:200] for line in done.stderr.splitlines() if line.startswith("problem")]
    print(f"  {code}: {scored} runs scored, exit {done.returncode}; {problems}")
    return seconds, int(done.stderr.rsplit("VmHWM:", 1)[1].split()[0]) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--megabytes", type=float, default=4)
    parser.add_argument("--baseline", type=Path, required=True, help="checkout of the baseline code")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "store"
        _store(root, args.megabytes)
        base_s, base_mb = _score(args.baseline, root)
        now_s, now_mb = _score(REPO, root)
    print(
        f"report of {args.megabytes} MB: baseline {base_s:.1f} s, {base_mb:.0f} MB peak; now {now_s:.1f} s, {now_mb:.0f} MB peak"
    )
    print(f"ratio now/baseline: time {now_s / base_s:.3f}x, peak memory {now_mb / base_mb:.3f}x")


if __name__ == "__main__":
    main()
