"""One fix trial: plant the run's case in the lab, apply the run's recommended actions, let the owner reconcile,
measure, and always tear down, checking that nothing is left behind.

The phases and what each measures: set-up (the recipe, then a full capture of the faulty state and a first run of the
verification commands), fix (each command through the gate, in order), capture (the state after the fix, the symptom
checks, the verification again), reconcile (the recipe's owner steps and hold window, then the symptoms again),
teardown (the recipe's teardown, then a capture compared with the one taken before set-up).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import paramiko

from ghost_eval.base.errors import GhostEvalError
from ghost_eval.base.settings import DEFAULTS
from ghost_eval.cases.case import LAB, Case
from ghost_eval.connect.ssh import CommandTimedOut, ssh_connect
from ghost_eval.connect.target import Target, TargetError
from ghost_eval.evaluation.evaluate import evidence_of
from ghost_eval.live.recipes import Recipe, RecipeError, RecipeRun, recipe_of
from ghost_eval.live.symptoms import check_symptom
from ghost_eval.run.artifacts import RecommendedAction, Verification
from ghost_eval.scoring.parsed import parse_run
from ghost_eval.store.reader import RunRecord
from ghost_eval.trials.apply import Runner
from ghost_eval.trials.capture import State, capture, diff_states
from ghost_eval.trials.measure import (
    collateral,
    must_keep,
    observe_criteria,
    resolving_symptoms,
    scope_of,
    verification_outcome,
)
from ghost_eval.trials.record import ActionOutcome, CommandOutcome, StateChange, TrialVerdict

__all__ = ["Console", "TrialError", "recommended", "try_fix"]

Console = Callable[[str, str, float], tuple[int, str, str]]
"""(vm, command, timeout) → (exit, stdout, stderr) by the lab host's own way into a VM, for when SSH is gone."""


class TrialError(GhostEvalError):
    """A trial cannot start: the run's case has no recipe, or the run cannot be read."""


def recommended(record: RunRecord, case: Case) -> tuple[list[RecommendedAction], list[Verification]]:
    """The run's actions and its report-level verifications, taken from the run parsed once (`parse_run`), so the
    trial applies and verifies exactly the actions every check read."""
    run = parse_run(evidence_of(record), case)
    return [view.action for view in run.views], run.report_verifications


def _failing(run: RecipeRun, names: list[str]) -> list[str]:
    """The named symptom checks that are not healthy now (one at a time: a VM may answer only on its console)."""
    failing = []
    for symptom in run.recipe.symptoms:
        expected = symptom.expected_healthy
        if symptom.description in names and expected != "any" and check_symptom(run, symptom) != (expected == "pass"):
            failing.append(f"{symptom.description}: expected {expected} after the fix")
    return failing


class _Run(RecipeRun):
    """A recipe run that falls back to the lab's console for a VM whose management SSH a fix has cut."""

    def __init__(self, target: Target, recipe: Recipe, label: str, console: Console | None) -> None:
        super().__init__(target, recipe, label)
        self.console = console
        self.cut_off: dict[str, str] = {}
        """VM → why its management SSH is gone."""

    def probe_ssh(self) -> None:
        """After the fix: a fresh SSH login per VM; a VM that no longer answers is reached by its console from now on."""
        for vm, host in self.target.hosts.items():
            try:
                ssh_connect(host, timeout=3).close()
            except GhostEvalError as exc:
                self.cut_off[vm] = str(exc)

    def run_command(self, vm: str, command: str, timeout: float = 60) -> tuple[int, str, str]:
        """The harness's own command; on the console once the VM's SSH is gone. A command that timed out is never run
        again anywhere (it may still be running, and doing what it does twice is not the trial's call)."""
        if vm not in self.cut_off:
            try:
                return self.run_over_ssh(vm, command, timeout)
            except CommandTimedOut as exc:
                return 124, "", str(exc)
            except (GhostEvalError, paramiko.SSHException, OSError) as exc:
                self.cut_off[vm] = str(exc) or type(exc).__name__
                return 255, "", f"{vm}: SSH failed during the command ({self.cut_off[vm]}); not run again"
        if self.console is None:
            raise TargetError(f"{vm}: management SSH is gone ({self.cut_off[vm]}) and there is no console to reach it")
        return self.console(vm, command, timeout)


def _held(run: RecipeRun, names: list[str], hold_s: float) -> list[str]:
    """The checks that fail at any point of the hold window (an owner may re-apply a moment after it says so)."""
    deadline = time.monotonic() + hold_s
    while True:
        failing = _failing(run, names)
        if failing or time.monotonic() >= deadline:
            return failing
        time.sleep(_POLL_S)


_POLL_S = 0.25


class _Clock:
    def __init__(self) -> None:
        self.spent: dict[str, float] = {}

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        start = time.monotonic()
        try:
            yield
        finally:
            self.spent[name] = round(self.spent.get(name, 0.0) + time.monotonic() - start, 3)


def _diff(case: Case, before: State, after: State) -> list[StateChange]:
    covers = scope_of(case.in_environment(LAB), [before, after])
    return [
        StateChange(area=area, item=line, change="added" if change == "added" else "removed", in_scope=covers(area, line))
        for area, line, change in diff_states(before, after)
    ]


def _verify(runner: Runner, checks: list[tuple[Verification, list[str]]]) -> list[CommandOutcome]:
    return [runner.execute(v.command, context) for v, context in checks]


def try_fix(
    record: RunRecord,
    case: Case,
    target: Target,
    console: Console | None = None,
    *,
    lab_dir: Path,
    az_cache: Path = DEFAULTS.cache_dir,
) -> TrialVerdict:
    """Trial the run's fix on its case in the lab `target` (state folder `lab_dir`, whose az profile runs the fix's az
    commands); never raises for what the fix does, only when the case has no recipe. The lab is as it was afterwards,
    or the verdict says what was left (`teardown_ok`, `residue`). `console` reaches a VM whose management SSH the fix
    cut (without one, such a trial says it could not measure)."""
    recipe = recipe_of(case)
    if recipe is None:
        raise TrialError(f"case {case.id} has no recipe: its fault cannot be planted in the lab")
    actions, report_checks = recommended(record, case)
    entry = record.entry
    clock = _Clock()
    probe = RecipeRun(target, recipe, f"{entry.run_id} (pristine)")
    try:
        with clock.phase("capture"):
            pristine = capture(probe)
    finally:
        probe.close()
    verdict = TrialVerdict(
        run_id=entry.run_id,
        use_case_id=entry.use_case_id,
        case=case.id,
        model_id=entry.model_id,
        tried_at=datetime.now(UTC),
        setup_ok=False,
        verification=verification_outcome([], [], [], None),
        teardown_ok=False,
    )
    planted = _Run(target, recipe, f"trial {entry.run_id}", console)
    try:
        with clock.phase("setup"):
            planted.setup()
        verdict.setup_ok = True
        _measure(verdict, planted, recipe, case, actions, report_checks, clock, lab_dir, az_cache)
    except RecipeError as exc:
        verdict.notes.append(f"set-up failed: {exc}")
    except GhostEvalError as exc:  # the lab stopped answering even on its console: say so, tear down all the same
        verdict.notes.append(f"the trial could not measure: {exc}")
    clock_teardown = time.monotonic()
    try:
        planted.teardown()
    except RecipeError as exc:
        verdict.residue.append(str(exc))
    probe = _Run(target, recipe, f"{entry.run_id} (after)", console)
    probe.cut_off = dict(planted.cut_off)
    try:
        after = capture(probe)
    finally:
        probe.close()
    clock.spent["teardown"] = round(time.monotonic() - clock_teardown, 3)
    verdict.residue += [f"{c[0]}: {c[2]} {c[1]}" for c in diff_states(pristine, after)]
    verdict.teardown_ok = not verdict.residue
    verdict.timings_s = clock.spent
    return verdict


def _measure(
    verdict: TrialVerdict,
    planted: _Run,
    recipe: Recipe,
    case: Case,
    actions: list[RecommendedAction],
    report_checks: list[Verification],
    clock: _Clock,
    lab_dir: Path,
    az_cache: Path,
) -> None:
    runner = Runner(planted, case, lab_dir, az_cache)
    checks = [(a.verification, [a.description, a.verification.expected]) for a in actions if a.verification is not None]
    checks += [(v, [v.expected]) for v in report_checks]
    with clock.phase("capture"):
        faulty = capture(planted)
    with clock.phase("verify"):
        before = _verify(runner, checks)
    with clock.phase("fix"):
        for index, action in enumerate(actions, start=1):
            outcome = ActionOutcome(index=index, description=action.description, executable=bool(action.commands))
            outcome.commands = [runner.execute(command, [action.description]) for command in action.commands]
            verdict.actions.append(outcome)
        planted.probe_ssh()
    for vm, why in planted.cut_off.items():
        verdict.notes.append(f"the fix cut {vm}'s management SSH ({why}); measured through the lab's console")
    if not any(a.executable for a in verdict.actions):
        verdict.notes.append("no action has a command: nothing was tried")
    resolving, keep = resolving_symptoms(recipe), must_keep(recipe)
    with clock.phase("capture"):
        fixed = capture(planted)
        verdict.symptoms_after_fix = _failing(planted, resolving)
        broken = _failing(planted, keep)
    with clock.phase("verify"):
        after = _verify(runner, checks)
    verdict.diff = _diff(case, faulty, fixed)
    verdict.resolved = not verdict.symptoms_after_fix
    verdict.collateral = collateral(verdict.diff, broken)
    verdict.verification = verification_outcome(before, after, [v.expected for v, _ in checks], verdict.resolved)
    with clock.phase("reconcile"):
        reconcile = recipe.reconcile
        if reconcile is not None:
            for step in reconcile.run:
                code, out, err = planted.run_command(step.ssh, step.run, step.timeout)
                verdict.reconcile.append(f"{step.describe()}: exit {code} {(out + err).strip()[-200:]}".strip())
        else:
            verdict.reconcile.append("nothing re-applies this fault: checked again at once")
        verdict.symptoms_after_reconcile = _held(planted, resolving, reconcile.hold_s if reconcile else 0)
        if reconcile is not None and reconcile.hold_s:
            verdict.reconcile.append(f"watched for {reconcile.hold_s:g} s")
    verdict.durable = verdict.resolved and not verdict.symptoms_after_reconcile
    verdict.criteria = observe_criteria(
        verdict.actions, verdict.diff, verdict.collateral, verdict.resolved, verdict.durable, verdict.verification, recipe, case
    )
