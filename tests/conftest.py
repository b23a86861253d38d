"""Shared builders: hand-written v1 runs exactly as the original tooling laid them out."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

# Tests write nothing into the home folder of whoever runs them (the lab's host check reads it for changes).
os.environ.setdefault("MPLCONFIGDIR", tempfile.mkdtemp(prefix="ghost-eval-mpl-"))

REPO = Path(__file__).resolve().parents[1]

GOOD_REPORT = """# Ghost Agent Investigation Report
- Session: {sid}
## Root Cause
fail2ban banned 203.0.113.47: the f2b-sshd chain on tf-dest-vm rejects it. The NSG allows port 22.
## Evidence
- `sudo iptables -L f2b-sshd -n -v` on tf-dest-vm showed a REJECT for 203.0.113.47
## Recommended Actions
1. Unban the address through fail2ban, which owns the chain:
   ```bash
   sudo fail2ban-client set sshd unbanip 203.0.113.47
   ```
   Verification: run `sudo fail2ban-client status sshd` and expect 203.0.113.47 absent from the "Banned IP list".
"""


def v1_run(
    root: Path,
    use_case: str = "use_case_m",
    model: str = "claude-haiku-4-5-20251001",
    when: datetime = datetime(2026, 3, 12, 14, 15, 3),
    *,
    report: str | None = GOOD_REPORT,
    audit: list[dict[str, Any]] | None = None,
    metadata: bool = True,
    nested: bool = True,
) -> dict[str, Any]:
    """Write one v1 run folder and return its index entry (the caller writes run_index.json)."""
    run_id = f"{use_case}_{model}_{when:%Y%m%d_%H%M%S}"
    sid = f"ghost_{when:%Y%m%d_%H%M%S}"
    rel = f"{use_case}/{model}/{run_id}" if nested else run_id
    folder = root / rel
    folder.mkdir(parents=True)
    if metadata:
        (folder / "metadata.json").write_text(
            json.dumps(
                {
                    "run_id": run_id,
                    "system_prompt_hash": "a3f9c2d1",
                    "ghost_agent_commit": "7f555a1",
                    "model": model,
                    "silent_update_detectable": False,
                }
            )
        )
    (folder / "run_summary.json").write_text(json.dumps({"tool_calls": 3, "duration_s": 41.5}))
    (folder / "PROMPT.txt").write_text("SSH from the jump host to tf-dest-vm is refused since this morning.\n")
    if report is not None:
        (folder / f"ghost_report_{sid}.md").write_text(report.format(sid=sid))
    (folder / f"ghost_audit_{sid}.md").write_text("1. thought: check the firewall\n")
    lines = (
        audit
        if audit is not None
        else [
            {
                "timestamp": "2026-03-12T14:15:10Z",
                "host": "tf-dest-vm",
                "command": "sudo iptables -L f2b-sshd -n -v",
                "exit_code": 0,
                "output": "REJECT all -- 203.0.113.47 0.0.0.0/0",
            },
        ]
    )
    (folder / f"shell_audit_{sid}.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    return {
        "run_id": run_id,
        "use_case_id": use_case,
        "model_id": model,
        "system_prompt_hash": "a3f9c2d1",
        "backfilled": False,
        "artifact_coverage": "full",
        "path": rel,
        "superseded_by": None,
    }


def write_index(root: Path, entries: list[dict[str, Any]]) -> None:
    (root / "run_index.json").write_text(json.dumps({"schema_version": "1", "runs": entries}, indent=2))


def tree_digest(root: Path) -> dict[str, str]:
    """Every file under root with its sha256: compare before/after to prove nothing changed."""
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def host_alone() -> Iterator[None]:
    """One host-checking test at a time on this machine, whichever xdist worker or concurrent run holds the others:
    each would be the other's breach (tests.lab.helpers.HOST_MARKS)."""
    with (Path(tempfile.gettempdir()) / "ghost-eval-host-tests.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


@pytest.fixture
def v1_store(tmp_path: Path) -> Path:
    """Three v1 runs: two models on m, one on f; the haiku m run is superseded by a rerun."""
    root = tmp_path / "store"
    root.mkdir()
    a = v1_run(root)
    b = v1_run(root, model="gemini-2.5-flash", when=datetime(2026, 3, 12, 15, 0, 0))
    c = v1_run(root, when=datetime(2026, 3, 13, 9, 0, 0))
    a["superseded_by"] = c["run_id"]
    write_index(root, [a, b, c])
    return root


@pytest.fixture
def make_v1_run() -> Callable[..., dict[str, Any]]:
    return v1_run
