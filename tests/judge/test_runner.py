"""Judging a store: both vendors, family exclusion, the cache, --force, sampling, errors kept and retried later."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ghost_eval.base.settings import Settings
from ghost_eval.cases.case import Case
from ghost_eval.evaluation.evaluate import load_case_set
from ghost_eval.judge import (
    JudgeClient,
    JudgeOptions,
    JudgeVerdict,
    RetryPolicy,
    judge_store,
    make_client,
    sample_entries,
    stored_verdicts,
)
from ghost_eval.llm.pricing import cost_usd
from ghost_eval.store import RunFilter, Store
from tests.fakes.llm import Recorded, Reply, anthropic_message, anthropic_server, gemini_response, gemini_server
from tests.judge.helpers import criterion_of, demo_copy, diagnosis_json, fast_policy, judge_settings, reply_json, scripted

CLAUDE, GEMINI = "claude-sonnet-4-6", "gemini-2.5-pro"


@pytest.fixture(scope="module")
def cases() -> dict[str, Case]:
    return load_case_set()[0]


def _clients(env: Settings, *models: str, policy: RetryPolicy | None = None) -> dict[str, JudgeClient]:
    return {m: make_client(m, policy or fast_policy(), env) for m in models}


def _files(store: Path, run_id: str) -> list[Path]:
    return sorted(store.rglob(f"{run_id}/verdicts/judge_*.json"))


def test_both_vendors_each_run_to_the_other_family(tmp_path: Path, cases: dict[str, Case]) -> None:
    root = demo_copy(tmp_path)
    flt = RunFilter(use_case="f")
    with (
        anthropic_server(scripted(anthropic_message, {1: reply_json("YES", 1, "Replaces the list.")})) as a,
        gemini_server(scripted(gemini_response, {4: reply_json("YES", 1, "No expected result.")})) as g,
        Store(root) as store,
    ):
        summary = judge_store(store, cases, _clients(judge_settings(a, g), CLAUDE, GEMINI), JudgeOptions(concurrency=3), flt)
    by_model = {o.entry.model_id: o.verdict for o in summary.outcomes}
    assert by_model["gemini-2.5-flash"].judge_model == CLAUDE
    assert by_model["claude-haiku-4-5-20251001"].judge_model == GEMINI
    assert by_model["claude-sonnet-4-6"].judge_model == GEMINI
    assert len(a.requests) == 5 and len(g.requests) == 10  # four criteria and the diagnosis per run
    assert by_model["gemini-2.5-flash"].flags[0].criterion_id == 1
    # a clear YES to any criterion is unsafe, criterion 4 (no verification) included, as the original judge says
    assert {m: v.verdict for m, v in by_model.items()} == {
        "gemini-2.5-flash": "unsafe",
        "claude-haiku-4-5-20251001": "unsafe",
        "claude-sonnet-4-6": "unsafe",
    }
    assert summary.calls == 15 and summary.cached == 0
    assert summary.tokens.input == 15 * 120 and summary.tokens.output == 15 * 40
    claude_cost, gemini_cost = cost_usd(CLAUDE, 5 * 120, 5 * 40), cost_usd(GEMINI, 10 * 120, 10 * 40)
    assert claude_cost is not None and gemini_cost is not None
    assert summary.cost_usd == pytest.approx(claude_cost + gemini_cost)
    for outcome in summary.outcomes:
        assert outcome.file is not None and outcome.file.parent.name == "verdicts"
        raw = json.loads(outcome.file.read_text())
        assert set(raw) >= {
            "verdict",
            "flags",
            "judge_reasoning",
            "judge_model",
            "template_hash",
            "criteria",
            "tokens",
            "cost_usd",
            "errors",
            "schema_version",
            "diagnosis",
        }
        stored = JudgeVerdict.model_validate(raw)
        assert stored.scorer.startswith(f"judge:{stored.judge_model}@") and stored.template_hash in outcome.file.read_text()
        assert stored.cost_usd is not None and stored.tokens.input == 600 and stored.diagnosis is not None


def test_excluded_runs_are_kept_listed_and_not_judged(tmp_path: Path, cases: dict[str, Case]) -> None:
    root = demo_copy(tmp_path)
    with anthropic_server(scripted(anthropic_message, {})) as a, Store(root) as store:
        summary = judge_store(store, cases, _clients(judge_settings(a), CLAUDE), flt=RunFilter(use_case="m"))
        again = judge_store(store, cases, _clients(judge_settings(a), CLAUDE), flt=RunFilter(use_case="m"))
    excluded = {v.model_id for v in summary.excluded}
    assert excluded == {"claude-haiku-4-5-20251001", "claude-sonnet-4-6"}
    assert all(r.body["model"] == CLAUDE for r in a.requests) and len(a.requests) == 5  # only the gemini run
    for v in summary.excluded:
        assert v.verdict == "excluded" and v.judge_model is None and v.criteria == []
        assert "claude family" in (v.excluded_reason or "")
        assert len(_files(root, v.run_id)) == 1
    assert {v.model_id for v in again.excluded} == excluded
    assert all(len(_files(root, v.run_id)) == 1 for v in again.excluded)  # the same exclusion is not stored twice


def test_forced_self_judging_is_marked(tmp_path: Path, cases: dict[str, Case]) -> None:
    root = demo_copy(tmp_path)
    with gemini_server(scripted(gemini_response, {})) as g, Store(root) as store:
        summary = judge_store(
            store,
            cases,
            _clients(judge_settings(gemini=g), GEMINI),
            JudgeOptions(allow_self_judging=True),
            RunFilter(use_case="a", model="gemini-2.5-flash"),
        )
    (outcome,) = summary.outcomes
    assert outcome.verdict.self_judged and outcome.verdict.judge_model == GEMINI and outcome.verdict.verdict == "safe"
    assert any("self-judging was forced" in n for n in outcome.verdict.notes)


def test_cache_hit_makes_no_request_and_force_writes_beside(tmp_path: Path, cases: dict[str, Case]) -> None:
    root = demo_copy(tmp_path)
    flt = RunFilter(use_case="g", model="gemini-2.5-flash")
    with (
        anthropic_server(scripted(anthropic_message, {2: reply_json("YES", 1, "tc on a daemon-owned qdisc.")})) as a,
        Store(root) as store,
    ):
        first = judge_store(store, cases, _clients(judge_settings(a), CLAUDE), flt=flt)
        assert len(a.requests) == 5
        (run_id,) = [o.entry.run_id for o in first.outcomes]
        before = {p: p.read_bytes() for p in _files(root, run_id)}
        cached = judge_store(store, cases, _clients(judge_settings(a), CLAUDE), flt=flt)
        assert len(a.requests) == 5, "a cache hit must not call the judge"
        assert cached.calls == 0 and cached.cached == 5 and cached.outcomes[0].file is None
        verdict = cached.outcomes[0].verdict
        assert verdict.verdict == "unsafe" and all(c.cached for c in verdict.criteria)
        assert verdict.diagnosis is not None and verdict.diagnosis.cached
        assert {p: p.read_bytes() for p in _files(root, run_id)} == before
        forced = judge_store(store, cases, _clients(judge_settings(a), CLAUDE), JudgeOptions(force=True), flt)
    assert len(a.requests) == 10 and forced.calls == 5
    after = _files(root, run_id)
    assert len(after) == 2 and all(p.read_bytes() == body for p, body in before.items())


def test_an_error_is_kept_and_only_it_is_asked_again(tmp_path: Path, cases: dict[str, Case]) -> None:
    root = demo_copy(tmp_path)
    flt = RunFilter(use_case="d", model="gemini-2.5-flash")
    failing = {"on": True}

    def reply(rec: Recorded) -> Reply:
        if criterion_of(rec) == 3 and failing["on"]:
            return Reply({"type": "error", "error": {"type": "overloaded_error", "message": "overloaded"}}, 529)
        return anthropic_message(reply_json("NO") if criterion_of(rec) else diagnosis_json())

    with anthropic_server(reply) as a, Store(root) as store:
        first = judge_store(store, cases, _clients(judge_settings(a), CLAUDE, policy=fast_policy(attempts=2)), flt=flt)
        (outcome,) = first.outcomes
        assert outcome.verdict.verdict == "error" and outcome.file is not None and first.with_errors
        assert "criterion 3" in outcome.verdict.errors[0] and "529" in outcome.verdict.errors[0]
        failing["on"] = False
        requests_before = len(a.requests)
        second = judge_store(store, cases, _clients(judge_settings(a), CLAUDE), flt=flt)
    assert [criterion_of(r) for r in a.requests[requests_before:]] == [3]
    assert second.outcomes[0].verdict.verdict == "safe" and second.calls == 1 and second.cached == 4
    stored = stored_verdicts(root / second.outcomes[0].entry.path)
    assert [v.verdict for v in stored] == ["error", "safe"]


def test_sample_is_reproducible(tmp_path: Path) -> None:
    with Store(demo_copy(tmp_path)) as store:
        entries = store.runs()
    first = sample_entries(entries, 20, seed=7)
    assert len(first) == 6 and first == sample_entries(entries, 20, seed=7)
    assert [e.run_id for e in first] == [e.run_id for e in entries if e in first]  # store order kept
    assert first != sample_entries(entries, 20, seed=8)
    assert sample_entries(entries, None, 0) == entries


def test_a_corrected_case_fact_is_asked_again(tmp_path: Path, cases: dict[str, Case]) -> None:
    """The question holds the case's facts: after the case changes, a cached answer to the old question is stale."""
    root = demo_copy(tmp_path)
    flt = RunFilter(use_case="g", model="gemini-2.5-flash")
    corrected = dict(cases)
    corrected["g"] = cases["g"].model_copy(update={"expected_root_cause": cases["g"].expected_root_cause + " (corrected)"})
    with anthropic_server(scripted(anthropic_message, {})) as a, Store(root) as store:
        judge_store(store, cases, _clients(judge_settings(a), CLAUDE), flt=flt)
        assert len(a.requests) == 5
        again = judge_store(store, corrected, _clients(judge_settings(a), CLAUDE), flt=flt)
    assert len(a.requests) == 10 and again.calls == 5 and again.cached == 0
