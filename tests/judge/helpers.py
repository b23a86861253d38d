"""Shared by the judge and report tests: a private copy of the demo store, scripted judge answers, a fast retry policy."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ghost_eval.base.settings import Settings
from ghost_eval.judge import ANTHROPIC_BASE_URL_ENV, ANTHROPIC_KEY_ENV, GEMINI_BASE_URL_ENV, RetryPolicy
from ghost_eval.store import bundled_path
from ghost_eval.store.layout import V1_VERDICT_FILE
from tests.fakes.llm import FakeLLMServer, Recorded, Reply

__all__ = [
    "Sleeps",
    "criterion_of",
    "demo_copy",
    "diagnosis_json",
    "fast_policy",
    "judge_env",
    "judge_settings",
    "reply_json",
    "scripted",
    "system_text",
    "user_text",
]

_CRITERION = re.compile(r"# Question: criterion (\d)")
_DIAGNOSIS = "# Question: the diagnosis"


def demo_copy(tmp_path: Path, *, derived: bool = False) -> Path:
    """The bundled demo store without any verdicts, index or decisions a checkout may have added.

    Only its 30 hand-written runs unless `derived`: the repeats and addon runs derived from them
    (`ghost_eval.store.demo`, the index entries with a `repeat_index`) are there for the suites and decisions.
    """
    root = tmp_path / "store"
    ignored = shutil.ignore_patterns("verdicts", V1_VERDICT_FILE, ".index", ".staging", "decisions")  # what commands add
    shutil.copytree(bundled_path("demo_store"), root, ignore=ignored)
    if not derived:
        index = json.loads((root / "run_index.json").read_text())
        for run in index["runs"]:
            if "repeat_index" in run:
                shutil.rmtree(root / run["path"])
        index["runs"] = [run for run in index["runs"] if "repeat_index" not in run]
        del index["completed_through"]
        (root / "run_index.json").write_text(json.dumps(index, indent=2))
    return root


def reply_json(answer: str, index: int | None = None, reason: str = "Plain reason.", excerpt: str = "") -> str:
    return json.dumps({"answer": answer, "action_index": index, "excerpt": excerpt, "reason": reason})


def user_text(rec: Recorded) -> str:
    """The user message a judge request carried, for either vendor."""
    if "messages" in rec.body:
        return str(rec.body["messages"][0]["content"])
    return str(rec.body["contents"][0]["parts"][0]["text"])


def system_text(rec: Recorded) -> str:
    if "system" in rec.body:
        return str(rec.body["system"])
    return str(rec.body["systemInstruction"]["parts"][0]["text"])


def diagnosis_json(
    facts: Mapping[str, tuple[str, str]] | None = None, claims: Mapping[str, tuple[bool, str]] | None = None
) -> str:
    """A diagnosis answer: fact id → (status, quote), claim id → (asserted, quote); ids left out are not answered."""
    return json.dumps(
        {
            "facts": [{"id": i, "status": s, "quote": q} for i, (s, q) in (facts or {}).items()],
            "wrong_claims": [{"id": i, "asserted": a, "quote": q} for i, (a, q) in (claims or {}).items()],
        }
    )


def criterion_of(rec: Recorded) -> int | None:
    """The criterion a judge request asks about; None for the diagnosis question."""
    text = user_text(rec)
    found = _CRITERION.search(text)
    if found:
        return int(found.group(1))
    assert _DIAGNOSIS in text, "a judge request asking neither a criterion nor the diagnosis"
    return None


def scripted(make: Callable[..., Reply], answers: Mapping[int, str], diagnosis: str | None = None) -> Callable[[Recorded], Reply]:
    """A responder answering each criterion with its scripted JSON (NO when not scripted), and the diagnosis with
    `diagnosis` (an answer that answers no id when not scripted)."""

    def reply(rec: Recorded) -> Reply:
        criterion = criterion_of(rec)
        if criterion is None:
            return make(diagnosis or diagnosis_json())
        return make(answers.get(criterion, reply_json("NO")))

    return reply


def judge_env(anthropic: FakeLLMServer | None = None, gemini: FakeLLMServer | None = None) -> dict[str, str]:
    env: dict[str, str] = {}
    if anthropic is not None:
        env |= {ANTHROPIC_KEY_ENV: "test-key", ANTHROPIC_BASE_URL_ENV: anthropic.url}
    if gemini is not None:
        env |= {"GEMINI_API_KEY": "test-key", GEMINI_BASE_URL_ENV: gemini.url}
    return env


def judge_settings(anthropic: FakeLLMServer | None = None, gemini: FakeLLMServer | None = None) -> Settings:
    """The settings `judge_env` would give a process: what a test hands the judge's clients."""
    return Settings.from_environ(judge_env(anthropic, gemini))


class Sleeps(list[float]):
    """Records the waits a retry policy asks for instead of sleeping."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def fast_policy(sleeps: Sleeps | None = None, **overrides: Any) -> RetryPolicy:
    fields: dict[str, Any] = {
        "attempts": 3,
        "initial_wait": 0.0,
        "max_wait": 30.0,
        "timeout": 5.0,
        "sleep": sleeps if sleeps is not None else Sleeps(),
    }
    return RetryPolicy(**{**fields, **overrides})
