"""`ghost-eval lab up|down|status|try-fix`: the local lab (network-namespace VMs and the ARM emulator) for live runs
and fix trials."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from rich.table import Table

from ghost_eval.cli._common import Parents, cases_for, err, open_store, out
from ghost_eval.lab import lab_down, lab_status, lab_up

__all__ = ["register"]


def _state_dir(args: argparse.Namespace) -> Path:
    return Path(args.state_dir) if args.state_dir else args.settings.lab_dir


def _up(args: argparse.Namespace) -> int:
    path = _state_dir(args)
    target = lab_up(path)
    if args.json:
        out.print(target.model_dump_json(), markup=False)
        return 0
    out.print(f"lab is up; target written to {path / 'target.json'}", markup=False)
    out.print(f"  ARM emulator  {target.arm_endpoint} (CA {target.ca_bundle})", markup=False)
    for host in target.hosts.values():
        out.print(
            f"  {host.name:<13} ssh -i {host.key_file} -o UserKnownHostsFile={host.known_hosts_file} {host.user}@{host.address}",
            markup=False,
        )
    return 0


def _down(args: argparse.Namespace) -> int:
    removed = lab_down(_state_dir(args))
    for item in removed:
        out.print(f"removed {item}", markup=False)
    if not removed:
        out.print("nothing to remove", markup=False)
    return 0


def _status(args: argparse.Namespace) -> int:
    status = lab_status(_state_dir(args))
    if args.json:
        out.print(
            json.dumps({"state_dir": str(status.state_dir), "up": status.up, "healthy": status.healthy, "checks": status.checks}),
            markup=False,
        )
    else:
        table = Table("check", "result")
        for check, result in status.checks.items():
            table.add_row(check, result)
        out.print(table)
        if status.up and not status.healthy:
            err.print("lab is unhealthy: `ghost-eval lab down` then `ghost-eval lab up` rebuilds it", markup=False)
    return 0 if status.healthy else 1


def _az(args: argparse.Namespace) -> int:
    from ghost_eval.lab.azcli import az, original_env

    env = original_env(args.settings.cache_dir)
    if not args.az_args:
        out.print(f"azure-cli environment ready: {env.az}", markup=False)
        return 0
    proc = az(_state_dir(args), args.az_args[1:] if args.az_args[:1] == ["--"] else args.az_args, env)
    out.print(proc.stdout, markup=False, end="")
    err.print(proc.stderr, markup=False, end="")
    return proc.returncode


def _original_scripts(args: argparse.Namespace) -> int:
    from ghost_eval.lab.azcli import original_env
    from ghost_eval.live.original import original_scripts
    from ghost_eval.store import default_store_path

    work = Path(args.out)
    if work.exists():
        err.print(f"error: {work} exists; name a folder that does not", markup=False)
        return 2
    python = original_env(args.settings.cache_dir).python
    result = original_scripts(default_store_path(args.store, args.settings), Path(args.original), python, work)
    for title, text in (
        ("populate_artifact_store.py", result.populate),
        ("generate_verdict_report.py", result.verdict_report),
        ("compare.py", result.compare or "(fewer than two runs)"),
    ):
        out.print(f"== {title}\n{text}", markup=False)
    if result.failed:
        err.print(f"error: {', '.join(result.failed)} exited with an error (output above)", markup=False)
    return 1 if result.failed else 0


def _try_fix(args: argparse.Namespace) -> int:
    from ghost_eval.cases.case import case_key
    from ghost_eval.trials.session import LabSession, summary, trial_stored_run

    if bool(args.run_id) == args.all:
        err.print("error: name one RUN_ID, or --all", markup=False)
        return 2
    cases, _ = cases_for(args)
    results = []
    with (
        open_store(args) as store,
        LabSession(Path(args.state_dir) if args.state_dir else None, args.settings.cache_dir).open() as session,
    ):
        entries = (
            [store.get(args.run_id)]
            if args.run_id
            else [e for e in store.runs() if (c := cases.get(case_key(e.use_case_id))) is not None and c.recipe is not None]
        )
        for entry in entries:
            verdict, kept = trial_stored_run(store, entry, cases, session)
            results.append((verdict, {**summary(verdict), "verdict_file": str(kept) if kept else None}))
    for _verdict, result in results:
        result["lab_traces"] = session.traces
        if args.json:
            out.print(json.dumps(result), markup=False)
        else:
            _print_trial(result)
    breaches = [(v.run_id, change) for v, _ in results for change in v.host_changes]
    ok = all(v.setup_ok for v, _ in results) and not session.traces and not breaches
    for run_id, change in breaches:
        err.print(f"{run_id}: SANDBOX BREACH: the trial changed the host: {change}", markup=False)
    if not ok:
        err.print(
            "a trial could not set up, changed the host, or the lab left a trace: see setup_ok, host_changes and lab_traces",
            markup=False,
        )
    for verdict, _ in results:
        if not verdict.teardown_ok:
            err.print(f"{verdict.run_id}: the recipe's teardown did not restore the lab (residue); it was rebuilt", markup=False)
    return 0 if ok else 1


def _print_trial(result: dict[str, Any]) -> None:
    table = Table("action", "command", "gate", "decision", "exit", title=result["run_id"])
    for action in result["actions"]:
        for c in action["commands"] or [{"command": "(prose, no command)", "gate": "-", "decision": "-", "exit_status": None}]:
            table.add_row(str(action["index"]), c["command"], c["gate"], c["decision"], str(c["exit_status"]))
    out.print(table)
    keys = (
        "resolved",
        "durable",
        "verification",
        "c1",
        "c2",
        "c3",
        "c4",
        "collateral",
        "teardown_ok",
        "host_changes",
        "lab_traces",
    )
    for key in keys:
        out.print(f"{key}: {json.dumps(result[key])}", markup=False)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], parents: Parents) -> None:
    lab = sub.add_parser("lab", help="the local lab: two namespace VMs and an Azure ARM emulator (root only)")
    lsub = lab.add_subparsers(dest="lab_command", required=True)
    state = argparse.ArgumentParser(add_help=False)
    state.add_argument("--state-dir", help="lab state folder (default: $GHOST_EVAL_LAB_DIR, else /run/ghost-eval-lab)")
    p = lsub.add_parser("up", parents=[parents.common, state], help="build the lab (or keep the healthy one); writes target.json")
    p.add_argument("--json", action="store_true", help="print the Target as JSON")
    p.set_defaults(func=_up)
    p = lsub.add_parser("down", parents=[parents.common, state], help="remove every trace of the lab, even after a crash")
    p.set_defaults(func=_down)
    p = lsub.add_parser("status", parents=[parents.common, state], help="what answers; exit 1 unless healthy")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_status)
    p = lsub.add_parser(
        "az",
        parents=[parents.common, state],
        help="the real Azure CLI against the lab (its environment is built on first use; signed in per lab)",
        description="`ghost-eval lab az -- network nsg rule list -g nw-forensics-rg --nsg-name tf-dest-vm-nsg`; "
        "with no arguments it only builds the azure-cli environment.",
    )
    p.add_argument("az_args", nargs=argparse.REMAINDER, help="the az arguments, after --")
    p.set_defaults(func=_az)
    p = lsub.add_parser(
        "original-scripts",
        parents=[parents.common],
        help="the original's populate_artifact_store.py, generate_verdict_report.py and compare.py, unmodified, on a store",
        description="Each script runs from a folder of links to the original's files (they find their store next to "
        "their own file): the verdict report and compare read the store, populate copies its runs into a store of the "
        "original's layout under --out. Publish verdicts first (`ghost-eval score`): the report reads them.",
    )
    p.add_argument("--original", required=True, help="an original agentic-network-tools checkout")
    p.add_argument("--out", required=True, help="a new folder for the links and what the scripts write outside the store")
    p.set_defaults(func=_original_scripts)
    p = lsub.add_parser(
        "try-fix",
        parents=[parents.common, state],
        help="apply a stored run's recommended fix to its case's fault in the lab and observe it (a fix trial)",
        description="Without --state-dir the trial builds a lab of its own and removes it afterwards.",
    )
    p.add_argument("run_id", nargs="?", help="the stored run to trial")
    p.add_argument("--all", action="store_true", help="every run of the store whose case has a recipe (JSON: one line each)")
    p.add_argument("--cases", help="cases folder (default: the bundled cases)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=_try_fix)
