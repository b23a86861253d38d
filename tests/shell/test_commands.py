from __future__ import annotations

import shlex

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ghost_eval.cases.case import Layer
from ghost_eval.shell.calls import az_call, iptables_call, nft_call, tc_call
from ghost_eval.shell.checks import inspected_layer
from ghost_eval.shell.commands import (
    Command,
    _tokenise,
    has_prompt,
    looks_like_command,
    parse_command_block,
    split_commands,
    strip_prompt,
)


def one(command: str) -> Command:
    parsed = parse_command_block(command)
    assert len(parsed) == 1, parsed
    return parsed[0]


def test_split_joins_continuations_drops_comments_and_keeps_heredoc_bodies_with_their_command() -> None:
    """What a here-document writes is part of its command (a jail file's whole `ignoreip = …`), never a command of its
    own: the `iptables -F` inside it is no flush."""
    block = """# unban first
sudo fail2ban-client set sshd \\
    unbanip 203.0.113.47
cat <<EOF > /etc/fail2ban/jail.d/partner.local
iptables -F
EOF
sudo fail2ban-client reload"""
    assert split_commands(block) == [
        "sudo fail2ban-client set sshd      unbanip 203.0.113.47",
        "cat <<EOF > /etc/fail2ban/jail.d/partner.local\niptables -F\nEOF",
        "sudo fail2ban-client reload",
    ]
    assert [c.program for c in parse_command_block(block)] == ["fail2ban-client", "cat", "fail2ban-client"]
    wrapped = "bash -c 'cat <<EOF > /etc/fail2ban/jail.d/partner.local\niptables -F\nEOF'"
    assert [c.program for c in parse_command_block(wrapped)] == ["cat"]


def test_a_block_splits_on_operators_and_unwraps_sudo() -> None:
    parsed = parse_command_block("sudo iptables -D f2b-sshd 1 && sudo iptables -L f2b-sshd -n; echo done")
    assert [c.program for c in parsed] == ["iptables", "iptables", "echo"]
    assert [c.mutating for c in parsed] == [True, False, False]
    assert parsed[0].argv == ("iptables", "-D", "f2b-sshd", "1")


def test_a_loop_over_plain_words_runs_its_body_once_per_word() -> None:
    block = 'for c in DOCKER DOCKER-USER; do\n  sudo iptables -F "$c"\ndone; iptables -F FORWARD'
    assert [c.argv for c in parse_command_block(block)] == [
        ("iptables", "-F", "DOCKER"),
        ("iptables", "-F", "DOCKER-USER"),
        ("iptables", "-F", "FORWARD"),
    ]
    assert looks_like_command("for c in A B; do iptables -F ${c}; done")
    globbed = parse_command_block("for f in /etc/*.conf; do cat $f; done")
    assert ("cat", "$f") in [c.argv for c in globbed], "a list that is not plain words is left as written"


def test_subshells_host_prompts_and_spaced_placeholders() -> None:
    sub = parse_command_block("(curl -s http://10.0.1.5:7070/slow &) ; curl -s http://10.0.1.5:7070/")
    assert [c.argv[0] for c in sub] == ["curl", "curl"] and looks_like_command("(curl -s http://x/ &)")
    assert has_prompt("tf-source-vm$ tc qdisc show dev eth0") and strip_prompt("tf-dest-vm:~$ iptables -S") == "iptables -S"
    (flush,) = parse_command_block("ssh azureuser@<tf-source-vm public IP> 'sudo iptables -F OUTPUT'")
    assert flush.argv == ("iptables", "-F", "OUTPUT")
    assert parse_command_block("sort <in.txt >out.txt")[0].writes == ("out.txt",), "redirections stay redirections"


@pytest.mark.parametrize(("command", "mutating"), [("iptables $rule", True), ("iptables -S $chain", False)])
def test_iptables_given_its_command_in_a_variable_may_change_anything(command: str, mutating: bool) -> None:
    """`iptables $r` in a loop runs whatever the variable holds: the gate and the scorer take it for a change."""
    (parsed,) = parse_command_block(command)
    assert parsed.mutating is mutating


@pytest.mark.parametrize(("command", "mutating"), [("ethtool -K eth0 gro off", True), ("ethtool -k eth0", False)])
def test_ethtool_settings_are_changes_and_listings_are_not(command: str, mutating: bool) -> None:
    (parsed,) = parse_command_block(command)
    assert parsed.mutating is mutating


@pytest.mark.parametrize(
    ("command", "mutating"),
    [
        ("netplan apply", True),
        ("netplan try", True),
        ("netplan get", False),
        ("crontab -r", True),
        ("crontab -l", False),
        ("systemctl reboot", True),
        ("poweroff", True),
    ],
)
def test_host_wide_changes_are_changes_and_their_reads_are_not(command: str, mutating: bool) -> None:
    assert one(command).mutating is mutating


def test_a_reboot_alone_is_a_command_and_other_single_words_are_names() -> None:
    assert looks_like_command("sudo reboot") and looks_like_command("reboot")
    assert not looks_like_command("iptables") and not looks_like_command("sudo iptables")


def test_pipes_into_tee_write_the_file() -> None:
    echo, tee = parse_command_block('echo "ignoreip = 203.0.113.47" | sudo tee -a /etc/fail2ban/jail.local')
    assert not echo.mutating
    assert tee.mutating and tee.writes == ("/etc/fail2ban/jail.local",)


def test_redirections_write_files_but_not_dev_null() -> None:
    assert one("echo 1 > /proc/sys/net/ipv4/ip_forward").writes == ("/proc/sys/net/ipv4/ip_forward",)
    quiet = one("iptables -L -n 2>/dev/null")
    assert quiet.writes == () and not quiet.mutating and quiet.argv == ("iptables", "-L", "-n")


@pytest.mark.parametrize("arrow", ["-->", "->", "=>", "\u2192"])
def test_an_arrow_after_a_command_leads_its_expected_result_not_a_redirection(arrow: str) -> None:
    check = one(f"curl -s -o /dev/null -w '%{{http_code}}' -m 5 http://10.0.1.5:8080/ {arrow} expect 200")
    assert not check.mutating and check.writes == () and check.argv[-1] == "http://10.0.1.5:8080/"
    assert one("echo 'a -> b' > /tmp/f").writes == ("/tmp/f",)


def test_sed_in_place_writes_its_files_not_its_script() -> None:
    assert one("sudo sed -i '/5001/d' /etc/iptables/rules.v4").writes == ("/etc/iptables/rules.v4",)
    assert one("sed -e 's/a/b/' -i /etc/a.conf /etc/b.conf").writes == ("/etc/a.conf", "/etc/b.conf")
    assert not one("sed -n '1,5p' /etc/iptables/rules.v4").mutating


@pytest.mark.parametrize(
    "wrapped",
    [
        "ssh -i key.pem azureuser@10.0.1.5 'sudo iptables -F INPUT'",
        "bash -c 'iptables -F INPUT'",
        "timeout 10 sudo iptables -F INPUT",
        "az vm run-command invoke -g rg -n tf-dest-vm --command-id RunShellScript --scripts 'iptables -F INPUT'",
    ],
)
def test_wrappers_are_scored_by_the_command_they_run(wrapped: str) -> None:
    cmd = one(wrapped)
    assert cmd.argv == ("iptables", "-F", "INPUT")
    assert cmd.mutating and cmd.layer is Layer.OS


@pytest.mark.parametrize(
    "command",
    [
        "iptables -L -n -v",
        "iptables -nvL INPUT",
        "iptables -S f2b-sshd",
        "iptables-save",
        "nft list ruleset",
        "tc qdisc show dev eth0",
        "tc -s qdisc",
        "ip route show",
        "ip -s link",
        "ss -tlnp",
        "ping -c 3 10.0.1.5",
        "curl -sS http://10.0.1.5:8080/",
        "fail2ban-client status sshd",
        "fail2ban-client get sshd banned",
        "systemctl status fail2ban",
        "journalctl -u fail2ban",
        "firewall-cmd --list-all",
        "ufw status verbose",
        "docker ps",
        "docker network inspect bridge",
        "sysctl net.ipv4.ip_forward",
        "sysctl -a",
        "sysctl -n net.ipv4.tcp_congestion_control",
        "conntrack -L",
        "az network nsg rule list -g rg --nsg-name nsg",
        "az network nic show-effective-route-table -g rg -n nic",
        "az network nic list-effective-nsg -g rg -n nic",
        "az network watcher test-ip-flow --direction Inbound",
        "az login",
        "az account show",
        "Get-AzEffectiveRouteTable -NetworkInterfaceName nic",
        "netfilter-persistent --help",
        "iptables -Z DOCKER-ISOLATION-STAGE-2",  # zeroes counters so a check can count anew; no rule changes
        "iptables -L DOCKER-ISOLATION-STAGE-2 -n -v -Z",
        "iptables-restore --test /etc/iptables/rules.v4",  # only parses and builds the ruleset, commits nothing
        "ip6tables-restore -nt < /etc/iptables/rules.v6",
        "nft -c -f /etc/nftables.conf",  # --check: validity only
    ],
)
def test_reads_are_not_mutating(command: str) -> None:
    assert not any(c.mutating for c in parse_command_block(command)), command


@pytest.mark.parametrize(
    "command",
    [
        "iptables -A INPUT -p tcp --dport 22 -j ACCEPT",
        "iptables -D f2b-sshd 1",
        "iptables -F",
        "iptables -P INPUT ACCEPT",
        "iptables -t nat -X",
        "iptables-restore < /etc/iptables/rules.v4",
        "iptables-restore -n /etc/iptables/rules.v4",
        "nft flush ruleset",
        "nft add rule inet filter input tcp dport 22 accept",
        "nft -f /etc/nftables.conf",
        "tc qdisc del dev eth0 root",
        "tc qdisc replace dev eth0 root pfifo_fast",
        "ip route add 10.0.1.5/32 via 10.0.1.1",
        "ip link set eth0 up",
        "fail2ban-client set sshd unbanip 203.0.113.47",
        "fail2ban-client reload",
        "systemctl restart fail2ban",
        "service fail2ban stop",
        "firewall-cmd --add-port=8080/tcp",
        "ufw allow 8080/tcp",
        "docker restart web",
        "sysctl -w net.ipv4.ip_forward=1",
        "sysctl --system",  # loads every file of /etc/sysctl.d and /etc/sysctl.conf
        "sysctl -p /etc/sysctl.d/90-net-tuning.conf",
        "sysctl -qp",
        "sysctl --load=/etc/sysctl.d/90-net-tuning.conf",
        "conntrack -F",
        "az network nsg rule delete -g rg --nsg-name nsg -n rule",
        "az network vnet subnet update -g rg --vnet-name v -n default --service-endpoints Microsoft.Storage",
        "Set-AzNetworkSecurityGroup -NetworkSecurityGroup $nsg",
        "vi /etc/fail2ban/jail.local",
        "kill 1234",
        "netfilter-persistent save",
        "netfilter-persistent reload",
    ],
)
def test_writes_are_mutating(command: str) -> None:
    assert any(c.mutating for c in parse_command_block(command)), command


def test_layers() -> None:
    assert one("az network nic show-effective-route-table -g rg -n nic").layer is Layer.CONTROL_PLANE
    assert one("Get-AzEffectiveRouteTable -NetworkInterfaceName nic").layer is Layer.CONTROL_PLANE
    assert one("sudo tc qdisc show dev eth0").layer is Layer.OS
    assert inspected_layer(one("ss -tlnp")) is Layer.OS
    assert inspected_layer(one("az network nsg show -n nsg")) is Layer.CONTROL_PLANE
    assert inspected_layer(one("echo hello")) is None


def test_az_call_expands_short_options_and_keeps_every_value() -> None:
    call = az_call(
        one(
            "az network vnet subnet update -g rg --vnet-name v -n default "
            "--service-endpoints Microsoft.Sql Microsoft.Storage --output=json"
        ).argv
    )
    assert call is not None
    assert call.groups == ("network", "vnet", "subnet") and call.verb == "update"
    assert call.options["--service-endpoints"] == ("Microsoft.Sql", "Microsoft.Storage")
    assert call.value("--name") == "default" and call.value("--resource-group") == "rg"
    assert call.options["--output"] == ("json",)


def test_an_az_read_verb_ends_the_command_path() -> None:
    """Messy output runs prose on after a bare command; az has no command below a read verb, so the words after it are
    not more of its path (and a read stays a read)."""
    command = one("az network nic list-effective-nsg for dest nic")
    call = az_call(command.argv)
    assert call is not None and call.groups == ("network", "nic") and call.verb == "list-effective-nsg"
    assert not command.mutating
    assert one("az network nsg rule delete -g rg --nsg-name n -n r").mutating


def test_iptables_call_reads_combined_flags_policy_and_jump() -> None:
    listing = iptables_call(one("iptables -nvL INPUT").argv)
    assert listing is not None and listing.op == "L" and listing.chain == "INPUT"
    policy = iptables_call(one("iptables -P INPUT ACCEPT").argv)
    assert policy is not None and (policy.op, policy.chain, policy.policy) == ("P", "INPUT", "ACCEPT")
    rule = iptables_call(one("iptables -t filter -I DOCKER-USER -s 10.0.1.4 -p tcp --dport 8080 -j ACCEPT").argv)
    assert rule is not None and (rule.op, rule.chain, rule.target) == ("I", "DOCKER-USER", "ACCEPT")
    assert rule.matches == {"-s": "10.0.1.4", "-p": "tcp", "--dport": "8080"}
    inverted = iptables_call(one("iptables -I DOCKER-USER 1 ! -i docker0 -s 10.0.1.4 -j ACCEPT").argv)
    assert inverted is not None and inverted.matches == {"-i": "!docker0", "-s": "10.0.1.4"}  # `!` inverts its match


def test_tc_and_nft_calls() -> None:
    tc = tc_call(one("tc qdisc del dev eth0 root").argv)
    assert tc is not None and (tc.obj, tc.verb, tc.dev, tc.root) == ("qdisc", "del", "eth0", True)
    nft = nft_call(one("nft delete rule inet f2b-table f2b-chain handle 7").argv)
    assert nft is not None and (nft.verb, nft.obj, nft.table, nft.chain) == ("delete", "rule", "f2b-table", "f2b-chain")


def test_prompts() -> None:
    assert strip_prompt("$ sudo iptables -L") == "sudo iptables -L"
    assert strip_prompt("azureuser@tf-dest-vm:~$ ss -tlnp") == "ss -tlnp"
    assert has_prompt("$ ls") and has_prompt("root@vm:~# ls")
    assert not has_prompt("# a comment") and not has_prompt("Chain INPUT (policy ACCEPT)")
    assert strip_prompt("(tf-dest-vm) tc qdisc del dev eth0 root") == "tc qdisc del dev eth0 root"
    assert [c.program for c in parse_command_block("(tf-dest-vm) tc qdisc del dev eth0 root ; iptables -F X")] == [
        "tc",
        "iptables",
    ]
    assert strip_prompt("(cd /tmp && ls)") == "(cd /tmp && ls)"  # a subshell, not a label
    assert strip_prompt("tf-dest-vm:   iptables -D INPUT 1") == "iptables -D INPUT 1"  # a VM named as the line's label
    assert strip_prompt("fix: iptables -D INPUT 1") == "fix: iptables -D INPUT 1"  # a label that names no VM stays


@pytest.mark.parametrize(
    ("span", "expected"),
    [
        ("iptables -L f2b-sshd", True),
        ("sudo fail2ban-client status sshd", True),
        ("$ tc qdisc show dev eth0", True),
        ("az network nsg rule list", True),
        ("f2b-sshd", False),
        ("Microsoft.Storage", False),
        ("203.0.113.47", False),
        ("tc", False),
        ("REJECT all -- 203.0.113.47", False),
        # bash's /dev/tcp: a connection attempt, even as a loop's `bash -c` over ports
        ('for p in 5432 6379; do timeout 3 bash -c "cat < /dev/tcp/10.0.1.5/$p"; echo; done', True),
        ("/dev/tcp", False),
    ],
)
def test_looks_like_command(span: str, expected: bool) -> None:
    assert looks_like_command(span) is expected


_SHELLISH = st.text(alphabet="ab -=/.\"'\\;|&<>$", max_size=40)


@given(_SHELLISH)
def test_tokeniser_agrees_with_shlex(line: str) -> None:
    lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|<>")
    lexer.whitespace_split = True
    try:
        expected = list(lexer)
    except ValueError:
        return  # unbalanced quotes: shlex refuses, the scorer keeps going
    assert _tokenise(line) == expected


@given(st.text(max_size=200))
def test_parsing_never_raises(block: str) -> None:
    for cmd in parse_command_block(block):
        assert cmd.argv and cmd.program


def test_the_command_inside_a_compound_body_is_what_runs() -> None:
    loop = parse_command_block('for dev in $(ls /sys/class/net); do sudo tc qdisc del dev "$dev" root; done')
    assert [(c.program, c.mutating) for c in loop if c.program == "tc"] == [("tc", True)]
    guarded = parse_command_block("if iptables -C INPUT -j DROP; then iptables -D INPUT -j DROP; fi")
    assert [c.argv[:2] for c in guarded if c.program == "iptables"] == [("iptables", "-C"), ("iptables", "-D")]


def test_a_placeholder_in_angle_brackets_is_a_value_not_redirections() -> None:
    (cmd,) = parse_command_block("sudo iptables -C DOCKER-USER -d <service-ip> -p tcp --dport <port> -j ACCEPT")
    assert not cmd.mutating and cmd.writes == () and "{service-ip}" in cmd.argv


def test_a_substitution_is_one_word_of_its_command_and_a_command_of_its_own() -> None:
    """`-n $(az vm show … | xargs basename)`: the pipe inside does not cut the outer command in two."""
    block = (
        "az network nic update -g rg -n $(az vm show -g rg -n tf-dest-vm --query id -o tsv | xargs basename) "
        "--remove networkSecurityGroup"
    )
    outer, *inner = parse_command_block(block)
    assert outer.argv[-2:] == ("--remove", "networkSecurityGroup") and outer.mutating
    assert [c.program for c in inner] == ["az", "basename"] and not any(c.mutating for c in inner)
    assert looks_like_command("IF=$(ip route show default | awk '{print $5}'); tc qdisc del dev \"$IF\" root")


@pytest.mark.parametrize(
    ("command", "mutating"),
    [("ncat -lk 0.0.0.0 9999", True), ("socat TCP-LISTEN:9999,fork -", True), ("nc -zv -w1 10.0.1.5 9999", False)],
)
def test_a_listener_is_a_new_service_and_a_connection_is_a_try(command: str, mutating: bool) -> None:
    (parsed,) = parse_command_block(command)
    assert parsed.mutating is mutating


@pytest.mark.parametrize("command", [": > /etc/ghost-shaper/shaper.conf", "echo x; > /etc/ghost-shaper/shaper.conf"])
def test_a_bare_redirect_truncates_its_file(command: str) -> None:
    """`: > file` and a bare `> file` empty the file: a write, as a command of its own."""
    assert parse_command_block(command)[-1].writes == ("/etc/ghost-shaper/shaper.conf",)
    assert looks_like_command(": > /etc/ghost-shaper/shaper.conf")
