"""The agent's tools: their argument schemas (defined once, rendered for each vendor) and the dispatcher.

Every call, shell and inspector alike, lands in the trace with its redacted output (a shell command's as capped by
the shell inspector, the one place outputs are capped); the model sees the same output, shortened when it is long.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from ghost_eval.agent.control_plane import ControlPlaneInspector
from ghost_eval.agent.redact import redact, redact_value
from ghost_eval.agent.shell import ShellInspector
from ghost_eval.run.artifacts import InvestigationResult, RecommendedAction, ToolCall, Verification

__all__ = ["COMPLETE_TOOL", "TOOLS", "Hypothesis", "ToolOutcome", "ToolSpec", "Toolbox"]


class _Arguments(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class RunCommandArgs(_Arguments):
    host: str
    """VM name, one of the hosts listed in the environment (e.g. tf-dest-vm)."""
    command: str
    """One plain read-only command, e.g. `iptables -S` or `tc -s qdisc show dev eth0` (no sudo: it needs approval)."""


class NicArgs(_Arguments):
    nic: str
    """Network interface name, e.g. tf-dest-vm-nic."""


class NsgArgs(_Arguments):
    name: str
    """Network security group name, e.g. tf-dest-vm-nsg."""


class NoArgs(_Arguments):
    pass


class SubnetArgs(_Arguments):
    vnet: str | None = None
    """Virtual network name; the environment's VNet when omitted."""
    subnet: str | None = None
    """Subnet name; the environment's subnet when omitted."""


class HypothesisArgs(_Arguments):
    hypothesis: str
    """The hypothesis, stated so that evidence can confirm or refute it. Repeat the same text to update it."""
    status: Literal["open", "confirmed", "refuted"] = "open"
    evidence: str = ""
    """What confirmed or refuted it (tool and finding), when it is no longer open."""


class VerificationArgs(_Arguments):
    command: str
    """A concrete command that proves the fix worked."""
    expected: str
    """The output, count or exit status that command must show."""


class ActionArgs(_Arguments):
    description: str
    """What to change and why, scoped to the fault."""
    commands: list[str] = []
    """The exact commands an operator runs (after confirming), in order."""
    verification: VerificationArgs | None = None
    """How to prove the action worked."""


class CompletionArgs(_Arguments):
    root_cause: str
    """The root cause (or causes), naming the exact rule, route, chain, qdisc or setting at fault."""
    evidence: list[str] = []
    """Each item: the tool or command, the host, and what its output showed."""
    confirmed_hypotheses: list[str] = []
    refuted_hypotheses: list[str] = []
    recommended_actions: list[ActionArgs] = []
    """Remediation steps for the operator; none of them has been applied."""


@dataclass(frozen=True)
class ToolSpec:
    """A tool as both vendors see it: a name, a description and a JSON schema derived from its argument model."""

    name: str
    description: str
    arguments: type[_Arguments]

    @property
    def parameters(self) -> dict[str, Any]:
        return _plain_schema(self.arguments.model_json_schema())


def _plain_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Inline `$ref`s, drop titles and defaults, collapse `X | None` to an optional X: a schema both vendors accept."""
    defs = schema.get("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(n) for n in node]
        if not isinstance(node, dict):
            return node
        if "$ref" in node:
            return walk(copy.deepcopy(defs[node["$ref"].rsplit("/", 1)[-1]]))
        options = node.get("anyOf")
        if isinstance(options, list) and len(options) == 2 and {"type": "null"} in options:
            inner = walk(next(o for o in options if o != {"type": "null"}))
            rest = {k: v for k, v in node.items() if k not in {"anyOf", "default", "title"}}
            return {**inner, **{k: walk(v) for k, v in rest.items()}}
        return {k: walk(v) for k, v in node.items() if k not in {"$defs", "title", "default", "additionalProperties"}}

    out: dict[str, Any] = walk(schema)
    out.setdefault("properties", {})
    return out


COMPLETE_TOOL = "complete_investigation"
TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "run_command",
        "Run one read-only diagnostic command on a VM over SSH; returns the exit code and output. "
        "A safety gate refuses chained, piped, redirected or state-changing commands.",
        RunCommandArgs,
    ),
    ToolSpec(
        "get_effective_routes",
        "Effective routes of a NIC as Azure applies them (system routes, user-defined routes, next hops, active or invalid).",
        NicArgs,
    ),
    ToolSpec(
        "get_effective_nsg_rules",
        "Effective security rules at a NIC: every NSG that applies (NIC and subnet), "
        "with priorities, ports, prefixes and access.",
        NicArgs,
    ),
    ToolSpec(
        "get_nsg",
        "One network security group with its security rules and default rules, and what it is associated with.",
        NsgArgs,
    ),
    ToolSpec(
        "list_route_tables",
        "Every route table in the resource group, with its routes and the subnets it is associated with.",
        NoArgs,
    ),
    ToolSpec("get_subnet", "A subnet: address prefix, NSG, route table and service endpoints.", SubnetArgs),
    ToolSpec("record_hypothesis", "Record a hypothesis, or update its status with the evidence that settled it.", HypothesisArgs),
    ToolSpec(
        COMPLETE_TOOL,
        "End the investigation with the root cause, the evidence, the hypotheses confirmed and "
        "refuted, and recommended actions (each with its commands and a verification). Call it once, last.",
        CompletionArgs,
    ),
)


@dataclass
class Hypothesis:
    """One entry of the investigation notebook: open until evidence confirms or refutes it."""

    text: str
    status: str = "open"
    evidence: str = ""


@dataclass(frozen=True)
class ToolOutcome:
    """What one tool call gave back: the (redacted) output and whether it failed."""

    output: str
    is_error: bool = False


@dataclass
class Toolbox:
    """Runs tool calls by name, validates their arguments, and keeps the trace and the investigation notebook."""

    shell: ShellInspector
    control_plane: ControlPlaneInspector
    model_output_limit: int = 16_000
    """Characters of one output the model sees; the trace keeps the whole (capped) output."""
    trace: list[ToolCall] = field(default_factory=list)
    hypotheses: list[Hypothesis] = field(default_factory=list)
    completion: InvestigationResult | None = None

    def call(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        started = datetime.now(UTC)
        clock = time.monotonic()
        spec = next((t for t in TOOLS if t.name == name), None)
        if spec is None:
            outcome = ToolOutcome(f"unknown tool {name!r}; tools: {', '.join(t.name for t in TOOLS)}", True)
        else:
            try:
                args = spec.arguments.model_validate(arguments)
            except ValidationError as exc:
                outcome = ToolOutcome(f"invalid arguments for {name}: {_validation_message(exc)}", True)
            else:
                outcome = self._handlers()[name](args)
        outcome = ToolOutcome(redact(outcome.output), outcome.is_error)
        self.trace.append(
            ToolCall(
                index=len(self.trace),
                tool=name,
                arguments=redact_value(arguments),
                output=outcome.output,
                is_error=outcome.is_error,
                started_at=started,
                duration_ms=round((time.monotonic() - clock) * 1000, 1),
            )
        )
        return outcome

    def for_model(self, outcome: ToolOutcome) -> str:
        """The output as the model receives it: complete unless very long."""
        text = outcome.output or "(no output)"
        if len(text) <= self.model_output_limit:
            return text
        cut = len(text) - self.model_output_limit
        return text[: self.model_output_limit] + f"\n[output shortened for the model: {cut} more characters in the trace]"

    def _handlers(self) -> dict[str, Callable[[Any], ToolOutcome]]:
        return {
            "run_command": lambda a: ToolOutcome(*self.shell.run(a.host, a.command)),
            "get_effective_routes": lambda a: ToolOutcome(*self.control_plane.effective_routes(a.nic)),
            "get_effective_nsg_rules": lambda a: ToolOutcome(*self.control_plane.effective_nsg_rules(a.nic)),
            "get_nsg": lambda a: ToolOutcome(*self.control_plane.nsg(a.name)),
            "list_route_tables": lambda a: ToolOutcome(*self.control_plane.route_tables()),
            "get_subnet": lambda a: ToolOutcome(*self.control_plane.subnet(a.vnet, a.subnet)),
            "record_hypothesis": self._record,
            COMPLETE_TOOL: self._complete,
        }

    def _record(self, args: HypothesisArgs) -> ToolOutcome:
        found = next((h for h in self.hypotheses if h.text == args.hypothesis), None)
        if found is None:
            found = Hypothesis(args.hypothesis)
            self.hypotheses.append(found)
        found.status, found.evidence = args.status, args.evidence or found.evidence
        board = "\n".join(f"- [{h.status}] {h.text}" for h in self.hypotheses)
        return ToolOutcome(f"recorded. hypotheses:\n{board}")

    def _complete(self, args: CompletionArgs) -> ToolOutcome:
        def settled(status: str) -> list[str]:
            return [h.text for h in self.hypotheses if h.status == status]

        self.completion = InvestigationResult.model_validate(
            redact_value(
                {
                    "root_cause": args.root_cause,
                    "evidence": args.evidence,
                    "confirmed_hypotheses": args.confirmed_hypotheses or settled("confirmed"),
                    "refuted_hypotheses": args.refuted_hypotheses or settled("refuted"),
                    "recommended_actions": [
                        RecommendedAction(
                            description=a.description,
                            commands=a.commands,
                            verification=Verification(command=a.verification.command, expected=a.verification.expected)
                            if a.verification
                            else None,
                        ).model_dump()
                        for a in args.recommended_actions
                    ],
                }
            )
        )
        return ToolOutcome("investigation completed")


def _validation_message(exc: ValidationError) -> str:
    return "; ".join(f"{'.'.join(str(p) for p in e['loc']) or '(arguments)'}: {e['msg']}" for e in exc.errors())
