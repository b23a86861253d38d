"""The tool loop for both vendors against fake servers the real SDKs talk to: completion, plain answers, retries
that honour retry-after, and every way a run can end early (turn limit, timeouts, model failure, crash)."""

from __future__ import annotations

from typing import Any

import pytest

from ghost_eval.agent.loop import Limits
from ghost_eval.agent.runner import AgentConfig, investigate
from ghost_eval.agent.tools import COMPLETE_TOOL, TOOLS
from ghost_eval.connect.target import Target
from tests.agent.vendors import VENDORS, Vendor, agent_loop
from tests.fakes.llm import Recorded, Reply

pytestmark = pytest.mark.parametrize("vendor", VENDORS, ids=[v.provider for v in VENDORS])

COMPLETION: dict[str, Any] = {
    "root_cause": "NSG rule ghost-demo-block-8080 (priority 150) denies TCP 8080 inbound to tf-dest-vm",
    "evidence": ["get_effective_nsg_rules on tf-dest-vm-nic: ghost-demo-block-8080 Deny 8080 at priority 150"],
    "confirmed_hypotheses": ["an NSG rule denies 8080"],
    "refuted_hypotheses": ["the host firewall drops 8080"],
    "recommended_actions": [
        {
            "description": "Delete only the deny rule ghost-demo-block-8080 from tf-dest-vm-nsg.",
            "commands": ["az network nsg rule delete -g nw-forensics-rg --nsg-name tf-dest-vm-nsg -n ghost-demo-block-8080"],
            "verification": {"command": "nc -zv -w 3 10.0.1.5 8080", "expected": "succeeded"},
        }
    ],
}


def test_scripted_tool_calls_end_in_a_completed_investigation(
    vendor: Vendor, offline_target: Target, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = [
        vendor.reply(
            "Two hypotheses first.",
            [
                ("record_hypothesis", {"hypothesis": "an NSG rule denies 8080"}),
                ("record_hypothesis", {"hypothesis": "the host firewall drops 8080"}),
            ],
        ),
        vendor.reply(calls=[(COMPLETE_TOOL, COMPLETION)], usage=(300, 90)),
    ]
    with vendor.server(script) as server:
        run = investigate(
            "Port 8080 on tf-dest-vm times out.",
            offline_target,
            AgentConfig(vendor.provider, vendor.model, settings=vendor.settings_for(server)),
        )
    assert run.loop.outcome == "completed" and run.result.aborted is None
    assert run.result.root_cause == COMPLETION["root_cause"]
    assert run.result.recommended_actions[0].verification is not None
    assert run.result.recommended_actions[0].verification.command == "nc -zv -w 3 10.0.1.5 8080"
    assert (run.result.model_extra or {})["evidence"] == COMPLETION["evidence"]
    assert [c.tool for c in run.trace] == ["record_hypothesis", "record_hypothesis", COMPLETE_TOOL]
    assert [s.calls for s in run.loop.steps] == [[0, 1], [2]]
    assert run.loop.steps[0].thought == "Two hypotheses first."
    assert (run.loop.usage.input_tokens, run.loop.usage.output_tokens, run.loop.usage.calls) == (420, 130, 2)
    first, second = server.requests
    assert vendor.tool_names(first) == [t.name for t in TOOLS]
    system = vendor.system_prompt(first)
    assert system == run.prompt.text and "tf-dest-vm-nsg" in system
    results = vendor.tool_results(second)
    assert len(results) == 2 and all("an NSG rule denies 8080" in out and not err for out, err in results)


def test_a_plain_answer_ends_the_run_without_tools(
    vendor: Vendor, offline_target: Target, monkeypatch: pytest.MonkeyPatch
) -> None:
    with vendor.server([vendor.reply("I only investigate network faults in this environment.")]) as server:
        run = investigate(
            "Write me a poem about cats.",
            offline_target,
            AgentConfig(vendor.provider, vendor.model, settings=vendor.settings_for(server)),
        )
    assert run.loop.outcome == "answered" and run.trace == [] and run.audit == []
    assert (run.result.model_extra or {})["answer"] == "I only investigate network faults in this environment."
    assert run.result.aborted is None and len(server.requests) == 1


def test_retry_after_is_honoured_on_429(vendor: Vendor, offline_target: Target, monkeypatch: pytest.MonkeyPatch) -> None:
    script = [
        Reply(
            {"error": {"type": "rate_limit_error", "message": "slow down", "code": 429, "status": "RESOURCE_EXHAUSTED"}},
            429,
            {"retry-after": "7"},
        ),
        vendor.reply("done"),
    ]
    sleeps: list[float] = []
    with vendor.server(script) as server:
        result, _ = agent_loop(server, vendor, offline_target, Limits(), sleeps)
    assert result.outcome == "answered" and len(server.requests) == 2
    assert sleeps == [7.0]


def test_5xx_is_retried_with_backoff(vendor: Vendor, offline_target: Target, monkeypatch: pytest.MonkeyPatch) -> None:
    error = Reply({"error": {"type": "api_error", "message": "boom", "code": 500, "status": "INTERNAL"}}, 500)
    sleeps: list[float] = []
    with vendor.server([error, error, vendor.reply("done")]) as server:
        result, _ = agent_loop(server, vendor, offline_target, Limits(max_backoff_s=4), sleeps)
    assert result.outcome == "answered" and len(server.requests) == 3
    assert len(sleeps) == 2 and all(0 < s <= 4 for s in sleeps)


def test_attempts_run_out_and_the_run_aborts(vendor: Vendor, offline_target: Target, monkeypatch: pytest.MonkeyPatch) -> None:
    def always_503(_: Recorded) -> Reply:
        return Reply(
            {"error": {"type": "overloaded_error", "message": "busy", "code": 503, "status": "UNAVAILABLE"}},
            503,
            {"retry-after": "0"},
        )

    sleeps: list[float] = []
    with vendor.server(always_503) as server:
        result, _ = agent_loop(server, vendor, offline_target, Limits(max_attempts=3), sleeps)
    assert result.outcome == "aborted" and result.aborted is not None and result.aborted.startswith("model call failed")
    assert len(server.requests) == 3


def test_a_client_error_is_not_retried(vendor: Vendor, offline_target: Target, monkeypatch: pytest.MonkeyPatch) -> None:
    bad = Reply({"error": {"type": "invalid_request_error", "message": "bad", "code": 400, "status": "INVALID_ARGUMENT"}}, 400)
    with vendor.server([bad, vendor.reply("never reached")]) as server:
        result, _ = agent_loop(server, vendor, offline_target, Limits(), [])
    assert result.outcome == "aborted" and len(server.requests) == 1


def test_turn_limit_aborts_with_the_reason(vendor: Vendor, offline_target: Target, monkeypatch: pytest.MonkeyPatch) -> None:
    def keep_going(_: Recorded) -> Reply:
        return vendor.reply(calls=[("record_hypothesis", {"hypothesis": "again"})])

    with vendor.server(keep_going) as server:
        result, toolbox = agent_loop(server, vendor, offline_target, Limits(max_turns=3), [])
    assert result.outcome == "aborted" and result.aborted is not None and "turn limit" in result.aborted
    assert len(server.requests) == 3 and len(toolbox.trace) == 3 and toolbox.completion is None


def test_a_slow_model_call_times_out_and_is_retried(
    vendor: Vendor, offline_target: Target, monkeypatch: pytest.MonkeyPatch
) -> None:
    late = Reply(vendor.reply("late").body, delay=2.0)
    with vendor.server([late, vendor.reply("on time")]) as server:
        result, _ = agent_loop(server, vendor, offline_target, Limits(call_timeout_s=0.5, max_attempts=2, max_backoff_s=0.1), [])
    assert result.outcome == "answered" and result.final_text == "on time" and len(server.requests) == 2
    with vendor.server([late]) as server:
        result, _ = agent_loop(server, vendor, offline_target, Limits(call_timeout_s=0.5, max_attempts=1), [])
    assert result.outcome == "aborted" and result.aborted is not None and "model call failed" in result.aborted


def test_the_run_deadline_aborts_between_turns(vendor: Vendor, offline_target: Target, monkeypatch: pytest.MonkeyPatch) -> None:
    def slow_tools(_: Recorded) -> Reply:
        return Reply(vendor.reply(calls=[("record_hypothesis", {"hypothesis": "h"})]).body, delay=0.3)

    with vendor.server(slow_tools) as server:
        result, _ = agent_loop(server, vendor, offline_target, Limits(run_timeout_s=0.5), [])
    assert result.outcome == "aborted" and result.aborted is not None and result.aborted.startswith("timeout")
    assert 1 <= len(server.requests) <= 3


def test_a_run_that_cannot_start_is_still_a_result(
    vendor: Vendor, offline_target: Target, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No key in the settings it was given: the run aborts, whatever this process's environment holds."""
    for name in ("ANTHROPIC_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.setenv(name, "a-key-the-agent-must-not-read")
    run = investigate("anything", offline_target, AgentConfig(vendor.provider, vendor.model))
    assert run.loop.outcome == "aborted" and run.result.aborted is not None
    assert "API_KEY" in run.result.aborted and run.result.aborted.endswith("is not set")


def test_bad_arguments_and_unknown_tools_go_back_to_the_model(
    vendor: Vendor, offline_target: Target, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = [vendor.reply(calls=[("get_nsg", {}), ("format_disk", {"device": "sda"})]), vendor.reply("stopping")]
    with vendor.server(script) as server:
        result, toolbox = agent_loop(server, vendor, offline_target, Limits(), [])
    assert result.outcome == "answered"
    errors = vendor.tool_results(server.requests[1])
    assert [e for _, e in errors] == [True, True]
    assert "invalid arguments for get_nsg" in errors[0][0] and "name" in errors[0][0]
    assert "unknown tool 'format_disk'" in errors[1][0]
    assert [c.is_error for c in toolbox.trace] == [True, True]


def test_secrets_are_redacted_before_the_model_sees_them(
    vendor: Vendor, offline_target: Target, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = [
        vendor.reply(calls=[("record_hypothesis", {"hypothesis": "the app uses password=hunter22secret"})]),
        vendor.reply("done"),
    ]
    with vendor.server(script) as server:
        _, toolbox = agent_loop(server, vendor, offline_target, Limits(), [])
    sent = vendor.tool_results(server.requests[1])[0][0]
    assert "hunter22secret" not in sent and "[REDACTED]" in sent
    assert "hunter22secret" not in toolbox.trace[0].model_dump_json()
