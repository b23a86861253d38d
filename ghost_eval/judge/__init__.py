"""The LLM judge: four remediation criteria and the diagnosis's key facts, asked one question at a time of Claude or
Gemini, guarded, cached and anchored.

`judge_store` judges a store, `judge_entry` one stored run, `judge_evidence` one run's evidence; the Promptfoo
assertion's logic is `ghost_eval.judge.assertion.judge_assertion`.
"""

from __future__ import annotations

from ghost_eval.judge.anchor import anchor
from ghost_eval.judge.answer import (
    Answer,
    DiagnosisAnswer,
    JudgeAnswer,
    MalformedAnswer,
    is_hedged,
    parse_answer,
    parse_diagnosis,
)
from ghost_eval.judge.clients import (
    DEFAULT_JUDGES,
    AnthropicJudge,
    Completion,
    GeminiJudge,
    JudgeAuthError,
    JudgeCallError,
    JudgeClient,
    MissingKeyError,
    default_judges,
    make_client,
    missing_key_message,
)
from ghost_eval.judge.family import Assignment, assign_judge, model_family
from ghost_eval.judge.judging import Judgement, ask_criterion, ask_diagnosis, excluded_verdict, judge_evidence
from ghost_eval.judge.prompt import (
    DiagnosisPrompt,
    JudgePrompt,
    Question,
    build_diagnosis_prompt,
    build_prompt,
    recommended_actions,
    template_hash,
)
from ghost_eval.judge.record import (
    Anchor,
    ClaimAnswer,
    CriterionAnswer,
    DiagnosisDisagreement,
    Disagreement,
    FactAnswer,
    JudgeCall,
    JudgeDiagnosis,
    JudgeVerdict,
    JudgeVerdictValue,
    TokenCount,
    combine,
    diagnosis_correct,
    judge_scorer,
)
from ghost_eval.judge.runner import JudgeOptions, JudgeOutcome, JudgeSummary, judge_entry, judge_store, sample_entries
from ghost_eval.judge.stored import cached_answers, cached_diagnoses, latest_verdict, stored_verdicts
from ghost_eval.llm.clients import ANTHROPIC_BASE_URL_ENV, ANTHROPIC_KEY_ENV, GEMINI_BASE_URL_ENV, GEMINI_KEY_ENVS, RetryPolicy
from ghost_eval.llm.pricing import cost_usd

__all__ = [
    "ANTHROPIC_BASE_URL_ENV",
    "ANTHROPIC_KEY_ENV",
    "DEFAULT_JUDGES",
    "GEMINI_BASE_URL_ENV",
    "GEMINI_KEY_ENVS",
    "Anchor",
    "Answer",
    "AnthropicJudge",
    "Assignment",
    "ClaimAnswer",
    "Completion",
    "CriterionAnswer",
    "DiagnosisAnswer",
    "DiagnosisDisagreement",
    "DiagnosisPrompt",
    "Disagreement",
    "FactAnswer",
    "GeminiJudge",
    "JudgeAnswer",
    "JudgeAuthError",
    "JudgeCall",
    "JudgeCallError",
    "JudgeClient",
    "JudgeDiagnosis",
    "JudgeOptions",
    "JudgeOutcome",
    "JudgePrompt",
    "JudgeSummary",
    "JudgeVerdict",
    "JudgeVerdictValue",
    "Judgement",
    "MalformedAnswer",
    "MissingKeyError",
    "Question",
    "RetryPolicy",
    "TokenCount",
    "anchor",
    "ask_criterion",
    "ask_diagnosis",
    "assign_judge",
    "build_diagnosis_prompt",
    "build_prompt",
    "cached_answers",
    "cached_diagnoses",
    "combine",
    "cost_usd",
    "default_judges",
    "diagnosis_correct",
    "excluded_verdict",
    "is_hedged",
    "judge_entry",
    "judge_evidence",
    "judge_scorer",
    "judge_store",
    "latest_verdict",
    "make_client",
    "missing_key_message",
    "model_family",
    "parse_answer",
    "parse_diagnosis",
    "recommended_actions",
    "sample_entries",
    "stored_verdicts",
    "template_hash",
]
