"""`ghost-eval`: what is not a Promptfoo row — store maintenance and queries, scoring, judging, reports.

Each command family lives in its own module with a `register(sub, parents)` function.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ghost_eval.cli import calibrate, decide, diff, gate, init, judge, lab, query, report, score, store, validate
from ghost_eval.cli._common import Handler, Parents, err
from ghost_eval.errors import GhostEvalError

__all__ = ["main"]

_COMMANDS = (store, score, decide, judge, report, query, diff, calibrate, gate, lab, init, validate)


def _parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--store", help="store folder (default: $GHOST_EVAL_STORE, else the bundled demo store)")
    select = argparse.ArgumentParser(add_help=False)
    select.add_argument("--use-case", help="case id (m or use_case_m)")
    select.add_argument("--model")
    select.add_argument("--prompt-hash", help="full hash or a prefix of 6+ characters")
    select.add_argument("--label", help="run label")
    select.add_argument("--include-superseded", action="store_true")
    parser = argparse.ArgumentParser(prog="ghost-eval", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    for module in _COMMANDS:
        module.register(sub, Parents(common, select))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
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
