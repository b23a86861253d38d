"""Judge clients for Anthropic and Gemini: one prompt in, an answer constrained to its question's JSON schema, token
counts out.

Gemini runs at temperature 0. Claude gets no sampling parameter at all: the Messages API version the anthropic SDK 2.x
sends (2026-10-21) rejects temperature, top_p and top_k with a 400, and the SDK no longer accepts them; a judge answer
is reproduced from the cache instead of by resampling.

Transient failures (429, 5xx, timeouts, dropped connections) are retried by the policy the agent uses too
(`ghost_eval.llm.clients`); the SDKs' own retries are off so that one policy decides. The SDKs are imported only when a
client is made, because Promptfoo starts a fresh process for every assertion and most of them hit the cache.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar, Protocol

from ghost_eval.base.errors import GhostEvalError
from ghost_eval.base.settings import DEFAULTS, Settings, revealed
from ghost_eval.judge.family import model_family
from ghost_eval.judge.prompt import Question
from ghost_eval.judge.schema import answer_schema
from ghost_eval.llm.clients import (
    ANTHROPIC,
    ANTHROPIC_KEY_ENV,
    GEMINI,
    GEMINI_KEY_ENVS,
    LlmCallError,
    RetryPolicy,
    Vendor,
    anthropic_client,
    call_with_retries,
    gemini_client,
)

__all__ = [
    "DEFAULT_JUDGES",
    "AnthropicJudge",
    "Completion",
    "GeminiJudge",
    "JudgeAuthError",
    "JudgeCallError",
    "JudgeClient",
    "MissingKeyError",
    "default_judges",
    "make_client",
    "missing_key_message",
]

DEFAULT_JUDGES = {"claude": "claude-sonnet-4-6", "gemini": "gemini-2.5-pro"}
"""The judge used for each family when none is named and that family's key is set."""
_MAX_TOKENS = 2048
"""Room for a diagnosis answer quoting a sentence per key fact; a criterion answer is far shorter."""


class MissingKeyError(GhostEvalError):
    """No API key for the judge's vendor; the message names the variables to set."""


class JudgeAuthError(GhostEvalError):
    """The vendor refused the key: every further call would fail the same way, so judging stops."""


class JudgeCallError(Exception):
    """A call failed for good (retries spent or a non-retryable answer); recorded on the criterion as its error."""


def missing_key_message(families: tuple[str, ...] = ("claude", "gemini")) -> str:
    wanted = []
    if "claude" in families:
        wanted.append(f"{ANTHROPIC_KEY_ENV} (Claude judge)")
    if "gemini" in families:
        wanted.append(f"{' or '.join(GEMINI_KEY_ENVS)} (Gemini judge)")
    return (
        f"no API key for the LLM judge: set {' or '.join(wanted)}. "
        "Deterministic scores need no key and are unaffected: `ghost-eval score`."
    )


@dataclass(frozen=True)
class Completion:
    text: str
    input_tokens: int
    output_tokens: int


class JudgeClient(Protocol):
    """What the judge needs from a vendor: a model id and one completion per prompt."""

    @property
    def model(self) -> str: ...

    def complete(self, prompt: Question) -> Completion: ...


class _Client(ABC):
    """One vendor: a single attempt in `_send`; retries, waits and the final error are `ghost_eval.llm.clients`'s."""

    vendor: ClassVar[Vendor]

    def __init__(self, model: str, policy: RetryPolicy) -> None:
        self._model = model
        self._policy = policy

    @property
    def model(self) -> str:
        return self._model

    @abstractmethod
    def _send(self, prompt: Question) -> Completion: ...

    def complete(self, prompt: Question) -> Completion:
        try:
            return call_with_retries(lambda: self._send(prompt), self.vendor, self._model, self._policy)
        except LlmCallError as exc:
            if exc.refused_key:
                raise JudgeAuthError(f"judge {self._model}: the vendor refused the API key ({exc})") from exc
            raise JudgeCallError(str(exc)) from exc


class AnthropicJudge(_Client):
    """Claude through the `anthropic` SDK; the base URL comes from ANTHROPIC_BASE_URL when set."""

    vendor = ANTHROPIC

    def __init__(self, model: str, api_key: str, policy: RetryPolicy, base_url: str | None = None) -> None:
        super().__init__(model, policy)
        self._client = anthropic_client(api_key, base_url, policy.timeout)

    def _send(self, prompt: Question) -> Completion:
        message = self._client.messages.create(
            model=self._model,
            max_tokens=_MAX_TOKENS,
            system=prompt.system,
            messages=[{"role": "user", "content": prompt.user}],
            output_config={"format": {"type": "json_schema", "schema": answer_schema(prompt.kind, "anthropic")}},
        )
        text = "".join(block.text for block in message.content if block.type == "text")
        return Completion(text, message.usage.input_tokens, message.usage.output_tokens)


class GeminiJudge(_Client):
    """Gemini through the `google-genai` SDK, asking for JSON that follows the answer schema."""

    vendor = GEMINI

    def __init__(self, model: str, api_key: str, policy: RetryPolicy, base_url: str | None = None) -> None:
        super().__init__(model, policy)
        from google.genai import types

        self._types = types
        self._client = gemini_client(api_key, base_url, policy.timeout)

    def _send(self, prompt: Question) -> Completion:
        config = self._types.GenerateContentConfig(
            system_instruction=prompt.system,
            temperature=0,
            response_mime_type="application/json",
            response_schema=answer_schema(prompt.kind, "gemini"),
        )
        response = self._client.models.generate_content(model=self._model, contents=prompt.user, config=config)
        usage = response.usage_metadata
        prompt_tokens = (usage.prompt_token_count or 0) if usage else 0
        output_tokens = ((usage.candidates_token_count or 0) + (usage.thoughts_token_count or 0)) if usage else 0
        return Completion(response.text or "", prompt_tokens, output_tokens)


def make_client(model: str, policy: RetryPolicy | None = None, settings: Settings = DEFAULTS) -> JudgeClient:
    """A client for the judge model's vendor, keyed and pointed by the settings."""
    policy = policy or RetryPolicy()
    family = model_family(model)
    if family == "claude":
        key = revealed(settings.anthropic_api_key)
        if not key:
            raise MissingKeyError(f"judge {model}: {missing_key_message(('claude',))}")
        return AnthropicJudge(model, key, policy, settings.anthropic_base_url)
    if family == "gemini":
        key = revealed(settings.gemini_api_key)
        if not key:
            raise MissingKeyError(f"judge {model}: {missing_key_message(('gemini',))}")
        return GeminiJudge(model, key, policy, settings.gemini_base_url)
    raise GhostEvalError(f"judge {model}: unknown model family; use a claude-* (Anthropic) or gemini-* (Google) model")


def default_judges(settings: Settings = DEFAULTS) -> list[str]:
    """The default judge of every family whose key the settings hold; raises when none is."""
    found = []
    if settings.anthropic_api_key:
        found.append(DEFAULT_JUDGES["claude"])
    if settings.gemini_api_key:
        found.append(DEFAULT_JUDGES["gemini"])
    if not found:
        raise MissingKeyError(missing_key_message())
    return found
