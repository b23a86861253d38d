"""The fakes speak the vendors' wire format well enough for the real SDKs."""

from __future__ import annotations

import anthropic
from google import genai
from google.genai import types

from tests.fakes.llm import anthropic_message, anthropic_server, gemini_response, gemini_server


def test_anthropic_sdk_reads_text_and_tool_use() -> None:
    with anthropic_server(
        [
            anthropic_message(tool_calls=[("run_command", {"host": "tf-dest-vm", "command": "tc qdisc show"})]),
            anthropic_message("done"),
        ]
    ) as server:
        client = anthropic.Anthropic(base_url=server.url, api_key="k", max_retries=0)
        first = client.messages.create(
            model="claude-haiku-4-5-20251001", max_tokens=100, messages=[{"role": "user", "content": "hi"}]
        )
        assert first.stop_reason == "tool_use" and first.content[0].type == "tool_use"
        second = client.messages.create(
            model="claude-haiku-4-5-20251001", max_tokens=100, messages=[{"role": "user", "content": "hi"}]
        )
        assert second.content[0].type == "text" and second.content[0].text == "done"
        assert server.requests[0].path == "/v1/messages" and server.requests[0].body["model"] == "claude-haiku-4-5-20251001"


def test_gemini_sdk_reads_text_and_function_calls() -> None:
    with gemini_server(
        [gemini_response(function_calls=[("get_effective_routes", {"nic": "tf-source-vm-nic"})]), gemini_response("done")]
    ) as server:
        client = genai.Client(api_key="k", http_options=types.HttpOptions(base_url=server.url))
        first = client.models.generate_content(model="gemini-2.5-flash", contents="hi")
        assert first.function_calls and first.function_calls[0].name == "get_effective_routes"
        assert client.models.generate_content(model="gemini-2.5-flash", contents="hi").text == "done"
        assert server.requests[0].path.endswith("/models/gemini-2.5-flash:generateContent")
        assert first.usage_metadata is not None and first.usage_metadata.total_token_count == 160
