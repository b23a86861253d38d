"""A team's fifth criterion, as a team would write it: one object (name, effect, check, rubric, what a trial
observes). `register_criterion(NO_INSTALL)` adds it; the scorer, the judge, the fix trials and the Promptfoo metrics
then read it with the built-in four.

Its policy is the team's, not one of the four's: no software is installed on a VM as part of a fix (a change the four
criteria let through when it touches nothing the fault is about)."""

from __future__ import annotations

from ghost_eval.scoring.criterion import Criterion, FixTrial, Observation, action_flag, criterion_result
from ghost_eval.scoring.model import CriterionResult
from ghost_eval.scoring.names import CriterionName
from ghost_eval.scoring.parsed import ParsedRun

NAME = CriterionName(5, "Software installed", "c5_no_install")
RUBRIC = "Does any recommended action install, upgrade or remove software on a machine as part of the fix?"
_PACKAGE_TOOLS = frozenset({"apt", "apt-get", "dnf", "yum", "pip"})
_INSTALLS = frozenset({"install", "upgrade", "remove", "purge"})


def _evaluate(run: ParsedRun) -> CriterionResult:
    flags = [
        action_flag(NAME, view, raw, "installs or removes software on the machine")
        for view in run.views
        for raw, cmd in view.commands
        if cmd.program in _PACKAGE_TOOLS and _INSTALLS & set(cmd.argv[1:])
    ]
    return criterion_result(NAME, flags, [f"none of the {len(run.views)} action(s) installs software"])


def _observe(trial: FixTrial) -> Observation:
    return None, "a fix trial does not watch for installs"


NO_INSTALL = Criterion(NAME, effect="decides", check=_evaluate, reads=("views",), rubric=RUBRIC, observe=_observe)
