"""Every command's output is capped once, in bytes and in lines, before it is stored, traced or sent to the model,
and the audit line records the cap and the size before it (a device read or a runaway log cannot flood either)."""

from __future__ import annotations

import json

from ghost_eval.agent.approval import approve_for_eval
from ghost_eval.agent.control_plane import ControlPlaneInspector
from ghost_eval.agent.shell import OutputLimit, ShellInspector
from ghost_eval.agent.tools import Toolbox
from ghost_eval.connect.target import Target


def test_the_cap_keeps_whole_lines_then_whole_characters_and_says_what_it_cut() -> None:
    limit = OutputLimit(max_bytes=12, max_lines=3)
    kept, cap = limit.apply("a\nb\nc\nd\ne\n")
    assert kept.startswith("a\nb\nc\n") and "d" not in kept.split("[")[0]
    assert "[output capped: 6 of 10 bytes and 3 of 5 lines kept]" in kept
    assert (cap.capped, cap.original_bytes, cap.original_lines, cap.max_bytes, cap.max_lines) == (True, 10, 5, 12, 3)
    kept, cap = limit.apply("\u00e9" * 10)
    assert kept.startswith("\u00e9" * 6 + "\n[output capped: 12 of 20 bytes")
    assert cap.capped and cap.original_bytes == 20
    kept, cap = limit.apply("short\n")
    assert (kept, cap.capped, cap.original_lines) == ("short\n", False, 1)


def test_a_long_output_is_capped_in_the_audit_the_trace_and_what_the_model_sees(target: Target) -> None:
    shell = ShellInspector(target=target, approver=approve_for_eval, session_id="s", output_limit=OutputLimit(4096, 10))
    toolbox = Toolbox(shell=shell, control_plane=ControlPlaneInspector(target=target))
    outcome = toolbox.call("run_command", {"host": "tf-dest-vm", "command": "seq 1 50000"})
    assert not outcome.is_error
    body = outcome.output.split("\n", 1)[1]
    assert body.startswith("1\n2\n") and "\n11\n" not in body
    assert "[output capped: 21 of 288894 bytes and 10 of 50000 lines kept]" in body
    assert toolbox.trace[-1].output == outcome.output == toolbox.for_model(outcome)
    entry = shell.audit[-1]
    assert entry.output == body
    line = json.loads(entry.model_dump_json())
    assert line["output_cap"] == {
        "capped": True,
        "max_bytes": 4096,
        "max_lines": 10,
        "original_bytes": 288894,
        "original_lines": 50000,
    }


def test_one_long_line_is_capped_in_bytes(target: Target) -> None:
    shell = ShellInspector(target=target, approver=approve_for_eval, session_id="s", output_limit=OutputLimit(1000, 10))
    text, _ = shell.run("tf-dest-vm", "seq -s , 1 50000")
    assert len(text.encode()) < 1200 and "of 1 lines kept]" in text
    assert shell.audit[-1].model_dump()["output_cap"]["original_bytes"] == 288894
