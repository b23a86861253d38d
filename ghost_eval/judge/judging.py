"""Judging one run: one isolated question per criterion and one on the diagnosis, answers combined into a verdict,
compared with the anchor."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TypeVar

from ghost_eval.cases.case import Case
from ghost_eval.judge.anchor import anchor
from ghost_eval.judge.answer import MalformedAnswer, is_hedged, parse_answer, parse_diagnosis
from ghost_eval.judge.clients import JudgeCallError, JudgeClient
from ghost_eval.judge.prompt import (
    DiagnosisPrompt,
    JudgePrompt,
    Question,
    build_diagnosis_prompt,
    build_prompt,
    recommended_actions,
    rubrics,
    template_hash,
)
from ghost_eval.judge.record import (
    JUDGE_SCORER_PREFIX,
    ClaimAnswer,
    CriterionAnswer,
    FactAnswer,
    JudgeCall,
    JudgeDiagnosis,
    JudgeVerdict,
    TokenCount,
    combine,
    diagnosis_correct,
    judge_scorer,
)
from ghost_eval.llm.pricing import cost_usd
from ghost_eval.scoring import Flag, RunEvidence, RunScore, expects_fix
from ghost_eval.scoring.registry import criterion

__all__ = ["EXCLUDED_SCORER", "Judgement", "ask_criterion", "ask_diagnosis", "excluded_verdict", "judge_evidence"]

EXCLUDED_SCORER = f"{JUDGE_SCORER_PREFIX}excluded"
_EXCERPT = 300
_ASKS = 2
"""A malformed reply is asked again once, then recorded as an error."""
_SPACE = re.compile(r"\s+")
_MARKUP = re.compile(r"[*`]")
"""Markdown emphasis and code marks, which a quote may drop from the report's words."""
_NO_ACTIONS = "no recommended actions: nothing to judge"
T = TypeVar("T")


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


def _ask(client: JudgeClient, prompt: Question, parse: Callable[[str], T]) -> tuple[T | None, JudgeCall]:
    """Ask once, and once more after a malformed reply; a failed call ends it. The call record carries the error."""
    calls, tokens_in, tokens_out = 0, 0, 0
    problem: str | None = None
    parsed: T | None = None
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
            parsed, problem = parse(completion.text), None
            break
        except MalformedAnswer as exc:
            problem = f"malformed answer after {calls} request(s): {exc}; reply began {completion.text[:200]!r}"
    spent = JudgeCall(
        error=problem,
        calls=calls,
        tokens=TokenCount(input=tokens_in, output=tokens_out),
        cost_usd=cost_usd(client.model, tokens_in, tokens_out),
        judged_at=_now(),
    )
    return parsed, spent


def ask_criterion(client: JudgeClient, prompt: JudgePrompt) -> CriterionAnswer:
    """Ask one criterion; a failure becomes the answer's error, never a NO."""
    parsed, spent = _ask(client, prompt, lambda text: parse_answer(text, prompt.action_count))
    answer = CriterionAnswer(
        criterion_id=prompt.criterion_id,
        criterion_label=criterion(prompt.criterion_id).label,
        question_hash=prompt.question_hash,
        **dict(spent),
    )
    if parsed is None:
        return answer
    return answer.model_copy(
        update={
            "answer": parsed.answer,
            "action_index": parsed.action_index,
            "excerpt": parsed.excerpt[:_EXCERPT],
            "reason": parsed.reason,
            "hedged": parsed.answer != "UNKNOWN" and is_hedged(parsed.reason),
        }
    )


def _squash(text: str) -> str:
    return _SPACE.sub(" ", _MARKUP.sub("", text)).strip().casefold()


def ask_diagnosis(client: JudgeClient, prompt: DiagnosisPrompt) -> JudgeDiagnosis:
    """Ask the diagnosis question; a fact or claim the answer leaves out is unknown, and a failure leaves all unknown."""
    parsed, spent = _ask(client, prompt, lambda text: parse_diagnosis(text, prompt.fact_ids, prompt.claim_ids))
    facts = {f.id: f for f in parsed.facts} if parsed else {}
    claims = {c.id: c for c in parsed.wrong_claims} if parsed else {}
    fact_answers = [
        FactAnswer(id=i, status=facts[i].status, quote=facts[i].quote[:_EXCERPT])
        if i in facts
        else FactAnswer(id=i, status="unknown")
        for i in prompt.fact_ids
    ]
    claim_answers = [
        ClaimAnswer(id=i, asserted=claims[i].asserted, quote=claims[i].quote[:_EXCERPT])
        if i in claims
        else ClaimAnswer(id=i, asserted=None)
        for i in prompt.claim_ids
    ]
    stated = _squash(prompt.stated)
    quoted = [(f.id, f.quote) for f in fact_answers] + [(c.id, c.quote) for c in claim_answers]
    return JudgeDiagnosis(
        **dict(spent),
        correct=diagnosis_correct(fact_answers, claim_answers) if parsed else None,
        facts=fact_answers,
        wrong_claims=claim_answers,
        unquoted=[i for i, quote in quoted if quote.strip() and _squash(quote) not in stated],
        question_hash=prompt.question_hash,
    )


def _reasoning(answers: Sequence[CriterionAnswer], diagnosis: JudgeDiagnosis | None) -> list[str]:
    lines = []
    for a in answers:
        where = f" (action {a.action_index})" if a.action_index else ""
        hedge = " [hedged]" if a.hedged else ""
        lines.append(f"criterion {a.criterion_id}: {a.answer or 'ERROR'}{where}{hedge}: {a.reason or a.error}")
    if diagnosis is not None and diagnosis.error:
        lines.append(f"diagnosis: ERROR: {diagnosis.error}")
    elif diagnosis is not None:
        said = {True: "correct", False: "not correct", None: "open"}[diagnosis.correct]
        facts = ", ".join(f"{f.id} {f.status}" for f in diagnosis.facts) or "none"
        asserted = ", ".join(c.id for c in diagnosis.wrong_claims if c.asserted) or "none"
        lines.append(f"diagnosis: {said}: facts {facts}; wrong claims asserted: {asserted}")
    return lines


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


def _diagnosis(
    evidence: RunEvidence,
    case: Case | None,
    client: JudgeClient,
    agent_prompt: str | None,
    cached: Mapping[str, JudgeDiagnosis],
    notes: list[str],
) -> JudgeDiagnosis | None:
    """The judge's diagnosis, from the cache when the same question was answered; None when there is nothing to ask."""
    if case is None:
        notes.append("unknown case: no key facts, so the diagnosis was not asked")
        return None
    if not case.key_facts and not case.wrong_claims:
        notes.append(f"case {case.id} has no key facts or wrong claims, so the diagnosis was not asked")
        return None
    prompt = build_diagnosis_prompt(evidence, case, agent_prompt)
    if prompt.question_hash in cached:
        return cached[prompt.question_hash].model_copy(update={"cached": True})
    return ask_diagnosis(client, prompt)


def judge_evidence(
    evidence: RunEvidence,
    case: Case | None,
    client: JudgeClient,
    *,
    cached: Mapping[str, CriterionAnswer] | None = None,
    cached_diagnoses: Mapping[str, JudgeDiagnosis] | None = None,
    agent_prompt: str | None = None,
    score: RunScore | None = None,
    self_judged: bool = False,
) -> Judgement:
    """Judge one run, reusing cached answers; `score` is the deterministic anchor the answers are compared with.

    `cached` and `cached_diagnoses` are earlier answers by question hash; `agent_prompt` is the run's PROMPT.txt, when kept.
    """
    thash = template_hash()
    actions = recommended_actions(evidence)
    notes: list[str] = []
    if self_judged:
        notes.append(f"self-judging was forced: {client.model} judged a run of its own model family")
    if evidence.snapshot is None:
        notes.append("no infrastructure snapshot: criterion 1 was judged from the case facts and the run's own reads")
    reuse = cached or {}
    answers: list[CriterionAnswer] = []
    for criterion_id in rubrics() if actions else ():
        prompt = build_prompt(evidence, case, criterion_id, agent_prompt)
        if prompt.question_hash in reuse:
            answers.append(reuse[prompt.question_hash].model_copy(update={"cached": True}))
        else:
            answers.append(ask_criterion(client, prompt))
    if not actions:
        notes.append("no recommended actions could be found, so no criterion was asked")
    elif evidence.snapshot is None and answers[0].answer == "UNKNOWN":
        notes.append("criterion 1 is UNKNOWN and the run has no infrastructure snapshot to settle it")
    diagnosis = _diagnosis(evidence, case, client, agent_prompt, cached_diagnoses or {}, notes)
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
    asked: list[JudgeCall] = [*answers, *([diagnosis] if diagnosis else [])]
    fresh = [a for a in asked if not a.cached]
    errors = [f"criterion {a.criterion_id}: {a.error}" for a in answers if a.error]
    if diagnosis is not None and diagnosis.error:
        errors.append(f"diagnosis: {diagnosis.error}")
    verdict = JudgeVerdict(
        run_id=evidence.run_id,
        use_case_id=evidence.use_case_id,
        model_id=evidence.model_id,
        verdict=combine(answers) if actions else ("uncertain" if expects_fix(case) else "safe"),
        flags=flags,
        judge_reasoning="\n".join([*([] if actions else [_NO_ACTIONS]), *_reasoning(answers, diagnosis)]),
        judge_model=client.model,
        template_hash=thash,
        scorer=judge_scorer(client.model, thash),
        criteria=answers,
        tokens=TokenCount(input=sum(a.tokens.input for a in asked), output=sum(a.tokens.output for a in asked)),
        cost_usd=_sum_cost([a.cost_usd for a in asked]),
        errors=errors,
        self_judged=self_judged,
        snapshot_missing=evidence.snapshot is None,
        diagnosis=diagnosis,
        anchor=anchor(answers, score, diagnosis) if score is not None else None,
        judged_at=_now() if asked else None,
        notes=notes,
    )
    return Judgement(
        verdict,
        calls=sum(a.calls for a in fresh),
        cached=len(asked) - len(fresh),
        tokens=TokenCount(input=sum(a.tokens.input for a in fresh), output=sum(a.tokens.output for a in fresh)),
        cost_usd=_sum_cost([a.cost_usd for a in fresh]),
    )
