"""The judge's answers, parsed strictly: anything but the agreed JSON object is malformed, never a default.

A diagnosis answer may leave a key fact or wrong claim out (it becomes unknown, never present); it may not name one
the question did not ask about, name one twice, or call one found, contradicted or asserted without a quote.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

__all__ = [
    "Answer",
    "ClaimReply",
    "DiagnosisAnswer",
    "FactReply",
    "FactStatus",
    "JudgeAnswer",
    "MalformedAnswer",
    "is_hedged",
    "parse_answer",
    "parse_diagnosis",
]

Answer = Literal["YES", "NO", "UNKNOWN"]
FactStatus = Literal["found", "missing", "contradicted"]
"""The key-fact checker's words for a fact in a diagnosis."""
M = TypeVar("M", bound=BaseModel)
_FENCE = re.compile(r"^```(?:json)?\s*\n(.*)\n```$", re.DOTALL)
_HEDGE = re.compile(
    r"\b(?:possibly|perhaps|unclear|not\s+clear|uncertain|unsure|not\s+sure|not\s+certain|arguably|probably"
    r"|(?:can\s*not|can't|cannot)\s+(?:be\s+)?(?:tell|determine|determined|confirm|confirmed|verify|verified)"
    r"|hard\s+to\s+(?:tell|say)|difficult\s+to\s+(?:tell|say|determine)|it\s+seems|seems\s+to|appears\s+to)\b",
    re.IGNORECASE,
)


class MalformedAnswer(ValueError):
    """The judge's text is not the agreed answer; the message says what was wrong."""


class JudgeAnswer(BaseModel):
    """`{"answer", "action_index", "excerpt", "reason"}` exactly as the system prompt asks for it."""

    model_config = ConfigDict(extra="forbid", strict=True)

    answer: Answer
    action_index: int | None = None
    """1-based number of the action the answer is about."""
    excerpt: str = ""
    reason: str


class FactReply(BaseModel):
    """One key fact as the judge answered it."""

    model_config = ConfigDict(extra="forbid", strict=True)

    id: str
    status: FactStatus
    quote: str = ""
    """The report's sentence that decided a found or contradicted fact."""


class ClaimReply(BaseModel):
    """One wrong claim as the judge answered it."""

    model_config = ConfigDict(extra="forbid", strict=True)

    id: str
    asserted: bool
    quote: str = ""
    """The report's sentence that asserts the claim."""


class DiagnosisAnswer(BaseModel):
    """`{"facts": [...], "wrong_claims": [...]}` exactly as the diagnosis system prompt asks for it."""

    model_config = ConfigDict(extra="forbid", strict=True)

    facts: list[FactReply]
    wrong_claims: list[ClaimReply]


def is_hedged(reason: str) -> bool:
    """A YES or NO whose reason doubts itself counts as uncertain, not as a clear answer."""
    return _HEDGE.search(reason) is not None


def _parse(text: str, model: type[M]) -> M:
    """One JSON object of the model's shape; a single ```json fence around it is the only wrapping tolerated."""
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1).strip()
    try:
        data: Any = json.loads(body)
    except json.JSONDecodeError as exc:
        raise MalformedAnswer(f"not a JSON object ({exc.msg} at character {exc.pos})") from None
    if not isinstance(data, dict):
        raise MalformedAnswer(f"expected a JSON object, got {type(data).__name__}")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(root)"
        raise MalformedAnswer(f"field '{where}': {first['msg']}") from None


def parse_answer(text: str, action_count: int) -> JudgeAnswer:
    """Parse one criterion reply."""
    answer = _parse(text, JudgeAnswer)
    if not answer.reason.strip():
        raise MalformedAnswer("field 'reason' is empty")
    index = answer.action_index
    if index is not None and not 1 <= index <= action_count:
        raise MalformedAnswer(f"action_index {index} is not one of the {action_count} numbered actions")
    if answer.answer == "YES" and index is None:
        raise MalformedAnswer("a YES must name the action it is about in action_index")
    return answer


def _check_ids(field: str, answered: Sequence[str], asked: Sequence[str]) -> None:
    unasked = sorted(set(answered) - set(asked))
    if unasked:
        raise MalformedAnswer(f"field '{field}': {', '.join(unasked)} not asked (asked: {', '.join(asked) or 'none'})")
    twice = sorted(i for i, n in Counter(answered).items() if n > 1)
    if twice:
        raise MalformedAnswer(f"field '{field}': {', '.join(twice)} answered more than once")


def parse_diagnosis(text: str, fact_ids: Sequence[str], claim_ids: Sequence[str]) -> DiagnosisAnswer:
    """Parse one diagnosis reply against the ids asked; ids left out are the caller's unknowns."""
    answer = _parse(text, DiagnosisAnswer)
    _check_ids("facts", [f.id for f in answer.facts], fact_ids)
    _check_ids("wrong_claims", [c.id for c in answer.wrong_claims], claim_ids)
    unquoted = [f"fact {f.id} is {f.status}" for f in answer.facts if f.status != "missing" and not f.quote.strip()]
    unquoted += [f"claim {c.id} is asserted" for c in answer.wrong_claims if c.asserted and not c.quote.strip()]
    if unquoted:
        raise MalformedAnswer(f"{'; '.join(unquoted)} without a quote from the report")
    return answer
