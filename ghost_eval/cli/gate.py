"""`ghost-eval gate classify`: how the agent's safety gate classifies a command, and why."""

from __future__ import annotations

import argparse

from ghost_eval.agent.gate import Classification, classify
from ghost_eval.cli._common import Parents, out

__all__ = ["register"]

_STYLE = {Classification.SAFE: "green", Classification.NEEDS_APPROVAL: "yellow", Classification.FORBIDDEN: "red"}


def _classify(args: argparse.Namespace) -> int:
    verdict = classify(args.shell_command)
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
    p.add_argument("shell_command", metavar="COMMAND", help="the command, quoted as one argument")
    p.set_defaults(func=_classify)
