"""Synthetic repeats and addon runs for the bundled demo store, so every suite and decision has data to work on.

The 30 hand-written runs give one run per case and model; the sentinel and variants suites repeat each
identity k times, and the variant compares runs with and without its addon. This derives those runs from
the hand-written ones (same report, same facts), marks them synthetic, and writes them through
`Store.append` like any other run. `python -m ghost_eval.store.demo STORE` adds them to a store that
holds the 30 runs; a run id that exists is refused, so it never rewrites anything.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from ghost_eval.run.identity import HashKind, RunMetadata, addon_hash, make_run_id
from ghost_eval.store.artifact_store import Store, bundled_path
from ghost_eval.store.layout import METADATA_FILE, IndexEntry
from ghost_eval.store.query import RunFilter

__all__ = ["ADDON_NAME", "REPEATS", "extend_demo_store"]

REPEATS = 5
"""k of the sentinel criteria and of the variant spec: runs per case, model and prompt."""
ADDON_NAME = "tc-netfilter-boundary"
_BASELINE_REPEATED = ("use_case_f", "use_case_g", "use_case_j", "use_case_m", "use_case_q")
"""The sentinel cases (f, m, q) and the variant's other cases (g, j): rows of the sentinel and variants suites."""
_ADDON_DAYS = 14
"""Addon runs are dated two weeks after the hand-written ones: a later experiment on the same cases."""
_FILTER_LISTING = {"use_case_g": "tf-source-vm", "use_case_q": "tf-dest-vm"}
"""Where an addon run of g or q lists the packet filter, as the addon asks: the host of the case's fault."""
_LISTING = "sudo iptables -S"
_DEFAULT_POLICIES = "-P INPUT ACCEPT\n-P FORWARD ACCEPT\n-P OUTPUT ACCEPT\n"
"""`iptables -S` on a guest whose setup adds no rule: the case's setup.sh touches no packet filter there."""
_IGNORES_ADDON = ("use_case_q", "claude-haiku-4-5-20251001")
"""The identity whose addon runs still skip tc and conflate q's two faults, so the variant helps two models of three."""


@dataclass(frozen=True)
class _Derived:
    """One run to write: which hand-written run it copies, when it ran, and with which addon."""

    source: IndexEntry
    when: datetime
    repeat_index: int
    addon: str | None


def _shift(value: str, delta: timedelta) -> str:
    return (datetime.fromisoformat(value) + delta).isoformat()


def _derived_files(store: Store, job: _Derived) -> tuple[RunMetadata, dict[str, str]]:
    """The source run's files under the new session id, its timestamps moved by the same amount."""
    source = store.folder(job.source)
    old_meta = store.read_metadata(job.source)
    assert old_meta is not None and old_meta.timestamp_utc is not None, f"{job.source.run_id}: demo runs carry metadata"
    delta = job.when - old_meta.timestamp_utc
    old_sid, new_sid = f"ghost_{old_meta.timestamp_utc:%Y%m%d_%H%M%S}", f"ghost_{job.when:%Y%m%d_%H%M%S}"
    host = _FILTER_LISTING.get(job.source.use_case_id)
    lists_filter = bool(job.addon and host and (job.source.use_case_id, job.source.model_id) != _IGNORES_ADDON)
    files: dict[str, str] = {}
    for path in sorted(p for p in source.iterdir() if p.is_file() and p.name != METADATA_FILE):
        text = path.read_text(encoding="utf-8").replace(old_sid, new_sid)
        if path.suffix == ".jsonl":
            lines = [json.loads(line) for line in text.splitlines() if line.strip()]
            for line in lines:
                line["timestamp"] = _shift(line["timestamp"], delta)
            if lists_filter and host:
                lines.append(_filter_listing(host, new_sid, _shift(lines[-1]["timestamp"], timedelta(seconds=5))))
            text = "".join(json.dumps(line) + "\n" for line in lines)
        elif path.name == "run_summary.json":
            summary = json.loads(text)
            summary["created_at"] = _shift(summary["created_at"], delta)
            if lists_filter:
                summary["command_sequence"].append(_LISTING)
                for count in ("commands_issued", "shell_commands", "tool_calls"):
                    summary[count] += 1
            text = json.dumps(summary, indent=2) + "\n"
        files[path.name.replace(old_sid, new_sid)] = text
    meta = RunMetadata(
        schema_version="2",
        run_id=make_run_id(job.source.use_case_id, job.source.model_id, job.when),
        use_case_id=job.source.use_case_id,
        model_id=job.source.model_id,
        system_prompt_hash=None if job.addon else old_meta.system_prompt_hash,
        hash_kind=HashKind.UNKNOWN if job.addon else old_meta.hash_kind,
        addon_name=ADDON_NAME if job.addon else None,
        addon_hash=job.addon,
        repeat_index=job.repeat_index,
        agent_commit=old_meta.agent_commit,
        timestamp_utc=job.when,
        started_at=job.when,
        synthetic=True,
        derived_from=job.source.run_id,
    )
    return meta, files


def _filter_listing(host: str, sid: str, when: str) -> dict[str, object]:
    """The packet-filter listing the addon asks for, as the run's last audited command."""
    return {
        "timestamp": when,
        "session_id": sid,
        "host": host,
        "command": _LISTING,
        "exit_code": 0,
        "output": _DEFAULT_POLICIES,
        "approval": "not_needed",
        "executed": True,
    }


def _jobs(originals: list[IndexEntry], store: Store, addon: str) -> Iterator[_Derived]:
    for entry in originals:
        meta = store.read_metadata(entry)
        assert meta is not None and meta.timestamp_utc is not None
        start = meta.timestamp_utc.astimezone(UTC)
        if entry.use_case_id in _BASELINE_REPEATED:
            for r in range(1, REPEATS):
                yield _Derived(entry, start + timedelta(hours=r), r, None)
            for r in range(REPEATS):
                yield _Derived(entry, start + timedelta(days=_ADDON_DAYS, hours=r), r, addon)


def extend_demo_store(root: Path) -> list[IndexEntry]:
    """Append the repeats and addon runs to a store holding the 30 hand-written runs; returns the new entries."""
    addon_text = (bundled_path("variants") / "addons" / f"{ADDON_NAME}.txt").read_text(encoding="utf-8")
    added: list[IndexEntry] = []
    with Store(root) as store:
        originals = [e for e in store.runs(RunFilter()) if (m := store.read_metadata(e)) and m.repeat_index is None]
        for job in _jobs(originals, store, addon_hash(addon_text)):
            meta, files = _derived_files(store, job)
            added.append(store.append(meta, files))
    return added


if __name__ == "__main__":
    print(f"{len(extend_demo_store(Path(sys.argv[1])))} runs added")
