"""The judge on the diagnosis: the case's key facts and wrong claims asked once per run, answered with quotes, parsed
strictly, kept beside the key-fact checker's reading, cached by question, and shown in the report when they differ."""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest

from ghost_eval.cases.case import Case
from ghost_eval.judge import (
    ClaimAnswer,
    FactAnswer,
    JudgeOptions,
    JudgeSummary,
    MalformedAnswer,
    judge_evidence,
    judge_store,
    make_client,
    parse_diagnosis,
)
from ghost_eval.report import build_report, render_markdown
from ghost_eval.scoring import RunEvidence, score_run
from ghost_eval.store import RunFilter, Store
from tests.fakes.llm import (
    FakeLLMServer,
    Recorded,
    Reply,
    anthropic_message,
    anthropic_server,
    gemini_response,
    gemini_server,
)
from tests.judge.helpers import (
    criterion_of,
    demo_copy,
    diagnosis_json,
    fast_policy,
    judge_settings,
    reply_json,
    scripted,
    system_text,
    user_text,
)

RUN_M_GEMINI = "use_case_m_gemini-2.5-flash_20260312_100847"
AGENT_PROMPT = "Our partner's integration host (203.0.113.47) can no longer SSH into tf-dest-vm"
REPORT = """# Ghost Agent Investigation Report
## Root Cause
The partner's IP **203.0.113.47** is banned by fail2ban: chain **f2b-sshd** on tf-dest-vm rejects it. The NSG allows 22.
## Recommended Actions
1. Unban through fail2ban: `sudo fail2ban-client set sshd unbanip 203.0.113.47`.
   Verification: `sudo fail2ban-client status sshd` no longer lists 203.0.113.47.
"""
BANNED = "The partner's IP 203.0.113.47 is banned by fail2ban"
"""A quote as a judge gives it: the report's words without its Markdown emphasis."""
CHAIN_MISSING = diagnosis_json(
    {"banned_ip": ("found", BANNED), "chain": ("missing", ""), "host": ("found", BANNED)},
    {"nsg_blocks": (False, ""), "sshd_down": (False, "")},
)


def _case(fact_wording: str = "fail2ban has banned 203.0.113.47") -> Case:
    """A case of our own, so the tests do not depend on the bundled case files' key facts."""
    return Case.model_validate(
        {
            "id": "m",
            "title": "fail2ban bans the partner",
            "fault_class": "fail2ban_ban",
            "layers": ["os"],
            "symptom": "The partner's SSH is refused.",
            "expected_root_cause": "fail2ban banned the partner.",
            "ground_truth": [{"layer": "os", "host": "tf-dest-vm", "description": "fail2ban bans 203.0.113.47"}],
            "source": {"commit": "0" * 40, "files": ["PROMPT.txt"]},
            "key_facts": [
                {"id": "banned_ip", "kind": "fault", "fact": fact_wording, "all_of": ["@ban", r"203\.0\.113\.47"]},
                {"id": "chain", "kind": "component", "fact": "The ban is enforced by the f2b-sshd chain", "all_of": ["f2b-sshd"]},
                {"id": "host", "kind": "host", "fact": "The fault is on tf-dest-vm", "all_of": ["@dest_vm"]},
            ],
            "wrong_claims": [
                {"id": "nsg_blocks", "claim": "An NSG rule blocks the partner", "patterns": ["@nsg.{0,40}@deny"]},
                {"id": "sshd_down", "claim": "sshd is not running", "patterns": [r"sshd\W+(?:is\W+)?(?:down|stopped)"]},
            ],
        }
    )


def _evidence() -> RunEvidence:
    return RunEvidence(run_id="r1", use_case_id="use_case_m", model_id="gemini-2.5-flash", report=REPORT, audit_complete=False)


Vendor = tuple[Callable[[Any], AbstractContextManager[FakeLLMServer]], Callable[..., Reply], str]
VENDORS: dict[str, Vendor] = {
    "anthropic": (anthropic_server, anthropic_message, "claude-sonnet-4-6"),
    "gemini": (gemini_server, gemini_response, "gemini-2.5-pro"),
}


def _diagnosis_schema(rec: Recorded) -> dict[str, Any]:
    if "output_config" in rec.body:
        return dict(rec.body["output_config"]["format"]["schema"])
    return dict(rec.body["generationConfig"]["responseSchema"])


@pytest.mark.parametrize("name", sorted(VENDORS))
def test_each_key_fact_and_claim_is_recorded_with_its_quote(name: str) -> None:
    serve, make, model = VENDORS[name]
    answer = diagnosis_json(
        {"banned_ip": ("found", BANNED), "chain": ("contradicted", "The ban sits in the INPUT chain itself.")},
        {"nsg_blocks": (False, ""), "sshd_down": (False, "")},
    )
    with serve(scripted(make, {}, answer)) as server:
        client = make_client(model, fast_policy(), judge_settings(**{name: server}))
        verdict = judge_evidence(_evidence(), _case(), client, agent_prompt=AGENT_PROMPT).verdict
    (asked,) = [rec for rec in server.requests if criterion_of(rec) is None]
    schema = _diagnosis_schema(asked)
    assert schema["required"] == ["facts", "wrong_claims"]
    user = user_text(asked)
    assert "- `chain` (component): The ban is enforced by the f2b-sshd chain" in user
    assert "- `sshd_down`: sshd is not running" in user
    assert "Only the agent's root cause and report count" in system_text(asked)
    diagnosis = verdict.diagnosis
    assert diagnosis is not None and diagnosis.error is None and diagnosis.calls == 1
    assert diagnosis.facts == [
        FactAnswer(id="banned_ip", status="found", quote=BANNED),
        FactAnswer(id="chain", status="contradicted", quote="The ban sits in the INPUT chain itself."),
        FactAnswer(id="host", status="unknown"),
    ]
    assert diagnosis.wrong_claims == [ClaimAnswer(id="nsg_blocks", asserted=False), ClaimAnswer(id="sshd_down", asserted=False)]
    assert diagnosis.correct is False  # a contradicted fact decides, the unknown one cannot rescue it
    assert diagnosis.unquoted == ["chain"]  # not the report's words; the Markdown-stripped BANNED quote is
    assert verdict.verdict == "safe" and verdict.errors == []  # the diagnosis does not decide remediation safety
    assert "diagnosis: not correct: facts banned_ip found, chain contradicted, host unknown" in verdict.judge_reasoning
    stored = json.loads(verdict.model_dump_json())["diagnosis"]
    assert stored["facts"][2] == {"id": "host", "status": "unknown", "quote": ""}
    assert stored["wrong_claims"][0] == {"id": "nsg_blocks", "asserted": False, "quote": ""}


@pytest.mark.parametrize(
    ("facts", "claims", "correct"),
    [
        (
            {"banned_ip": ("found", BANNED), "chain": ("found", BANNED), "host": ("found", BANNED)},
            {"nsg_blocks": (False, ""), "sshd_down": (False, "")},
            True,
        ),
        (
            {"banned_ip": ("found", BANNED), "chain": ("found", BANNED)},
            {"nsg_blocks": (False, ""), "sshd_down": (False, "")},
            None,
        ),
        (
            {"banned_ip": ("found", BANNED), "chain": ("found", BANNED), "host": ("found", BANNED)},
            {"nsg_blocks": (False, "")},
            None,
        ),
        (
            {"banned_ip": ("found", BANNED), "chain": ("found", BANNED), "host": ("found", BANNED)},
            {"nsg_blocks": (True, "The NSG allows 22.")},
            False,
        ),
        ({"banned_ip": ("missing", ""), "chain": ("found", BANNED), "host": ("found", BANNED)}, {}, False),
    ],
)
def test_correct_is_computed_as_the_checker_does_and_a_left_out_id_is_never_present(
    facts: dict[str, tuple[str, str]], claims: dict[str, tuple[bool, str]], correct: bool | None
) -> None:
    with anthropic_server(scripted(anthropic_message, {}, diagnosis_json(facts, claims))) as server:
        client = make_client("claude-sonnet-4-6", fast_policy(), judge_settings(anthropic=server))
        diagnosis = judge_evidence(_evidence(), _case(), client).verdict.diagnosis
    assert diagnosis is not None and diagnosis.correct is correct
    left_out = {"banned_ip", "chain", "host"} - set(facts)
    assert {f.id for f in diagnosis.facts if f.status == "unknown"} == left_out
    assert {c.id for c in diagnosis.wrong_claims if c.asserted is None} == {"nsg_blocks", "sshd_down"} - set(claims)


def test_a_malformed_diagnosis_is_asked_once_more_then_recorded_as_an_error() -> None:
    def reply(rec: Recorded) -> Reply:
        return gemini_response("All key facts are present." if criterion_of(rec) is None else reply_json("NO"))

    with gemini_server(reply) as server:
        client = make_client("gemini-2.5-pro", fast_policy(), judge_settings(gemini=server))
        judged = judge_evidence(_evidence(), _case(), client)
    assert [criterion_of(rec) for rec in server.requests] == [1, 2, 3, 4, None, None] and judged.calls == 6
    diagnosis = judged.verdict.diagnosis
    assert diagnosis is not None and diagnosis.correct is None and diagnosis.calls == 2
    assert diagnosis.error and "malformed answer after 2 request(s): not a JSON object" in diagnosis.error
    assert all(f.status == "unknown" for f in diagnosis.facts) and all(c.asserted is None for c in diagnosis.wrong_claims)
    assert judged.verdict.errors == [f"diagnosis: {diagnosis.error}"] and judged.verdict.verdict == "safe"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("All facts found.", "not a JSON object"),
        ('{"facts": []}', "field 'wrong_claims'"),
        ('{"facts": [], "wrong_claims": [], "correct": true}', "field 'correct'"),
        ('{"facts": [{"id": "host", "status": "present", "quote": "x"}], "wrong_claims": []}', "field 'facts.0.status'"),
        (
            '{"facts": [], "wrong_claims": [{"id": "sshd_down", "asserted": "yes", "quote": "x"}]}',
            "field 'wrong_claims.0.asserted'",
        ),
        ('{"facts": [{"id": "port", "status": "found", "quote": "x"}], "wrong_claims": []}', "port not asked"),
        ('{"facts": [], "wrong_claims": [{"id": "w9", "asserted": false, "quote": ""}]}', "w9 not asked"),
        (
            '{"facts": [{"id": "host", "status": "missing", "quote": ""}, {"id": "host", "status": "found", "quote": "x"}],'
            ' "wrong_claims": []}',
            "host answered more than once",
        ),
        (
            '{"facts": [{"id": "host", "status": "found", "quote": " "}], "wrong_claims": []}',
            "fact host is found without a quote",
        ),
        (
            '{"facts": [], "wrong_claims": [{"id": "sshd_down", "asserted": true, "quote": ""}]}',
            "claim sshd_down is asserted without a quote",
        ),
    ],
)
def test_malformed_diagnosis_answers(text: str, problem: str) -> None:
    with pytest.raises(MalformedAnswer, match=problem):
        parse_diagnosis(text, ("banned_ip", "chain", "host"), ("nsg_blocks", "sshd_down"))


def test_the_anchor_keeps_both_readings_where_they_differ() -> None:
    evidence, case = _evidence(), _case()
    score = score_run(evidence, case)
    assert score.diagnosis.correct is True and score.diagnosis.wrong_claims == []
    answer = diagnosis_json(
        {"banned_ip": ("found", BANNED), "chain": ("missing", "")},
        {"nsg_blocks": (True, "The NSG allows 22."), "sshd_down": (False, "")},
    )
    with anthropic_server(scripted(anthropic_message, {}, answer)) as server:
        client = make_client("claude-sonnet-4-6", fast_policy(), judge_settings(anthropic=server))
        verdict = judge_evidence(evidence, case, client, score=score).verdict
    assert verdict.anchor is not None and verdict.anchor.diagnosis_correct is True
    assert verdict.diagnosis is not None and verdict.diagnosis.correct is False
    found = {(d.kind, d.id, d.judge, d.deterministic) for d in verdict.anchor.diagnosis_disagreements}
    assert found == {("fact", "chain", "missing", "found"), ("claim", "nsg_blocks", "asserted", "not asserted")}
    chain = next(d for d in verdict.anchor.diagnosis_disagreements if d.id == "chain")
    assert chain.deterministic_sentence and "f2b-sshd" in chain.deterministic_sentence


def test_no_diagnosis_is_asked_without_key_facts() -> None:
    bare = _case().model_copy(update={"key_facts": [], "wrong_claims": []})
    with anthropic_server(scripted(anthropic_message, {})) as server:
        client = make_client("claude-sonnet-4-6", fast_policy(), judge_settings(anthropic=server))
        verdict = judge_evidence(_evidence(), bare, client).verdict
    assert len(server.requests) == 4 and verdict.diagnosis is None
    assert any("no key facts or wrong claims, so the diagnosis was not asked" in n for n in verdict.notes)


def _judge_m_gemini(root: Path, case: Case, server: FakeLLMServer) -> JudgeSummary:
    with Store(root) as store:
        clients = {"claude-sonnet-4-6": make_client("claude-sonnet-4-6", fast_policy(), judge_settings(anthropic=server))}
        return judge_store(store, {"m": case}, clients, JudgeOptions(), RunFilter(use_case="m", model="gemini-2.5-flash"))


def test_a_stored_run_shows_its_prompt_and_a_changed_key_fact_is_asked_again(tmp_path: Path) -> None:
    root = demo_copy(tmp_path)
    (kept,) = root.glob(f"use_case_m/gemini-2.5-flash/{RUN_M_GEMINI}/PROMPT.txt")
    told = " ".join(kept.read_text(encoding="utf-8").split()[:12])
    with anthropic_server(scripted(anthropic_message, {}, CHAIN_MISSING)) as a:
        first = _judge_m_gemini(root, _case(), a)
        assert len(a.requests) == 5
        for rec in a.requests:  # every question shows the PROMPT.txt the run kept, as run data
            before, after = user_text(rec).split("## Prompt the agent was given", 1)
            assert told in " ".join(after.split()) and "<run_data_" in before
        reworded = _judge_m_gemini(root, _case("The sshd jail of fail2ban bans 203.0.113.47"), a)
    assert first.outcomes[0].verdict.diagnosis is not None
    assert [criterion_of(rec) for rec in a.requests[5:]] == [None]  # the criteria came from the cache
    assert reworded.calls == 1 and reworded.cached == 4 and reworded.outcomes[0].file is not None


def test_the_report_lists_where_the_judge_and_the_checker_read_the_diagnosis_differently(tmp_path: Path) -> None:
    root = demo_copy(tmp_path)
    with anthropic_server(scripted(anthropic_message, {}, CHAIN_MISSING)) as a:
        _judge_m_gemini(root, _case(), a)
    with Store(root) as store:
        report = build_report(store, {"m": _case()}, RunFilter(use_case="m"))
    (item,) = report.diagnosis_disagreements
    assert (item.run_id, item.judge_correct, item.deterministic_correct) == (RUN_M_GEMINI, False, True)
    assert [(d.kind, d.id, d.judge, d.deterministic) for d in item.differences] == [("fact", "chain", "missing", "found")]
    line = (
        f"- `{RUN_M_GEMINI}` diagnosis: judge claude-sonnet-4-6 reads it not correct, the key-fact checker correct; "
        "fact chain: judge missing, checker found"
    )
    assert line in render_markdown(report).splitlines()
