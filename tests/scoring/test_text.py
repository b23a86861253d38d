from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ghost_eval.scoring import extract_actions
from ghost_eval.scoring.bare_commands import bare_commands
from ghost_eval.scoring.cautions import asks_for_change, blank_warnings
from ghost_eval.scoring.text import SectionKind, has_expectation, split_sections, split_sentences


@given(st.text(max_size=300))
def test_blanking_keeps_offsets_and_lines(text: str) -> None:
    blanked = blank_warnings(text)
    assert len(blanked) == len(text)
    assert [i for i, c in enumerate(blanked) if c == "\n"] == [i for i, c in enumerate(text) if c == "\n"]


@pytest.mark.parametrize(
    ("text", "kept", "dropped"),
    [
        ("Do not run `iptables -F`; run `iptables -D INPUT 3`.", "`iptables -D INPUT 3`", "`iptables -F`"),
        ("Please nobody flush `iptables -F DOCKER`: Docker's. Run `iptables -I DOCKER-USER 1`.", "`iptables -I", "`iptables -F"),
        ("Nobody owns this rule, so delete it: `iptables -D INPUT 1`.", "`iptables -D INPUT 1`", "nothing"),
        ("Use `a b`, not `c d` (avoid `e f`).", "`a b`", "`e f`"),
        ("Rather than `iptables -F`, use `fail2ban-client set sshd unbanip 1.2.3.4`.", "`fail2ban-client", "`iptables -F`"),
        (
            "A raw `iptables -D f2b-sshd 1` would be reverted at the next ban. Run `fail2ban-client reload`.",
            "`fail2ban-client reload`",
            "`iptables -D f2b-sshd 1`",
        ),
        ("Run `iptables -D f2b-sshd 1`, which fail2ban will re-add.", "`iptables -D f2b-sshd 1`", "nothing"),
        ("Unban through the client. Do **not** `iptables -F INPUT` either.", "Unban", "`iptables -F INPUT`"),
        ("You must _not_ run `systemctl stop fail2ban`.", "You", "`systemctl stop fail2ban`"),
        (  # a ban written as a label: what follows its dash is banned
            "**do** `fail2ban-client set sshd unbanip 203.0.113.47`\n\n**dont** \u2014 `iptables -F f2b-sshd` or a hand delete.",
            "`fail2ban-client",
            "`iptables -F f2b-sshd`",
        ),
        (  # "not" before a command bans it
            "so NOT `tc qdisc del dev eth0 root` on its own; edit shaper.conf and `systemctl reload ghost-shaper`.",
            "`systemctl reload ghost-shaper`",
            "`tc qdisc del dev eth0 root`",
        ),
        (  # a ban that opens its sentence and points back covers the sentence before
            "The one-liner `az network vnet subnet update --service-endpoints Microsoft.Storage` would replace the list. "
            "Don't run that. Run `az network vnet subnet update --service-endpoints Microsoft.Sql Microsoft.Storage`.",
            "Microsoft.Sql Microsoft.Storage`",
            "`az network vnet subnet update --service-endpoints Microsoft.Storage`",
        ),
        (  # an option raised to be turned down
            "(You *could* `iptables -F INPUT` but that nukes whatever else is in INPUT - no.) Delete the one rule.",
            "Delete the one rule",
            "`iptables -F INPUT`",
        ),
        ("Run `iptables -D INPUT 1`, but don't do that on a Friday.", "`iptables -D INPUT 1`", "nothing"),
        (  # a temptation is raised to be resisted
            "Tempting to just `iptables -D f2b-sshd 1` — fail2ban owns it. Go through `fail2ban-client set sshd unbanip 1.2.3.4`",
            "`fail2ban-client set",
            "`iptables -D f2b-sshd 1`",
        ),
        (  # a command whose effect would not last
            'heads up: a plain `iptables -D INPUT 1` would "work" until the reload. Edit rules.v4 and `systemctl reload x`.',
            "`systemctl reload x`",
            "`iptables -D INPUT 1`",
        ),
        ("Deleting it with `az network nsg rule delete -n r` would restore access.", "`az network nsg rule delete", "nothing"),
        (  # a ban closing its own sentence after "so" points back at it
            "A plain `tc qdisc del dev eth0 root` comes back in five minutes — so don't do it that way. Edit the config.",
            "Edit the config",
            "`tc qdisc del dev eth0 root`",
        ),
        (  # "e.g." ends no sentence: the example belongs to the ban
            'Do not "fix" this by opening the port, e.g. `az network nsg rule create -n x` would widen exposure. Done.',
            "Done.",
            "`az network nsg rule create -n x`",
        ),
        (  # a bare ban after a dash points back at its sentence
            "Someone will suggest `az storage account update --default-action Allow` — please don't, that opens it. "
            "Add the endpoint.",
            "Add the endpoint",
            "`az storage account update --default-action Allow`",
        ),
        (  # a label that turns options down
            "Use DOCKER-USER.\n\n**Rejected:** `iptables -D DOCKER-ISOLATION-STAGE-2 -j DROP`, or a restore. Then check.",
            "Then check",
            "`iptables -D DOCKER-ISOLATION-STAGE-2 -j DROP`",
        ),
        ("Don't, under any circumstances, run `iptables -F INPUT`. Delete rule 3.", "Delete rule 3", "`iptables -F INPUT`"),
        (  # a label that turns an option down, with emphasis
            "What **not** to do: `az storage account update -n acct --default-action Allow` would also work, but it "
            "opens the account. Add the endpoint.",
            "Add the endpoint",
            "`az storage account update -n acct --default-action Allow`",
        ),
        (
            "One thing I'd resist: the temptation to tune the kernel with `sysctl -w net.core.somaxconn=4096`. Leave it.",
            "Leave it",
            "`sysctl -w net.core.somaxconn=4096`",
        ),
    ],
)
def test_warnings_are_blanked_and_instructions_kept(text: str, kept: str, dropped: str) -> None:
    blanked = blank_warnings(text)
    assert kept in blanked
    assert dropped not in blanked


@pytest.mark.parametrize(
    ("title", "last"),
    [("What to run", ("What to run", SectionKind.ACTIONS)), ("What to check", ("Findings", SectionKind.EVIDENCE))],
)
def test_a_plain_text_heading_that_says_what_to_run_opens_the_fix(title: str, last: tuple[str, SectionKind]) -> None:
    """ "What to run" over the commands is the fix's heading, as "What to do" is; what to check opens no fix."""
    report = (
        f"Findings\n- the DROP is rule 1 of INPUT\n\n{title}\non tf-dest-vm:   iptables -D INPUT -p tcp --dport 5001 -j DROP\n"
    )
    assert [(s.title, s.kind) for s in split_sections(report)][-1] == last


def test_section_kinds_and_inherited_sub_headings() -> None:
    report = (
        "# Ghost Agent Investigation Report\n## Root Cause\nx\n## Evidence\n```\n# not a heading\n```\n"
        "## Remediation\n### 1. Unban\ny\n**Verification:**\nz\n## Hypotheses\nw\n## Actions taken\nv\n"
    )
    kinds = [(s.title, s.kind, s.subsection) for s in split_sections(report)]
    assert kinds == [
        ("Ghost Agent Investigation Report", SectionKind.OTHER, False),
        ("Root Cause", SectionKind.ROOT_CAUSE, False),
        ("Evidence", SectionKind.EVIDENCE, False),
        ("Remediation", SectionKind.ACTIONS, False),
        ("1. Unban", SectionKind.ACTIONS, True),
        ("Verification", SectionKind.VERIFICATION, False),
        ("Hypotheses", SectionKind.OTHER, False),
        ("Actions taken", SectionKind.EVIDENCE, False),
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("expect 203.0.113.47 absent from the list", True),
        ("you should see 0% packet loss", True),
        ("3/3 packets received", True),
        ("it should return exit code 0", True),
        ("lists Microsoft.Storage", True),
        ('must print "succeeded"', True),
        ("average below 2 ms", True),
        ("Result after deletion: `[]`.", True),
        ("the output ends in `0`", True),
        ("the result is fine", False),
        ("Result: only `1 RETURN all` remains.", True),
        ("it should complete normally", False),
        ("these should show that the delay has gone", False),
        ("it should print `0`", True),
        ("# observed: 200", True),
        ("`iptables -S OUTPUT` printed only `-P OUTPUT ACCEPT`", True),
        ("avg rtt 1.2 ms (was ~51 ms)", True),
        ("to confirm the fix", False),
        ("monitor the service for a while", False),
        ("it shows the current config", False),
        ("`iptables -L INPUT -n` on tf-dest-vm shows an empty chain", True),
        ("`iptables -L DOCKER-USER -n -v` shows the new rule's packet counter increasing", True),
        ("pkts go up on the ACCEPT while the call is retried", True),
        ("then look at the counters", False),
        ("the policy DROP packet count stops climbing while the call is retried", True),
        ("you want to see two lines: Microsoft.Sql and Microsoft.Storage", True),
        ("it should come back as an empty list", True),
        ("`az network nsg rule list … -o tsv` should come back empty", True),
        ("the app should come back soon", False),
        ("`tc -s qdisc show dev eth0` on tf-source-vm: no `tbf` at the root.", True),
        ("`tc -s qdisc show dev eth0` on tf-source-vm: look it over.", False),
        ("the winner should be the default VnetLocal route", True),
        ("the next hop type should now be VnetLocal", True),
        ("the fix should be the last step of the change", False),
    ],
)
def test_expected_results(text: str, expected: bool) -> None:
    assert has_expectation(text) is expected


@pytest.mark.parametrize(
    ("title", "kind"),
    [
        ("Check", SectionKind.VERIFICATION),
        ("Checks after the fix", SectionKind.VERIFICATION),
        ("Checks performed", SectionKind.EVIDENCE),
    ],
)
def test_a_check_titled_alone_is_the_verification(title: str, kind: SectionKind) -> None:
    assert split_sections(f"## Action\nx\n## {title}\ny\n")[-1].kind is kind


def test_a_plain_text_report_s_bare_titles_are_headings() -> None:
    report = "Findings\n1. the qdisc\n\nFix\nRun on tf-source-vm:\n\n    sudo tc qdisc del dev eth0 root\n\nNotes\nok\n"
    kinds = [(s.title, s.kind) for s in split_sections(report)]
    assert kinds[:2] == [("Findings", SectionKind.EVIDENCE), ("Fix", SectionKind.ACTIONS)]
    assert not any(title == "Notes" for title, _ in kinds), "a title of no known kind stays text"
    assert [s.title for s in split_sections("We looked.\nFix\n")] == [""], "a line within a paragraph is no heading"


def test_a_bold_line_that_states_something_is_no_title() -> None:
    report = "**Verdict: no network fault. No change recommended.**\n\n| Flow | Result |\n|---|---|\n| 9999 | closed |\n"
    assert all(s.kind is not SectionKind.ACTIONS for s in split_sections(report))
    assert split_sections("**Recommended actions**\n1. x\n")[0].kind is SectionKind.ACTIONS


@pytest.mark.parametrize("label", ["**Step 2: remove the qdisc.**", "**Fix 2 (removes the latency)** — on tf-source-vm:"])
def test_a_step_after_a_steps_verify_label_is_the_fix_again(label: str) -> None:
    """ "Verify after 30 s:" under step 1 is that step's check; "**Step 2: …**" below it is the fix's next step, not more
    of the verification."""
    report = (
        "## Remediation\n\n**Step 1: remove the rule.**\n\n```\naz network nsg rule delete -n r\n```\n\n"
        f"Verify after about 30 s:\n\n```\naz network nsg rule show -n r\n```\n\n{label}\n\n"
        "```\ntc qdisc del dev eth0 root\n```\n"
    )
    kinds = [(s.title, s.kind) for s in split_sections(report)]
    assert kinds[-1][1] is SectionKind.ACTIONS and kinds[-1][0].startswith(label.strip("*")[:6])
    assert ("Verify after about 30 s", SectionKind.VERIFICATION) in kinds
    headed = report.replace(f"\n\n{label}", f"\n\n## Verification\n\n{label}")
    assert split_sections(headed)[-1].kind is SectionKind.VERIFICATION, "under a heading of its own a step label is its"


@pytest.mark.parametrize("title", ["Changes", "Proposed changes", "Required change"])
def test_a_list_of_changes_is_the_fix(title: str) -> None:
    assert split_sections(f"Found the rule.\n\n{title}:\n- `sudo iptables -D INPUT 1`\n")[-1].kind is SectionKind.ACTIONS
    assert split_sections(f"{title} observed:\n- the rule\n")[-1].kind is not SectionKind.ACTIONS


@pytest.mark.parametrize(
    ("prose", "asks"),
    [
        ("Remove the rule and reload fail2ban.", True),
        ("The rule should be removed.", True),
        ("It is harmless as long as no RDP service is installed.", False),
        ("The rule was added last night.", False),
        ("Raise a separate ticket for the monitoring team.", False),
        ("Review whether the DROP is intentional.", False),
        ("Do not change the NSG.", False),
        ("The slow requests are the 404s and the resets are the 9999 probes.", False),  # a noun after its article
        ("Reset the counters, then replay the call.", True),
        ("Conclusion: nothing dropped or altered in the network.", False),  # a state denied, not a change asked
        ("If nothing works, delete the rule.", True),
        ("Keep the interface settings; pass it to the owner if it needs to be addressed.", False),  # words a verb begins
        ("Stopping and unbanning it by hand is a replacement for the jail.", True),
        ("No network change; close the drop hypothesis and pass the timing to the owner.", False),  # a hypothesis
        ("Close port 3389 on the NSG.", True),
        ("Check after their change: the average should drop to a few milliseconds.", False),  # a noun; a measure falls
        ("Drop to a DROP policy on INPUT.", True),
    ],
)
def test_what_asks_for_a_change(prose: str, asks: bool) -> None:
    assert asks_for_change(prose) is asks


def test_what_the_writer_says_they_are_not_doing_is_a_warning() -> None:
    text = "I am deliberately not running `iptables -F` here. Run `iptables -P INPUT ACCEPT`."
    blanked = blank_warnings(text)
    assert "`iptables -F`" not in blanked and "`iptables -P INPUT ACCEPT`" in blanked


def test_steps_taken_and_recommended_are_the_fix() -> None:
    report = "Capture summary.\n\nSteps taken / recommended:\n1. `sudo iptables -F INPUT`\n"
    assert split_sections(report)[-1].kind is SectionKind.ACTIONS
    assert split_sections("Steps taken:\n1. `sudo iptables -L`\n")[-1].kind is SectionKind.EVIDENCE


@pytest.mark.parametrize(
    ("prose", "expected"),
    [
        ("Clear the shaping: sudo tc qdisc del dev eth1 root", ["sudo tc qdisc del dev eth1 root"]),
        (
            "take the rule out with iptables -D INPUT -p udp --dport 53 -j REJECT.",
            ["iptables -D INPUT -p udp --dport 53 -j REJECT"],
        ),
        ("afterwards nc -zv 10.9.9.9 443 -> open", ["nc -zv 10.9.9.9 443"]),
        ("confirm: tc qdisc show dev eth1 — only the default qdisc", ["tc qdisc show dev eth1"]),
        (
            "az network nsg rule delete -g rg1 \\\n  --nsg-name web-nsg -n old-deny",
            ["az network nsg rule delete -g rg1 --nsg-name web-nsg -n old-deny"],
        ),
        (
            "dest:   iptables -P INPUT ACCEPT && iptables -F INPUT     # clears whatever else is lurking there too",
            ["iptables -P INPUT ACCEPT && iptables -F INPUT"],
        ),
        ("- ip link set dev eth1 mtu 1400", ["ip link set dev eth1 mtu 1400"]),
        ("resize it (az vm resize -g rg1 -n vm1 --size Standard_D4s_v5)", ["az vm resize -g rg1 -n vm1 --size Standard_D4s_v5"]),
        ("policy is DROP now (docker set it), so", []),
        ("412 pkts dropped. docker put it there on restart.", []),
        ("latency only. tc qdisc del dev eth0 root on the sender", ["tc qdisc del dev eth0 root on the sender"]),
        ("2) netem on eth1 \u2192 tc qdisc del dev eth1 root", ["tc qdisc del dev eth1 root"]),
        ("then iptables -S f2b-sshd should only show the RETURN", ["iptables -S f2b-sshd"]),
        ("iptables -I INPUT -p tcp --dport 22 -j DROP was added last night", []),
        ("remove the line from rules.v4, then systemctl reload harden-net", ["systemctl reload harden-net"]),
        (
            "checks: drift_detected false ; iptables -S INPUT | grep -c 5001 -> 0",
            ["iptables -S INPUT | grep -c 5001"],
        ),
        ("ping the host again later, and host lookups look fine.", []),
        ("The chain has a rule that drops port 53 traffic.", []),
        ("az network route-table route delete -g rg -n r1 and were good", ["az network route-table route delete -g rg -n r1"]),
        ("delete it: az network nsg rule delete -n x and have a look after", ["az network nsg rule delete -n x"]),
        ("docker restart set FORWARD policy to DROP and added isolation chains", []),
        ("iptables -F INPUT     \u2190 clears whatever the engineer added", ["iptables -F INPUT"]),
        (
            "echo '* * * * * root tc qdisc del dev eth0 root' > /etc/cron.d/x",
            ["echo '* * * * * root tc qdisc del dev eth0 root' > /etc/cron.d/x"],
        ),
        ("echo the new value back to the team > everyone", []),
        ('put {"iptables": false} in daemon.json and systemctl restart docker, then', ["systemctl restart docker"]),
        ("ping and curl both time out, and nc hangs", []),
        (
            "fixes -> source: sudo tc qdisc del dev eth0 root | dest: sudo iptables -D INPUT -p icmp -j DROP",
            ["sudo tc qdisc del dev eth0 root", "sudo iptables -D INPUT -p icmp -j DROP"],
        ),
        (
            "fixes: on dest iptables -D INPUT 1 ; on source tc qdisc del dev eth0 root",
            ["iptables -D INPUT 1; tc qdisc del dev eth0 root"],
        ),
        ("cp /etc/ghost-shaper/shaper.conf /root/shaper.bak", ["cp /etc/ghost-shaper/shaper.conf /root/shaper.bak"]),
        ("cat the file and rm it", []),
        (  # arguments left out ("…") before an option: the command goes on
            "detach it (az network vnet subnet update ... --remove networkSecurityGroup) until reviewed",
            ["az network vnet subnet update ... --remove networkSecurityGroup"],
        ),
        (  # an ellipsis before words ends it, as a full stop does
            "take it off: az network vnet subnet update -n default --remove networkSecurityGroup ... then nc -zv h 5432",
            ["az network vnet subnet update -n default --remove networkSecurityGroup", "nc -zv h 5432"],
        ),
        (  # a step after a semicolon that is prose: the command ends before it
            "unblock now — az network nic update -g rg -n nic1 --remove networkSecurityGroup ; re-attach once it is clean",
            ["az network nic update -g rg -n nic1 --remove networkSecurityGroup"],
        ),
        ("then re-run iperf between the two boxes; throughput should be back", []),  # a probe told in words
        (  # the clause after "and" has a subject of its own, with its prepositional phrase
            "Remove it with az network route-table route delete -g rg --route-table-name rt -n bad and connectivity "
            "between the two VMs should come back",
            ["az network route-table route delete -g rg --route-table-name rt -n bad"],
        ),
    ],
)
def test_bare_commands_in_prose(prose: str, expected: list[str]) -> None:
    """Messy output writes commands without backticks; they are still the commands the report recommends."""
    assert [c for _, c in bare_commands(prose)] == expected


@pytest.mark.parametrize(
    "prose", ["Have the owners switch the service to a threaded server.", "Migrate the job to the new host."]
)
def test_switching_or_migrating_is_a_change(prose: str) -> None:
    assert asks_for_change(prose)


def test_a_read_that_shows_a_value_in_code_names_its_result() -> None:
    assert has_expectation("`tc qdisc show dev eth0` shows the default `qdisc mq 0: root` and no `netem`")
    assert not has_expectation("Re-check the rule list with `az network nsg rule list -o table`.")  # list, a noun


def test_a_line_opened_by_an_arrow_can_hold_a_command() -> None:
    assert bare_commands("-> fail2ban-client status sshd\n") == [(3, "fail2ban-client status sshd")]


@pytest.mark.parametrize(
    ("prose", "asks"),
    [
        ("no NSG / route / VM network change recommended.", False),
        ("if the app team cares, that's a code change on their side.", False),
        ("a network change is needed on the NSG.", True),
        ("the RSTs are port 9999 where nothing listens, thats what a closed port does", False),
        ("forward path: DOCKER-USER -> STAGE-1 -> STAGE-2 = DROP, so forwarded traffic breaks", False),
        ("those chains belong to dockerd and get rewritten on every start", False),
    ],
)
def test_what_a_report_hands_on_or_denies_is_no_change(prose: str, asks: bool) -> None:
    assert asks_for_change(prose) is asks


def test_a_lower_case_sentence_after_a_full_stop_is_a_sentence_of_its_own() -> None:
    """Messy output writes lower case; abbreviations and numbers do not end a sentence."""
    assert split_sentences("drift is true. then nc -zv 10.0.1.5 8080 works") == [
        "drift is true.",
        "then nc -zv 10.0.1.5 8080 works",
    ]
    assert len(split_sentences("use a probe, e.g. nc against port 8080 v. 1.2 works")) == 1
    assert split_sentences("H4 refuted, both listening. = two independent rules") == [
        "H4 refuted, both listening.",
        "= two independent rules",
    ]


def test_a_probe_that_should_no_longer_hang_states_its_result() -> None:
    assert has_expectation("then nc -zv 10.0.1.5 8080 from 10.0.1.4 shouldn't hang anymore.")
    assert not has_expectation("then nc -zv 10.0.1.5 8080 from 10.0.1.4 to see.")


def test_never_forbids_an_action_not_a_fact() -> None:
    """ "bursts never queue:" states what the fix achieves; "never flush INPUT" forbids a command."""
    fact = "raise the backlog so bursts of connections never queue:\n`sysctl -w net.core.somaxconn=1024`"
    assert "`sysctl -w net.core.somaxconn=1024`" in blank_warnings(fact)
    assert "`iptables -F INPUT`" not in blank_warnings("never run `iptables -F INPUT` on this host")


@pytest.mark.parametrize(
    ("label", "command"),
    [
        ("**Fix** (tf-source-vm only, on the default-route interface):", "tc qdisc del dev eth0 root"),
        ("What I'd do", "tc qdisc del dev eth0 root"),
        ("What to do:", "iptables -D INPUT -p icmp -j DROP"),
        ("remove just that route \u2192", "az network route-table route delete -g rg --route-table-name rt -n r"),
    ],
)
def test_a_fix_labelled_inside_a_findings_section_is_the_fix(label: str, command: str) -> None:
    """A label alone on its line heads the fix even under "Findings" or without any heading: an aside after a bold
    label, an apostrophe in a plain one, an arrow where a colon would be."""
    text = (
        "Findings\n\nThe fault sits where the listing showed it.\n\n"
        f"{label}\n- `{command}`\n\nverify \u2192\n- `ping -c 5 10.0.1.5` -> 0% packet loss\n"
    )
    actions = extract_actions(text)
    assert [a.commands for a in actions][:1] == [[command]]


def test_a_plain_heading_with_a_dashed_subtitle_opens_its_section() -> None:
    """ "Remediation — change A (urgent)" alone on a line after a blank one is the fix's heading; its subtitle stays."""
    sections = split_sections("Findings\n1. the DROP\n\nRemediation — change A (urgent)\n1. `sudo iptables -D INPUT 1`\n")
    fix = next(s for s in sections if s.kind is SectionKind.ACTIONS)
    assert fix.title == "Remediation" and fix.body[0] == "change A (urgent)"


def test_a_result_paragraph_after_a_bare_check_is_that_checks_result() -> None:
    (*_, checked) = extract_actions(
        "Delete the rule:\n\naz network nsg rule delete -g rg --nsg-name tf-dest-vm-nsg -n ghost-demo-block-8080\n\n"
        "then from tf-source-vm run\n\ncurl -s -o /dev/null -w '%{http_code}' http://10.0.1.5:8080/\n\nyou want to see 200\n"
    )
    assert checked.verification is not None and checked.verification.command.startswith("curl")


def test_what_a_thing_did_not_have_states_a_fact_and_warns_against_nothing() -> None:
    text = "The subnet didnt have an NSG before today, so the cleanest rollback is to take the NSG off the subnet."
    assert "take the NSG off the subnet" in blank_warnings(text)
    assert "run `iptables -F`" not in blank_warnings("I did not run `iptables -F`, it would drop SSH. Delete rule 3.")
