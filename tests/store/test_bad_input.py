"""A corpus of bad input (issue 21): each store is damaged one way beside valid runs, then listed, verified and scored
by the real CLI in a subprocess with a timeout. The damaged file must be named, every valid run still listed and
scored, and nothing may hang."""

from __future__ import annotations

import hashlib
import json
import os
import socket
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import pytest

from ghost_eval.base.safe_read import human_size
from ghost_eval.store import RunFilter, Store
from ghost_eval.store.index import RunIndex
from ghost_eval.store.layout import INDEX_FILE, SQLITE_FILE
from tests.conftest import REPO, v1_run, write_index
from tests.store.helpers import our_run, our_store

TIMEOUT = 120
"""Seconds any one command may take; a FIFO read by a plain open() would block past it."""
_MAIN = "import sys; from ghost_eval.cli import main; sys.exit(main())"


def cli(*argv: str) -> tuple[int, str, str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-c", _MAIN, *argv], capture_output=True, text=True, timeout=TIMEOUT, env=env)
    return done.returncode, done.stdout, done.stderr


def _listed(root: Path) -> set[str]:
    rc, out, err = cli("store", "query", "--store", str(root), "--include-superseded")
    assert rc == 0, err
    return {json.loads(line)["run_id"] for line in out.splitlines()}


def _scored(root: Path) -> tuple[set[str], str]:
    rc, out, err = cli("score", "--store", str(root), "--no-write", "--format", "jsonl", "--jobs", "1")
    assert rc == 0, err
    return {json.loads(line)["run_id"] for line in out.splitlines()}, err


@dataclass
class Bad:
    """A store with runs `good` beside one damaged thing: `victim` (a run id, or None) and the text naming it."""

    root: Path
    good: list[str]
    victim: str
    folder: Path


def _v1(tmp_path: Path) -> Bad:
    root = tmp_path / "store"
    root.mkdir()
    entries = [v1_run(root, when=datetime(2026, 3, 1, 10, 0, s)) for s in range(3)]
    write_index(root, entries)
    ids = [e["run_id"] for e in entries]
    return Bad(root, ids, ids[1], root / entries[1]["path"])


def _entries(bad: Bad) -> list[dict[str, object]]:
    runs: list[dict[str, object]] = json.loads((bad.root / INDEX_FILE).read_text())["runs"]
    return runs


def _set_index(bad: Bad, runs: list[dict[str, object]]) -> None:
    write_index(bad.root, runs)


def _report(bad: Bad) -> Path:
    return next(bad.folder.glob("ghost_report_*.md"))


def _audit(bad: Bad) -> Path:
    return next(bad.folder.glob("shell_audit_*.jsonl"))


def _fifo(path: Path) -> None:
    path.unlink()
    os.mkfifo(path)


def _socket(path: Path) -> None:
    """Bound under a short name (AF_UNIX paths are short), then moved into place."""
    path.unlink()
    short = Path(tempfile.mkdtemp(dir="/tmp")) / "s"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(short))
    short.rename(path)


def _sparse(path: Path, size: int) -> None:
    with open(path, "wb") as fh:
        fh.truncate(size)


def _empty_sqlite(bad: Bad) -> None:
    """Our store whose SQLite index lost its rows (what a failed first write left): the view still lists the runs."""
    db = bad.root / SQLITE_FILE
    for p in db.parent.iterdir():
        p.unlink()
    RunIndex.open(db).close()


Damage = Callable[[Bad], None]
SCENARIOS: dict[str, tuple[Damage, str, bool]] = {
    # name: (damage, text every command's output must hold, whether the victim is still listed)
    "fifo as run_summary.json": (lambda b: _fifo(b.folder / "run_summary.json"), "run_summary.json", True),
    "fifo as run_index.json": (lambda b: _fifo(b.root / INDEX_FILE), "run_index.json: is a FIFO", True),
    "run_index.json links to /dev/zero": (
        lambda b: ((b.root / INDEX_FILE).unlink(), (b.root / INDEX_FILE).symlink_to("/dev/zero")),
        "run_index.json: path 'run_index.json' points outside the store",
        True,
    ),
    "100000 [ in metadata.json": (
        lambda b: (b.folder / "metadata.json").write_text("[" * 100_000),
        "metadata.json: is nested deeper than",
        True,
    ),
    "100000 [ in run_index.json": (
        lambda b: (b.root / INDEX_FILE).write_text("[" * 100_000),
        "run_index.json: is nested deeper than",
        True,
    ),
    "deep line in the shell audit": (
        lambda b: _audit(b).write_text('{"command": "ls"}\n' + "[" * 100_000 + "\n"),
        "line 2: nested deeper than",
        True,
    ),
    "3 GB metadata.json": (
        lambda b: _sparse(b.folder / "metadata.json", 3 * 1024**3),
        "metadata.json: is 3 GB, above the 16 MB limit for JSON files",
        True,
    ),
    "truncated JSON": (
        lambda b: (b.folder / "run_summary.json").write_text('{"tool_calls": 3, "dur'),
        "run_summary.json: is not valid JSON",
        True,
    ),
    "wrong type": (
        lambda b: (b.folder / "run_summary.json").write_text('{"tool_calls": "six"}'),
        "run_summary.json: field 'tool_calls'",
        True,
    ),
    "non-UTF-8 bytes": (
        lambda b: (b.folder / "run_summary.json").write_bytes(b'{"abort_reason": "\xff"}'),
        "run_summary.json: is not valid UTF-8 (byte 18)",
        True,
    ),
    "0-byte metadata.json": (lambda b: (b.folder / "metadata.json").write_bytes(b""), "metadata.json: is empty", True),
    "run folder missing its report": (lambda b: _report(b).unlink(), "report is missing", True),
    "report links out of the store": (
        lambda b: (_report(b).unlink(), _report_link(b)),
        "is a symbolic link; refused, not followed",
        True,
    ),
    "directory where run_summary.json should be": (
        lambda b: ((b.folder / "run_summary.json").unlink(), (b.folder / "run_summary.json").mkdir()),
        "run_summary.json: is not a regular file",
        True,
    ),
    "socket as PROMPT.txt": (lambda b: _socket(b.folder / "PROMPT.txt"), "PROMPT.txt: is not a regular file", True),
    "index entry outside the store": (
        lambda b: _set_index(b, [{**e, "path": "../outside"} if i == 1 else e for i, e in enumerate(_entries(b))]),
        "points outside the store",
        False,
    ),
    "run id ../ in the index": (
        lambda b: _set_index(b, [{**e, "run_id": "../../etc"} if i == 1 else e for i, e in enumerate(_entries(b))]),
        "field 'run_id'",
        False,
    ),
    "duplicate run ids": (lambda b: _set_index(b, [*_entries(b), _entries(b)[1]]), "duplicate entry", True),
    "empty SQLite index beside the view": (_empty_sqlite, "runs.sqlite: holds no runs", True),
    "SQLite index that is not a database": (
        lambda b: (b.root / SQLITE_FILE).write_bytes(b"not a database" * 1000),
        "runs.sqlite: cannot be read",
        True,
    ),
}
_OURS = {"empty SQLite index beside the view", "SQLite index that is not a database"}
_NOT_SCORED = {"0-byte metadata.json", "100000 [ in metadata.json", "3 GB metadata.json", "socket as PROMPT.txt"}
"""Scoring never reads a run's metadata or prompt: only `list`/`verify` name them."""


def _snapshot(root: Path) -> dict[str, tuple[int, int, str]]:
    """Every entry's type, size and (for a regular file under 64 MB) digest, never opening anything else."""
    found: dict[str, tuple[int, int, str]] = {}
    for p in sorted(root.rglob("*")):
        st = p.lstat()
        small = stat.S_ISREG(st.st_mode) and st.st_size < 64 * 1024 * 1024
        found[str(p.relative_to(root))] = (st.st_mode, st.st_size, hashlib.sha256(p.read_bytes()).hexdigest() if small else "")
    return found


def _report_link(bad: Bad) -> None:
    outside = bad.root.parent / "elsewhere.md"
    outside.write_text("# Report\n## Root Cause\nplanted\n")
    (bad.folder / "ghost_report_ghost_20260301_100001.md").symlink_to(outside)


def _ours(tmp_path: Path) -> Bad:
    root = tmp_path / "store"
    ids = our_store(root, 3)
    with Store(root) as store:
        folder = store.folder(store.get(ids[1]))
    return Bad(root, ids, ids[1], folder)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_bad_input_is_named_and_every_valid_run_still_counts(tmp_path: Path, name: str) -> None:
    damage, named, victim_listed = SCENARIOS[name]
    bad = _ours(tmp_path) if name in _OURS else _v1(tmp_path)
    damage(bad)
    before = _snapshot(bad.root)
    valid = set(bad.good) if victim_listed else set(bad.good) - {bad.victim}

    assert _listed(bad.root) == valid
    scored, score_err = _scored(bad.root)
    assert valid - {bad.victim} <= scored, score_err
    assert name in _NOT_SCORED or named in score_err, score_err
    rc, out, err = cli("store", "verify", "--store", str(bad.root))
    assert rc == 1 and named in out, out + err
    assert all(": " in line for line in out.splitlines()), out  # one line per problem, each naming its file
    assert _snapshot(bad.root) == before  # reading never changes the store


def test_a_bom_is_read_as_the_json_it_starts(tmp_path: Path) -> None:
    """A byte order mark (a Windows editor) in a run file or the index hides nothing and is no problem."""
    bad = _v1(tmp_path)
    for path in (bad.folder / "metadata.json", bad.root / INDEX_FILE):
        path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    assert _listed(bad.root) == set(bad.good)
    rc, out, _ = cli("store", "verify", "--store", str(bad.root))
    assert rc == 0, out


def test_a_huge_report_is_scored_on_its_first_megabyte_in_bounded_memory(tmp_path: Path) -> None:
    """40 MB of report: read and hashed in bounded memory (the whole text no longer costs its size several times
    over), scored on its first 1 MB and said so."""
    root = tmp_path / "store"
    with Store(root, create=True) as store:
        store.append(*our_run(0))
        meta, files = our_run(1)
        name = next(n for n in files if n.startswith("ghost_report_"))
        files[name] += "    0     0 REJECT     all  --  *      *       203.0.113.47   0.0.0.0/0\n" * 600_000
        entry = store.append(meta, files)
    report = root / entry.path / name
    assert report.stat().st_size > 40 * 1024 * 1024
    measured = "import sys; from ghost_eval.cli import main; rc = main(); " + _PEAK
    argv = ["score", "--store", str(root), "--no-write", "--format", "jsonl", "--jobs", "1"]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-c", measured, *argv], capture_output=True, text=True, timeout=TIMEOUT, env=env)
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.splitlines()) == 2
    size = human_size(report.stat().st_size)
    assert f"{report}: is {size}; only its first 1 MB read (the rest is not scored)" in done.stderr, done.stderr
    peak_mb = int(done.stderr.rsplit("VmHWM:", 1)[1].split()[0]) / 1024
    assert peak_mb < 200, peak_mb  # interpreter and scorer about 100 MB; the 40 MB report is never held whole


_PEAK = "print(open('/proc/self/status').read(), file=sys.stderr); sys.exit(rc)"
"""The process's own peak (VmHWM, kB): `ru_maxrss` would carry pytest's peak across the exec."""


@contextmanager
def _small_disk(where: Path, size: str) -> Iterator[Path]:
    """A real tmpfs of `size` (the tests run as root); skipped where mounting is not allowed."""
    where.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True).returncode:
        pytest.skip("cannot mount a tmpfs here (needs root)")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=True)


def _fill(disk: Path) -> Path:
    filler = disk / "filler"
    with open(filler, "wb", buffering=0) as fh:
        try:
            while True:
                fh.write(b"\0" * 4096)
        except OSError:
            pass
    return filler


def test_a_full_disk_during_the_first_write_hides_no_run(tmp_path: Path) -> None:
    """The first write to a v1 store moves its index into SQLite; with the disk full it fails, and afterwards the
    store must still list all its runs (it listed none: the half-made SQLite index was empty)."""
    with _small_disk(tmp_path / "disk", "1m") as disk:
        bad = _v1(disk)
        filler = _fill(disk)
        with pytest.raises(Exception, match=r"full|space"):
            Store(bad.root).append(*our_run(7))
        filler.unlink()
        assert _listed(bad.root) == set(bad.good)
        with Store(bad.root) as store:  # and the next write puts them all in the index
            store.append(*our_run(7))
        with Store(bad.root) as store:
            assert len(store.runs(RunFilter())) == 4 and store.problems == []


def test_concurrent_first_writes_queue_instead_of_failing(tmp_path: Path) -> None:
    """Ten writers start the same new store at the same instant: every one of them appends its run."""
    root = tmp_path / "store"
    at = time.time() + 2
    script = (
        "import sys, time; from pathlib import Path; from ghost_eval.store import Store; from tests.store.helpers import"
        " our_run\nwhile time.time() < float(sys.argv[2]): pass\nStore(Path(sys.argv[1]), create=True).append("
        "*our_run(int(sys.argv[3]), model=f'm{sys.argv[3]}'))"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    procs = [
        subprocess.Popen([sys.executable, "-c", script, str(root), str(at), str(i)], stderr=subprocess.PIPE, env=env)
        for i in range(10)
    ]
    errors = [p.communicate(timeout=TIMEOUT)[1].decode() for p in procs]
    assert [p.returncode for p in procs] == [0] * 10, errors
    assert len(Store(root).runs(RunFilter())) == 10


def test_reindex_refuses_a_run_id_that_climbs_out(tmp_path: Path) -> None:
    bad = _ours(tmp_path)
    loose = bad.root / "m" / "x" / "loose"
    loose.mkdir(parents=True)
    (loose / "metadata.json").write_text(json.dumps({"run_id": "../../../etc", "use_case_id": "m", "model_id": "x"}))
    rc, _, err = cli("store", "reindex", "--store", str(bad.root))
    assert rc == 1 and f"{loose / 'metadata.json'}: field 'run_id': run id '../../../etc'" in err, err
    assert _listed(bad.root) == set(bad.good)


@pytest.mark.parametrize("run_id", ["../x", "/etc/passwd", "a\\b"])
def test_run_ids_on_the_command_line_are_refused(tmp_path: Path, run_id: str) -> None:
    bad = _ours(tmp_path)
    rc, _, err = cli("store", "show", "--store", str(bad.root), run_id)
    assert rc == 2 and "is not a single folder name" in err, err
