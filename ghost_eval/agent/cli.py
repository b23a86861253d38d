"""`python -m ghost_eval.agent`: the original Ghost Agent's command-line contract, for the reference agent.

The symptom arrives on standard input; the artifacts land in `--audit-dir`; the report is printed. Exit
status: 0 when the run completed or answered, 1 when it aborted (its artifacts are still written), 2 when
the command line or the target is wrong.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from ghost_eval.agent.capture import write_artifacts
from ghost_eval.agent.loop import Limits
from ghost_eval.agent.prompt import Addon
from ghost_eval.agent.runner import AgentConfig, investigate
from ghost_eval.base.errors import GhostEvalError
from ghost_eval.base.settings import env_name, read_settings
from ghost_eval.connect.target import load_target
from ghost_eval.store.layout import REPORT

__all__ = ["TARGET_ENV", "main"]

TARGET_ENV = env_name("target")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m ghost_eval.agent", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--llm-provider", choices=("anthropic", "gemini"), default="anthropic")
    p.add_argument("--model", required=True, help="model id, e.g. claude-haiku-4-5-20251001 or gemini-2.5-flash")
    p.add_argument(
        "--auto-approve",
        action="store_true",
        help="eval mode: commands that need approval run, recorded as eval_auto approvals (never human)",
    )
    p.add_argument("--audit-dir", default=".", help="folder for the run's artifacts (default: the current folder)")
    p.add_argument("--prompt-addon", type=Path, help="text file appended to the system prompt")
    p.add_argument(
        "--target", type=Path, help=f"target file (default: ${TARGET_ENV}, else the lab's target.json in its state folder)"
    )
    p.add_argument("--temperature", type=float, help="sampling temperature (default: the vendor's)")
    p.add_argument("--max-turns", type=int, default=Limits.max_turns)
    p.add_argument("--timeout", type=float, default=Limits.run_timeout_s, help="wall-clock budget of the run, in seconds")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    settings = read_settings()
    try:
        target_path = args.target or settings.target_file
        target = load_target(target_path)
        addon = Addon.from_file(args.prompt_addon) if args.prompt_addon else None
        symptom = sys.stdin.read()
        if not symptom.strip():
            raise GhostEvalError("no symptom on standard input")
        config = AgentConfig(
            provider=args.llm_provider,
            model=args.model,
            temperature=args.temperature,
            auto_approve=args.auto_approve,
            addon=addon,
            limits=Limits(max_turns=args.max_turns, run_timeout_s=args.timeout),
            settings=settings,
        )
        run = investigate(symptom, target, config)
        written = write_artifacts(run, Path(args.audit_dir))
    except GhostEvalError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    report = next(path for name, path in written.items() if name.startswith(REPORT.prefix))
    sys.stdout.write(report.read_text(encoding="utf-8"))
    for path in written.values():
        print(f"wrote {path}", file=sys.stderr)
    if run.result.aborted:
        print(f"aborted: {run.result.aborted}", file=sys.stderr)
        return 1
    return 0
