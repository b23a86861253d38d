"""One scripted vendor for the tests, whichever SDK it stands for: replies, a fake server, the environment, and
what the agent sent back (tool results) in each request; and the agent's tool loop run against it."""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ghost_eval.agent.approval import deny
from ghost_eval.agent.control_plane import ControlPlaneInspector
from ghost_eval.agent.loop import Limits, LoopResult, run_loop
from ghost_eval.agent.runner import PROVIDERS
from ghost_eval.agent.shell import ShellInspector
from ghost_eval.agent.tools import Toolbox
from ghost_eval.base.settings import Settings
from ghost_eval.connect.target import SshHost, Target
from ghost_eval.llm.clients import GEMINI_BASE_URL_ENV
from tests.agent.infra import RESOURCE_GROUP, SUBSCRIPTION, TOKEN
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

__all__ = ["VENDORS", "Vendor", "agent_loop", "unreachable_target"]

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

    def environ(self, server: FakeLLMServer) -> dict[str, str]:
        """The variables that point this vendor's client at `server`."""
        if self.provider == "anthropic":
            return {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": server.url}
        return {"GEMINI_API_KEY": "test-key", GEMINI_BASE_URL_ENV: server.url}

    def settings_for(self, server: FakeLLMServer) -> Settings:
        """The settings a process started with `environ(server)` reads: what a test hands the agent."""
        return Settings.from_environ(self.environ(server))

    def point_at(self, monkeypatch: pytest.MonkeyPatch, server: FakeLLMServer) -> None:
        """For a process the test starts through its edge (the live provider): the same variables, set."""
        for name, value in self.environ(server).items():
            monkeypatch.setenv(name, value)

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


def unreachable_target(folder: Path) -> Target:
    """A target nothing listens for: enough for runs that never open SSH or call Azure."""
    host = SshHost(
        name="tf-dest-vm",
        address="127.0.0.1",
        port=1,
        user="nobody",
        key_file=str(folder / "none"),
        known_hosts_file=str(folder / "none"),
    )
    return Target(
        name="offline",
        subscription_id=SUBSCRIPTION,
        resource_group=RESOURCE_GROUP,
        nics={"tf-dest-vm": "tf-dest-vm-nic"},
        nsgs={"tf-dest-vm": "tf-dest-vm-nsg"},
        arm_endpoint="https://127.0.0.1:1",
        credential="static_token",
        token=TOKEN,
        hosts={"tf-dest-vm": host},
    )


def agent_loop(
    server: FakeLLMServer, vendor: Vendor, target: Target, limits: Limits, sleeps: list[float]
) -> tuple[LoopResult, Toolbox]:
    """The reference agent's tool loop on the vendor's real SDK against `server`; the waits between attempts are
    recorded, not slept."""
    settings = vendor.settings_for(server)
    adapter = PROVIDERS[vendor.provider](
        vendor.model, "system prompt", "the symptom", temperature=0.0, limits=limits, settings=settings
    )
    shell = ShellInspector(target=target, approver=deny, session_id="ghost_test")
    toolbox = Toolbox(shell=shell, control_plane=ControlPlaneInspector(target=target))
    return run_loop(adapter, toolbox, limits, sleep=sleeps.append), toolbox
