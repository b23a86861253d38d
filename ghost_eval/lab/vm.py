"""A lab VM's disk: the files it gets on top of the host's (its own /etc, units, daemons).

Everything a VM sees as its own is written into the upper layer of its root file system under the state folder
before it boots (see `sandbox`); nothing is written to the host's /etc or /usr/local. The VM gets its own sshd
configuration and host key (key-only login, `UsePAM no`), shadow tables without the host's hashes, /etc/hosts and
resolv.conf (lookups fail fast instead of hanging), fail2ban settings (sshd jail, polling backend, the management
subnet exempt), and the lab's daemons, units and init.
"""

from __future__ import annotations

import json
import os
import stat
import sys
import threading
from pathlib import Path

from ghost_eval.lab.layout import MGMT_PREFIX, STORAGE_ACCOUNTS, LabLayout, VmSpec
from ghost_eval.lab.sandbox import upper_dir
from ghost_eval.lab.vminit import BOOT_FILE

__all__ = ["INIT", "UNITS", "prepare_vm"]

INIT = "/usr/local/sbin/lab-init"
"""PID 1 of every VM (`vminit`)."""

_PROGRAMS = {
    "sbin/systemctl": ("ghost_eval.lab.units", "systemctl for the lab's units"),
    "sbin/ghost-shaper": ("ghost_eval.lab.shaper", "ghost-shaper: keeps the egress shaping of its config applied"),
    "sbin/harden-net": ("ghost_eval.lab.hardening", "harden-net: keeps the rules of /etc/iptables/rules.v4 in place"),
    "bin/dockerd": ("ghost_eval.lab.dockeremu", "dockerd (lab emulation): owns the DOCKER* iptables chains"),
    "sbin/lab-appd": ("ghost_eval.lab.appd", "lab-appd: stand-ins for the applications the cases talk about"),
    "sbin/lab-init": ("ghost_eval.lab.vminit", "lab-init: PID 1 of a lab VM"),
}

UNITS: dict[str, str] = {
    "ssh": """[Unit]
Description=OpenBSD Secure Shell server

[Service]
ExecStart=/usr/sbin/sshd -D -E /var/log/auth.log
ExecReload=/bin/kill -HUP $MAINPID
""",
    "fail2ban": """[Unit]
Description=Fail2Ban Service

[Service]
ExecStart=/usr/bin/fail2ban-server -xf start
ExecReload=/usr/bin/fail2ban-client reload
ExecStop=/usr/bin/fail2ban-client stop
""",
    "ghost-shaper": """[Unit]
Description=Ghost egress traffic shaper (re-applies /etc/ghost-shaper/shaper.conf)

[Service]
Type=notify
ExecStart=/usr/local/sbin/ghost-shaper --config /etc/ghost-shaper/shaper.conf
ExecReload=/bin/kill -HUP $MAINPID
""",
    "harden-net": """[Unit]
Description=Host firewall hardening (keeps /etc/iptables/rules.v4 applied)

[Service]
Type=notify
ExecStart=/usr/local/sbin/harden-net --watch --interval 600 --rules /etc/iptables/rules.v4
ExecReload=/bin/kill -HUP $MAINPID
""",
    "docker": """[Unit]
Description=Docker Application Container Engine (lab emulation: iptables chains only, no containers)

[Service]
Type=notify
ExecStart=/usr/local/bin/dockerd --config-file /etc/docker/daemon.json
""",
}

_SSHD_CONFIG = """# ghost-eval lab VM: key-only root login on port 22 (management and data path alike)
Port 22
ListenAddress 0.0.0.0
HostKey /etc/ssh/ssh_host_ed25519_key
PidFile /run/sshd.pid
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
PermitRootLogin prohibit-password
AuthorizedKeysFile /etc/ssh/authorized_keys/%u
StrictModes no
UseDNS no
PrintMotd no
MaxStartups 100:30:200
MaxSessions 100
Subsystem sftp internal-sftp
"""

_FAIL2BAN_JAIL = f"""# ghost-eval lab: the sshd jail reads sshd's own log; the management subnet is never banned.
# A ban covers every port and protocol (INPUT jumps to f2b-sshd for all traffic), the chain shape of case m.
[DEFAULT]
ignoreip = 127.0.0.1/8 {MGMT_PREFIX}.0.0/15

[sshd]
enabled = true
backend = polling
logpath = /var/log/auth.log
port = ssh
banaction = iptables-allports[protocol=all]
"""

_FAIL2BAN_DAEMON = """[Definition]
logtarget = /var/log/fail2ban.log
allowipv6 = auto
"""

_RESOLV = """# ghost-eval lab: no DNS server is reachable from the VMs; the lab's names are in /etc/hosts
nameserver 127.0.0.1
options timeout:1 attempts:1
"""


_FIREWALL_TABLES = [
    ["iptables", "-w", "-t", table, "-P", chain, "ACCEPT"]
    for table, chains in (("filter", ("INPUT", "FORWARD", "OUTPUT")), ("nat", ("PREROUTING", "INPUT", "OUTPUT", "POSTROUTING")))
    for chain in chains
]
"""A VM boots with empty filter and nat tables, as a fresh Linux VM with iptables does; recipes add to them."""


def _write(path: Path, text: str, mode: int = 0o644) -> None:
    """Write beside, then rename: a program another VM is starting (`bin/lab-init` is shared) is never open for
    writing, which would fail its exec with "Text file busy", nor read half-written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    staged = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}")
    staged.write_text(text, encoding="utf-8")
    staged.chmod(mode)
    os.replace(staged, path)


def _whiteout(upper: Path, relative: str) -> None:
    """Hide a host file inside the VM (an overlay whiteout is a 0:0 character device)."""
    target = upper / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    if not target.exists():
        os.mknod(target, stat.S_IFCHR | 0o000, os.makedev(0, 0))


def _without_hashes(table: Path) -> str | None:
    """The host's shadow table with every password hash replaced by `*` (a lock `!` kept): the VM keeps its accounts,
    never the host's hashes, which VM root would otherwise read through the id-mapped lower layer."""
    if not table.is_file():
        return None
    lines = []
    for line in table.read_text(encoding="utf-8", errors="replace").splitlines():
        fields = line.split(":")
        if len(fields) > 1 and fields[1]:
            fields[1] = "!" if fields[1].startswith("!") else "*"
        lines.append(":".join(fields))
    return "\n".join(lines) + "\n"


def _program(module: str, about: str) -> str:
    return f'#!{sys.executable}\n"""{about}."""\nimport sys\n\nfrom {module} import main\n\nsys.exit(main())\n'


def _hosts(layout: LabLayout, vm: VmSpec) -> str:
    lines = ["127.0.0.1\tlocalhost", f"127.0.1.1\t{vm.name}"]
    lines += [f"{other.address}\t{other.name}" for other in layout.vms]
    lines += [f"{address}\t{name}.blob.core.windows.net" for name, address in STORAGE_ACCOUNTS.items()]
    return "\n".join(lines) + "\n"


def prepare_vm(layout: LabLayout, vm: VmSpec, client_public_key: str, host_key: Path) -> None:
    """Write the VM's own files into the upper layer of its root file system."""
    upper = upper_dir(layout, vm)
    upper.mkdir(parents=True, exist_ok=True)
    upper.chmod(0o755)
    etc, usr_local = upper / "etc", upper / "usr" / "local"
    for table in ("shadow", "gshadow"):
        if (text := _without_hashes(Path("/etc") / table)) is not None:
            _write(etc / table, text, 0o640)
    _write(etc / "hostname", f"{vm.name}\n")
    _write(etc / "hosts", _hosts(layout, vm))
    _write(etc / "resolv.conf", _RESOLV)
    _write(etc / "ssh" / "sshd_config", _SSHD_CONFIG)
    _write(etc / "ssh" / "ssh_host_ed25519_key", host_key.read_text(), 0o600)
    _write(etc / "ssh" / "ssh_host_ed25519_key.pub", Path(f"{host_key}.pub").read_text())
    for other in Path("/etc/ssh").glob("ssh_host_*"):
        if not other.name.startswith("ssh_host_ed25519_key"):
            _whiteout(etc, f"ssh/{other.name}")
    _write(etc / "ssh" / "authorized_keys" / "root", client_public_key, 0o600)
    _write(etc / "fail2ban" / "jail.d" / "zz-ghost-lab.local", _FAIL2BAN_JAIL)
    _write(etc / "fail2ban" / "fail2ban.d" / "zz-ghost-lab.local", _FAIL2BAN_DAEMON)
    units = dict(UNITS)
    if vm.app_ports:
        ports = " ".join(f"--port {p}" for p in vm.app_ports)
        units["lab-appd"] = (
            "[Unit]\nDescription=Lab application stand-ins (web, PostgreSQL, Redis, iperf3)\n\n"
            f"[Service]\nExecStart=/usr/local/sbin/lab-appd {ports}\n"
        )
    for name, text in units.items():
        _write(etc / "systemd" / "system" / f"{name}.service", text)
    for relative, (module, about) in _PROGRAMS.items():
        _write(usr_local / relative, _program(module, about), 0o755)
    boot = {"hostname": vm.name, "units": list(vm.boot_units), "commands": _FIREWALL_TABLES}
    _write(upper / BOOT_FILE.lstrip("/"), json.dumps(boot, indent=2))
