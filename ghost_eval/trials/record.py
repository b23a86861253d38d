"""What a fix trial stores: `TrialVerdict`, a verdict file of its own (`lab-trial@<version>`) beside the run."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from ghost_eval.base.records import Record

__all__ = [
    "TRIAL_SCHEMA_VERSION",
    "TRIAL_SCORER",
    "TRIAL_SCORER_NAME",
    "TRIAL_SCORER_VERSION",
    "ActionOutcome",
    "CommandOutcome",
    "CriterionObservation",
    "StateChange",
    "TrialVerdict",
    "VerificationOutcome",
]

TRIAL_SCORER_NAME = "lab-trial"
TRIAL_SCORER_VERSION = "2.0.0"
"""Bump whenever what a trial runs or how it measures changes, so old and new trials are never confused."""
TRIAL_SCORER = f"{TRIAL_SCORER_NAME}@{TRIAL_SCORER_VERSION}"
TRIAL_SCHEMA_VERSION = "1"

Decision = Literal["ran", "refused", "not_executable"]


class CommandOutcome(Record):
    """One command of a recommended action, as the trial handled it."""

    command: str
    """The command as the run wrote it."""
    where: str
    """The VM it ran on, `arm` for an Azure CLI command translated into ARM calls, `-` when it did not run."""
    gate: str
    """The safety gate's classification (safe / needs_approval / forbidden), or `az` for a translated ARM call."""
    decision: Decision
    """ran; refused (forbidden, or it would run on the host or reach outside the lab); not_executable (and why)."""
    exit_status: int | None = None
    """The command's exit status; None when it did not run."""
    why: str = ""
    """Why it was refused or not executable, or the ARM error; the gate's reasons when it ran after approval."""
    output: str = ""
    """Its output, cut to 2000 characters."""


class ActionOutcome(Record):
    """One recommended action: its commands in order."""

    index: int = Field(ge=1)
    """1-based, as the deterministic scorer numbers actions."""
    description: str
    commands: list[CommandOutcome] = []
    executable: bool
    """False for prose without a command (recorded, not run)."""


class VerificationOutcome(Record):
    """The run's own verification commands, run before and after the fix."""

    ran: bool | None
    """True when every verification command ran after the fix; None when the run gave none."""
    proves: bool | None
    """True when a verification ran and its output after the fix differs from its output on the fault while the
    fix resolved the symptom (it tells the two states apart); None when none ran."""
    commands: list[CommandOutcome] = []
    """Each verification command as run after the fix."""
    expected: list[str] = []
    """What the run said each command should show."""
    notes: list[str] = []


class StateChange(Record):
    """One line of the full state (a firewall rule, a qdisc, a socket, a unit, an ARM property) the fix changed."""

    area: str
    """Where: `<vm> iptables filter`, `<vm> tc`, `arm subnet forensics-vnet/default`, … ."""
    item: str
    change: Literal["added", "removed"]
    in_scope: bool
    """True when the case's fault scope covers it; changes outside it are collateral."""


class CriterionObservation(Record):
    """What the trial saw for one criterion: True means the failure the criterion names happened."""

    criterion_id: int = Field(ge=1)
    """1-4 the built-in criteria; above 4 a team's (`ghost_eval.scoring.registry.register_criterion`)."""
    observed: bool | None
    why: str


class TrialVerdict(Record):
    """One fix trial of one stored run in the lab."""

    schema_version: str = TRIAL_SCHEMA_VERSION
    run_id: str
    use_case_id: str
    case: str
    """The case file's id the recipe came from."""
    model_id: str
    environment: str = "lab"
    scorer: str = TRIAL_SCORER
    tried_at: datetime
    setup_ok: bool
    """False when the recipe could not plant the fault (then nothing was tried)."""
    actions: list[ActionOutcome] = []
    resolved: bool | None = None
    """The recipe's symptom checks are healthy after the fix (None when the trial could not set up)."""
    durable: bool | None = None
    """Still healthy after the owner reconciled and the recipe's hold window passed."""
    collateral: list[str] = []
    """Every change outside the fault's scope, and every must-keep check the fix broke, one line each."""
    verification: VerificationOutcome
    criteria: list[CriterionObservation] = []
    """c1..c4, in order."""
    diff: list[StateChange] = []
    """The capture diff: every line the fix changed, between the faulty state and the state after the fix."""
    symptoms_after_fix: list[str] = []
    """Symptom checks that were still not healthy after the fix."""
    symptoms_after_reconcile: list[str] = []
    """Symptom checks not healthy after the owner reconciled."""
    reconcile: list[str] = []
    """What the owner did (the recipe's reconcile steps with their outcome) and the hold window."""
    teardown_ok: bool
    """The recipe's teardown ran and the lab was as before the trial (no rule, qdisc, process or resource left)."""
    residue: list[str] = []
    """What the trial left behind, if anything."""
    host_changes: list[str] = []
    """What changed on the machine hosting the lab during the trial (a breach of the VM's sandbox): mounts,
    namespaces, links, firewall, kernel settings, escaped processes, files. Empty when nothing did."""
    host_restored: list[str] = []
    """What the trial undid of those changes (kernel settings, escaped processes); files are left for a person."""
    notes: list[str] = []
    timings_s: dict[str, float] = {}
    """Seconds per phase: setup (the recipe), capture (full state, four times), verify (the run's checks, before and
    after the fix), fix, reconcile (owner steps, hold window, symptoms), teardown (the recipe's, then the check)."""
