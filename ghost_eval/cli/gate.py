"""`ghost-eval gate classify`: how the agent's safety gate classifies a command, and why."""

from __future__ import annotations

import argparse

from ghost_eval.agent.gate import Classification, classify
from ghost_eval.cli._common import Parents, err, out

__all__ = ["register"]

_STYLE = {Classification.SAFE: "green", Classification.NEEDS_APPROVAL: "yellow", Classification.FORBIDDEN: "red"}


def _classify(args: argparse.Namespace) -> int:
    words = args.shell_command[1:] if args.shell_command[:1] == ["--"] else args.shell_command
    if not words:
        err.print("error: give the command to classify (quoted, or after `--`)", markup=False)
        return 2
    verdict = classify(" ".join(words))
    if args.json:
        out.print(verdict.model_dump_json(), markup=False)
        return 0
    out.print(f"[{_STYLE[verdict.classification]}]{verdict.classification.value}[/]")
    for reason in verdict.reasons:
        out.print(f"- {reason}", markup=False)
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], parents: Parents) -> None:
    gate = sub.add_parser("gate", help="the agent's safety gate")
    actions = gate.add_subparsers(dest="gate_command", required=True)
    p = actions.add_parser("classify", help="classify one shell command: safe, needs_approval or forbidden, with reasons")
    p.add_argument("--json", action="store_true", help='print {"command", "classification", "reasons"}')
    p.add_argument(
        "shell_command",
        metavar="COMMAND",
        nargs=argparse.REMAINDER,
        help="the command: quoted as one argument, or its words after `--` (`gate classify -- rm -rf /`)",
    )
    p.set_defaults(func=_classify)
