"""A scripted model: a local server speaking the Anthropic Messages API that replays one case's script.

It lets an agent that talks to Anthropic through its SDK (the original Ghost Agent, via `ANTHROPIC_BASE_URL`, which
the anthropic SDK honours when no base URL is passed in code) run end to end with no key and no network. The reply
to a request is the script's turn N, where N is the number of assistant turns already in the conversation, so
a retried request gets the same answer. A turn may `expect` text in the tool results it follows: when the agent's
tools did not show it (the lab did not answer as the script assumes), the server answers 400 naming the text, so
the run fails loudly instead of reporting a finding nobody saw.

Scripts live in `ghost_eval/live/scripts/<case>.yaml`; each says whether its recommended fix is meant to be safe
or unsafe, and why.
"""

from __future__ import annotations

import json
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

from ghost_eval.base.errors import GhostEvalError

__all__ = ["SCRIPTS_DIR", "ModelScript", "ScriptedModel", "ToolCall", "TrialExpectation", "Turn", "load_script", "script_for"]

SCRIPTS_DIR = Path(__file__).with_name("scripts")


class ToolCall(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    """The agent's tool (for the original: run_shell_cmd, manage_hypotheses, complete_investigation, …)."""
    args: dict[str, Any] = Field(default_factory=dict)


class Turn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str | None = None
    """What the model says before its tool calls."""
    expect: list[str] = Field(default_factory=list)
    """Text each of which the tool results this turn follows must contain (what the script's reasoning relies on)."""
    calls: list[ToolCall] = Field(min_length=1)


class TrialExpectation(BaseModel):
    """What a fix trial of the script's fix observes in the lab (`ghost-eval lab try-fix`)."""

    model_config = ConfigDict(extra="forbid")
    resolved: bool
    durable: bool
    observed: list[Literal[1, 2, 3, 4]] = Field(default_factory=list)
    """The criteria the trial sees fail (observed true)."""


class ModelScript(BaseModel):
    """One case's replayed investigation."""

    model_config = ConfigDict(extra="forbid")
    schema_version: Literal["1"] = "1"
    case: str
    shows: Literal["safe", "unsafe"]
    """What the recommended fix is meant to be, judged by the four remediation criteria."""
    fires: list[Literal[1, 2, 3, 4]] = Field(default_factory=list)
    """The criteria the fix is meant to fire (none for a safe fix): what a live run's score is checked against."""
    why: str
    """Which criteria the fix is meant to clear or fire, and how."""
    trial: TrialExpectation
    turns: list[Turn] = Field(min_length=1)

    @model_validator(mode="after")
    def _fires_match_shows(self) -> ModelScript:
        if (self.shows == "safe") != (not self.fires):
            raise ValueError(f"shows {self.shows} with fires {self.fires}: a safe fix fires none, an unsafe one some")
        return self


def load_script(path: Path) -> ModelScript:
    try:
        return ModelScript.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))
    except (OSError, yaml.YAMLError, ValueError) as exc:
        raise GhostEvalError(f"{path}: not a model script: {exc}") from None


def script_for(case_id: str) -> ModelScript:
    path = SCRIPTS_DIR / f"{case_id}.yaml"
    if not path.exists():
        known = ", ".join(sorted(p.stem for p in SCRIPTS_DIR.glob("*.yaml")))
        raise GhostEvalError(f"no model script for case {case_id} in {SCRIPTS_DIR} (scripted cases: {known})")
    return load_script(path)


def _tool_results(message: dict[str, Any]) -> str:
    """The text of the tool results in one user message (each block's content, string or list of text blocks)."""
    content = message.get("content")
    parts: list[str] = []
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict) and block.get("type") == "tool_result":
            inner = block.get("content")
            if isinstance(inner, list):
                parts += [str(b.get("text", "")) for b in inner if isinstance(b, dict)]
            else:
                parts.append(str(inner))
    return "\n".join(parts)


class ScriptedModel:
    """Serve one script at `url` (use as a context manager); `served` counts the turns answered."""

    def __init__(self, script: ModelScript, host: str = "127.0.0.1", port: int = 0) -> None:
        self.script = script
        self.served = 0
        self.errors: list[str] = []
        self._lock = threading.Lock()
        model = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                return

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except json.JSONDecodeError:
                    body = None
                status, reply = model.answer(self.path, body)
                payload = json.dumps(reply).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self._httpd = ThreadingHTTPServer((host, port), Handler)
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def answer(self, path: str, body: Any) -> tuple[int, dict[str, Any]]:
        """The reply to one Messages API request: the next turn, or Anthropic's error shape saying why not."""
        if path.split("?")[0] != "/v1/messages" or not isinstance(body, dict):
            return self._error(404, "not_found_error", f"the scripted model answers POST /v1/messages only, not {path}")
        messages = body.get("messages") or []
        index = sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "assistant")
        if index >= len(self.script.turns):
            return self._error(400, "invalid_request_error", f"script of case {self.script.case} has no turn {index + 1}")
        turn = self.script.turns[index]
        seen = _tool_results(messages[-1]) if messages and isinstance(messages[-1], dict) else ""
        missing = [text for text in turn.expect if text not in seen]
        if missing:
            return self._error(
                400,
                "invalid_request_error",
                f"script of case {self.script.case}, turn {index + 1}: the tool results do not show {missing!r}",
            )
        content: list[dict[str, Any]] = [{"type": "text", "text": turn.text}] if turn.text else []
        content += [
            {"type": "tool_use", "id": f"toolu_{uuid.uuid4().hex[:24]}", "name": c.name, "input": c.args} for c in turn.calls
        ]
        with self._lock:
            self.served += 1
        return 200, {
            "id": f"msg_{uuid.uuid4().hex[:24]}",
            "type": "message",
            "role": "assistant",
            "model": str(body.get("model", "scripted")),
            "content": content,
            "stop_reason": "tool_use",
            "stop_sequence": None,
            "usage": {"input_tokens": 0, "output_tokens": 0},
        }

    def _error(self, status: int, kind: str, message: str) -> tuple[int, dict[str, Any]]:
        with self._lock:
            self.errors.append(message)
        return status, {"type": "error", "error": {"type": kind, "message": message}}

    def __enter__(self) -> ScriptedModel:
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="scripted-model", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
