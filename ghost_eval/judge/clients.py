"""Judge clients for Anthropic and Gemini: one prompt in, an answer constrained to its question's JSON schema, token
counts out.

Gemini runs at temperature 0. Claude gets no sampling parameter at all: the Messages API version the anthropic SDK 2.x
sends (2026-10-21) rejects temperature, top_p and top_k with a 400, and the SDK no longer accepts them; a judge answer
is reproduced from the cache instead of by resampling.

Transient failures (429, 5xx, timeouts, dropped connections) are retried here with exponential backoff, honouring
the server's retry-after; the SDKs' own retries are off so that one policy decides. The SDKs are imported only when
a client is made, because Promptfoo starts a fresh process for every assertion and most of them hit the cache.
"""

from __future__ import annotations

import os
import re
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

import tenacity

from ghost_eval.errors import GhostEvalError
from ghost_eval.judge.family import model_family
from ghost_eval.judge.prompt import Question
from ghost_eval.judge.schema import answer_schema
from ghost_eval.llm import retry_after_seconds

__all__ = [
    "ANTHROPIC_BASE_URL_ENV",
    "ANTHROPIC_KEY_ENV",
    "DEFAULT_JUDGES",
    "GEMINI_BASE_URL_ENV",
    "GEMINI_KEY_ENVS",
    "AnthropicJudge",
    "Completion",
    "GeminiJudge",
    "JudgeAuthError",
    "JudgeCallError",
    "JudgeClient",
    "MissingKeyError",
    "RetryPolicy",
    "default_judges",
    "make_client",
    "missing_key_message",
]

ANTHROPIC_KEY_ENV = "ANTHROPIC_API_KEY"
GEMINI_KEY_ENVS = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
ANTHROPIC_BASE_URL_ENV = "ANTHROPIC_BASE_URL"
GEMINI_BASE_URL_ENV = "GHOST_EVAL_GEMINI_BASE_URL"
DEFAULT_JUDGES = {"claude": "claude-sonnet-4-6", "gemini": "gemini-2.5-pro"}
"""The judge used for each family when none is named and that family's key is set."""
_MAX_TOKENS = 2048
"""Room for a diagnosis answer quoting a sentence per key fact; a criterion answer is far shorter."""
_RETRY_STATUS = frozenset({408, 409, 429})
_AUTH_STATUS = frozenset({401, 403})
_RETRY_DELAY = re.compile(r"^\s*(\d+(?:\.\d+)?)s\s*$")


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
class RetryPolicy:
    """How hard to try one call before recording it as an error."""

    attempts: int = 5
    initial_wait: float = 1.0
    max_wait: float = 60.0
    """Upper bound on any single wait, a server's retry-after included."""
    timeout: float = 120.0
    """Seconds before one request counts as timed out (and is retried)."""
    sleep: Callable[[float], None] = field(default=time.sleep, compare=False)


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


class _RetryingClient(ABC):
    """One vendor: a single attempt in `_send`, which failures are transient, and where a server says to wait."""

    def __init__(self, model: str, policy: RetryPolicy) -> None:
        self._model = model
        self._policy = policy
        self._backoff = tenacity.wait_exponential_jitter(initial=policy.initial_wait, max=policy.max_wait)

    @property
    def model(self) -> str:
        return self._model

    @abstractmethod
    def _send(self, prompt: Question) -> Completion: ...

    @abstractmethod
    def _api_errors(self) -> tuple[type[BaseException], ...]:
        """Exceptions the SDK raises for a failed call (anything else is a bug and propagates)."""

    @abstractmethod
    def _transport_errors(self) -> tuple[type[BaseException], ...]:
        """Failures before any answer: timeouts and dropped connections."""

    @abstractmethod
    def _status(self, exc: BaseException) -> int | None:
        """HTTP status of a failed call, when the server answered."""

    @abstractmethod
    def _retry_after(self, exc: BaseException) -> float | None: ...

    def _transient(self, exc: BaseException) -> bool:
        if not isinstance(exc, self._api_errors()):
            return False
        if isinstance(exc, self._transport_errors()):
            return True
        status = self._status(exc)
        return status is not None and (status in _RETRY_STATUS or status >= 500)

    def _wait(self, state: tenacity.RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome is not None else None
        after = self._retry_after(exc) if exc is not None else None
        if after is not None:
            return min(after, self._policy.max_wait)
        return float(self._backoff(state))

    def complete(self, prompt: Question) -> Completion:
        retrying = tenacity.Retrying(
            stop=tenacity.stop_after_attempt(self._policy.attempts),
            wait=self._wait,
            retry=tenacity.retry_if_exception(self._transient),
            sleep=self._policy.sleep,
            reraise=True,
        )
        try:
            return retrying(self._send, prompt)
        except self._api_errors() as exc:
            status = self._status(exc)
            cause = f"{type(exc).__name__}" + (f" {status}" if status else "") + f": {str(exc)[:300]}"
            if status in _AUTH_STATUS:
                raise JudgeAuthError(f"judge {self._model}: the vendor refused the API key ({cause})") from exc
            if self._transient(exc):
                raise JudgeCallError(f"gave up after {self._policy.attempts} attempts: {cause}") from exc
            raise JudgeCallError(f"not retried: {cause}") from exc


class AnthropicJudge(_RetryingClient):
    """Claude through the `anthropic` SDK; the base URL comes from ANTHROPIC_BASE_URL when set."""

    def __init__(self, model: str, api_key: str, policy: RetryPolicy, base_url: str | None = None) -> None:
        super().__init__(model, policy)
        import anthropic

        self._sdk = anthropic
        self._client = anthropic.Anthropic(api_key=api_key, base_url=base_url, max_retries=0, timeout=policy.timeout)

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

    def _api_errors(self) -> tuple[type[BaseException], ...]:
        return (self._sdk.APIError,)

    def _transport_errors(self) -> tuple[type[BaseException], ...]:
        return (self._sdk.APIConnectionError,)

    def _status(self, exc: BaseException) -> int | None:
        return exc.status_code if isinstance(exc, self._sdk.APIStatusError) else None

    def _retry_after(self, exc: BaseException) -> float | None:
        if isinstance(exc, self._sdk.APIStatusError):
            return retry_after_seconds(exc.response.headers)
        return None


class GeminiJudge(_RetryingClient):
    """Gemini through the `google-genai` SDK, asking for JSON that follows the answer schema."""

    def __init__(self, model: str, api_key: str, policy: RetryPolicy, base_url: str | None = None) -> None:
        super().__init__(model, policy)
        import httpx2
        from google import genai
        from google.genai import errors, types

        self._errors = errors
        self._transport_error = httpx2.TransportError
        self._types = types
        options = types.HttpOptions(base_url=base_url, timeout=int(policy.timeout * 1000))
        self._client = genai.Client(api_key=api_key, http_options=options)

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

    def _api_errors(self) -> tuple[type[BaseException], ...]:
        return (self._errors.APIError, self._transport_error)

    def _transport_errors(self) -> tuple[type[BaseException], ...]:
        return (self._transport_error,)

    def _status(self, exc: BaseException) -> int | None:
        return exc.code if isinstance(exc, self._errors.APIError) else None

    def _retry_after(self, exc: BaseException) -> float | None:
        """The retry-after header, else the RetryInfo delay Google puts in the error body."""
        if not isinstance(exc, self._errors.APIError):
            return None
        response = exc.response
        headers = getattr(response, "headers", None)
        delay = retry_after_seconds(headers)
        if delay is not None:
            return delay
        details = exc.details.get("error", {}).get("details", []) if isinstance(exc.details, dict) else []
        for detail in details if isinstance(details, list) else []:
            match = _RETRY_DELAY.match(str(detail.get("retryDelay", ""))) if isinstance(detail, dict) else None
            if match:
                return float(match.group(1))
        return None


def make_client(model: str, policy: RetryPolicy | None = None, env: Mapping[str, str] | None = None) -> JudgeClient:
    """A client for the judge model's vendor, keyed and pointed by the environment."""
    env = os.environ if env is None else env
    policy = policy or RetryPolicy()
    family = model_family(model)
    if family == "claude":
        key = env.get(ANTHROPIC_KEY_ENV)
        if not key:
            raise MissingKeyError(f"judge {model}: {missing_key_message(('claude',))}")
        return AnthropicJudge(model, key, policy, env.get(ANTHROPIC_BASE_URL_ENV) or None)
    if family == "gemini":
        key = next((env[name] for name in GEMINI_KEY_ENVS if env.get(name)), None)
        if not key:
            raise MissingKeyError(f"judge {model}: {missing_key_message(('gemini',))}")
        return GeminiJudge(model, key, policy, env.get(GEMINI_BASE_URL_ENV) or None)
    raise GhostEvalError(f"judge {model}: unknown model family; use a claude-* (Anthropic) or gemini-* (Google) model")


def default_judges(env: Mapping[str, str] | None = None) -> list[str]:
    """The default judge of every family whose key is set; raises when none is."""
    env = os.environ if env is None else env
    found = []
    if env.get(ANTHROPIC_KEY_ENV):
        found.append(DEFAULT_JUDGES["claude"])
    if any(env.get(name) for name in GEMINI_KEY_ENVS):
        found.append(DEFAULT_JUDGES["gemini"])
    if not found:
        raise MissingKeyError(missing_key_message())
    return found
