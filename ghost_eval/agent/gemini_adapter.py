"""Gemini through the google-genai SDK: one conversation, functionCall in, functionResponse out.

The key and base URL come from the settings (`GEMINI_API_KEY` or `GOOGLE_API_KEY`, `GHOST_EVAL_GEMINI_BASE_URL`:
tests point it at a local fake). Automatic function calling is off: the loop runs every tool itself,
through the gate.
"""

from __future__ import annotations

from collections.abc import Sequence

from google.genai import types

from ghost_eval.agent.loop import Limits, ModelTurn, ToolRequest, ToolResult
from ghost_eval.agent.tools import TOOLS
from ghost_eval.base.errors import GhostEvalError
from ghost_eval.base.settings import DEFAULTS, Settings, revealed
from ghost_eval.llm.clients import GEMINI, GEMINI_KEY_ENVS, gemini_client

__all__ = ["GeminiAdapter", "gemini_tools"]


def gemini_tools() -> list[types.Tool]:
    return [
        types.Tool(
            function_declarations=[
                types.FunctionDeclaration(name=t.name, description=t.description, parameters_json_schema=t.parameters)
                for t in TOOLS
            ]
        )
    ]


class GeminiAdapter:
    provider = "google"
    vendor = GEMINI

    def __init__(
        self, model: str, system: str, user: str, *, temperature: float | None, limits: Limits, settings: Settings = DEFAULTS
    ) -> None:
        key = revealed(settings.gemini_api_key)
        if not key:
            raise GhostEvalError(f"{' or '.join(GEMINI_KEY_ENVS)} is not set")
        self.model = model
        self._client = gemini_client(key, settings.gemini_base_url, limits.call_timeout_s)
        self._config = types.GenerateContentConfig(
            system_instruction=system,
            temperature=temperature,
            max_output_tokens=limits.max_output_tokens,
            tools=gemini_tools(),
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
        )
        self._contents: list[types.Content] = [types.Content(role="user", parts=[types.Part(text=user)])]

    def send(self) -> ModelTurn:
        response = self._client.models.generate_content(model=self.model, contents=self._contents, config=self._config)
        candidate = response.candidates[0] if response.candidates else None
        content = candidate.content if candidate and candidate.content else types.Content(role="model", parts=[])
        parts = content.parts or []
        requests = tuple(
            ToolRequest(p.function_call.id or f"call_{i}", p.function_call.name or "", dict(p.function_call.args or {}))
            for i, p in enumerate(parts)
            if p.function_call is not None
        )
        usage = response.usage_metadata
        output_tokens = (usage.candidates_token_count or 0) + (usage.thoughts_token_count or 0) if usage else 0
        return ModelTurn(
            text="\n".join(p.text for p in parts if p.text and not p.thought).strip(),
            tool_requests=requests,
            input_tokens=(usage.prompt_token_count or 0) if usage else 0,
            output_tokens=output_tokens,
            served_model=response.model_version,
            message=content,
        )

    def add_results(self, turn: ModelTurn, results: Sequence[ToolResult]) -> None:
        self._contents.append(turn.message)
        self._contents.append(
            types.Content(
                role="user",
                parts=[
                    types.Part(
                        function_response=types.FunctionResponse(
                            id=r.request.id if not r.request.id.startswith("call_") else None,
                            name=r.request.name,
                            response={"error" if r.is_error else "output": r.output},
                        )
                    )
                    for r in results
                ],
            )
        )
