from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ghost_eval.scoring import extract_actions
from ghost_eval.scoring.actions import report_verifications
from ghost_eval.scoring.text import split_sections
from ghost_eval.shell.checks import is_check
from tests.conftest import GOOD_REPORT
from tests.scoring.conftest import report


def test_the_original_report_format() -> None:
    (action,) = extract_actions(GOOD_REPORT.format(sid="ghost_20260312_141503"))
    assert action.description == "Unban the address through fail2ban, which owns the chain:"
    assert action.commands == ["sudo fail2ban-client set sshd unbanip 203.0.113.47"]
    assert action.verification is not None
    assert action.verification.command == "sudo fail2ban-client status sshd"
    assert "203.0.113.47 absent" in action.verification.expected


@pytest.mark.parametrize(("first", "second"), [("1.", "2."), ("1)", "2)"), ("-", "-"), ("*", "*")])
def test_list_markers(first: str, second: str) -> None:
    actions = extract_actions(
        report(
            f"{first} Unban with `fail2ban-client set sshd unbanip 203.0.113.47`\n{second} Reload with `fail2ban-client reload`\n"
        )
    )
    assert [a.commands for a in actions] == [["fail2ban-client set sshd unbanip 203.0.113.47"], ["fail2ban-client reload"]]


def test_multi_line_items_keep_their_text_and_nested_bullets() -> None:
    actions = extract_actions(
        report(
            "1. Remove the DROP rule for port 5001 on tf-dest-vm,\n"
            "   which the hardening run left behind.\n"
            "   - it sits at position 1 of INPUT\n"
            "   - run `sudo iptables -D INPUT -p tcp --dport 5001 -j DROP`\n"
            "2. Leave the NSG as it is.\n"
        )
    )
    assert len(actions) == 2
    assert actions[0].description.startswith("Remove the DROP rule for port 5001 on tf-dest-vm, which the hardening run")
    assert actions[0].commands == ["sudo iptables -D INPUT -p tcp --dport 5001 -j DROP"]
    assert actions[1].commands == []


def test_unindented_sub_bullets_stay_in_a_numbered_item() -> None:
    actions = extract_actions(
        report(
            "1. Unban the partner\n- `sudo fail2ban-client set sshd unbanip 203.0.113.47`\n"
            "2. Reload fail2ban\n- `sudo fail2ban-client reload`\n"
        )
    )
    assert [a.commands for a in actions] == [
        ["sudo fail2ban-client set sshd unbanip 203.0.113.47"],
        ["sudo fail2ban-client reload"],
    ]


def test_fenced_blocks_attach_to_the_current_item_with_prompts_stripped_and_continuations_joined() -> None:
    actions = extract_actions(
        report(
            "1. Add the endpoint and keep the existing ones:\n"
            "   ```bash\n"
            "   $ az network vnet subnet update -g nw-forensics-rg --vnet-name forensics-vnet -n default \\\n"
            "       --service-endpoints Microsoft.Sql Microsoft.KeyVault Microsoft.Storage\n"
            "   ```\n"
            "2. Nothing else.\n"
        )
    )
    (command,) = actions[0].commands
    assert command.startswith("az network vnet subnet update -g nw-forensics-rg")
    assert command.endswith("--service-endpoints Microsoft.Sql Microsoft.KeyVault Microsoft.Storage")
    assert "\\" not in command
    assert actions[1].commands == []


@pytest.mark.parametrize(
    "heading",
    [
        "## Remediation",
        "## Recommended Remediation",
        "## Fix",
        "## Next Steps",
        "### Recommended actions",
        "**Recommended Actions:**",
    ],
)
def test_section_headings(heading: str) -> None:
    text = f"# Report\n## Root Cause\nA ban.\n{heading}\n1. Unban: `fail2ban-client set sshd unbanip 203.0.113.47`\n"
    assert [a.commands for a in extract_actions(text)] == [["fail2ban-client set sshd unbanip 203.0.113.47"]]


def test_steps_as_sub_headings() -> None:
    actions = extract_actions(
        report(
            "### 1. Unban the partner\n```\nsudo fail2ban-client set sshd unbanip 203.0.113.47\n```\n"
            "### 2. Check the jail\nVerify: `sudo fail2ban-client status sshd` no longer lists 203.0.113.47.\n"
        )
    )
    assert len(actions) == 2
    assert actions[0].description == "Unban the partner"
    assert actions[0].commands == ["sudo fail2ban-client set sshd unbanip 203.0.113.47"]
    assert actions[1].verification is not None
    assert actions[1].verification.command == "sudo fail2ban-client status sshd"


def test_prose_paragraphs_with_a_following_verification_paragraph() -> None:
    actions = extract_actions(
        report(
            "Delete the blocking rule:\n\n"
            "```\naz network nsg rule delete -g rg --nsg-name tf-dest-vm-nsg -n ghost-demo-block-8080\n```\n\n"
            "Then verify it:\n```\n$ nc -zv 10.0.1.5 8080\nConnection to 10.0.1.5 8080 port [tcp/*] succeeded!\n```\n"
        )
    )
    (action,) = actions
    assert action.description == "Delete the blocking rule:"
    assert action.commands == ["az network nsg rule delete -g rg --nsg-name tf-dest-vm-nsg -n ghost-demo-block-8080"]
    assert action.verification is not None
    assert action.verification.command == "nc -zv 10.0.1.5 8080"
    assert "succeeded" in action.verification.expected


def test_a_verify_heading_line_starts_a_verification_section() -> None:
    text = report(
        "Delete the rule: `az network nsg rule delete -g rg --nsg-name nsg -n ghost-demo-block-8080`\n\n"
        'Verify:\n`nc -zv 10.0.1.5 8080` must print "succeeded".\n'
    )
    (action,) = extract_actions(text)
    assert action.verification is None
    (verification,) = report_verifications(split_sections(text))
    assert verification.command == "nc -zv 10.0.1.5 8080"


def test_inline_fix_label() -> None:
    text = (
        "## Root Cause\nThe subnet lacks the endpoint.\n"
        "Fix: `az network vnet subnet update -n default --service-endpoints Microsoft.Storage`\n"
    )
    (action,) = extract_actions(text)
    assert action.commands == ["az network vnet subnet update -n default --service-endpoints Microsoft.Storage"]


def test_an_inline_fix_label_on_a_list_item_keeps_the_item_beside_the_items_after_it() -> None:
    """ "- fix: …" opens the remediation and is its first item: a "- verify: …" item after it does not swallow it."""
    text = (
        "- blocker: tf-dest-vm INPUT DROP tcp/5001, owned by harden-net\n"
        "- fix: remove only the line from /etc/iptables/rules.v4 → systemctl reload harden-net\n"
        "- verify: `nc -zv -w 3 10.0.1.5 5001` from tf-source-vm → succeeded\n"
    )
    assert "systemctl reload harden-net" in [c for a in extract_actions(text) for c in a.commands]


@pytest.mark.parametrize(
    ("item", "command", "expected_part"),
    [
        ("Verification: run `ping -c 3 10.0.1.5` and expect 3/3 packets received.", "ping -c 3 10.0.1.5", "3/3 packets"),
        (
            "Verify with `sudo fail2ban-client status sshd`: 203.0.113.47 should no longer be listed.",
            "sudo fail2ban-client status sshd",
            "no longer",
        ),
        (
            "To confirm, `curl -s -o /dev/null -w '%{http_code}' http://10.0.1.5:8080` should print 200.",
            "curl -s -o /dev/null -w '%{http_code}' http://10.0.1.5:8080",
            "print 200",
        ),
        (
            "Verification: `iperf3 -c 10.0.1.5 -p 5001 -t 5` from tf-source-vm connects and reports a bitrate.",
            "iperf3 -c 10.0.1.5 -p 5001 -t 5",
            "connects",
        ),
        ("Verification: `ping -c 5 10.0.1.5` shows an average rtt below 2 ms.", "ping -c 5 10.0.1.5", "below 2 ms"),
    ],
)
def test_verification_part_inside_an_item(item: str, command: str, expected_part: str) -> None:
    (action,) = extract_actions(report(f"1. Unban: `sudo fail2ban-client set sshd unbanip 203.0.113.47`.\n   {item}\n"))
    assert action.commands == ["sudo fail2ban-client set sshd unbanip 203.0.113.47"]
    assert action.verification is not None
    assert action.verification.command == command
    assert expected_part in action.verification.expected


@pytest.mark.parametrize(
    "item",
    [
        "Verification: run `sudo fail2ban-client status sshd`.",
        "Monitor the connection and keep an eye on `journalctl -u fail2ban`.",
        "Verify in the Azure portal that the rule is gone.",
    ],
)
def test_no_verification_without_a_command_and_its_expected_result(item: str) -> None:
    (action,) = extract_actions(report(f"1. Unban: `sudo fail2ban-client set sshd unbanip 203.0.113.47`.\n   {item}\n"))
    assert action.verification is None


def test_a_mutating_command_is_never_the_verification() -> None:
    (action,) = extract_actions(
        report("1. Run `sudo fail2ban-client set sshd unbanip 203.0.113.47`, which should remove the REJECT.\n")
    )
    assert action.verification is None
    assert action.commands == ["sudo fail2ban-client set sshd unbanip 203.0.113.47"]


@pytest.mark.parametrize(
    "item",
    [
        "Unban through fail2ban; do not run `sudo iptables -F f2b-sshd`. "
        "Use `sudo fail2ban-client set sshd unbanip 203.0.113.47`.",
        "Rather than `sudo iptables -F f2b-sshd`, use `sudo fail2ban-client set sshd unbanip 203.0.113.47`.",
        "Use `sudo fail2ban-client set sshd unbanip 203.0.113.47` instead of `sudo iptables -F f2b-sshd`.",
        "Flushing with `sudo iptables -F f2b-sshd` would drop every other ban. Use "
        "`sudo fail2ban-client set sshd unbanip 203.0.113.47`.",
    ],
)
def test_commands_named_only_to_warn_against_them_are_dropped(item: str) -> None:
    (action,) = extract_actions(report(f"1. {item}\n"))
    assert action.commands == ["sudo fail2ban-client set sshd unbanip 203.0.113.47"]


def test_a_fenced_block_introduced_as_a_warning_is_dropped() -> None:
    (action,) = extract_actions(
        report(
            "1. Unban with `sudo fail2ban-client set sshd unbanip 203.0.113.47`.\n"
            "   Do not run the following, it wipes every ban:\n   ```\n   sudo iptables -F f2b-sshd\n   ```\n"
        )
    )
    assert action.commands == ["sudo fail2ban-client set sshd unbanip 203.0.113.47"]


def test_code_comments_are_not_headings_and_other_sections_are_not_actions() -> None:
    text = report(
        "1. Unban: `fail2ban-client set sshd unbanip 203.0.113.47`\n",
        evidence="```\n# iptables -S\n-A f2b-sshd -s 203.0.113.47/32 -j REJECT\n```",
    )
    assert [a.commands for a in extract_actions(text)] == [["fail2ban-client set sshd unbanip 203.0.113.47"]]
    assert extract_actions("# Report\n## Root Cause\nUse `iptables -F` to see.\n") == []


def test_a_verification_section_of_its_own() -> None:
    text = report("1. Unban: `fail2ban-client set sshd unbanip 203.0.113.47`\n") + (
        "## Verification\n- `sudo fail2ban-client status sshd` shows `Currently banned: 0`.\n- Monitor the logs.\n"
    )
    (verification,) = report_verifications(split_sections(text))
    assert verification.command == "sudo fail2ban-client status sshd"
    assert len(extract_actions(text)) == 1


def test_nothing_to_extract() -> None:
    assert extract_actions("") == []
    assert extract_actions("## Recommended Actions\n") == []


@given(st.text(max_size=600))
def test_extract_never_raises_on_arbitrary_text(text: str) -> None:
    for action in extract_actions(text):
        assert action.description


_ITEM_TEXT = st.text(alphabet="abcdefghij ,", min_size=1, max_size=30).filter(lambda t: t.strip(" ,"))


@given(st.sampled_from(["{n}.", "{n})", "-", "*"]), st.lists(st.tuples(st.integers(1, 99), _ITEM_TEXT), min_size=1, max_size=8))
def test_every_list_item_becomes_one_action_in_order(marker: str, items: list[tuple[int, str]]) -> None:
    """Source numbering may skip or repeat; the returned actions are the items in order (index = position + 1)."""
    body = "".join(f"{marker.format(n=n)} {words} `fail2ban-client get sshd banned {i}`\n" for i, (n, words) in enumerate(items))
    actions = extract_actions(report(body))
    assert [a.commands for a in actions] == [[f"fail2ban-client get sshd banned {i}"] for i in range(len(items))]


@pytest.mark.parametrize("cue", ["Don\u2019t run", "**Do not** run", "Never run", "Avoid running", "I'd NOT run"])
def test_warning_cues_in_their_usual_spellings(cue: str) -> None:
    (action,) = extract_actions(report(f"1. {cue} `sudo iptables -F INPUT`. Run `sudo iptables -D INPUT 3`.\n"))
    assert action.commands == ["sudo iptables -D INPUT 3"]


def test_a_report_without_an_actions_heading_still_recommends_its_state_changing_items() -> None:
    headless = (
        "The rollback was not complete. Two things to undo:\n"
        "- `az network nsg rule delete -g rg --nsg-name tf-dest-vm-nsg -n ghost-demo-rollback-block-8080`\n"
        "- check with `az network nsg rule list -g rg --nsg-name tf-dest-vm-nsg -o table`\n"
    )
    actions = extract_actions(headless)
    assert [a.commands[0].split()[4] for a in actions] == ["delete", "list"]
    # findings that only read state are not a recommendation
    assert extract_actions("The chain was listed with `iptables -S INPUT` and shows a DROP.\n") == []
    # a report with an actions heading is read from that section only
    assert extract_actions("`tc qdisc del dev eth0 root` was run by setup.\n## Recommended Actions\nNone.\n") == []


def test_commands_indented_as_code_and_fixes_labelled_mid_line() -> None:
    (indented,) = extract_actions("Netem on tf-source-vm.\n\nFix:\n    sudo tc qdisc del dev eth0 root\n")
    assert indented.commands == ["sudo tc qdisc del dev eth0 root"]
    (labelled,) = extract_actions("Root cause is netem on tf-source-vm. Fix: run `tc qdisc del dev eth0 root` there.\n")
    assert labelled.commands == ["tc qdisc del dev eth0 root"]
    # a command continued with backslashes runs on over its option lines, which alone look like no command
    (continued,) = extract_actions(
        "Open just the path:\n\n    az network nsg rule create -g rg --nsg-name nsg \\\n"
        "      -n allow-8080 --priority 140 \\\n      --source-address-prefixes 10.0.1.4/32\n"
    )
    assert continued.commands[0].endswith("--source-address-prefixes 10.0.1.4/32")
    # two spaces are enough under a line that introduces it with a colon: messy output indents so
    (shallow,) = extract_actions("Fix on tf-dest-vm:\n  kill 2231\n  nohup python3 /tmp/threaded.py &\n")
    assert shallow.commands[0] == "kill 2231"
    (prose,) = extract_actions(report("1. Do this on tf-dest-vm:\n  remove the rule, then reload\n"))
    assert prose.commands == []
    # an indented line that is not a command stays text
    (item,) = extract_actions(report("1. Remove the rule `ghost-demo-block-8080`:\n    the one at priority 150\n"))
    assert item.commands == [] and "priority 150" in item.description


@pytest.mark.parametrize(
    "line",
    [
        "**Fix.** `sudo iptables -D INPUT 1`",
        "**Remediation** — `sudo iptables -D INPUT 1`",
        "Recommended change: `sudo iptables -D INPUT 1`",
    ],
)
def test_a_fix_labelled_in_bold_or_as_a_change(line: str) -> None:
    (action,) = extract_actions(f"## Root Cause\nThe DROP rule.\n\n{line}\n")
    assert action.commands == ["sudo iptables -D INPUT 1"]


def test_a_loop_over_a_substitution_in_a_plain_block_is_a_command() -> None:
    loop = "for d in $(ls /sys/class/net); do sudo tc qdisc del dev $d root; done"
    (action,) = extract_actions(f"## Recommended Actions\n1. Remove it:\n   ```\n   {loop}\n   ```\n")
    assert action.commands == [loop]


def test_a_story_without_headings_recommends_the_fix_it_tells_in_words() -> None:
    story = (
        "I captured on both VMs and the flows match, so the network is innocent.\n\n"
        "My recommendation is for the application owner to make the server multi-threaded and restart "
        "demo-uc-c-server. No network changes.\n"
    )
    (action,) = extract_actions(story)
    assert action.description.startswith("My recommendation") and action.commands == []
    assert extract_actions("I looked at the captures.\n\nThe flows match; I recommend checking the client logs.\n") == []


def test_an_unformatted_command_a_colon_introduces_is_a_command() -> None:
    rule = "az network nsg rule create -g rg --nsg-name tf-dest-vm-nsg -n allow-all --priority 100 --access Allow"
    story = f"The NSG drops 8080.\n\nI created the following, which takes precedence because 100 < 150:\n\n{rule}\n"
    assert [rule] in [a.commands for a in extract_actions(story)]
    assert extract_actions(f"The NSG drops 8080.\n\n{rule} was run by someone last night.\n") == []


def test_a_check_made_before_the_change_is_not_its_verification() -> None:
    item = "1. `sudo iptables -D INPUT 1` (after confirming with `iptables -L INPUT --line-numbers` that line 1 is the DROP)\n"
    (action,) = extract_actions("## Remediation\n" + item)
    assert action.verification is None


def test_a_probe_reported_in_words_with_its_result_verifies() -> None:
    steps = (
        "1. `sudo tc qdisc del dev eth0 root`\n2. Re-ran iperf3 from tf-source-vm to tf-dest-vm: ~950 Mbit/s, 0 retransmits.\n"
    )
    (_, check) = extract_actions("## Actions\n" + steps)
    assert check.verification is not None and check.verification.command == "iperf3 from tf-source-vm to tf-dest-vm"


def test_output_shown_after_the_fix_s_own_read_verifies_it() -> None:
    block = '```\naz vm run-command invoke -n tf-dest-vm --scripts "iptables -D X -j DROP && iptables -L X -n"\n```\n'
    report = f"## Fix\n{block}\nOutput after the change: `Chain X (1 references)` with only `RETURN`.\n"
    (verification,) = report_verifications(split_sections(report), extract_actions(report))
    assert verification.command == "iptables -L X -n"


def test_commands_written_without_code_marks_are_the_actions_commands() -> None:
    """A report with no headings and no backticks still recommends what its lines run, and checks what it reads."""
    text = (
        "The shaper left a netem on eth1.\n\n"
        "- remove it: sudo tc qdisc del dev eth1 root\n"
        "- then check with tc qdisc show dev eth1 -> only the default qdisc is listed\n"
    )
    first, second = extract_actions(text)
    assert first.commands == ["sudo tc qdisc del dev eth1 root"]
    assert second.verification is not None and second.verification.command == "tc qdisc show dev eth1"


def test_a_probe_told_in_words_with_its_target_and_result_verifies() -> None:
    (action,) = extract_actions(
        "Fix: `az network vnet subnet update -g rg --vnet-name v -n default --service-endpoints Microsoft.Storage`\n"
        "curl from tf-source-vm to https://acct.blob.core.windows.net/ should then get an HTTP status back.\n"
    )
    assert action.verification is not None and action.verification.command == "curl https://acct.blob.core.windows.net/"


def test_a_line_that_goes_on_as_a_sentence_is_prose_not_code() -> None:
    """After a fix's command lines, a line naming a probe and then talking on is prose: the second fix it names later
    in the sentence is an action too, and the probe with its result verifies."""
    (action,) = extract_actions(
        "the hardening left a DROP at the top of INPUT. wipe it:\n"
        "iptables -D INPUT -p tcp --dport 5001 -j DROP\n"
        "iperf3 -c 10.9.0.5 -p 5001 should connect afterwards. the delay is netem on the sender, tc qdisc del dev eth1 "
        "root there too\n"
    )
    assert "tc qdisc del dev eth1 root there too" in action.commands
    assert action.verification is not None and action.verification.command == "iperf3 -c 10.9.0.5 -p 5001"


def test_not_knowing_is_no_warning() -> None:
    """ "don't know who owns it so override rather than delete:" introduces the block it recommends."""
    (action,) = extract_actions(
        "there is a deny at 100 on the nsg. don't know who owns it so override rather than delete:\n"
        "az network nsg rule create -g rg --nsg-name n -n allow-db --priority 90 --access Allow --destination-port-ranges 5432\n"
    )
    assert action.commands and action.commands[0].startswith("az network nsg rule create")


def test_a_read_named_with_a_value_verifies() -> None:
    (action,) = extract_actions(
        "fix: iptables -D DOCKER-ISOLATION-STAGE-2 -j DROP\n"
        "verify iptables -S DOCKER-ISOLATION-STAGE-2 only has -j RETURN and the calls go through\n"
    )
    assert action.verification is not None and action.verification.command == "iptables -S DOCKER-ISOLATION-STAGE-2"


@pytest.mark.parametrize(
    ("text", "commands"),
    [
        # a warning in plain prose is a warning too, without code marks
        ("fix: tc qdisc del dev eth1 root\ndont run iptables -F INPUT, that wipes everything\n", ["tc qdisc del dev eth1 root"]),
        # "X, don't Y:" — the ban is Y's; the line below is what X asks for
        (
            "unban through fail2ban, dont iptables -D the chain:\nfail2ban-client set sshd unbanip 203.0.113.47\n",
            ["fail2ban-client set sshd unbanip 203.0.113.47"],
        ),
        # a ban does not run into the next labelled line
        (
            "the vnet rule is broad by design, dont change it\n"
            "fix for #1 only: az network nsg rule delete -g rg --nsg-name n -n r\n",
            ["az network nsg rule delete -g rg --nsg-name n -n r"],
        ),
        # ... but "do not run the following:" covers what follows
        ("do not run the following:\niptables -F INPUT\n", []),
        # what a change won't do is a consequence: the sentence before it is warned against
        (
            "the drop lives in rules.v4, so iptables -D alone wont stick. edit the file, systemctl reload harden-net\n",
            ["systemctl reload harden-net"],
        ),
    ],
)
def test_warnings_in_messy_prose(text: str, commands: list[str]) -> None:
    assert [c for a in extract_actions(text) for c in a.commands] == commands


def test_a_result_written_after_its_command_in_a_block_is_its_output() -> None:
    """`nc -zv … 5432  -> … succeeded!` in an unfenced block: the arrow gives the result, it is no redirect."""
    (action,) = extract_actions(
        "fix, one per rule:\n  az network nsg rule delete -g rg --nsg-name n -n r1\n"
        "check from the sender:\n  nc -zv -w 3 10.9.0.5 5432  -> Connection to 10.9.0.5 5432 port succeeded!\n"
    )
    assert action.verification is not None and action.verification.command == "nc -zv -w 3 10.9.0.5 5432"
    assert "succeeded" in action.verification.expected


def test_a_line_opened_by_a_word_and_an_arrow_is_prose() -> None:
    """ "checks -> rerun the drift: … ; iptables -S INPUT | grep -c 5001 -> 0" under a fix's block is its check."""
    (action,) = extract_actions(
        "undo both:\n  iptables -D INPUT -p tcp --dport 5001 -j DROP\n"
        "checks -> drift_detected false ; iptables -S INPUT | grep -c 5001 -> 0\n"
    )
    assert action.commands == ["iptables -D INPUT -p tcp --dport 5001 -j DROP"]
    assert action.verification is not None and action.verification.command == "iptables -S INPUT | grep -c 5001"


def test_what_is_said_pointless_is_warned_against() -> None:
    assert extract_actions("editing docker's chains with iptables -D DOCKER-ISOLATION-STAGE-2 -j DROP is pointless.\n") == []


def test_a_table_cell_ends_a_warning_and_a_host_label_opens_a_line_of_prose() -> None:
    table = (
        "## Fixes\n| # | Command | Check | Expected |\n|---|---|---|---|\n"
        "| 1 | `az network nsg rule delete -g rg --nsg-name n -n r` | `nc -zv 10.9.0.5 5432` | succeeds instead of timing out |\n"
        "| 2 | `tc qdisc del dev eth1 root` on the sender | `ping -c 10 10.9.0.5` | rtt ~1 ms |\n"
    )
    assert "tc qdisc del dev eth1 root" in [c for a in extract_actions(table) for c in a.commands]
    labelled = "fix:\n az network nsg rule delete -g rg --nsg-name n -n r\n vm-two: tc qdisc del dev eth1 root ; iptables -F X\n"
    commands = [c for a in extract_actions(labelled) for c in a.commands]
    assert any(c.startswith("tc qdisc del dev eth1 root") for c in commands)


def test_a_finished_warning_sentence_does_not_take_the_block_below() -> None:
    """ "Delete the rule. Do not flush INPUT with `iptables -F`: that removes every rule." ends before its block."""
    (action,) = extract_actions(
        "## Recommended Actions\n1. Delete exactly the DROP rule. Do not flush INPUT with `iptables -F`: that would remove "
        "every other rule.\n   ```bash\n   sudo iptables -D INPUT -p tcp --dport 5001 -j DROP\n   ```\n"
    )
    assert action.commands[0] == "sudo iptables -D INPUT -p tcp --dport 5001 -j DROP"


def test_a_line_that_opens_with_a_verify_label_is_the_check_not_a_command_block() -> None:
    (action,) = extract_actions(
        "netem leaf on band 1:3. remove only it on tf-source-vm: tc qdisc del dev eth0 parent 1:3 handle 30:\n"
        "verify → tc qdisc show dev eth0 | grep -c netem = 0 ; ping -c 200 10.0.1.5 → 0% packet loss"
    )
    assert action.commands[0] == "tc qdisc del dev eth0 parent 1:3 handle 30:"
    assert all(is_check(c) for c in action.commands[1:]), "the verify line's second check is a check, no change"
    assert action.verification is not None and action.verification.command == "tc qdisc show dev eth0 | grep -c netem"


def test_a_command_in_an_aside_ends_at_its_closing_parenthesis() -> None:
    (action,) = extract_actions(
        "9090: remove the old drop on tf-dest-vm (iptables -D INPUT -p tcp --dport 9090 -j DROP) and to be sure the "
        "port is open run nothing else"
    )
    assert "iptables -D INPUT -p tcp --dport 9090 -j DROP" in action.commands


def test_a_command_after_a_dash_is_a_command() -> None:
    (action,) = extract_actions(
        "Cause: netem on tf-source-vm. Neutralise it without tearing down the prio tree — "
        "tc qdisc change dev eth0 parent 1:3 handle 30: netem delay 0ms loss 0%. The app team can then retest"
    )
    assert action.commands == ["tc qdisc change dev eth0 parent 1:3 handle 30: netem delay 0ms loss 0%"]


def test_a_sentence_asking_for_a_change_above_its_command_is_an_action_in_any_section() -> None:
    text = (
        "## Drift\nNo drift.\n\n## Separate finding: 9090\n"
        "tf-dest-vm INPUT holds a DROP for 9090, which predates the window. Remove it (separate ticket):\n"
        "`iptables -D INPUT -p tcp --dport 9090 -j DROP`\n"
    )
    assert [a.commands for a in extract_actions(text)] == [["iptables -D INPUT -p tcp --dport 9090 -j DROP"]]
    told = text.replace("Remove it (separate ticket):", "It was added by hand:")
    told += "\nIt also holds a DROP for 8080. Remove that one too:\n`iptables -D INPUT -p tcp --dport 8080 -j DROP`\n"
    assert [a.commands for a in extract_actions(told)] == [["iptables -D INPUT -p tcp --dport 8080 -j DROP"]]


@pytest.mark.parametrize(
    ("text", "check"),
    [
        ("verify: curl -w '%{time_total}' http://10.0.1.5:7070/ from tf-source-vm should come back < 10 ms", "curl -w"),
        ("verify iperf3 -c 10.0.1.5 > 5mbit and ping -c3 10.0.1.5 replies", "iperf3 -c 10.0.1.5"),
        (
            "verify w/ az network vnet subnet show ... --query serviceEndpoints -o table, Microsoft.Storage should show "
            "Succeeded",
            "az network",
        ),
        ("verify: curl http://10.0.1.5:9090/metrics from the source returns data", "curl http"),
    ],
)
def test_a_check_with_a_measure_compared_or_data_returned_is_a_verification(text: str, check: str) -> None:
    """ "> 5mbit" after a command is a measure, not a redirect into a file; "w/" introduces a command as "with" does."""
    (action,) = extract_actions(f"fix: `tc qdisc del dev eth0 root`\n{text}")
    assert action.verification is not None and action.verification.command.startswith(check)
    assert action.commands[0] == "tc qdisc del dev eth0 root" and not any("5mbit" in c for c in action.commands)


def test_a_change_handed_to_its_command_mid_sentence_is_an_action() -> None:
    text = (
        "cab: no drift, sign it off.\nprometheus: DROP tcp 9090 on tf-dest-vm INPUT, older than the window. remove it w/ "
        "iptables -D INPUT -p tcp --dport 9090 -j DROP and prometheus should start scraping again"
    )
    assert [a.commands for a in extract_actions(text)] == [["iptables -D INPUT -p tcp --dport 9090 -j DROP"]]


def test_a_purpose_clause_ends_a_command_and_a_past_tense_verb_makes_it_a_subject() -> None:
    actions = extract_actions(
        "1) sudo tc qdisc del dev eth0 root\n"
        "2) az vm redeploy -g rg -n tf-source-vm to get it off the current host in case the hw is bad\n"
    )
    assert actions[-1].commands == ["az vm redeploy -g rg -n tf-source-vm"]
    (load,) = extract_actions("then load it right away with iptables-restore < /etc/iptables/rules.v4 so we dont have to wait\n")
    assert load.commands == ["iptables-restore < /etc/iptables/rules.v4"]
    told = extract_actions("docker restart rewrote FORWARD with its isolation chains.\niptables -I DOCKER-USER 1 -j RETURN\n")
    assert all(not c.startswith("docker") for a in told for c in a.commands)


def test_a_step_told_where_it_runs_is_still_a_command() -> None:
    (action,) = extract_actions(
        "fixes: az network nsg rule delete -g rg --nsg-name nsg -n block-iperf ; on tf-dest-vm sudo tc qdisc del dev eth0 root"
    )
    assert any(c.endswith("sudo tc qdisc del dev eth0 root") and "on tf-dest-vm" not in c for c in action.commands)


def test_a_semicolon_separates_commands_in_prose_as_in_a_shell() -> None:
    (*_, action) = extract_actions(
        "so:\n\nedit /etc/ghost-shaper/shaper.conf -> drop the eth0 tbf entry (keep a .bak) ; systemctl reload ghost-shaper\n"
    )
    assert action.commands == ["systemctl reload ghost-shaper"]
    # A clause after a semicolon that names no program stays prose.
    assert all(not a.commands for a in extract_actions("the tbf is the daemon's; nothing else changed\n"))


def test_should_be_just_states_a_result() -> None:
    (action,) = extract_actions(
        "fail2ban owns it: sudo fail2ban-client set sshd unbanip 203.0.113.47\n"
        'verify - sudo iptables -S f2b-sshd should be just "-N f2b-sshd" and "-A f2b-sshd -j RETURN"'
    )
    assert action.verification is not None and action.verification.command == "sudo iptables -S f2b-sshd"


def test_a_line_that_is_one_code_span_under_an_item_is_read_without_its_backticks() -> None:
    """Indented under "1. Return INPUT to a clean state:", a line in backticks is inline code, no block."""
    (action,) = extract_actions(
        "## Recommended Actions\n1. Return INPUT to a clean state:\n"
        "   `sudo iptables -F INPUT && sudo iptables -P INPUT ACCEPT`\n"
    )
    assert action.commands == ["sudo iptables -F INPUT && sudo iptables -P INPUT ACCEPT"]


def test_a_narrative_turns_to_its_fix_at_what_to_do() -> None:
    (action,) = extract_actions(
        "Findings\n\n- NSG: clean\n- nobody holds .253: phantom NVA\n\n"
        "What to do: simplest is to keep the table but send the default route straight out,\n"
        "az network route-table route update -g rg --route-table-name rt -n all-egress-to-nva --next-hop-type Internet\n"
    )
    assert action.commands == [
        "az network route-table route update -g rg --route-table-name rt -n all-egress-to-nva --next-hop-type Internet"
    ]


def test_a_lower_case_sentence_after_a_warning_hands_over_to_the_command() -> None:
    """ "Dont use X. append instead:" warns against X and recommends the command below it."""
    add = "az network vnet subnet update -g rg --vnet-name vnet -n default --add serviceEndpoints service=Microsoft.Storage"
    text = (
        "Investigation notes\n\nendpoints = [Microsoft.Sql] only.\n\n"
        "Dont use --service-endpoints here, it replaces the list and would lose Microsoft.Sql. append instead:\n\n"
        f"```\n{add}\n```\n"
    )
    assert [a.commands for a in extract_actions(text)] == [[add]]


def test_a_warning_ends_before_the_command_line_that_follows_it() -> None:
    """A ban whose own line says what it forbids does not reach the command on the next line."""
    delete = "az network route-table route delete -g rg --route-table-name ghost-demo-s-rt -n blackhole-dest-vm"
    text = f"Fix = remove that route only. don't detach the whole table, others may add routes to it\n  {delete}\n"
    assert any(delete in a.commands for a in extract_actions(text))
    lead = f"Don't:\n  {delete}\n"
    assert not any(delete in a.commands for a in extract_actions(lead))


def test_a_paragraph_that_asks_for_a_change_and_ends_in_a_colon_owns_the_command_below_it() -> None:
    """In a findings narrative, "Remove the shaping on the destination NIC …:" hands over to the indented command
    after it; a paragraph that only reports ("INPUT rule 1 drops ICMP:") does not ask for anything."""
    text = (
        "# Investigation summary\n\nThroughput is pinned at ~5 Mbit/s.\n\n**Throughput:** a token bucket filter. Remove "
        "the shaping on the destination NIC so inbound data is no longer rate limited:\n\n    # on tf-dest-vm\n"
        "    tc qdisc del dev eth0 root\n"
    )
    assert [c for a in extract_actions(text) for c in a.commands] == ["tc qdisc del dev eth0 root"]
    told = text.replace("Remove the shaping on the destination NIC so inbound data is no longer rate limited:", "It reads:")
    told += "\n## Recommended actions\n\n1. Restart the transfer job: `systemctl restart transfer.service`\n"
    assert [c for a in extract_actions(told) for c in a.commands] == ["systemctl restart transfer.service"]


@pytest.mark.parametrize(
    "text",
    [
        "Root cause\n\nRule deny-5001 (prio 200) on tf-dest-vm-nsg drops the test traffic.\n\nFix —\n\n"
        "    az network nsg rule delete -g rg --nsg-name tf-dest-vm-nsg -n deny-5001\n",
        "Findings\n- deny-5001, prio 200, on tf-dest-vm-nsg\n"
        "- az network nsg rule delete -g rg --nsg-name tf-dest-vm-nsg -n deny-5001\n",
    ],
)
def test_a_report_with_no_recommendation_the_reader_knows_recommends_the_changes_it_writes(text: str) -> None:
    """A fix written under the report's only heading ("Root cause", "Found 2 things"), with no words the reader takes
    for a recommendation: the state-changing commands it writes are its actions, to be judged, not a fix left out."""
    assert [c for a in extract_actions(text) for c in a.commands] == [
        "az network nsg rule delete -g rg --nsg-name tf-dest-vm-nsg -n deny-5001"
    ]
    shown = "Evidence\n\nThe capture:\n\n```\n10.0.1.4:41000 <-> 10.0.1.5:8080  frames 10\n```\n"
    assert extract_actions(shown) == []  # output lines are no command
    quoted = "Root cause\n\nThe change window ran `az network nsg rule delete -g rg --nsg-name n -n old-allow` at 02:00.\n"
    assert extract_actions(quoted) == []  # told about inside a sentence, not handed over


def test_a_command_continued_over_lines_stands_alone() -> None:
    text = (
        "findings:\n* outbound looks filtered\n\nremediation -> outbound must not be filtered:\n"
        "  az network nsg rule create -g rg --nsg-name n \\\n"
        "     -n allow-out --priority 100 --direction Outbound --access Allow\n"
    )
    (action,) = extract_actions(text)
    assert action.commands[0].startswith("az network nsg rule create -g rg --nsg-name n")
    assert "--priority 100" in action.commands[0]


@pytest.mark.parametrize(
    ("opening", "joined"),
    [
        ("you should see two lines, A and B.", True),
        ("The command should return two lines once the update has completed.", True),
        ("Also look at the logs.", False),
    ],
)
def test_a_paragraph_opening_on_a_result_states_the_result_of_the_block_above(opening: str, joined: bool) -> None:
    """ "Check afterwards:", an indented block, then "you should see two lines, …" or "The command should return …":
    the sentence is the block's result; a paragraph that opens on anything else is an item of its own."""
    text = report("1. `az network vnet subnet update -n default --add serviceEndpoints service=Microsoft.Storage`\n") + (
        "## Check afterwards\n\n    az network vnet subnet show -n default --query serviceEndpoints -o tsv\n\n" + opening + "\n"
    )
    found = report_verifications(split_sections(text))
    assert bool(found) is joined
    assert not joined or found[0].command.startswith("az network vnet subnet show")


def test_a_verify_label_indented_under_a_list_item_is_the_items_not_a_new_section() -> None:
    """ "   Verify:" under step 1's block belongs to step 1; step 2 after it is still an action."""
    text = report(
        "1. Remove the deny rule:\n   ```\n   az network nsg rule delete -g rg --nsg-name nsg -n ghost-demo-block-8080\n   ```\n"
        "   Verify:\n   - `nc -zv -w 3 10.0.1.5 8080` → `succeeded`\n"
        "2. Remove the netem on tf-source-vm:\n   ```\n   tc qdisc del dev eth0 root\n   ```\n"
    )
    first, second = extract_actions(text)
    assert first.verification is not None and first.verification.command == "nc -zv -w 3 10.0.1.5 8080"
    assert second.commands == ["tc qdisc del dev eth0 root"]


@pytest.mark.parametrize(
    ("after", "commands"),
    [
        (
            "If the jobs still time out, you could flip it: `az storage account update -g rg -n acct --default-action Allow`.",
            [["az storage account update -g rg -n acct --default-action Allow"]],
        ),
        ("Then restart it to see the change survive: `systemctl restart docker`.", []),
    ],
)
def test_a_fallback_in_a_verification_section_that_changes_something_is_an_action(after: str, commands: list[list[str]]) -> None:
    """A check only reads: the step a verification section asks for when the check fails is one more change; a check's
    own setup (a restart to see a rule survive) is the check."""
    text = (
        "Fix:\n  az network vnet subnet update -g rg --vnet-name v -n default --service-endpoints Microsoft.Storage\n"
        "Check:\n  az network vnet subnet show -g rg --vnet-name v -n default -o tsv\n  -> Microsoft.Storage\n\n"
    )
    found = [a.commands for a in extract_actions(text + after)]
    assert found == [
        ["az network vnet subnet update -g rg --vnet-name v -n default --service-endpoints Microsoft.Storage"],
        *commands,
    ]


@pytest.mark.parametrize("label", ["**B. Latency (tf-source-vm)**", "**2) Latency on tf-source-vm:**"])
def test_a_lettered_label_after_a_verify_label_is_the_fixs_next_change(label: str) -> None:
    """ "Verify:" after change A's block checks A; a bold "B." label after it starts change B, not more checking."""
    text = report(
        "**A. Database**\n```\naz network nsg rule delete -g rg --nsg-name nsg -n ghost-demo-block-5432\n```\n"
        "Verify:\n```\naz network watcher test-ip-flow -g rg --vm tf-dest-vm --direction Inbound\n```\n"
        'Expected: `"access": "Allow"`.\n\n' + label + "\n```\nsudo tc qdisc del dev eth0 root\n```\n"
    )
    assert [a.commands for a in extract_actions(text)][-1] == ["sudo tc qdisc del dev eth0 root"]


def test_steps_joined_by_then_are_commands_of_their_own() -> None:
    """ "iptables -D … then iptables -C … should fail" removes the rule, then checks it is gone: a change, not a check."""
    (_, second) = extract_actions(
        report(
            "- tf-source-vm: tc qdisc del dev eth0 root\n"
            "- tf-dest-vm: iptables -D INPUT -p icmp -j DROP   then iptables -C INPUT -p icmp -j DROP"
            ' should fail with "Bad rule"\n'
        )
    )
    assert second.commands == ["iptables -D INPUT -p icmp -j DROP; iptables -C INPUT -p icmp -j DROP"]


def test_to_undo_before_any_fix_undoes_the_fault() -> None:
    """ "To undo:" after a fix is how to roll that fix back; before any fix there is nothing of the run's to undo, so it
    undoes the fault: the change under it is the fix."""
    put = (
        'az rest --method PUT --url "$SUBNET_ID?api-version=2023-11-01" --body \'{"properties":{"addressPrefix":"10.0.1.0/24"}}\''
    )
    found = "found it: the route table on the default subnet sends 10.0.1.5 to a missing appliance.\n\n"
    first = extract_actions(f"{found}to undo: put the subnet back with just its prefix:\n\n{put}\n")
    assert [c for a in first for c in a.commands] == [put]
    fix = "az network route-table route delete -g rg --route-table-name rt -n nva"
    later = extract_actions(f"{found}{fix}\n\nto undo: put the route back:\n\n{put}\n")
    assert [c for a in later for c in a.commands] == [fix]


@pytest.mark.parametrize("label", ["Verify:", "Verify from tf-source-vm:", "Check it from tf-source-vm:"])
def test_a_check_after_a_label_that_names_where_it_runs_is_the_verification(label: str) -> None:
    """A line that a colon introduces is code only if it is one; a label in front ("Verify from tf-source-vm: nc …")
    makes it prose naming a check, not a command of the fix."""
    text = (
        "Fix = delete those two rules, nothing else:\n"
        "az network nsg rule delete -g rg --nsg-name tf-dest-vm-nsg -n ghost-demo-block-postgres\n"
        f'{label} nc -zv -w 3 10.0.1.5 5432 && nc -zv -w 3 10.0.1.5 6379   expect "succeeded" for both\n'
    )
    (action,) = extract_actions(text)
    assert [c.split()[:4] for c in action.commands] == [["az", "network", "nsg", "rule"]]
    assert action.verification is not None and action.verification.command.startswith("nc -zv")


def test_commands_after_a_vm_label_on_their_own_lines_are_the_fix() -> None:
    """ "fix:" then "tf-dest-vm:   iptables -D …" and "tf-source-vm: tc …": each line is a command placed on a VM, and
    the list of checks after them does not swallow them."""
    text = (
        "fix:\ntf-dest-vm:   iptables -D INPUT -p tcp --dport 5001 -j DROP\ntf-source-vm: tc qdisc del dev eth0 root\n\n"
        'expect:\n- nc -zv -w 3 10.0.1.5 5001  ->  "succeeded"\n'
    )
    commands = [c for a in extract_actions(text) for c in a.commands]
    assert commands == ["iptables -D INPUT -p tcp --dport 5001 -j DROP", "tc qdisc del dev eth0 root"]


def test_each_command_of_a_shell_list_in_a_story_stands_on_its_line() -> None:
    """A fix told under a findings heading, as a shell list with a step in words between ("cp … ; remove the line with
    your editor ; systemctl reload harden-net"): the reload is handed over to be run, as the copy is."""
    text = (
        "Findings\n\nthe DROP is in /etc/iptables/rules.v4, do it via the file:\n\n"
        "tf-dest-vm: cp /etc/iptables/rules.v4{,.bak} ; remove the 5001 line with your editor ; systemctl reload harden-net\n"
    )
    assert [c for a in extract_actions(text) for c in a.commands][-1:] == ["systemctl reload harden-net"]


def test_headings_in_capitals_open_their_sections() -> None:
    """A plain-text report headed "FINDING", "REMEDIATION", "VERIFICATION": the fix is under the second."""
    text = (
        "FINDING\nThe INPUT policy on tf-dest-vm is DROP.\n\nREMEDIATION\nOn tf-dest-vm: iptables -P INPUT ACCEPT\n\n"
        "VERIFICATION\nFrom tf-source-vm: nc -zv -w 3 tf-dest-vm 8080\nExpected: refused or succeeded, not a timeout.\n"
    )
    assert [s.kind.value for s in split_sections(text)] == ["evidence", "actions", "verification"]
    assert [c for a in extract_actions(text) for c in a.commands] == ["iptables -P INPUT ACCEPT"]


def test_a_change_labelled_by_one_instruction_word_is_the_fix() -> None:
    """No heading at all; "remove:" labels the delete on its line, "confirm:" and a "+" bullet the checks after it."""
    text = (
        "drift: none for tf-dest-vm.\n\nthe 9090 DROP is rule 1 of INPUT on tf-dest-vm.\n\n"
        "remove:  sudo iptables -D INPUT -p tcp --dport 9090 -j DROP   (on tf-dest-vm)\n"
        "confirm: sudo iptables -L INPUT -n | grep dpt:9090  -> must print nothing\n"
        "+ nc -zv -w 3 tf-dest-vm 9090 from source -> refused, not a timeout\n"
    )
    assert [c for a in extract_actions(text) for c in a.commands] == ["sudo iptables -D INPUT -p tcp --dport 9090 -j DROP"]


def test_a_line_quoting_a_command_in_backticks_is_prose_not_a_shell_line() -> None:
    """ "ssh to tf-source-vm, `sudo iptables -D …`" after a line ending in a colon names where and what to run: read as
    a line of code it would be one `ssh` to a host called "to", and the delete inside it would be lost."""
    text = (
        "HTTP fails, HTTPS works: the OUTPUT drop on tf-source-vm.\n\ntake that one rule out, by spec not by number:\n"
        "ssh to tf-source-vm, `sudo iptables -D OUTPUT -p tcp --dport 80 -j DROP`\n"
    )
    assert [c for a in extract_actions(text) for c in a.commands] == ["sudo iptables -D OUTPUT -p tcp --dport 80 -j DROP"]


def test_how_to_undo_the_fix_after_it_is_no_action_of_its_own() -> None:
    """ "Rollback: `az … rule delete …`" under the fix says how to take it back, not a change to make."""
    create = "az network nsg rule create -g rg --nsg-name nsg -n allow-pg --priority 150 --access Allow"
    text = (
        "## Recommended change\nOpen only the paged flow:\n\n```\n" + create + "\n```\n\n"
        "Rollback: `az network nsg rule delete -g rg --nsg-name nsg -n allow-pg`.\n"
    )
    assert [a.commands for a in extract_actions(text)] == [[create]]
