"""Local fake Anthropic and Gemini HTTP servers that the real SDKs talk to.

Each server answers from a script: a list of replies consumed in order, or a function of the
request. Every request is recorded (path, headers, JSON body) so tests can assert on what the
client sent. Replies are plain vendor JSON, so tool calls, malformed text, 429 with retry-after,
500s and slow answers (timeouts) are all just script entries.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = [
    "FakeLLMServer",
    "Recorded",
    "Reply",
    "anthropic_message",
    "anthropic_server",
    "gemini_response",
    "gemini_server",
]


@dataclass
class Reply:
    body: dict[str, Any] | str | None = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    """Seconds to wait before answering (to trigger client timeouts)."""


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


Responder = Callable[[Recorded], Reply]


class FakeLLMServer:
    """A scripted HTTP server; `vendor` decides which auth header is required."""

    def __init__(self, vendor: str, script: list[Reply] | Responder) -> None:
        self.vendor = vendor
        self._script = script
        self.requests: list[Recorded] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                return

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    body = {"_raw": raw.decode(errors="replace")}
                rec = Recorded(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                if not server._authorised(rec):
                    self._send(Reply({"error": {"type": "authentication_error", "message": "missing API key"}}, 401))
                    return
                with server._lock:
                    server.requests.append(rec)
                    reply = server._next(rec)
                if reply.delay:
                    time.sleep(reply.delay)
                self._send(reply)

            def _send(self, reply: Reply) -> None:
                payload = reply.body if isinstance(reply.body, str) else json.dumps(reply.body or {})
                data = payload.encode()
                try:
                    self.send_response(reply.status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    for k, v in reply.headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    return

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def _authorised(self, rec: Recorded) -> bool:
        if self.vendor == "anthropic":
            return bool(rec.headers.get("x-api-key") or rec.headers.get("authorization", "").startswith("Bearer "))
        return bool(rec.headers.get("x-goog-api-key"))

    def _next(self, rec: Recorded) -> Reply:
        if callable(self._script):
            return self._script(rec)
        if not self._script:
            return Reply({"error": {"message": "fake server script exhausted"}}, 500)
        return self._script.pop(0)

    def start(self) -> FakeLLMServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


@contextmanager
def anthropic_server(script: list[Reply] | Responder) -> Iterator[FakeLLMServer]:
    server = FakeLLMServer("anthropic", script).start()
    try:
        yield server
    finally:
        server.stop()


@contextmanager
def gemini_server(script: list[Reply] | Responder) -> Iterator[FakeLLMServer]:
    server = FakeLLMServer("gemini", script).start()
    try:
        yield server
    finally:
        server.stop()


def anthropic_message(
    text: str | None = None,
    tool_calls: list[tuple[str, dict[str, Any]]] | None = None,
    model: str = "claude-haiku-4-5-20251001",
    usage: tuple[int, int] = (120, 40),
) -> Reply:
    """A Messages API answer: text and/or tool_use blocks."""
    content: list[dict[str, Any]] = []
    if text is not None:
        content.append({"type": "text", "text": text})
    for i, (name, args) in enumerate(tool_calls or []):
        content.append({"type": "tool_use", "id": f"toolu_{i}_{name}", "name": name, "input": args})
    return Reply(
        {
            "id": "msg_fake",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": "tool_use" if tool_calls else "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": usage[0], "output_tokens": usage[1]},
        }
    )


def gemini_response(
    text: str | None = None,
    function_calls: list[tuple[str, dict[str, Any]]] | None = None,
    model: str = "gemini-2.5-flash",
    usage: tuple[int, int] = (120, 40),
) -> Reply:
    """A generateContent answer: text and/or functionCall parts."""
    parts: list[dict[str, Any]] = []
    if text is not None:
        parts.append({"text": text})
    for name, args in function_calls or []:
        parts.append({"functionCall": {"name": name, "args": args}})
    return Reply(
        {
            "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": usage[0], "candidatesTokenCount": usage[1], "totalTokenCount": sum(usage)},
            "modelVersion": model,
        }
    )
