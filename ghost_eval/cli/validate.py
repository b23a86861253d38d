"""`ghost-eval validate [DIR]`: a dry run over cases, configs, answer keys and criteria (exit 1 on any problem)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ghost_eval.cli._common import Parents, err, out

__all__ = ["register"]


def _validate(args: argparse.Namespace) -> int:
    from ghost_eval.promptfoo.validate import validate_project

    findings = validate_project(Path(args.dir))
    for f in findings:
        err.print(str(f), markup=False)
    out.print(f"{len(findings)} problem(s) in {args.dir}", markup=False)
    return 1 if findings else 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], parents: Parents) -> None:
    p = sub.add_parser("validate", help="dry run: check cases, configs, answer keys and criteria (no tokens, no store)")
    p.add_argument("dir", nargs="?", default=".", help="suite folder (default: the current folder)")
    p.set_defaults(func=_validate)
