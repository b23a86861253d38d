"""The real anthropic and google-genai SDKs against the local fakes: request shape, retries, retry-after, timeouts."""

from __future__ import annotations

import json

import pytest

from ghost_eval.base.errors import GhostEvalError
from ghost_eval.base.settings import Settings
from ghost_eval.judge import (
    JudgeAuthError,
    JudgeCallError,
    JudgePrompt,
    MissingKeyError,
    default_judges,
    make_client,
)
from tests.fakes.llm import Reply, anthropic_message, anthropic_server, gemini_response, gemini_server
from tests.judge.helpers import Sleeps, fast_policy, judge_settings, reply_json

PROMPT = JudgePrompt(
    criterion_id=2, system="SYSTEM RULES", user="USER QUESTION", data_tag="run_data_x", action_count=1, snapshot_missing=True
)
RATE_LIMITED = Reply({"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}, 429, {"retry-after": "7"})
BROKEN = Reply({"type": "error", "error": {"type": "api_error", "message": "boom"}}, 500)


def test_anthropic_request_and_usage() -> None:
    with anthropic_server([anthropic_message(reply_json("NO"), usage=(1000, 50))]) as server:
        client = make_client("claude-sonnet-4-6", fast_policy(), judge_settings(anthropic=server))
        done = client.complete(PROMPT)
    assert json.loads(done.text)["answer"] == "NO"
    assert (done.input_tokens, done.output_tokens) == (1000, 50)
    body = server.requests[0].body
    assert body["model"] == "claude-sonnet-4-6" and body["system"] == "SYSTEM RULES"
    assert body["messages"] == [{"role": "user", "content": "USER QUESTION"}]
    # the Messages API version the SDK sends rejects sampling parameters; the answer shape is enforced instead
    assert "temperature" not in body
    schema = body["output_config"]["format"]["schema"]
    assert schema["properties"]["answer"]["enum"] == ["YES", "NO", "UNKNOWN"] and schema["additionalProperties"] is False


def test_gemini_request_and_usage() -> None:
    with gemini_server([gemini_response(reply_json("YES", 1), usage=(900, 30))]) as server:
        client = make_client("gemini-2.5-pro", fast_policy(), judge_settings(gemini=server))
        done = client.complete(PROMPT)
    assert json.loads(done.text)["answer"] == "YES" and (done.input_tokens, done.output_tokens) == (900, 30)
    rec = server.requests[0]
    assert rec.path.endswith("/models/gemini-2.5-pro:generateContent")
    config = rec.body["generationConfig"]
    assert config["temperature"] == 0 and config["responseMimeType"] == "application/json"
    assert config["responseSchema"]["required"] == ["answer", "action_index", "excerpt", "reason"]
    assert rec.body["systemInstruction"]["parts"][0]["text"] == "SYSTEM RULES"


@pytest.mark.parametrize("vendor", ["anthropic", "gemini"])
def test_429_waits_as_long_as_retry_after_says(vendor: str) -> None:
    sleeps = Sleeps()
    if vendor == "anthropic":
        script, serve, model = [RATE_LIMITED, anthropic_message(reply_json("NO"))], anthropic_server, "claude-haiku-4-5"
    else:
        limited = Reply({"error": {"code": 429, "message": "quota", "status": "RESOURCE_EXHAUSTED"}}, 429, {"retry-after": "7"})
        script, serve, model = [limited, gemini_response(reply_json("NO"))], gemini_server, "gemini-2.5-flash"
    with serve(script) as server:
        env = judge_settings(anthropic=server) if vendor == "anthropic" else judge_settings(gemini=server)
        done = make_client(model, fast_policy(sleeps, initial_wait=0.5), env).complete(PROMPT)
    assert json.loads(done.text)["answer"] == "NO"
    assert len(server.requests) == 2
    assert sleeps == [7.0]


@pytest.mark.parametrize("vendor", ["anthropic", "gemini"])
def test_an_http_date_ending_in_minus_zero_is_honoured(vendor: str) -> None:
    """Such a date parses without a zone; the judge once crashed comparing it with an aware time."""
    sleeps = Sleeps()
    later = {"retry-after": "Fri, 01 Jan 2100 00:00:00 -0000"}
    if vendor == "anthropic":
        script, serve, model = (
            [Reply(RATE_LIMITED.body, 429, later), anthropic_message(reply_json("NO"))],
            anthropic_server,
            "claude-haiku-4-5",
        )
    else:
        limited = Reply({"error": {"code": 429, "message": "quota", "status": "RESOURCE_EXHAUSTED"}}, 429, later)
        script, serve, model = [limited, gemini_response(reply_json("NO"))], gemini_server, "gemini-2.5-flash"
    with serve(script) as server:
        env = judge_settings(anthropic=server) if vendor == "anthropic" else judge_settings(gemini=server)
        done = make_client(model, fast_policy(sleeps, max_wait=5.0), env).complete(PROMPT)
    assert json.loads(done.text)["answer"] == "NO" and sleeps == [5.0]  # far in the future: capped by the policy


def test_gemini_retry_delay_in_the_error_body_is_honoured() -> None:
    sleeps = Sleeps()
    body = {
        "error": {
            "code": 429,
            "message": "quota",
            "status": "RESOURCE_EXHAUSTED",
            "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "12s"}],
        }
    }
    with gemini_server([Reply(body, 429), gemini_response(reply_json("NO"))]) as server:
        make_client("gemini-2.5-flash", fast_policy(sleeps), judge_settings(gemini=server)).complete(PROMPT)
    assert sleeps == [12.0]


def test_retry_after_is_capped_by_the_policy() -> None:
    sleeps = Sleeps()
    hour = Reply(RATE_LIMITED.body, 429, {"retry-after": "3600"})
    with anthropic_server([hour, anthropic_message(reply_json("NO"))]) as server:
        make_client("claude-haiku-4-5", fast_policy(sleeps, max_wait=5.0), judge_settings(anthropic=server)).complete(PROMPT)
    assert sleeps == [5.0]


@pytest.mark.parametrize("vendor", ["anthropic", "gemini"])
def test_500_then_success(vendor: str) -> None:
    sleeps = Sleeps()
    if vendor == "anthropic":
        script, serve, model = [BROKEN, anthropic_message(reply_json("NO"))], anthropic_server, "claude-haiku-4-5"
    else:
        failed = Reply({"error": {"code": 500}}, 500)
        script, serve, model = [failed, gemini_response(reply_json("NO"))], gemini_server, "gemini-2.5-pro"
    with serve(script) as server:
        env = judge_settings(anthropic=server) if vendor == "anthropic" else judge_settings(gemini=server)
        done = make_client(model, fast_policy(sleeps, initial_wait=0.25, max_wait=0.25), env).complete(PROMPT)
    assert json.loads(done.text)["answer"] == "NO" and len(server.requests) == 2
    assert len(sleeps) == 1 and 0 < sleeps[0] <= 0.25  # exponential backoff, no retry-after given


@pytest.mark.parametrize("vendor", ["anthropic", "gemini"])
def test_timeout_is_retried(vendor: str) -> None:
    slow = Reply(delay=1.5)
    if vendor == "anthropic":
        script, serve, model = [slow, anthropic_message(reply_json("NO"))], anthropic_server, "claude-haiku-4-5"
    else:
        script, serve, model = [slow, gemini_response(reply_json("NO"))], gemini_server, "gemini-2.5-flash"
    with serve(script) as server:
        env = judge_settings(anthropic=server) if vendor == "anthropic" else judge_settings(gemini=server)
        done = make_client(model, fast_policy(timeout=0.4), env).complete(PROMPT)
    assert json.loads(done.text)["answer"] == "NO" and len(server.requests) == 2


def test_retries_spent_is_a_call_error_naming_the_cause() -> None:
    with anthropic_server([BROKEN, BROKEN, BROKEN, anthropic_message(reply_json("NO"))]) as server:
        client = make_client("claude-haiku-4-5", fast_policy(attempts=3), judge_settings(anthropic=server))
        with pytest.raises(JudgeCallError, match=r"gave up after 3 attempts.*500"):
            client.complete(PROMPT)
    assert len(server.requests) == 3


def test_a_bad_request_is_not_retried() -> None:
    bad = Reply({"type": "error", "error": {"type": "invalid_request_error", "message": "no such model"}}, 400)
    with anthropic_server([bad, anthropic_message(reply_json("NO"))]) as server:
        client = make_client("claude-haiku-4-5", fast_policy(), judge_settings(anthropic=server))
        with pytest.raises(JudgeCallError, match=r"not retried.*400"):
            client.complete(PROMPT)
    assert len(server.requests) == 1


def test_a_refused_key_stops_judging() -> None:
    refused = Reply({"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}}, 401)
    with anthropic_server([refused]) as server:
        client = make_client("claude-haiku-4-5", fast_policy(), judge_settings(anthropic=server))
        with pytest.raises(JudgeAuthError, match="refused the API key"):
            client.complete(PROMPT)


def test_keys_and_families() -> None:
    with pytest.raises(MissingKeyError, match=r"ANTHROPIC_API_KEY.*GEMINI_API_KEY or GOOGLE_API_KEY"):
        default_judges(Settings.from_environ({}))
    with pytest.raises(MissingKeyError, match="GEMINI_API_KEY or GOOGLE_API_KEY") as info:
        make_client("gemini-2.5-pro", settings=Settings.from_environ({"ANTHROPIC_API_KEY": "k"}))
    assert "ANTHROPIC_API_KEY" not in str(info.value)
    with pytest.raises(GhostEvalError, match="unknown model family"):
        make_client("gpt-4o", settings=Settings.from_environ({"ANTHROPIC_API_KEY": "k"}))
    assert default_judges(Settings.from_environ({"GOOGLE_API_KEY": "k"})) == ["gemini-2.5-pro"]
    assert default_judges(Settings.from_environ({"ANTHROPIC_API_KEY": "k", "GEMINI_API_KEY": "k"})) == [
        "claude-sonnet-4-6",
        "gemini-2.5-pro",
    ]
