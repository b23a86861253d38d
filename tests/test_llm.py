"""What the agent and the judge share: the Retry-After reading and the retry policy (one code path for both)."""

from __future__ import annotations

import email.utils
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ghost_eval.agent.loop import Limits
from ghost_eval.judge import JudgeCallError, JudgePrompt, make_client
from ghost_eval.llm.clients import ANTHROPIC, GEMINI, RetryPolicy, call_with_retries, retry_after_seconds
from ghost_eval.llm.clients import Vendor as LlmVendor
from tests.agent.vendors import VENDORS, Vendor, agent_loop, unreachable_target
from tests.fakes.llm import FakeLLMServer, Reply
from tests.judge.helpers import judge_settings, reply_json

NOW = datetime(2026, 3, 12, 14, 15, 0, tzinfo=UTC).timestamp()


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after-ms": "1500"}, 1.5),
        ({"Retry-After": "7"}, 7.0),
        ({"retry-after": "-3"}, 0.0),
        ({"retry-after": "Thu, 12 Mar 2026 14:15:30 GMT"}, 30.0),
        ({"retry-after": "Thu, 12 Mar 2026 14:15:30 +0000"}, 30.0),
        ({"retry-after": "Thu, 12 Mar 2026 14:15:30 -0000"}, 30.0),  # no zone in Python's reading: still UTC
        ({"retry-after": "Thu, 12 Mar 2026 15:15:30 +0100"}, 30.0),
        ({"retry-after": "Thu, 12 Mar 2026 14:14:00 GMT"}, 0.0),
        ({"retry-after": "soon"}, None),
        ({}, None),
        (None, None),
    ],
)
def test_retry_after(headers: dict[str, str] | None, expected: float | None) -> None:
    assert retry_after_seconds(headers, now=NOW) == expected


def test_a_minus_zero_date_is_what_email_utils_writes_for_a_naive_time() -> None:
    written = email.utils.format_datetime(datetime(2026, 3, 12, 14, 15, 30))
    assert written.endswith("-0000") and retry_after_seconds({"retry-after": written}, now=NOW) == 30.0


# The agent and the judge retry through the one policy in ghost_eval.llm.clients, against the fake servers the real SDKs talk to.

LIMITED = {"error": {"type": "rate_limit_error", "message": "slow down", "code": 429, "status": "RESOURCE_EXHAUSTED"}}
CAP = 0.05
"""The policy's cap on any wait, kept tiny: the waits are recorded rather than slept, and would be short if slept."""
PROMPT = JudgePrompt(criterion_id=1, system="S", user="U", data_tag="run_data_x", action_count=1, snapshot_missing=False)
VENDOR_IDS = [v.provider for v in VENDORS]


def _call(caller: str, vendor: Vendor, server: FakeLLMServer, tmp_path: Path, limits: Limits, sleeps: list[float]) -> str | None:
    """One model call by the agent's loop or by the judge; None when it was answered, else the error it ended with."""
    if caller == "agent":
        result, _ = agent_loop(server, vendor, unreachable_target(tmp_path), limits, sleeps)
        return result.aborted
    env = judge_settings(anthropic=server) if vendor.provider == "anthropic" else judge_settings(gemini=server)
    policy = limits.retry_policy(sleeps.append)
    try:
        make_client(vendor.model, policy, env).complete(PROMPT)
    except JudgeCallError as exc:
        return str(exc)
    return None


def _limits(attempts: int) -> Limits:
    return Limits(max_attempts=attempts, initial_backoff_s=0.01, max_backoff_s=CAP, call_timeout_s=5.0)


@pytest.mark.parametrize("vendor", VENDORS, ids=VENDOR_IDS)
@pytest.mark.parametrize("caller", ["agent", "judge"])
def test_a_429_waits_as_retry_after_says_up_to_the_cap_then_succeeds(
    caller: str, vendor: Vendor, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = [
        Reply(LIMITED, 429, {"retry-after-ms": "20"}),  # below the cap: honoured as asked
        Reply(LIMITED, 429, {"retry-after": "Fri, 01 Jan 2100 00:00:00 -0000"}),  # far off: capped
        vendor.reply(reply_json("NO")),
    ]
    sleeps: list[float] = []
    with vendor.server(script) as server:
        failed = _call(caller, vendor, server, tmp_path, _limits(3), sleeps)
    assert failed is None and len(server.requests) == 3
    assert sleeps == [0.02, CAP]


@pytest.mark.parametrize("vendor", VENDORS, ids=VENDOR_IDS)
@pytest.mark.parametrize("caller", ["agent", "judge"])
def test_the_last_attempt_fails_naming_the_vendor_model_and_status(
    caller: str, vendor: Vendor, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sleeps: list[float] = []
    with vendor.server(lambda _: Reply(LIMITED, 429, {"retry-after": "0"})) as server:
        failed = _call(caller, vendor, server, tmp_path, _limits(2), sleeps)
    name = "Anthropic" if vendor.provider == "anthropic" else "Gemini"
    assert failed is not None and f"{name} {vendor.model}: gave up after 2 attempts: HTTP 429 (" in failed
    assert "slow down" in failed and len(server.requests) == 2 and sleeps == [0.0]


@pytest.mark.parametrize("vendor", VENDORS, ids=VENDOR_IDS)
@pytest.mark.parametrize("caller", ["agent", "judge"])
def test_a_server_that_never_answers_in_time_is_retried_then_named(
    caller: str, vendor: Vendor, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with vendor.server(lambda _: Reply(vendor.reply("late").body, delay=1.0)) as server:
        limits = Limits(max_attempts=2, initial_backoff_s=0.01, max_backoff_s=CAP, call_timeout_s=0.3)
        failed = _call(caller, vendor, server, tmp_path, limits, [])
    assert failed is not None and f"{vendor.model}: gave up after 2 attempts: no answer (" in failed
    assert len(server.requests) == 2


@pytest.mark.parametrize("vendor", VENDORS, ids=VENDOR_IDS)
@pytest.mark.parametrize("caller", ["agent", "judge"])
def test_an_answer_retrying_cannot_change_is_not_retried(
    caller: str, vendor: Vendor, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bad = Reply({"error": {"type": "invalid_request_error", "message": "bad", "code": 400, "status": "INVALID_ARGUMENT"}}, 400)
    with vendor.server([bad, vendor.reply("never reached")]) as server:
        failed = _call(caller, vendor, server, tmp_path, _limits(3), [])
    assert failed is not None and f"{vendor.model}: not retried: HTTP 400 (" in failed and len(server.requests) == 1


@pytest.mark.parametrize("vendor", VENDORS, ids=VENDOR_IDS)
def test_the_run_budget_stops_before_a_wait_that_would_outlast_it(
    vendor: Vendor, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sleeps: list[float] = []
    with vendor.server([Reply(LIMITED, 429, {"retry-after": "30"}), vendor.reply("never reached")]) as server:
        limits = Limits(max_attempts=5, max_backoff_s=60, run_timeout_s=10)
        failed = _call("agent", vendor, server, tmp_path, limits, sleeps)
    assert failed is not None and "gave up after 1 attempts: HTTP 429" in failed
    assert len(server.requests) == 1 and sleeps == []


@pytest.mark.parametrize("vendor", [ANTHROPIC, GEMINI], ids=["anthropic", "gemini"])
def test_an_error_no_sdk_raised_is_a_bug_and_propagates(vendor: LlmVendor) -> None:
    def send() -> str:
        raise KeyError("not a vendor failure")

    with pytest.raises(KeyError):
        call_with_retries(send, vendor, "m", RetryPolicy(sleep=lambda _: None))
