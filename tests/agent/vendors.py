"""One scripted vendor for the tests, whichever SDK it stands for: replies, a fake server, the environment, and
what the agent sent back (tool results) in each request."""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

import pytest

from ghost_eval.agent.gemini_adapter import BASE_URL_ENV
from tests.fakes.llm import (
    FakeLLMServer,
    Recorded,
    Reply,
    Responder,
    anthropic_message,
    anthropic_server,
    gemini_response,
    gemini_server,
)

__all__ = ["VENDORS", "Vendor"]

Calls = list[tuple[str, dict[str, Any]]]


@dataclass(frozen=True)
class Vendor:
    provider: str
    """The `--llm-provider` value."""
    model: str

    def reply(self, text: str | None = None, calls: Calls | None = None, usage: tuple[int, int] = (120, 40)) -> Reply:
        if self.provider == "anthropic":
            return anthropic_message(text, tool_calls=calls, model=self.model, usage=usage)
        return gemini_response(text, function_calls=calls, model=self.model, usage=usage)

    def server(self, script: list[Reply] | Responder) -> AbstractContextManager[FakeLLMServer]:
        return anthropic_server(script) if self.provider == "anthropic" else gemini_server(script)

    def point_at(self, monkeypatch: pytest.MonkeyPatch, server: FakeLLMServer) -> None:
        if self.provider == "anthropic":
            monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
            monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        else:
            monkeypatch.setenv("GEMINI_API_KEY", "test-key")
            monkeypatch.setenv(BASE_URL_ENV, server.url)

    def tool_results(self, request: Recorded) -> list[tuple[str, bool]]:
        """(output, is_error) of each tool result the agent sent in a request."""
        if self.provider == "anthropic":
            last = request.body["messages"][-1]["content"]
            return [(b["content"], bool(b.get("is_error"))) for b in last if b.get("type") == "tool_result"]
        parts = request.body["contents"][-1]["parts"]
        out: list[tuple[str, bool]] = []
        for p in parts:
            response = p["functionResponse"]["response"]
            out.append((response.get("output", response.get("error", "")), "error" in response))
        return out

    def system_prompt(self, request: Recorded) -> str:
        if self.provider == "anthropic":
            return str(request.body["system"])
        return str(request.body["systemInstruction"]["parts"][0]["text"])

    def tool_names(self, request: Recorded) -> list[str]:
        if self.provider == "anthropic":
            return [t["name"] for t in request.body["tools"]]
        return [f["name"] for t in request.body["tools"] for f in t["functionDeclarations"]]


VENDORS = [Vendor("anthropic", "claude-haiku-4-5-20251001"), Vendor("gemini", "gemini-2.5-flash")]
