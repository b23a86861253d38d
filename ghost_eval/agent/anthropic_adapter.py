"""Claude through the anthropic SDK: one conversation, tool_use in, tool_result out.

The key and base URL come from the settings (`ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`: the SDK's own variable,
which tests point at a local fake). The SDK's own retries are off: the loop retries (`ghost_eval.llm.clients`). This SDK
has no temperature parameter, so a requested temperature travels in the request body as the API names it.
"""

from __future__ import annotations

from collections.abc import Sequence

from anthropic.types import ContentBlockParam, MessageParam, ToolParam, ToolResultBlockParam

from ghost_eval.agent.loop import Limits, ModelTurn, ToolRequest, ToolResult
from ghost_eval.agent.tools import TOOLS
from ghost_eval.base.errors import GhostEvalError
from ghost_eval.base.settings import DEFAULTS, Settings, revealed
from ghost_eval.llm.clients import ANTHROPIC, ANTHROPIC_KEY_ENV, anthropic_client

__all__ = ["AnthropicAdapter", "anthropic_tools"]


def anthropic_tools() -> list[ToolParam]:
    return [{"name": t.name, "description": t.description, "input_schema": t.parameters} for t in TOOLS]


class AnthropicAdapter:
    provider = "anthropic"
    vendor = ANTHROPIC

    def __init__(
        self, model: str, system: str, user: str, *, temperature: float | None, limits: Limits, settings: Settings = DEFAULTS
    ) -> None:
        key = revealed(settings.anthropic_api_key)
        if not key:
            raise GhostEvalError(f"{ANTHROPIC_KEY_ENV} is not set")
        self.model = model
        self._client = anthropic_client(key, settings.anthropic_base_url, limits.call_timeout_s)
        self._system = system
        self._temperature = temperature
        self._max_tokens = limits.max_output_tokens
        self._tools = anthropic_tools()
        self._messages: list[MessageParam] = [{"role": "user", "content": user}]

    def send(self) -> ModelTurn:
        response = self._client.messages.create(
            model=self.model,
            system=self._system,
            messages=self._messages,
            tools=self._tools,
            max_tokens=self._max_tokens,
            extra_body={"temperature": self._temperature} if self._temperature is not None else None,
        )
        content: list[ContentBlockParam] = []
        texts: list[str] = []
        requests: list[ToolRequest] = []
        for block in response.content:
            if block.type == "text":
                content.append({"type": "text", "text": block.text})
                texts.append(block.text)
            elif block.type == "tool_use":
                content.append({"type": "tool_use", "id": block.id, "name": block.name, "input": block.input})
                requests.append(ToolRequest(block.id, block.name, dict(block.input) if isinstance(block.input, dict) else {}))
        usage = response.usage
        input_tokens = usage.input_tokens + (usage.cache_creation_input_tokens or 0) + (usage.cache_read_input_tokens or 0)
        return ModelTurn(
            text="\n".join(texts).strip(),
            tool_requests=tuple(requests),
            input_tokens=input_tokens,
            output_tokens=usage.output_tokens,
            served_model=response.model,
            message=content,
        )

    def add_results(self, turn: ModelTurn, results: Sequence[ToolResult]) -> None:
        self._messages.append({"role": "assistant", "content": turn.message})
        blocks: list[ToolResultBlockParam] = [
            {"type": "tool_result", "tool_use_id": r.request.id, "content": r.output, "is_error": r.is_error} for r in results
        ]
        self._messages.append({"role": "user", "content": blocks})
