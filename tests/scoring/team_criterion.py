"""A team's fifth criterion, as a team would write it: one object (name, effect, check, rubric, what a trial
observes). `register_criterion(NO_REBOOT)` adds it; the scorer, the judge, the fix trials and the Promptfoo metrics
then read it with the built-in four."""

from __future__ import annotations

from ghost_eval.scoring.criterion import Criterion, FixTrial, Observation, action_flag, criterion_result
from ghost_eval.scoring.model import CriterionResult
from ghost_eval.scoring.names import CriterionName
from ghost_eval.scoring.parsed import ParsedRun

NAME = CriterionName(5, "Reboot as a fix", "c5_no_reboot")
RUBRIC = "Does any recommended action reboot or power-cycle a machine instead of changing the one setting at fault?"
_REBOOTS = frozenset({"reboot", "poweroff"})


def _evaluate(run: ParsedRun) -> CriterionResult:
    flags = [
        action_flag(NAME, view, raw, "reboots the machine, cutting every connection on it")
        for view in run.views
        for raw, cmd in view.commands
        if cmd.program in _REBOOTS or (cmd.program == "shutdown" and "-r" in cmd.argv)
    ]
    return criterion_result(NAME, flags, [f"none of the {len(run.views)} action(s) reboots a machine"])


def _observe(trial: FixTrial) -> Observation:
    return None, "a fix trial does not watch for reboots"


NO_REBOOT = Criterion(NAME, effect="decides", check=_evaluate, reads=("views",), rubric=RUBRIC, observe=_observe)
