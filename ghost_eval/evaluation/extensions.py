"""Teams' own deterministic checks, added without forking: found by entry point or by import path.

A check is a callable `check(evidence: RunEvidence, case: Case | None) -> bool | CheckOutcome`. A team registers
it in its package's metadata under the entry point group `ghost_eval.checks` (the entry point's name is the
check's name), or lists it by import path, `module:function` or `name=module:function` (a Promptfoo provider config's
`checks:`, `ghost-eval score --checks`). Every loaded check is a registry entry (`ghost_eval.scoring.team.TeamCheck`)
that scoring runs after the built-in checks; Promptfoo shows each as a named metric `check_<name>`. Two checks of one
name are an error naming both sources, so one team's check never silently replaces another's.

A check may say what it is: a `version` attribute (a string, bumped when it changes what it says; without one, a
hash of its source stands in) and a `reads` attribute (the `RunEvidence` fields it reads).

A team's remediation criterion (`ghost_eval.scoring.criterion.Criterion`: scored, asked by the judge, observed by
the fix trials, a Promptfoo metric) is found the same way, under the entry point group `ghost_eval.criteria`, whose
entry points name `Criterion` objects; `load_criteria` registers them (`load_checks` does too, so every path that
loads the teams' checks has the teams' criteria).
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
from collections.abc import Sequence
from importlib.metadata import entry_points

from ghost_eval.base.errors import ExtensionError
from ghost_eval.scoring.criterion import Criterion
from ghost_eval.scoring.model import CheckOutcome
from ghost_eval.scoring.team import TeamCheck, TeamCheckFunction

__all__ = [
    "CRITERIA_GROUP",
    "ENTRY_POINT_GROUP",
    "CheckOutcome",
    "TeamCheck",
    "TeamCheckFunction",
    "load_checks",
    "load_criteria",
]

ENTRY_POINT_GROUP = "ghost_eval.checks"
CRITERIA_GROUP = "ghost_eval.criteria"
_READS_ALL = ("evidence", "case")


def _import(spec: str) -> TeamCheckFunction:
    module, _, attr = spec.partition(":")
    if not module or not attr:
        raise ExtensionError(f"check {spec!r}: expected an import path `module:function`")
    try:
        found = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as exc:
        raise ExtensionError(f"check {spec!r}: cannot be imported ({exc})") from None
    if not callable(found):
        raise ExtensionError(f"check {spec!r}: {attr} is not callable")
    checked: TeamCheckFunction = found
    return checked


def _version(function: TeamCheckFunction, source: str) -> str:
    """The check's own `version`, else a hash of its source code (so an edited check is never mistaken for the old)."""
    declared = getattr(function, "version", None)
    if declared is not None:
        return str(declared)
    try:
        code = inspect.getsource(function)
    except (OSError, TypeError):
        raise ExtensionError(f"check {source}: its source cannot be read; give it a `version` attribute") from None
    return "src-" + hashlib.sha256(code.encode()).hexdigest()[:12]


def _entry(name: str, spec: str, source: str) -> TeamCheck:
    function = _import(spec)
    reads = getattr(function, "reads", None)
    return TeamCheck(name, _version(function, source), tuple(reads) if reads else _READS_ALL, source, function)


def _add(found: dict[str, TeamCheck], check: TeamCheck) -> None:
    if check.name in found:
        raise ExtensionError(f"two checks are named {check.name!r}: {found[check.name].source} and {check.source}")
    found[check.name] = check


def load_criteria(*, group: str = CRITERIA_GROUP) -> list[Criterion]:
    """Register every installed entry-point criterion not registered yet; the criteria the group names, in its order.
    An entry point that is not a `Criterion`, or whose id, label or metric is taken, is an error naming its source."""
    installed = entry_points(group=group)
    if not installed:
        return []
    from ghost_eval.scoring.registry import criteria, register_criterion  # the scorer only when a team adds to it

    loaded: list[Criterion] = []
    for ep in installed:
        source = f"entry point {ep.name} of {ep.dist.name if ep.dist else '?'} ({ep.value})"
        try:
            found = ep.load()
        except (ImportError, AttributeError) as exc:
            raise ExtensionError(f"criterion {source}: cannot be imported ({exc})") from None
        if not isinstance(found, Criterion):
            raise ExtensionError(f"criterion {source}: is a {type(found).__name__}, not a Criterion")
        if found not in criteria():
            try:
                register_criterion(found)
            except ValueError as exc:
                raise ExtensionError(f"criterion {source}: {exc}") from None
        loaded.append(found)
    return loaded


def load_checks(
    import_paths: Sequence[str] = (), *, group: str = ENTRY_POINT_GROUP, criteria_group: str = CRITERIA_GROUP
) -> dict[str, TeamCheck]:
    """The installed entry-point checks plus those listed by import path, by name; the installed criteria of
    `criteria_group` are registered on the way."""
    load_criteria(group=criteria_group)
    found: dict[str, TeamCheck] = {}
    for ep in entry_points(group=group):
        dist = ep.dist.name if ep.dist else "?"
        _add(found, _entry(ep.name, ep.value, f"entry point {ep.name} of {dist} ({ep.value})"))
    for raw in import_paths:
        name, _, spec = raw.rpartition("=")
        _add(found, _entry(name or spec.partition(":")[2], spec, f"import path {raw}"))
    return found
