"""Tool schemas are defined once and rendered for both vendors in a form each accepts."""

from __future__ import annotations

import json

from ghost_eval.agent.anthropic_adapter import anthropic_tools
from ghost_eval.agent.approval import deny
from ghost_eval.agent.control_plane import ControlPlaneInspector
from ghost_eval.agent.gemini_adapter import gemini_tools
from ghost_eval.agent.shell import ShellInspector
from ghost_eval.agent.tools import COMPLETE_TOOL, TOOLS, Toolbox, ToolOutcome
from ghost_eval.connect.target import Target


def test_schemas_are_self_contained_json_schema() -> None:
    for tool in TOOLS:
        text = json.dumps(tool.parameters)
        assert "$ref" not in text and "$defs" not in text and '"title"' not in text and "anyOf" not in text
        assert tool.parameters["type"] == "object" and tool.description
    complete = next(t for t in TOOLS if t.name == COMPLETE_TOOL).parameters
    action = complete["properties"]["recommended_actions"]["items"]
    assert action["properties"]["verification"]["required"] == ["command", "expected"]
    assert complete["required"] == ["root_cause"]


def test_both_vendors_render_the_same_tools() -> None:
    claude = anthropic_tools()
    gemini = gemini_tools()[0].function_declarations or []
    assert [t["name"] for t in claude] == [f.name for f in gemini] == [t.name for t in TOOLS]
    for spec, c, g in zip(TOOLS, claude, gemini, strict=True):
        assert c["input_schema"] == g.parameters_json_schema == spec.parameters
        assert c.get("description") == g.description == spec.description


def test_the_model_gets_long_output_shortened_and_the_trace_keeps_it_all(offline_target: Target) -> None:
    toolbox = Toolbox(
        shell=ShellInspector(target=offline_target, approver=deny, session_id="s"),
        control_plane=ControlPlaneInspector(target=offline_target),
        model_output_limit=100,
    )
    long = ToolOutcome("x" * 250)
    shown = toolbox.for_model(long)
    assert shown.startswith("x" * 100) and "150 more characters" in shown and "x" * 101 not in shown
    assert toolbox.for_model(ToolOutcome("short")) == "short"
    outcome = toolbox.call("record_hypothesis", {"hypothesis": "h" * 300})
    assert toolbox.trace[0].output == outcome.output and len(outcome.output) > 300
