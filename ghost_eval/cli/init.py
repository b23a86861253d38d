"""`ghost-eval init DIR`: scaffold the three suites, an example case, a README and a CI example into DIR."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ghost_eval.cli._common import Parents, out

__all__ = ["register"]


def _init(args: argparse.Namespace) -> int:
    from ghost_eval.scaffold import next_steps, scaffold

    target = Path(args.dir)
    written = scaffold(target, args.team)
    for path in written:
        out.print(f"wrote {path}", markup=False)
    out.print("next:", markup=False)
    for step in next_steps(target, sys.executable):
        out.print(f"  {step}", markup=False)
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], parents: Parents) -> None:
    p = sub.add_parser("init", help="scaffold a suite that runs on the installed package into another repository")
    p.add_argument("dir", help="folder to write into (created if absent; nothing in it is overwritten)")
    p.add_argument("--team", help="the team's case-id namespace (default: the folder's name)")
    p.set_defaults(func=_init)
