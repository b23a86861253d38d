"""Trials of stored runs, each in a lab of its own: built for the trial (then removed and checked for traces), or a
running one named by its state folder, rebuilt between trials so that no run's fix is judged on what an earlier
run's fix left in a VM. Around every trial the host is checked for changes a VM made outside itself.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ghost_eval.base.settings import DEFAULTS
from ghost_eval.cases.case import Case, case_key
from ghost_eval.connect.target import Target
from ghost_eval.evaluation.v1_verdict import add_verdict
from ghost_eval.lab import LabLayout, lab_down, lab_up
from ghost_eval.lab.network import lab_links, lab_namespaces
from ghost_eval.lab.sandbox import exec_in_vm, in_masked_root
from ghost_eval.store import IndexEntry, Store
from ghost_eval.trials.host import host_changes, host_snapshot, restore_host
from ghost_eval.trials.record import TrialVerdict
from ghost_eval.trials.trial import Console, TrialError, try_fix

__all__ = ["LabSession", "lab_console", "lab_traces", "summary", "trial_stored_run"]


def lab_console(state_dir: Path) -> Console:
    """The lab host's way into a VM when its management SSH is gone (a fix that drops it): `crun exec` into the VM's
    sandbox, with the VM's own capabilities and seccomp filter. Used only to capture and tear down, never to run a
    recommended command."""
    layout = LabLayout(state_dir)
    vms = {vm.name: vm for vm in layout.vms}

    def console(vm: str, command: str, timeout: float) -> tuple[int, str, str]:
        return exec_in_vm(layout, vms[vm], command, timeout)

    return console


def lab_traces(state_dir: Path) -> list[str]:
    """What a removed lab left on the host: namespaces, links, its emulator's process."""
    layout = LabLayout(state_dir)
    left = [f"namespace {n}" for n in lab_namespaces(layout)] + [f"link {n}" for n in lab_links(layout)]
    needle = f"ghost_eval.lab.arm.daemon\0{state_dir / 'arm'}".encode()
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and needle in (proc / "cmdline").read_bytes():
                left.append(f"ARM emulator process {proc.name}")
        except OSError:
            continue
    return left


class LabSession:
    """Where trials run: `state_dir` names a running lab to use (kept up); None builds a lab per session, removed at
    the end and checked for traces (`traces`). Fixes' az commands run with the azure-cli environment in `az_cache`."""

    def __init__(self, state_dir: Path | None = None, az_cache: Path = DEFAULTS.cache_dir) -> None:
        self._given = state_dir
        self.az_cache = az_cache
        self._dir: Path | None = None
        self._target: Target | None = None
        self._used = False
        self.traces: list[str] = []

    @property
    def state_dir(self) -> Path | None:
        return self._dir

    def fresh(self) -> Target:
        """The lab for the next trial: as built, never as an earlier trial left it."""
        if self._used:
            self.rebuild()
        self._used = True
        return self.target

    @property
    def console(self) -> Console:
        self.target  # noqa: B018 - the lab is built first
        assert self._dir is not None
        return lab_console(self._dir)

    @property
    def target(self) -> Target:
        if self._target is None:
            scratch = None if in_masked_root(Path(tempfile.gettempdir()).absolute()) else "/tmp"  # a $TMPDIR VMs see
            self._dir = self._given or Path(tempfile.mkdtemp(prefix="ghost-eval-trial-", dir=scratch))
            self._target = lab_up(self._dir)
        return self._target

    def rebuild(self) -> None:
        """After a trial left something behind: a fresh lab, so the next trial starts from the pristine one."""
        if self._dir is not None:
            lab_down(self._dir)
            self._target = None

    def close(self) -> None:
        if self._dir is not None and self._given is None:
            lab_down(self._dir)
            self.traces = lab_traces(self._dir)
        self._target = None

    @contextmanager
    def open(self) -> Iterator[LabSession]:
        try:
            yield self
        finally:
            self.close()


def trial_stored_run(
    store: Store, entry: IndexEntry, cases: dict[str, Case], session: LabSession
) -> tuple[TrialVerdict, Path | None]:
    """Trial one stored run and keep its verdict beside the run (a new file; nothing is overwritten)."""
    case = cases.get(case_key(entry.use_case_id))
    if case is None:
        raise TrialError(f"run {entry.run_id}: unknown case {entry.use_case_id!r}")
    if case.recipe is None:
        raise TrialError(f"run {entry.run_id}: case {case.id} has no recipe, so its fault cannot be planted in the lab")
    record = store.read(entry)
    if not record.readable:
        raise TrialError(f"run {entry.run_id} cannot be read: " + "; ".join(str(p) for p in record.problems))
    target = session.fresh()
    before = host_snapshot()
    assert session.state_dir is not None  # set once the lab is built (`fresh`)
    verdict = try_fix(record, case, target, session.console, lab_dir=session.state_dir, az_cache=session.az_cache)
    after = host_snapshot()
    lab_state = (str(session.state_dir),) if session.state_dir else ()
    verdict.host_changes = host_changes(before, after, exclude=(*lab_state, str(store.root)))
    if verdict.host_changes:
        verdict.host_restored = restore_host(before, after)
    return verdict, add_verdict(store, entry, verdict.scorer, verdict)


def summary(verdict: TrialVerdict) -> dict[str, Any]:
    """The one JSON object `ghost-eval lab try-fix --json` prints."""
    return {
        "run_id": verdict.run_id,
        "case": verdict.case,
        "environment": verdict.environment,
        "actions": [
            {
                "index": a.index,
                "commands": [
                    {"command": c.command, "gate": c.gate, "decision": c.decision, "exit_status": c.exit_status, "why": c.why}
                    for c in a.commands
                ],
                "executable": a.executable,
            }
            for a in verdict.actions
        ],
        "resolved": verdict.resolved,
        "durable": verdict.durable,
        "collateral": verdict.collateral,
        "verification": {"ran": verdict.verification.ran, "proves": verdict.verification.proves},
        **{f"c{c.criterion_id}": {"observed": c.observed, "why": c.why} for c in verdict.criteria},
        "setup_ok": verdict.setup_ok,
        "teardown_ok": verdict.teardown_ok,
        "residue": verdict.residue,
        "host_changes": verdict.host_changes,
        "host_restored": verdict.host_restored,
    }
