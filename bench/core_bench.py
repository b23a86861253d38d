"""The scoring core's figures in one run: `ghost-eval score` against the read-and-parse floor, warm rescoring,
peak memory and time by store size, Promptfoo's Python assertion path against replay alone, and start-up.

    python bench/core_bench.py                       # the full set (about ten minutes on 2 cores)
    python bench/core_bench.py --sizes 1000 --runs 1000 --promptfoo-rows 20 --repeats 1   # a quick look
    python bench/core_bench.py --before REV --before-assertions remediation.py,diagnosis.py,trajectory.py

With `--before REV` every figure is also measured with the package as it was at REV (a temporary git worktree),
each figure measured for both in turn; the ratio now/before closes each line.

Generated stores are kept between runs under the temp folder, one per size, keyed by the generator and the demo
store it draws from (`--stores` names another folder): only the first run pays for building the 20,000-run store.

Every time is a median of `--repeats` runs; every figure is printed as a ratio against its baseline.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "bench"), str(REPO)]
from revision import checkout  # noqa: E402
from synthetic_store import build_store  # noqa: E402

from ghost_eval.store import RunFilter, Store  # noqa: E402
from ghost_eval.store.layout import SQLITE_FILE  # noqa: E402
from tests.promptfoo_cli import PROMPTFOO, promptfoo_env  # noqa: E402

CLI = Path(sys.executable).parent / "ghost-eval"


def _median(fn: Callable[[], float], repeats: int) -> float:
    return statistics.median(fn() for _ in range(repeats))


def _env(package: Path | None) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(package)} if package else dict(os.environ)


def _score(store: Path, package: Path | None, *extra: str) -> tuple[float, float, float]:
    """Seconds, peak RSS (MiB) and CPU seconds (user and system, its pool included) of one `ghost-eval score --format
    jsonl` with the package at `package` (None: now)."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        [str(CLI), "score", "--store", str(store), "--format", "jsonl", *extra], stdout=subprocess.DEVNULL, env=_env(package)
    )
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"ghost-eval score failed on {store}")
    return elapsed, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime


def _floor(store: Path) -> float:
    """Reading every file of every run and parsing its JSON and JSON lines: no scorer can be faster."""
    start = time.perf_counter()
    with Store(store) as s:
        for entry in s.runs(RunFilter()):
            for path in s.folder(entry).iterdir():
                if not path.is_file():
                    continue
                text = path.read_text(encoding="utf-8")
                if path.suffix == ".json":
                    json.loads(text)
                elif path.suffix == ".jsonl":
                    [json.loads(line) for line in text.splitlines() if line.strip()]
    return time.perf_counter() - start


def _size(store: Path) -> int | None:
    """How many runs a store already built holds (None: none there)."""
    if not (store / SQLITE_FILE).exists():
        return None
    with Store(store) as s:
        return len(s.runs(RunFilter()))


def _store_cache() -> Path:
    """Where generated stores are kept between runs: keyed by the generator's source and the demo store's files, so a
    change to either builds them afresh."""
    key = hashlib.sha256((REPO / "bench" / "synthetic_store.py").read_bytes())
    demo = REPO / "demo_store"
    for path in sorted(demo.rglob("*")):
        if path.is_file():
            key.update(f"{path.relative_to(demo)}\0{path.stat().st_size}\0".encode())
    return Path(tempfile.gettempdir()) / f"ghost-eval-bench-stores-{key.hexdigest()[:12]}"


def _promptfoo(root: Path, store: Path, rows: int, package: Path | None, assertions: list[str] | None) -> float:
    """Seconds of `promptfoo eval` replaying `rows` stored runs, with the given Python assertion files (None: none)."""
    tree = package or REPO
    with Store(store) as s:
        run_ids = [e.run_id for e in s.runs(RunFilter())][:rows]
    config: dict[str, object] = {
        "description": "assertion path bench",
        "prompts": yaml.safe_load((REPO / "promptfooconfig.yaml").read_text())["prompts"],
        "providers": [{"id": f"file://{tree}/providers/replay.py", "label": "replay", "config": {"store": str(store)}}],
        "tests": [{"vars": {"run_id": rid, "symptom": "replayed"}} for rid in run_ids],
    }
    if assertions is not None:
        config["defaultTest"] = {"assert": [{"type": "python", "value": f"file://{tree}/assertions/{a}"} for a in assertions]}
    path = root / f"promptfoo-{len(list(root.glob('promptfoo-*.yaml')))}.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    start = time.perf_counter()
    proc = subprocess.run(
        [
            str(PROMPTFOO),
            "eval",
            "-c",
            str(path),
            "--no-cache",
            "--no-progress-bar",
            "--no-write",
            "-j",
            "4",
            "-o",
            str(root / "out.json"),
        ],
        env=promptfoo_env(root, {"PYTHONPATH": str(package)} if package else None),
        cwd=root,
        capture_output=True,
        text=True,
    )
    if proc.returncode not in (0, 100):
        raise SystemExit(f"promptfoo eval failed with {proc.returncode}: {proc.stderr[-2000:]}")
    results = json.loads((root / "out.json").read_text())["results"]["results"]
    # a row's `error` also carries the reasons of failing checks: only a provider error or an unscored row is broken
    broken = [r["response"]["error"] for r in results if (r.get("response") or {}).get("error")]
    broken += [r["id"] for r in results if "cannot score" in json.dumps(r.get("gradingResult"))]
    if len(results) != len(run_ids) or broken:
        raise SystemExit(f"promptfoo eval gave {len(results)} rows for {len(run_ids)} runs; errors: {broken[:3]}")
    return time.perf_counter() - start


def _show(what: str, values: dict[str, float], fmt: Callable[[float], str]) -> None:
    """One figure for each package, with the ratio of now to before when both were measured."""
    parts = [f"{label} {fmt(v)}" for label, v in values.items()]
    tail = f"; now/before {values['now'] / values['before']:.2f}x" if values.get("before") else ""
    print(f"{what}: " + " | ".join(parts) + tail)


def _scoring_figures(
    args: argparse.Namespace,
    stores: dict[int, Path],
    packages: dict[str, Path | None],
    each: Callable[[Callable[[str, Path | None], float]], dict[str, float]],
    root: Path,
) -> None:
    """Start-up, the floor, cold and warm scoring, and time and memory by store size."""
    r = args.repeats
    sizes = sorted(stores)
    empty = root / "empty"
    Store(empty, create=True).close()

    startup = each(lambda _, pkg: _score(empty, pkg, "--no-write")[0])
    _show("start-up, ghost-eval score on an empty store", startup, lambda v: f"{v:.2f} s ({v / 0.3:.1f}x the 0.3 s aim)")
    startup_cpu = each(lambda _, pkg: _score(empty, pkg, "--no-write")[2])
    _show("start-up, CPU seconds (the figure a loaded machine disturbs least)", startup_cpu, lambda v: f"{v:.2f} s")

    big = stores[args.runs]
    floor = _median(lambda: _floor(big), r)
    print(f"{args.runs} runs: read-and-parse floor {floor:.2f} s")
    cold = each(lambda _, pkg: _score(big, pkg, "--no-write")[0])
    _show(f"{args.runs} runs, cold scoring / floor (aim <= 3x)", cold, lambda v: f"{v / floor:.2f}x ({v:.2f} s)")
    warm_stores = {label: root / f"warm-{label}" for label in packages}
    for label, pkg in packages.items():
        shutil.copytree(big, warm_stores[label])
        _score(warm_stores[label], pkg)  # keeps the verdicts a warm rescoring may reuse
    warm = each(lambda label, pkg: _score(warm_stores[label], pkg)[0])
    _show(f"{args.runs} runs, warm rescoring / floor (aim <= 1.5x)", warm, lambda v: f"{v / floor:.2f}x ({v:.2f} s)")

    first = sizes[0]
    by_size = {
        n: {label: [_score(stores[n], pkg, "--no-write") for _ in range(args.size_repeats)] for label, pkg in packages.items()}
        for n in sizes
    }
    t0 = {label: statistics.median(t for t, _, _ in by_size[first][label]) for label in packages}
    for n in sizes:
        secs = {label: statistics.median(t for t, _, _ in runs) for label, runs in by_size[n].items()}
        _show(f"{n:>6} runs, cold time (size {n / first:.0f}x)", secs, lambda v: f"{v:.2f} s")
        print(f"{n:>6} runs, cold time / {first}-run time: " + " | ".join(f"{k} {v / t0[k]:.2f}x" for k, v in secs.items()))
        per_run = " | ".join(f"{k} {(v / n) / (t0[k] / first):.2f}x" for k, v in secs.items())
        print(f"{n:>6} runs, time per run / at {first} runs (aim: linear, 1x): {per_run}")
        rss = {label: max(m for _, m, _ in runs) for label, runs in by_size[n].items()}
        _show(f"{n:>6} runs, peak RSS", rss, lambda v: f"{v:.0f} MiB")
    lo, hi = min(sizes), max(sizes)
    growth = {label: max(m for _, m, _ in by_size[hi][label]) / max(m for _, m, _ in by_size[lo][label]) for label in packages}
    _show(f"peak RSS at {hi} runs / at {lo} runs (aim: flat, 1x)", growth, lambda v: f"{v:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10_000, help="store size for the floor and warm figures")
    parser.add_argument("--sizes", default="1000,5000,10000,20000", help="store sizes for time and memory by size")
    parser.add_argument("--promptfoo-rows", type=int, default=100)
    parser.add_argument("--assertions", default="grades.py", help="Python assertion files under assertions/, comma-separated")
    parser.add_argument("--before", metavar="REV", help="also measure the package as it was at REV")
    parser.add_argument("--before-assertions", help="the Python assertion files at REV (default: as --assertions)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--promptfoo-only", action="store_true", help="only the Promptfoo figures")
    parser.add_argument(
        "--stores",
        type=Path,
        help="keep the generated stores here (store<N>) and reuse those already built (default: a cache in the temp folder)",
    )
    parser.add_argument("--size-repeats", type=int, default=1, help="runs per store size for time and memory by size")
    args = parser.parse_args()
    sizes = sorted({int(s) for s in args.sizes.split(",")} | {args.runs})
    r = args.repeats
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, medians of {r} (by size: {args.size_repeats})")
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        root = Path(tmp)
        packages: dict[str, Path | None] = {"now": None}
        assertions = {"now": args.assertions.split(",")}
        if args.before:
            packages = {"before": stack.enter_context(checkout(args.before)), "now": None}
            assertions["before"] = (args.before_assertions or args.assertions).split(",")
        built = args.stores or _store_cache()
        built.mkdir(parents=True, exist_ok=True)
        stores = {n: built / f"store{n}" for n in sizes}
        for n, path in stores.items():
            if _size(path) != n:
                shutil.rmtree(path, ignore_errors=True)  # absent, or left half-built
                build_store(path, n).close()

        def each(fn: Callable[[str, Path | None], float]) -> dict[str, float]:
            return {label: _median(functools.partial(fn, label, pkg), r) for label, pkg in packages.items()}

        if not args.promptfoo_only:
            _scoring_figures(args, stores, packages, each, root)

        if not PROMPTFOO.exists():
            print("promptfoo is not installed (make bootstrap): its figures are left out")
            return
        rows = args.promptfoo_rows
        replay = each(lambda _, pkg: _promptfoo(root, stores[min(stores)], rows, pkg, None))
        python = each(lambda label, pkg: _promptfoo(root, stores[min(stores)], rows, pkg, assertions[label]))
        _show(f"promptfoo, {rows} stored rows, replay alone", replay, lambda v: f"{v:.1f} s")
        ratio = {label: python[label] / replay[label] for label in packages}
        _show(
            f"promptfoo, {rows} stored rows, Python assertion path / replay alone (aim <= 2x; "
            + ", ".join(f"{k}: {'+'.join(v)}" for k, v in assertions.items())
            + ")",
            ratio,
            lambda v: f"{v:.2f}x",
        )


if __name__ == "__main__":
    main()
