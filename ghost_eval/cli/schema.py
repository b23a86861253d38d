"""`ghost-eval schema [DIR]`: write the JSON Schemas of the hand-written files (cases, variant specs, sentinel
criteria, targets) for editors."""

from __future__ import annotations

import argparse
from pathlib import Path

from ghost_eval.cli._common import Parents, out

__all__ = ["register"]


def _schema(args: argparse.Namespace) -> int:
    from ghost_eval.promptfoo.schemas import write_schemas

    for path in write_schemas(Path(args.dir)):
        out.print(str(path), markup=False)
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], parents: Parents) -> None:
    p = sub.add_parser("schema", help="write JSON Schemas of cases, variant specs, sentinel criteria and targets")
    p.add_argument("dir", nargs="?", default="schemas", help="folder to write them into (default: schemas)")
    p.set_defaults(func=_schema)
