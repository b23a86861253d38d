"""One answer shape, two schema dialects: each is what its vendor's SDK accepts as it is, and both follow the models
that parse the answers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, get_args

import anthropic
import pytest
from google.genai import types

from ghost_eval.judge import DiagnosisPrompt, JudgePrompt, make_client
from ghost_eval.judge.answer import DiagnosisAnswer, JudgeAnswer
from ghost_eval.judge.schema import Dialect, answer_schema
from tests.fakes.llm import anthropic_message, anthropic_server, gemini_response, gemini_server
from tests.judge.helpers import diagnosis_json, fast_policy, judge_settings, reply_json

KINDS = ("criterion", "diagnosis")
CRITERION = JudgePrompt(criterion_id=1, system="S", user="U", data_tag="run_data_x", action_count=1, snapshot_missing=False)
DIAGNOSIS = DiagnosisPrompt(system="S", user="U", data_tag="run_data_x", fact_ids=("a",), claim_ids=(), stated="")


def _without(node: Any, drop: Callable[[str, dict[str, Any]], bool]) -> Any:
    """The schema with the keys `drop(key, object)` picks removed, at every depth."""
    if isinstance(node, list):
        return [_without(n, drop) for n in node]
    if not isinstance(node, dict):
        return node
    return {k: _without(v, drop) for k, v in node.items() if not drop(k, node)}


def _enum_type(key: str, node: dict[str, Any]) -> bool:
    """The anthropic SDK's strict transform drops a type beside an enum: the enum speaks for it."""
    return key == "type" and "enum" in node


def _ordering(key: str, node: dict[str, Any]) -> bool:
    """google-genai adds the properties' order to every object it sends (the order we wrote them in)."""
    return key == "property_ordering" and node[key] == list(node["properties"])


@pytest.mark.parametrize("kind", KINDS)
def test_the_gemini_dialect_is_a_schema_the_sdk_takes_unchanged(kind: str) -> None:
    schema = answer_schema(kind, "gemini")
    parsed = types.Schema.model_validate(schema)  # the SDK's model forbids unknown keys
    assert parsed.model_dump(mode="json", exclude_none=True) == schema


@pytest.mark.parametrize("kind", KINDS)
def test_the_anthropic_dialect_needs_nothing_the_sdk_would_rewrite(kind: str) -> None:
    """`transform_schema` moves keywords the API does not support into a description and closes every object; ours
    comes back as it went in, so the API gets exactly the shape we wrote."""
    schema = answer_schema(kind, "anthropic")
    assert anthropic.transform_schema(schema) == _without(schema, _enum_type)


@pytest.mark.parametrize("dialect", get_args(Dialect))
def test_both_dialects_ask_for_every_field_the_parser_reads(dialect: Dialect) -> None:
    criterion = answer_schema("criterion", dialect)
    diagnosis = answer_schema("diagnosis", dialect)
    assert criterion["required"] == list(JudgeAnswer.model_fields)
    assert diagnosis["required"] == list(DiagnosisAnswer.model_fields)
    fact = diagnosis["properties"]["facts"]["items"]
    assert fact["required"] == ["id", "status", "quote"] and fact["properties"]["status"]["enum"] == [
        "found",
        "missing",
        "contradicted",
    ]
    index = criterion["properties"]["action_index"]
    if dialect == "anthropic":
        assert index == {"anyOf": [{"type": "integer"}, {"type": "null"}]} and criterion["additionalProperties"] is False
    else:
        assert index == {"type": "INTEGER", "nullable": True} and criterion["properties"]["reason"] == {"type": "STRING"}


def test_each_vendor_receives_its_dialect_through_the_real_sdk() -> None:
    with anthropic_server([anthropic_message(reply_json("NO")), anthropic_message(diagnosis_json())]) as claude:
        client = make_client("claude-sonnet-4-6", fast_policy(), judge_settings(anthropic=claude))
        client.complete(CRITERION)
        client.complete(DIAGNOSIS)
    with gemini_server([gemini_response(reply_json("NO")), gemini_response(diagnosis_json())]) as gemini:
        client = make_client("gemini-2.5-pro", fast_policy(), judge_settings(gemini=gemini))
        client.complete(CRITERION)
        client.complete(DIAGNOSIS)
    sent = [r.body["output_config"]["format"]["schema"] for r in claude.requests]
    assert sent == [answer_schema("criterion", "anthropic"), answer_schema("diagnosis", "anthropic")]
    sent = [_without(r.body["generationConfig"]["responseSchema"], _ordering) for r in gemini.requests]
    assert sent == [answer_schema("criterion", "gemini"), answer_schema("diagnosis", "gemini")]
