"""Teams' own deterministic checks, added without forking: found by entry point or by import path.

A check is a callable `check(evidence: RunEvidence, case: Case | None) -> bool | CheckOutcome`. A team registers
it in its package's metadata under the entry point group `ghost_eval.checks` (the entry point's name is the
check's name), or lists it in a Promptfoo provider config as `checks: ["module:function"]` or
`["name=module:function"]`. Every check becomes a named metric `check_<name>`; two checks of one name are an
error naming both sources, so one team's check never silently replaces another's.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from importlib.metadata import entry_points

from ghost_eval.cases import Case
from ghost_eval.errors import ExtensionError
from ghost_eval.records import Record
from ghost_eval.scoring import RunEvidence

__all__ = ["ENTRY_POINT_GROUP", "CheckFunction", "CheckOutcome", "TeamCheck", "load_checks", "run_checks"]

ENTRY_POINT_GROUP = "ghost_eval.checks"


class CheckOutcome(Record):
    """What one team check said about one run."""

    name: str
    """The check's name (entry point name, or the name given with its import path)."""
    passed: bool
    reason: str = ""
    source: str = ""
    """Where the check came from: its entry point and distribution, or its import path."""


CheckFunction = Callable[[RunEvidence, Case | None], "bool | CheckOutcome"]


@dataclass(frozen=True)
class TeamCheck:
    """A loaded check and where it came from (named in every error and outcome)."""

    name: str
    function: CheckFunction
    source: str


def _import(spec: str) -> CheckFunction:
    module, _, attr = spec.partition(":")
    if not module or not attr:
        raise ExtensionError(f"check {spec!r}: expected an import path `module:function`")
    try:
        found = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as exc:
        raise ExtensionError(f"check {spec!r}: cannot be imported ({exc})") from None
    if not callable(found):
        raise ExtensionError(f"check {spec!r}: {attr} is not callable")
    checked: CheckFunction = found
    return checked


def _add(found: dict[str, TeamCheck], check: TeamCheck) -> None:
    if check.name in found:
        raise ExtensionError(f"two checks are named {check.name!r}: {found[check.name].source} and {check.source}")
    found[check.name] = check


def load_checks(import_paths: Sequence[str] = (), *, group: str = ENTRY_POINT_GROUP) -> dict[str, TeamCheck]:
    """The installed entry-point checks plus those listed by import path, by name."""
    found: dict[str, TeamCheck] = {}
    for ep in entry_points(group=group):
        dist = ep.dist.name if ep.dist else "?"
        _add(found, TeamCheck(ep.name, _import(ep.value), f"entry point {ep.name} of {dist} ({ep.value})"))
    for raw in import_paths:
        name, _, spec = raw.rpartition("=")
        _add(found, TeamCheck(name or spec.partition(":")[2], _import(spec), f"import path {raw}"))
    return found


def run_checks(checks: Iterable[TeamCheck], evidence: RunEvidence, case: Case | None) -> list[CheckOutcome]:
    """Every check's outcome; a check that raises fails with the exception as its reason (a bug in one team's
    check must not hide the others' results)."""
    outcomes = []
    for check in checks:
        try:
            said = check.function(evidence, case)
        except Exception as exc:  # a team's code: any failure is that check's failure
            outcomes.append(CheckOutcome(name=check.name, passed=False, reason=f"check raised {exc!r}", source=check.source))
            continue
        if isinstance(said, CheckOutcome):
            outcomes.append(said.model_copy(update={"name": check.name, "source": check.source}))
        else:
            outcomes.append(CheckOutcome(name=check.name, passed=bool(said), source=check.source))
    return outcomes
