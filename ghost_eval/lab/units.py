"""Services inside a lab VM, and the `systemctl` the VM offers for them (the lab has no systemd).

A unit is a small systemd-style file in the VM's /etc/systemd/system (`Description`, `ExecStart`, optional
`ExecReload`/`ExecStop`). `systemctl start|stop|restart|reload|status|is-active|cat|list-units` work on those
units the way an operator expects, so fault recipes start a shaping daemon with `systemctl start ghost-shaper`
as they would on a real VM, and an agent finds who owns a qdisc with `systemctl status ghost-shaper`.
The VM's init starts its boot units through the same code.
"""

from __future__ import annotations

import configparser
import contextlib
import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

__all__ = ["READY_ENV", "UNIT_DIR", "Unit", "load_unit", "main", "start_unit", "stop_unit"]

UNIT_DIR = Path("/etc/systemd/system")
_RUN_DIR = Path("/run/lab-units")
_LOG_DIR = Path("/var/log")
READY_ENV = "LAB_READY_FILE"
"""Set for `Type=notify` units: the file the daemon creates once its first pass is applied."""
_ENV = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8", "HOME": "/root"}


@dataclass(frozen=True)
class Unit:
    name: str
    path: Path
    description: str
    exec_start: list[str]
    exec_reload: list[str] | None
    exec_stop: list[str] | None
    notify: bool = False
    """`Type=notify`: `start` waits until the daemon says it applied its state (see `READY_ENV`)."""


def _unit_name(name: str) -> str:
    return name.removesuffix(".service")


def load_unit(name: str, unit_dir: Path = UNIT_DIR) -> Unit | None:
    path = unit_dir / f"{_unit_name(name)}.service"
    if not path.is_file():
        return None
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read(path, encoding="utf-8")
    service = parser["Service"] if parser.has_section("Service") else {}
    if "ExecStart" not in service:
        return None

    def argv(key: str) -> list[str] | None:
        return shlex.split(service[key].lstrip("-")) if key in service else None

    return Unit(
        _unit_name(name),
        path,
        parser.get("Unit", "Description", fallback=_unit_name(name)),
        argv("ExecStart") or [],
        argv("ExecReload"),
        argv("ExecStop"),
        service.get("Type") == "notify",
    )


def _pidfile(unit: Unit) -> Path:
    return _RUN_DIR / f"{unit.name}.pid"


def _ready_file(unit: Unit) -> Path:
    return _RUN_DIR / f"{unit.name}.ready"


def _main_pid(unit: Unit) -> int | None:
    try:
        pid = int(_pidfile(unit).read_text().strip())
    except (OSError, ValueError):
        return None
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return None if stat.rsplit(")", 1)[-1].split()[0] == "Z" else pid


def start_unit(unit: Unit) -> int:
    """Start the unit's main process detached, logging to /var/log/<unit>.log; returns its pid."""
    running = _main_pid(unit)
    if running:
        return running
    _RUN_DIR.mkdir(parents=True, exist_ok=True)
    _ready_file(unit).unlink(missing_ok=True)
    env = dict(_ENV, **({READY_ENV: str(_ready_file(unit))} if unit.notify else {}))
    with (_LOG_DIR / f"{unit.name}.log").open("ab") as log:
        proc = subprocess.Popen(
            unit.exec_start,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            close_fds=True,
            env=env,
            cwd="/",
        )
    _pidfile(unit).write_text(f"{proc.pid}\n")
    return proc.pid


def _run_hook(argv: list[str], pid: int | None) -> int:
    expanded = [a.replace("$MAINPID", str(pid or "")) for a in argv]
    return subprocess.run(expanded, env=_ENV, check=False).returncode


def stop_unit(unit: Unit, grace: float = 5.0) -> None:
    pid = _main_pid(unit)
    if unit.exec_stop and pid:
        _run_hook(unit.exec_stop, pid)
    if pid:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while _main_pid(unit) and time.monotonic() < deadline:
            time.sleep(0.05)
        if _main_pid(unit):
            os.kill(pid, signal.SIGKILL)
    _pidfile(unit).unlink(missing_ok=True)
    _ready_file(unit).unlink(missing_ok=True)


def _started(unit: Unit, pid: int, timeout: float = 10.0) -> bool:
    """Whether the process is still up (and, for a notify unit, has said it is ready)."""
    deadline = time.monotonic() + (timeout if unit.notify else 0.2)
    while time.monotonic() < deadline:
        if _main_pid(unit) != pid:
            return False
        if unit.notify and _ready_file(unit).exists():
            return True
        time.sleep(0.05)
    return _main_pid(unit) == pid and (not unit.notify or _ready_file(unit).exists())


def _status(unit: Unit) -> int:
    pid = _main_pid(unit)
    print(f"{'●' if pid else '○'} {unit.name}.service - {unit.description}")
    print(f"     Loaded: loaded ({unit.path}; enabled; preset: enabled)")
    if pid:
        since = datetime.fromtimestamp(_pidfile(unit).stat().st_mtime, tz=UTC)
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        comm = Path(f"/proc/{pid}/comm").read_text().strip()
        print(f"     Active: active (running) since {since:%a %Y-%m-%d %H:%M:%S} UTC")
        print(f"   Main PID: {pid} ({comm})")
        print(f"     CGroup: /system.slice/{unit.name}.service")
        print(f"             └─{pid} {cmdline}")
    else:
        print("     Active: inactive (dead)")
    log = _LOG_DIR / f"{unit.name}.log"
    if log.exists():
        tail = log.read_text(errors="replace").splitlines()[-10:]
        if tail:
            print()
            print("\n".join(tail))
    return 0 if pid else 3


def _list_units() -> int:
    rows = []
    for path in sorted(UNIT_DIR.glob("*.service")):
        unit = load_unit(path.stem)
        if unit is not None and _main_pid(unit):
            rows.append(f"  {unit.name}.service".ljust(32) + f"loaded active running {unit.description}")
    print("  UNIT".ljust(32) + "LOAD   ACTIVE SUB     DESCRIPTION")
    print("\n".join(rows))
    print(f"\n{len(rows)} loaded units listed.")
    return 0


def _act(verb: str, unit: Unit) -> int:
    if verb == "start":
        if not _started(unit, start_unit(unit)):
            print(f"Job for {unit.name}.service failed. See 'systemctl status {unit.name}.service'.", file=sys.stderr)
            return 1
        return 0
    if verb == "stop":
        stop_unit(unit)
        return 0
    if verb == "restart":
        stop_unit(unit)
        return _act("start", unit)
    if verb == "reload":
        main_pid = _main_pid(unit)
        if not main_pid or not unit.exec_reload:
            why = "no ExecReload" if main_pid else "unit is not active"
            print(f"Failed to reload {unit.name}.service: {why}.", file=sys.stderr)
            return 1
        return _run_hook(unit.exec_reload, main_pid)
    if verb == "status":
        return _status(unit)
    if verb == "is-active":
        active = _main_pid(unit) is not None
        print("active" if active else "inactive")
        return 0 if active else 3
    if verb == "cat":
        print(f"# {unit.path}")
        print(unit.path.read_text(), end="")
        return 0
    if verb in ("enable", "disable"):
        return 0
    print(f"systemctl (lab): unknown command '{verb}'", file=sys.stderr)
    return 1


def main(argv: Sequence[str] | None = None) -> int:
    """`systemctl VERB [UNIT…]` for the lab's units."""
    args = [a for a in (sys.argv[1:] if argv is None else argv) if not a.startswith("-")]
    if not args or args[0] == "list-units":
        return _list_units()
    if args[0] == "daemon-reload":
        return 0
    verb, names = args[0], args[1:]
    if not names:
        print(f"Too few arguments for '{verb}'.", file=sys.stderr)
        return 1
    rc = 0
    for name in names:
        unit = load_unit(name)
        if unit is None:
            print(f"Unit {_unit_name(name)}.service could not be found.", file=sys.stderr)
            rc = 4 if verb in ("status", "cat") else 5
            continue
        rc = max(rc, _act(verb, unit))
    return rc
