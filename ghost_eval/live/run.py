"""One live run, end to end: fault setup → snapshot → agent → capture into the store → teardown, always.

Rows that share a target never plant their faults at the same time: a file lock per target
serialises them across Promptfoo's worker processes; different targets run in parallel.
"""

from __future__ import annotations

import fcntl
import os
import shlex
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from ghost_eval.agent.capture import artifact_files, read_artifacts, store_payload
from ghost_eval.agent.loop import Limits
from ghost_eval.agent.prompt import Addon
from ghost_eval.agent.runner import AgentConfig, Provider, investigate
from ghost_eval.cases import Case
from ghost_eval.errors import GhostEvalError, RunExistsError
from ghost_eval.identity import HashKind, RunMetadata, addon_hash, make_run_id, parse_run_id, v1_use_case_id
from ghost_eval.lab.layout import default_state_dir
from ghost_eval.live.recipes import applied, recipe_of
from ghost_eval.live.snapshot import take_snapshot
from ghost_eval.live.target import Target, load_target
from ghost_eval.records import dump_json
from ghost_eval.snapshot import InfraSnapshot
from ghost_eval.store import IndexEntry, Store
from ghost_eval.store.reader import SNAPSHOT_FILE

__all__ = ["LiveConfig", "LiveRun", "run_case", "target_path"]

_LOCK_DIR = Path(tempfile.gettempdir()) / "ghost-eval-targets"


@dataclass(frozen=True)
class LiveConfig:
    """What the live provider's config names."""

    provider: Provider
    model: str
    store: Path
    target: str = "lab"
    """`lab` (the local lab's target.json) or a target file naming subscription, resource group, hosts and keys."""
    agent: str = "reference"
    """`reference`, or a command template for an original Ghost Agent checkout, e.g.
    `python ghost_agent.py --llm-provider {provider} --model {model} --auto-approve --audit-dir {audit_dir}`
    (`{addon}` becomes `--prompt-addon FILE` when an addon is set). The symptom goes to standard input."""
    addon_file: Path | None = None
    run_label: str | None = None
    auto_approve: bool = False
    """Eval mode: commands needing approval run and are recorded as `eval_auto`, never as human approvals."""
    limits: Limits = field(default_factory=Limits)
    agent_timeout_s: float = 900.0


@dataclass
class LiveRun:
    entry: IndexEntry
    aborted: str | None
    """Why the agent did not complete (timeout, crash, turn limit), or None."""


def target_path(target: str) -> Path:
    return default_state_dir() / "target.json" if target == "lab" else Path(target)


@contextmanager
def _exclusive(target: Target) -> Iterator[None]:
    """One fault at a time per target, across processes."""
    _LOCK_DIR.mkdir(parents=True, exist_ok=True)
    with open(_LOCK_DIR / f"{target.name}.lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _reference(case: Case, target: Target, config: LiveConfig) -> tuple[dict[str, str], str | None]:
    addon = Addon.from_file(config.addon_file) if config.addon_file else None
    run = investigate(
        case.symptom,
        target,
        AgentConfig(config.provider, config.model, auto_approve=config.auto_approve, addon=addon, limits=config.limits),
    )
    return artifact_files(run), run.result.aborted


def _external(case: Case, target_file: Path, config: LiveConfig) -> tuple[dict[str, str], str | None]:
    """Drive an original checkout through its command-line contract; a crash or timeout is recorded, not raised."""
    with tempfile.TemporaryDirectory(prefix="ghost-audit-") as audit_dir:
        addon = f"--prompt-addon {shlex.quote(str(config.addon_file))}" if config.addon_file else ""
        command = config.agent.format(provider=config.provider, model=config.model, audit_dir=shlex.quote(audit_dir), addon=addon)
        env = {**os.environ, "GHOST_EVAL_TARGET": str(target_file)}
        aborted = None
        try:
            proc = subprocess.run(
                shlex.split(command),
                input=case.symptom,
                text=True,
                capture_output=True,
                env=env,
                timeout=config.agent_timeout_s,
                check=False,
            )
            if proc.returncode != 0:
                aborted = f"agent exited with status {proc.returncode}: {proc.stderr.strip()[-500:]}"
        except subprocess.TimeoutExpired:
            aborted = f"agent timed out after {config.agent_timeout_s:.0f} s"
        except OSError as exc:
            aborted = f"agent could not start: {exc}"
        files = {p.name: p.read_text(encoding="utf-8", errors="replace") for p in Path(audit_dir).iterdir() if p.is_file()}
        try:
            return read_artifacts(Path(audit_dir)), aborted
        except GhostEvalError:
            return files, aborted or ("agent wrote no report" if not any(n.startswith("ghost_report_") for n in files) else None)


def _external_metadata(case: Case, config: LiveConfig, repeat_index: int | None, environment: str) -> RunMetadata:
    """An original checkout does not report its prompt: the hash kind says so instead of guessing."""
    started = datetime.now(UTC).replace(microsecond=0)
    addon = config.addon_file.read_text(encoding="utf-8") if config.addon_file else None
    use_case_id = v1_use_case_id(case.id)
    return RunMetadata(
        schema_version="2",
        run_id=make_run_id(use_case_id, config.model, started),
        use_case_id=use_case_id,
        model_id=config.model,
        hash_kind=HashKind.UNKNOWN,
        addon_name=config.addon_file.stem if config.addon_file else None,
        addon_hash=addon_hash(addon) if addon else None,
        provider=config.provider,
        run_label=config.run_label,
        repeat_index=repeat_index,
        started_at=started,
        environment=environment,
    )


def _append(store: Store, metadata: RunMetadata, files: dict[str, str]) -> IndexEntry:
    """Run ids have one-second resolution; a repeat that started in the same second takes the next free id."""
    while True:
        try:
            return store.append(metadata, files)
        except RunExistsError:
            parsed = parse_run_id(metadata.run_id)
            if parsed is None:
                raise
            metadata = metadata.model_copy(update={"run_id": make_run_id(parsed[0], parsed[1], parsed[2] + timedelta(seconds=1))})


def run_case(case: Case, config: LiveConfig, repeat_index: int | None = None, recipe_case: Case | None = None) -> LiveRun:
    """`recipe_case` is the fault case whose recipe a behaviour case runs on (its `recipe_from`)."""
    recipe = recipe_of(recipe_case or case)
    if recipe is None:
        raise GhostEvalError(f"case {case.id} has no recipe: it cannot be run live (cases/{case.id}.yaml, field 'recipe')")
    target_file = target_path(config.target)
    target = load_target(target_file)
    snapshot: InfraSnapshot | None = None
    with _exclusive(target), applied(target, recipe, label=f"case {case.id}"):
        snapshot = take_snapshot(target)
        if config.agent == "reference":
            files, aborted = _reference(case, target, config)
        else:
            files, aborted = _external(case, target_file, config)
    if "agent_run.json" in files:
        metadata, files = store_payload(
            files, case.id, run_label=config.run_label, repeat_index=repeat_index, environment=target.name
        )
    else:
        metadata = _external_metadata(case, config, repeat_index, target.name)
    files[SNAPSHOT_FILE] = dump_json(snapshot)
    store = Store(config.store, create=True)
    try:
        return LiveRun(_append(store, metadata, files), aborted)
    finally:
        store.close()
