"""Recognising the daemons that own firewall and shaping state from a VM's process list (no lab needed)."""

from __future__ import annotations

from ghost_eval.live.snapshot import daemons_of
from ghost_eval.run.snapshot import OwnedResource

_IPTABLES = """*filter
:INPUT ACCEPT [0:0]
:FORWARD DROP [0:0]
:DOCKER - [0:0]
:DOCKER-ISOLATION-STAGE-1 - [0:0]
:DOCKER-USER - [0:0]
:f2b-sshd - [0:0]
:f2b-recidive - [0:0]
COMMIT
"""
_FILES = {
    "cat /opt/shaper.conf": "interval = 60\n[eth1]\nqdisc = htb default 10\n[eth0]\nqdisc = tbf rate 1mbit burst 4kb limit 8kb\n",
    "cat /etc/iptables/rules.v4": "*filter\n:INPUT ACCEPT [0:0]\n-A INPUT -p tcp --dport 5001 -j DROP\n"
    "-A OUTPUT -p tcp --dport 80 -j DROP\nCOMMIT\n",
    "fail2ban-client status": "Status\n|- Number of jail:\t2\n`- Jail list:\tsshd, nginx-http-auth\n",
}
_PS = """systemd         /sbin/init
fail2ban-server /usr/bin/python3 /usr/bin/fail2ban-server -xf start
dockerd         /usr/bin/dockerd -H fd://
ghost-shaper    /usr/bin/python3 /usr/local/sbin/ghost-shaper --config /opt/shaper.conf
ghost-shaper    /usr/bin/python3 /usr/local/sbin/ghost-shaper --config /opt/shaper.conf
harden-net      /usr/bin/python3 /usr/local/sbin/harden-net --watch
sshd            sshd: /usr/sbin/sshd -D
"""


def test_owning_daemons_and_what_they_own() -> None:
    reads: list[str] = []

    def read(command: str) -> str | None:
        reads.append(command)
        return _FILES.get(command)

    daemons = {d.name: d for d in daemons_of(_PS, _IPTABLES, read)}
    assert list(daemons) == ["fail2ban-server", "dockerd", "ghost-shaper", "harden-net"]
    assert [o.name for o in daemons["fail2ban-server"].owns if o.kind == "iptables_chain"] == [
        "f2b-nginx-http-auth",
        "f2b-recidive",
        "f2b-sshd",
    ]
    assert [o.name for o in daemons["dockerd"].owns] == ["DOCKER", "DOCKER-ISOLATION-STAGE-1"]
    assert daemons["ghost-shaper"].owns == [
        OwnedResource(kind="tc_qdisc", name="eth1"),
        OwnedResource(kind="tc_qdisc", name="eth0"),
    ]
    assert daemons["ghost-shaper"].managed_via == "/opt/shaper.conf + systemctl reload ghost-shaper"
    assert [o.name for o in daemons["harden-net"].owns] == ["/etc/iptables/rules.v4", "INPUT", "OUTPUT"]
    assert reads.count("cat /opt/shaper.conf") == 1  # a daemon seen twice is described once


def test_unreadable_daemon_config_still_names_the_daemon() -> None:
    daemons = daemons_of("ghost-shaper /usr/local/sbin/ghost-shaper\n", "", lambda command: None)
    assert [(d.name, d.owns) for d in daemons] == [("ghost-shaper", [])]
