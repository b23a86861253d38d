"""The `az` commands of a fix trial, run by the real Azure CLI against the lab's ARM emulator.

The CLI is the one the original agent uses (`ghost_eval.lab.azcli`), signed in to this lab's emulator only (its
profile lives in the lab's state folder). It runs on the machine hosting the lab, not in a VM, so this module keeps
what the CLI cannot decide for itself, which commands a trial lets it run:

- only the ARM reads and writes a network fix or its check uses (`ALLOWED`): `login`, `account`, `cloud`, `config`,
  `extension` or `rest` would change the lab's profile, install code or reach any address, and storage data commands
  would wait out their retries on blob endpoints the host does not resolve;
- no argument the CLI would read from a file on the host (`@path`).

`az vm run-command invoke` never comes here: its script runs inside the named VM, through the gate (`apply.py`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ghost_eval.base.settings import DEFAULTS
from ghost_eval.lab.azcli import az, original_env
from ghost_eval.lab.errors import LabError
from ghost_eval.shell.calls import az_call

__all__ = ["ALLOWED", "AzOutcome", "run_az"]

ALLOWED: dict[tuple[str, ...], frozenset[str]] = {
    ("network", "nsg", "rule"): frozenset({"create", "update", "delete", "show", "list"}),
    ("network", "nsg"): frozenset({"show", "list"}),
    ("network", "route-table", "route"): frozenset({"create", "update", "delete", "show", "list"}),
    ("network", "route-table"): frozenset({"delete", "show", "list"}),
    ("network", "vnet", "subnet"): frozenset({"update", "show", "list"}),
    ("network", "nic"): frozenset({"show", "list", "show-effective-route-table", "list-effective-nsg"}),
    ("network", "watcher"): frozenset({"test-ip-flow"}),
}
"""Command group → the verbs a trial runs."""


@dataclass(frozen=True)
class AzOutcome:
    """What an az command did: its exit status and output, or why a trial does not run it."""

    executable: bool
    exit_status: int | None = None
    output: str = ""
    why: str = ""


def run_az(lab_dir: Path, argv: list[str], az_cache: Path = DEFAULTS.cache_dir) -> AzOutcome:
    """Run one `az` command (argv[0] is `az`) with the real CLI (its environment in `az_cache`) against the lab in
    `lab_dir`; a command outside `ALLOWED` is not executable, with why."""
    call = az_call(tuple(argv))
    if call is None:
        return AzOutcome(False, why="not an az command")
    if call.verb not in ALLOWED.get(call.groups, frozenset()):
        what = " ".join((*call.groups, call.verb))
        return AzOutcome(False, why=f"`az {what}` is not among the commands a trial runs (ghost_eval/trials/azcli.py)")
    if any(word.startswith("@") or "=@" in word for word in argv[1:]):
        return AzOutcome(False, why="an argument the CLI would read from a file on the host (@path)")
    try:
        proc = az(lab_dir, argv[1:], original_env(az_cache))
    except LabError as exc:
        return AzOutcome(True, 124, why=str(exc))
    error = next((line for line in proc.stderr.splitlines() if line.strip() and not line.startswith("WARNING")), "")
    return AzOutcome(True, proc.returncode, proc.stdout, why=error if proc.returncode else "")
