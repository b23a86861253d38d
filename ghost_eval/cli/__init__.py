"""`ghost-eval`: what is not a Promptfoo row — store maintenance and queries, scoring, judging, reports.

Each command family lives in its own module with a `register(sub, parents)` function, listed in `_COMMANDS` by the
command names it registers. Only the module of the command asked for is imported (start-up stays short, and a
command never pays for the lab's SSH library or the judge's SDKs it does not use); help and unknown commands
import them all.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from ghost_eval.base.errors import GhostEvalError
from ghost_eval.base.settings import read_settings
from ghost_eval.cli._common import Handler, Parents, err

__all__ = ["main"]

_COMMANDS: dict[str, str] = {
    "store": "store",
    "score": "score",
    "variant": "decide",
    "sentinel": "decide",
    "judge": "judge",
    "report": "report",
    "query": "query",
    "diff": "diff",
    "calibrate": "calibrate",
    "gate": "gate",
    "lab": "lab",
    "init": "init",
    "validate": "validate",
    "schema": "schema",
}
"""Command name → the module under ghost_eval.cli that registers it."""


def _modules_for(argv: Sequence[str]) -> list[str]:
    """The command modules to import: the one the first word names, else all (for help and for the error)."""
    word = next((a for a in argv if not a.startswith("-")), None)
    if word in _COMMANDS:
        return [_COMMANDS[word]]
    return list(dict.fromkeys(_COMMANDS.values()))


def _parser(argv: Sequence[str]) -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--store", help="store folder (default: $GHOST_EVAL_STORE, else the bundled demo store)")
    select = argparse.ArgumentParser(add_help=False)
    select.add_argument("--use-case", help="case id (m or use_case_m), or several separated by commas (f,m,q)")
    select.add_argument("--model", help="model id, or several separated by commas")
    select.add_argument("--prompt-hash", help="full hash or a prefix of 6+ characters")
    select.add_argument("--label", help="run label")
    select.add_argument("--suite-version", help="runs captured under this suite version (`unknown`: runs that record none)")
    select.add_argument("--include-superseded", action="store_true")
    parser = argparse.ArgumentParser(
        prog="ghost-eval",
        description="What is not a Promptfoo row: store maintenance and queries, scoring, judging, reports, decisions, "
        "the lab. `ghost-eval COMMAND --help` tells more.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for name in _modules_for(argv):
        importlib.import_module(f"ghost_eval.cli.{name}").register(sub, Parents(common, select))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = _parser(argv).parse_args(argv)
    args.settings = read_settings()
    handler: Handler = args.func
    try:
        return handler(args)
    except GhostEvalError as exc:
        err.print(f"error: {exc}", markup=False)
        return 2
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
