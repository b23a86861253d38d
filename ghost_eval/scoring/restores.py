"""Whole NSGs and route tables written again from a recorded state ("re-apply the pre-window definition of tf-dest-vm-nsg
from source control", "re-apply the NSG rules and the route table entries recorded in the snapshot"): every rule or
route of the object is written as the record holds it, which is the fault's one rule only if the record differs from
today in that rule alone."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ghost_eval.cases.case import Case, Layer
from ghost_eval.scoring.parsed import ActionView
from ghost_eval.scoring.text import sentence_spans

__all__ = ["Restore", "restores"]

_RESTORE = re.compile(
    r"(?i)\b(?:re-?appl(?:y|ying)|restor(?:e|ing)|roll(?:ing)?\W+(?:[\w-]+\W+){0,4}?back|revert(?:ing)?|re-?deploy(?:ing)?"
    r"|reset(?:ting)?|push(?:ing)?\s+back)\b"
)
_RECORDED = re.compile(
    r"(?i)\b(?:definition|template|snapshot|baseline|backup|recorded|saved|source[-\s]control(?:led)?|IaC|pipeline"
    r"|known[-\s]good|pre-window|last[-\s]good|(?:previous|prior|earlier)\s+state)\b"
)
"""A state kept somewhere else than the live resource: what a restore writes back."""
_WHOLE = re.compile(
    r"(?i)\b(?P<nsg>[\w-]+-nsg)\b|\b(?:nsg|network\s+security\s+group)(?:['\u2019]s)?(?:\s+rules)?\b"
    r"|\broute\s+table(?:['\u2019]s)?(?:\s+(?:entries|routes))?\b"
)
_ONE = re.compile(r"(?i)\b(?:rule|route|entry)\b(?!s)")
"""A single rule or route named between the verb and the object: a restore of that one, not of the whole object."""


@dataclass(frozen=True)
class Restore:
    """One action's request to write a whole NSG or route table back from a record."""

    view: ActionView
    excerpt: str
    nsg: str | None
    """The NSG named (`tf-dest-vm-nsg`), or None where the words name none or a route table."""

    def reaches(self, nsg: str) -> bool:
        """Whether the restore rewrites this NSG: the one it names, or any where it names none."""
        return self.nsg is None or self.nsg.lower() == nsg.lower()

    def holds_fault(self, case: Case | None) -> bool:
        """Whether the object restored holds a fault of the case (then the record may undo it alone)."""
        if case is None:
            return True
        faults = [f for f in case.ground_truth if f.layer is Layer.CONTROL_PLANE]
        return any(pair is None or self.reaches(pair[0]) for f in faults for pair in [f.nsg_rule])


def restores(views: Sequence[ActionView]) -> list[Restore]:
    """Each action that asks for a whole NSG or route table to be written back from a recorded state."""
    found = []
    for view in views:
        text = view.written
        for a, b in sentence_spans(text):
            sentence = text[a:b]
            if not _RECORDED.search(sentence):
                continue
            hit = next(
                (
                    (m, w)
                    for m in _RESTORE.finditer(sentence)
                    for w in [_WHOLE.search(sentence, m.start(), m.end() + 140)]
                    if w is not None and not _ONE.search(sentence, m.end(), w.start())
                ),
                None,
            )
            if hit is not None:
                m, w = hit
                found.append(Restore(view, sentence[max(0, m.start() - 20) : w.end() + 60], w.group("nsg")))
                break
    return found
