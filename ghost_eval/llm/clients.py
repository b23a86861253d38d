"""What every LLM call here shares, the agent's adapters and the judge's clients alike: where keys and base URLs come
from, the SDK clients (their own retries off), and one retry policy.

A call is retried on a rate limit, an overload or a dropped connection (HTTP 408, 409, 429, 5xx, timeouts), waiting
as long as the server asks (`retry-after-ms`, `retry-after` in seconds or as an HTTP date, Google's `retryDelay`)
up to the policy's cap, else with exponential backoff and jitter; anything else is not retried. When it fails for
good, `LlmCallError` names the vendor, the model, the HTTP status and the attempts made. The SDKs' own retries are
off wherever this runs, so this one policy decides. The SDKs are imported only when a failure is classified: the
judge's Promptfoo assertions import this module in a fresh process per row. (Prices are in `ghost_eval.llm.pricing`.)
"""

from __future__ import annotations

import email.utils
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC
from typing import TYPE_CHECKING, Any, TypeVar

import tenacity

from ghost_eval.base.errors import GhostEvalError
from ghost_eval.base.settings import env_name, env_names

if TYPE_CHECKING:
    import anthropic
    from google import genai

__all__ = [
    "ANTHROPIC",
    "ANTHROPIC_BASE_URL_ENV",
    "ANTHROPIC_KEY_ENV",
    "GEMINI",
    "GEMINI_BASE_URL_ENV",
    "GEMINI_KEY_ENVS",
    "Failure",
    "LlmCallError",
    "RetryPolicy",
    "Vendor",
    "anthropic_client",
    "call_with_retries",
    "gemini_client",
    "retry_after_seconds",
]

T = TypeVar("T")

ANTHROPIC_KEY_ENV = env_name("anthropic_api_key")
ANTHROPIC_BASE_URL_ENV = env_name("anthropic_base_url")
GEMINI_KEY_ENVS = env_names("gemini_api_key")
"""Read in this order."""
GEMINI_BASE_URL_ENV = env_name("gemini_base_url")

_RETRY_STATUS = frozenset({408, 409, 429})
_AUTH_STATUS = frozenset({401, 403})
_RETRY_DELAY = re.compile(r"^\s*(\d+(?:\.\d+)?)s\s*$")


def retry_after_seconds(headers: Mapping[str, str] | None, *, now: float | None = None) -> float | None:
    """The server's requested delay: `retry-after-ms`, `retry-after` in seconds, or `retry-after` as an HTTP date.

    An HTTP date ending in `-0000` parses to a datetime without a zone; HTTP dates are always UTC, so it is read
    as UTC rather than as local time (or refused for lacking a zone). `now` is the current epoch time (for tests).
    """
    if not headers:
        return None
    lowered = {k.lower(): v for k, v in headers.items()}
    if (ms := lowered.get("retry-after-ms")) is not None:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    if email.utils.parsedate_tz(value) is None:
        return None
    when = email.utils.parsedate_to_datetime(value)
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


@dataclass(frozen=True)
class RetryPolicy:
    """How hard to try one model call before giving up."""

    attempts: int = 5
    initial_wait: float = 1.0
    """First backoff wait in seconds when the server names none; it doubles (with jitter) from there."""
    max_wait: float = 60.0
    """Upper bound on any single wait, a server's retry-after included."""
    timeout: float = 120.0
    """Seconds before one request counts as timed out (and is retried)."""
    sleep: Callable[[float], None] = field(default=time.sleep, compare=False)


@dataclass(frozen=True)
class Failure:
    """A failed call as the policy sees it."""

    status: int | None
    """HTTP status, when the server answered."""
    retry_after: float | None
    """Seconds the server asked us to wait, when it said."""
    connection: bool = False
    """No answer at all: a timeout or a dropped connection."""

    @property
    def transient(self) -> bool:
        """Worth another attempt: the same request may well succeed later."""
        return self.connection or (self.status is not None and (self.status in _RETRY_STATUS or self.status >= 500))


@dataclass(frozen=True)
class Vendor:
    """One vendor's SDK as the policy needs it: a name for messages, and how to read its exceptions."""

    name: str
    classify: Callable[[BaseException], Failure | None]
    """The failure an SDK exception reports; None for anything the SDK did not raise (a bug, never retried)."""


class LlmCallError(GhostEvalError):
    """A model call failed for good: its retries are spent, or the answer is one that retrying cannot change."""

    def __init__(self, vendor: str, model: str, failure: Failure, attempts: int, cause: BaseException) -> None:
        self.vendor = vendor
        self.model = model
        self.status = failure.status
        self.attempts = attempts
        what = f"HTTP {failure.status}" if failure.status is not None else "no answer" if failure.connection else "bad answer"
        verdict = f"gave up after {attempts} attempts" if failure.transient else "not retried"
        super().__init__(f"{vendor} {model}: {verdict}: {what} ({type(cause).__name__}: {str(cause)[:300]})")

    @property
    def refused_key(self) -> bool:
        """The vendor refused the API key: every further call would fail the same way."""
        return self.status in _AUTH_STATUS


def _anthropic_failure(exc: BaseException) -> Failure | None:
    import anthropic

    if isinstance(exc, anthropic.APIStatusError):
        return Failure(exc.status_code, retry_after_seconds(exc.response.headers))
    if isinstance(exc, anthropic.APIConnectionError):
        return Failure(None, None, connection=True)
    if isinstance(exc, anthropic.APIError):
        return Failure(None, None)
    return None


def _google_retry_delay(details: Any) -> float | None:
    """The RetryInfo delay Google puts in an error body (`"retryDelay": "12s"`)."""
    listed = details.get("error", {}).get("details", []) if isinstance(details, dict) else []
    for detail in listed if isinstance(listed, list) else []:
        match = _RETRY_DELAY.match(str(detail.get("retryDelay", ""))) if isinstance(detail, dict) else None
        if match:
            return float(match.group(1))
    return None


def _gemini_failure(exc: BaseException) -> Failure | None:
    import httpx2
    from google.genai import errors

    if isinstance(exc, errors.APIError):
        headers = getattr(getattr(exc, "response", None), "headers", None)
        after = retry_after_seconds(headers)
        return Failure(exc.code, after if after is not None else _google_retry_delay(exc.details))
    if isinstance(exc, httpx2.TransportError):
        return Failure(None, None, connection=True)
    return None


ANTHROPIC = Vendor("Anthropic", _anthropic_failure)
GEMINI = Vendor("Gemini", _gemini_failure)


def anthropic_client(api_key: str, base_url: str | None, timeout: float) -> anthropic.Anthropic:
    """An anthropic SDK client whose own retries are off (this module's policy retries)."""
    import anthropic

    return anthropic.Anthropic(api_key=api_key, base_url=base_url, max_retries=0, timeout=timeout)


def gemini_client(api_key: str, base_url: str | None, timeout: float) -> genai.Client:
    """A google-genai client; it does not retry by itself, this module's policy does."""
    from google import genai
    from google.genai import types

    return genai.Client(api_key=api_key, http_options=types.HttpOptions(base_url=base_url, timeout=int(timeout * 1000)))


def call_with_retries(
    send: Callable[[], T], vendor: Vendor, model: str, policy: RetryPolicy, *, budget_s: float | None = None
) -> T:
    """`send()` until it succeeds, under the policy; `budget_s` also stops before a wait that would outlast it.

    Raises `LlmCallError` when the call fails for good; an exception the vendor's SDK did not raise propagates as is.
    """
    backoff = tenacity.wait_exponential_jitter(initial=policy.initial_wait, max=policy.max_wait)

    def failure(exc: BaseException | None) -> Failure | None:
        return vendor.classify(exc) if exc is not None else None

    def transient(exc: BaseException) -> bool:
        found = failure(exc)
        return found is not None and found.transient

    def wait(state: tenacity.RetryCallState) -> float:
        found = failure(state.outcome.exception() if state.outcome is not None else None)
        if found is not None and found.retry_after is not None:
            return min(found.retry_after, policy.max_wait)
        return float(backoff(state))

    stop: tenacity.stop.stop_base = tenacity.stop_after_attempt(policy.attempts)
    if budget_s is not None:
        stop = stop | tenacity.stop_before_delay(max(budget_s, 0.0))
    retrying = tenacity.Retrying(
        stop=stop, wait=wait, retry=tenacity.retry_if_exception(transient), sleep=policy.sleep, reraise=True
    )
    try:
        return retrying(send)
    except Exception as exc:
        found = failure(exc)
        if found is None:
            raise
        raise LlmCallError(vendor.name, model, found, int(retrying.statistics.get("attempt_number", 1)), exc) from exc
