"""The tool loop, once for every vendor: call the model, run the tools it asks for, repeat until it completes.

A vendor adapter (`anthropic_adapter`, `gemini_adapter`) translates one conversation turn to and from its SDK;
everything else lives here: the turn limit, the run deadline, token accounting, and turning any failure into an
aborted result rather than a lost run. Each model call is retried by the policy the judge uses too (`ghost_eval.llm.clients`:
429/5xx/connection errors, `retry-after` honoured up to a cap), bounded by what is left of the run's budget.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from pydantic import BaseModel

from ghost_eval.agent.cost import Usage
from ghost_eval.agent.redact import Redactor, redact, redact_value, redaction_scope
from ghost_eval.agent.tools import Toolbox
from ghost_eval.llm.clients import LlmCallError, RetryPolicy, Vendor, call_with_retries

__all__ = [
    "Limits",
    "LoopResult",
    "ModelAdapter",
    "ModelTurn",
    "Step",
    "ToolRequest",
    "ToolResult",
    "run_loop",
]

Outcome = Literal["completed", "answered", "aborted"]


@dataclass(frozen=True)
class Limits:
    """Bounds of one run; every wait in it is bounded by one of these."""

    max_turns: int = 30
    """Model calls before the run is aborted."""
    run_timeout_s: float = 900.0
    """Wall-clock budget of the whole run."""
    call_timeout_s: float = 120.0
    """One model call (the SDK's request timeout)."""
    command_timeout_s: float = 60.0
    """One shell command or control-plane read."""
    max_attempts: int = 5
    """Attempts per model call on 429/5xx/connection errors."""
    initial_backoff_s: float = 1.0
    """First wait before a retry when the server names none; it doubles (with jitter) up to `max_backoff_s`."""
    max_backoff_s: float = 60.0
    """Upper bound on any wait between attempts, a server's retry-after included."""
    max_output_tokens: int = 4096

    def retry_policy(self, sleep: Callable[[float], None] = time.sleep) -> RetryPolicy:
        """The shared retry policy with this run's bounds."""
        return RetryPolicy(
            attempts=self.max_attempts,
            initial_wait=self.initial_backoff_s,
            max_wait=self.max_backoff_s,
            timeout=self.call_timeout_s,
            sleep=sleep,
        )


@dataclass(frozen=True)
class ToolRequest:
    id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class ToolResult:
    request: ToolRequest
    output: str
    is_error: bool


@dataclass(frozen=True)
class ModelTurn:
    """One model answer in vendor-neutral form; `message` is the vendor's own, appended back as it came."""

    text: str
    tool_requests: tuple[ToolRequest, ...]
    input_tokens: int
    output_tokens: int
    served_model: str | None
    message: Any


class ModelAdapter(Protocol):
    """One conversation with one vendor's SDK."""

    provider: str
    model: str
    vendor: Vendor
    """How the retry policy reads this SDK's errors."""

    def send(self) -> ModelTurn:
        """Call the model once with the conversation so far."""
        ...

    def add_results(self, turn: ModelTurn, results: Sequence[ToolResult]) -> None:
        """Append the model's turn and the tool results to the conversation."""
        ...


@dataclass
class Step:
    """One model turn as the reasoning trace shows it: its text and the tool calls it made (trace indices)."""

    turn: int
    thought: str
    calls: list[int] = field(default_factory=list)


@dataclass
class LoopResult:
    outcome: Outcome
    steps: list[Step]
    usage: Usage
    served_model: str | None = None
    final_text: str = ""
    """The model's closing text when it ended without completing an investigation (e.g. a declined request)."""
    aborted: str | None = None
    redactor: Redactor = field(default_factory=Redactor)
    """The run's redaction: the values it removed are scrubbed from everything the run later writes."""


def _echoed(turn: ModelTurn) -> ModelTurn:
    """The model's turn as it goes back into the conversation: a secret it repeated from a tool output is scrubbed."""
    message = turn.message
    if isinstance(message, BaseModel):
        message = type(message).model_validate(redact_value(message.model_dump(exclude_none=True)))
    else:
        message = redact_value(message)
    return dataclasses.replace(turn, message=message)


def run_loop(
    adapter: ModelAdapter,
    toolbox: Toolbox,
    limits: Limits,
    *,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> LoopResult:
    """Drive the conversation to a completion, a plain answer, or an abort (turn limit, timeout, model failure, crash)."""
    result = LoopResult(outcome="aborted", steps=[], usage=Usage())
    with redaction_scope(result.redactor):
        return _drive(adapter, toolbox, limits, result, clock, sleep)


def _drive(
    adapter: ModelAdapter,
    toolbox: Toolbox,
    limits: Limits,
    result: LoopResult,
    clock: Callable[[], float],
    sleep: Callable[[float], None],
) -> LoopResult:
    deadline = clock() + limits.run_timeout_s
    try:
        for turn_no in range(1, limits.max_turns + 1):
            if clock() >= deadline:
                result.aborted = f"timeout: the run exceeded {limits.run_timeout_s:g} s"
                return result
            try:
                policy = limits.retry_policy(sleep)
                turn = call_with_retries(adapter.send, adapter.vendor, adapter.model, policy, budget_s=deadline - clock())
            except LlmCallError as exc:
                result.aborted = f"model call failed: {redact(str(exc))}"
                return result
            except Exception as exc:
                result.aborted = f"model call failed: {type(exc).__name__}: {redact(str(exc))}"
                return result
            result.usage.add(turn.input_tokens, turn.output_tokens)
            result.served_model = turn.served_model or result.served_model
            step = Step(turn=turn_no, thought=redact(turn.text))
            result.steps.append(step)
            if not turn.tool_requests:
                result.outcome, result.final_text = "answered", redact(turn.text)
                return result
            results: list[ToolResult] = []
            for request in turn.tool_requests:
                outcome = toolbox.call(request.name, request.arguments)
                step.calls.append(len(toolbox.trace) - 1)
                results.append(ToolResult(request, toolbox.for_model(outcome), outcome.is_error))
            if toolbox.completion is not None:
                result.outcome = "completed"
                return result
            adapter.add_results(_echoed(turn), results)
        result.aborted = f"turn limit: {limits.max_turns} model turns without a completed investigation"
    except Exception as exc:
        result.aborted = f"crash: {type(exc).__name__}: {redact(str(exc))}"
    return result
