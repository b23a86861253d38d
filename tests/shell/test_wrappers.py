"""Unwrapping: each wrapper's own options and operands are skipped (attached, separate or long forms), the wrappers
are kept on the command, and a wrapper that runs nothing else is the command itself."""

from __future__ import annotations

import pytest

from ghost_eval.shell.commands import looks_like_command, parse_command_block


@pytest.mark.parametrize(
    ("command", "wrappers"),
    [
        ("sudo -uroot iptables -F INPUT", [("sudo", "-uroot")]),
        ("sudo --user root -- iptables -F INPUT", [("sudo", "--user", "root", "--")]),
        ("sudo -nEu root iptables -F INPUT", [("sudo", "-nEu", "root")]),
        ("doas -u root iptables -F INPUT", [("doas", "-u", "root")]),
        ("env -i PATH=/sbin iptables -F INPUT", [("env", "-i"), ("PATH=/sbin",)]),
        ("env --unset HOME iptables -F INPUT", [("env", "--unset", "HOME")]),
        ("stdbuf --output=L iptables -F INPUT", [("stdbuf", "--output=L")]),
        ("nice -n-5 iptables -F INPUT", [("nice", "-n-5")]),
        ("ionice -c3 iptables -F INPUT", [("ionice", "-c3")]),
        ("timeout --preserve-status 10s iptables -F INPUT", [("timeout", "--preserve-status", "10s")]),
        ("time -p iptables -F INPUT", [("time", "-p")]),
        ("setsid -f iptables -F INPUT", [("setsid", "-f")]),
        ("xargs -I{} iptables -F INPUT", [("xargs", "-I{}")]),
        ("xargs --max-args 1 iptables -F INPUT", [("xargs", "--max-args", "1")]),
        ("ip -all netns exec iptables -F INPUT", [("ip", "-all", "netns", "exec")]),
        ("/usr/bin/sudo /usr/bin/env iptables -F INPUT", [("/usr/bin/sudo",), ("/usr/bin/env",)]),
        ("sudo bash -o pipefail -c 'iptables -F INPUT'", [("sudo",), ("bash", "-o", "pipefail", "-c")]),
        ("ssh -p 2222 vm sudo iptables -F INPUT", [("ssh", "-p", "2222", "vm"), ("sudo",)]),
        ("watch -n 1 iptables -F INPUT", [("watch", "-n", "1")]),
        ("eval 'iptables -F INPUT'", [("eval",)]),
    ],
)
def test_wrappers_are_kept_outermost_first_with_their_own_words(command: str, wrappers: list[tuple[str, ...]]) -> None:
    (cmd,) = parse_command_block(command)
    assert cmd.argv == ("iptables", "-F", "INPUT") and cmd.mutating
    assert list(cmd.wrappers) == wrappers


def test_commands_inside_a_shell_script_carry_the_wrappers_around_it() -> None:
    flush, show = parse_command_block("sudo bash -c 'iptables -F f2b-sshd; tc qdisc show'")
    assert (flush.program, show.program) == ("iptables", "tc")
    assert flush.wrappers == show.wrappers == (("sudo",), ("bash", "-c"))


@pytest.mark.parametrize(
    ("command", "program"),
    [
        ("command -v iptables", "command"),
        ("sudo -l iptables -F INPUT", "sudo"),
        ("sudo", "sudo"),
        ("timeout 5", "timeout"),
        ("xargs", "xargs"),
        ("bash", "bash"),
        ("bash -c ''", "bash"),
        ("ssh root@10.0.1.4", "ssh"),
        ("ssh root@10.0.1.4 ''", "ssh"),
    ],
)
def test_a_wrapper_that_runs_nothing_else_is_the_command(command: str, program: str) -> None:
    (cmd,) = parse_command_block(command)
    assert cmd.program == program and not cmd.mutating


def test_an_ip_command_is_not_a_wrapper_unless_it_is_netns_exec() -> None:
    (own,) = parse_command_block("ip -n vm1 link show")
    (inner,) = parse_command_block("ip netns exec vm1 ip link set eth0 up")
    assert own.argv == ("ip", "-n", "vm1", "link", "show")
    assert inner.argv == ("ip", "link", "set", "eth0", "up")


@pytest.mark.parametrize("span", ["sudo -u root iptables -L f2b-sshd", "timeout -s KILL 5 nft list ruleset", "env -i tc qdisc"])
def test_backticked_commands_behind_wrappers_look_like_commands(span: str) -> None:
    assert looks_like_command(span)
