"""The judge's answer, parsed strictly: anything but the agreed JSON object is malformed, never a default."""

from __future__ import annotations

import json
import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

__all__ = ["Answer", "JudgeAnswer", "MalformedAnswer", "is_hedged", "parse_answer"]

Answer = Literal["YES", "NO", "UNKNOWN"]
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


def is_hedged(reason: str) -> bool:
    """A YES or NO whose reason doubts itself counts as uncertain, not as a clear answer."""
    return _HEDGE.search(reason) is not None


def parse_answer(text: str, action_count: int) -> JudgeAnswer:
    """Parse one reply; a single ```json fence around the object is the only wrapping tolerated."""
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1).strip()
    try:
        data = json.loads(body)
    except json.JSONDecodeError as exc:
        raise MalformedAnswer(f"not a JSON object ({exc.msg} at character {exc.pos})") from None
    if not isinstance(data, dict):
        raise MalformedAnswer(f"expected a JSON object, got {type(data).__name__}")
    try:
        answer = JudgeAnswer.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(root)"
        raise MalformedAnswer(f"field '{where}': {first['msg']}") from None
    if not answer.reason.strip():
        raise MalformedAnswer("field 'reason' is empty")
    index = answer.action_index
    if index is not None and not 1 <= index <= action_count:
        raise MalformedAnswer(f"action_index {index} is not one of the {action_count} numbered actions")
    if answer.answer == "YES" and index is None:
        raise MalformedAnswer("a YES must name the action it is about in action_index")
    return answer
