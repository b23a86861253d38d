"""Run factory for write tests: our metadata, a report, an audit line."""

from __future__ import annotations

from datetime import datetime, timedelta

from ghost_eval.identity import HashKind, RunMetadata, effective_prompt_hash, make_run_id

BASE = datetime(2026, 4, 1, 8, 0, 0)


def our_run(
    n: int, case: str = "m", model: str = "claude-haiku-4-5-20251001", addon: str | None = None
) -> tuple[RunMetadata, dict[str, str]]:
    when = BASE + timedelta(seconds=n)
    meta = RunMetadata(
        schema_version="2",
        run_id=make_run_id(case, model, when),
        use_case_id=case,
        model_id=model,
        system_prompt_hash=effective_prompt_hash("base prompt", "env", addon),
        hash_kind=HashKind.EFFECTIVE_PROMPT,
        repeat_index=n,
        started_at=when,
    )
    sid = f"ghost_{when:%Y%m%d_%H%M%S}"
    files = {
        f"ghost_report_{sid}.md": f"# Report {n}\n## Root Cause\nf2b-sshd bans 203.0.113.47\n",
        f"shell_audit_{sid}.jsonl": '{"command": "sudo iptables -S f2b-sshd", "host": "tf-dest-vm"}\n',
        f"ghost_audit_{sid}.md": "1. looked\n",
        "PROMPT.txt": "ssh refused\n",
    }
    return meta, files
