"""Judging one run: one isolated question per criterion, answers combined into a verdict, compared with the anchor."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from ghost_eval.cases import Case
from ghost_eval.judge.anchor import anchor
from ghost_eval.judge.answer import MalformedAnswer, is_hedged, parse_answer
from ghost_eval.judge.clients import JudgeCallError, JudgeClient
from ghost_eval.judge.prompt import CRITERIA, JudgePrompt, build_prompt, recommended_actions, template_hash
from ghost_eval.judge.record import (
    JUDGE_SCORER_PREFIX,
    CriterionAnswer,
    JudgeVerdict,
    TokenCount,
    combine,
    judge_scorer,
)
from ghost_eval.pricing import cost_usd
from ghost_eval.scoring import CRITERION_LABELS, Flag, RunEvidence, RunScore

__all__ = ["EXCLUDED_SCORER", "Judgement", "ask_criterion", "excluded_verdict", "judge_evidence"]

EXCLUDED_SCORER = f"{JUDGE_SCORER_PREFIX}excluded"
_EXCERPT = 300
_ASKS = 2
"""A malformed reply is asked again once, then recorded as an error."""


@dataclass(frozen=True)
class Judgement:
    """A verdict and what producing it cost now (cached answers cost nothing)."""

    verdict: JudgeVerdict
    calls: int
    cached: int
    tokens: TokenCount
    cost_usd: float | None


def _now() -> datetime:
    return datetime.now(UTC)


def _sum_cost(costs: Sequence[float | None]) -> float | None:
    known = [c for c in costs if c is not None]
    return sum(known) if known else None


def ask_criterion(client: JudgeClient, prompt: JudgePrompt) -> CriterionAnswer:
    """Ask one question; a malformed reply is asked again once; a failure becomes the answer's error, never a NO."""
    label = CRITERION_LABELS[prompt.criterion_id]
    calls, tokens_in, tokens_out = 0, 0, 0
    problem = ""
    for _ in range(_ASKS):
        calls += 1
        try:
            completion = client.complete(prompt)
        except JudgeCallError as exc:
            problem = f"judge call failed: {exc}"
            break
        tokens_in += completion.input_tokens
        tokens_out += completion.output_tokens
        try:
            parsed = parse_answer(completion.text, prompt.action_count)
        except MalformedAnswer as exc:
            problem = f"malformed answer after {calls} request(s): {exc}; reply began {completion.text[:200]!r}"
            continue
        return CriterionAnswer(
            criterion_id=prompt.criterion_id,
            criterion_label=label,
            answer=parsed.answer,
            action_index=parsed.action_index,
            excerpt=parsed.excerpt[:_EXCERPT],
            reason=parsed.reason,
            hedged=parsed.answer != "UNKNOWN" and is_hedged(parsed.reason),
            calls=calls,
            tokens=TokenCount(input=tokens_in, output=tokens_out),
            cost_usd=cost_usd(client.model, tokens_in, tokens_out),
            judged_at=_now(),
        )
    return CriterionAnswer(
        criterion_id=prompt.criterion_id,
        criterion_label=label,
        error=problem,
        calls=calls,
        tokens=TokenCount(input=tokens_in, output=tokens_out),
        cost_usd=cost_usd(client.model, tokens_in, tokens_out),
        judged_at=_now(),
    )


def _reasoning(answers: Sequence[CriterionAnswer]) -> str:
    lines = []
    for a in answers:
        where = f" (action {a.action_index})" if a.action_index else ""
        hedge = " [hedged]" if a.hedged else ""
        lines.append(f"criterion {a.criterion_id}: {a.answer or 'ERROR'}{where}{hedge}: {a.reason or a.error}")
    return "\n".join(lines)


def excluded_verdict(evidence: RunEvidence, reason: str) -> JudgeVerdict:
    """The record of a run no configured judge may score; it goes to human review."""
    return JudgeVerdict(
        run_id=evidence.run_id,
        use_case_id=evidence.use_case_id,
        model_id=evidence.model_id,
        verdict="excluded",
        template_hash=template_hash(),
        scorer=f"{EXCLUDED_SCORER}@{template_hash()[:12]}",
        excluded_reason=reason,
        snapshot_missing=evidence.snapshot is None,
        notes=["listed for human review"],
    )


def judge_evidence(
    evidence: RunEvidence,
    case: Case | None,
    client: JudgeClient,
    *,
    cached: Mapping[int, CriterionAnswer] | None = None,
    score: RunScore | None = None,
    self_judged: bool = False,
) -> Judgement:
    """Judge one run, reusing cached answers; `score` is the deterministic anchor the answers are compared with."""
    thash = template_hash()
    actions = recommended_actions(evidence)
    notes: list[str] = []
    if self_judged:
        notes.append(f"self-judging was forced: {client.model} judged a run of its own model family")
    if evidence.snapshot is None:
        notes.append("no infrastructure snapshot: criterion 1 was judged from the case facts and the run's own reads")
    base = {
        "run_id": evidence.run_id,
        "use_case_id": evidence.use_case_id,
        "model_id": evidence.model_id,
        "judge_model": client.model,
        "template_hash": thash,
        "scorer": judge_scorer(client.model, thash),
        "self_judged": self_judged,
        "snapshot_missing": evidence.snapshot is None,
    }
    if not actions:
        verdict = JudgeVerdict(
            **base, verdict="uncertain", judge_reasoning="no recommended actions: nothing to judge",
            notes=[*notes, "no recommended actions could be found, so no question was asked"],
        )
        return Judgement(verdict, 0, 0, TokenCount(), None)

    reuse = cached or {}
    answers: list[CriterionAnswer] = []
    for criterion in CRITERIA:
        if criterion in reuse:
            answers.append(reuse[criterion].model_copy(update={"cached": True}))
        else:
            answers.append(ask_criterion(client, build_prompt(evidence, case, criterion)))
    c1 = answers[0]
    if evidence.snapshot is None and c1.answer == "UNKNOWN":
        notes.append("criterion 1 is UNKNOWN and the run has no infrastructure snapshot to settle it")
    flags = [
        Flag(
            criterion_id=a.criterion_id,
            criterion_label=a.criterion_label,
            action_index=a.action_index,
            action_excerpt=(a.excerpt or actions[a.action_index - 1].description)[:_EXCERPT],
            explanation=a.reason,
        )
        for a in answers
        if a.answer == "YES" and not a.hedged and a.action_index is not None
    ]
    fresh = [a for a in answers if not a.cached]
    verdict = JudgeVerdict(
        **base,
        verdict=combine(answers),
        flags=flags,
        judge_reasoning=_reasoning(answers),
        criteria=answers,
        tokens=TokenCount(input=sum(a.tokens.input for a in answers), output=sum(a.tokens.output for a in answers)),
        cost_usd=_sum_cost([a.cost_usd for a in answers]),
        errors=[f"criterion {a.criterion_id}: {a.error}" for a in answers if a.error],
        anchor=anchor(answers, score) if score is not None else None,
        judged_at=_now(),
        notes=notes,
    )
    return Judgement(
        verdict,
        calls=sum(a.calls for a in fresh),
        cached=len(answers) - len(fresh),
        tokens=TokenCount(input=sum(a.tokens.input for a in fresh), output=sum(a.tokens.output for a in fresh)),
        cost_usd=_sum_cost([a.cost_usd for a in fresh]),
    )
