"""The scorer's agreement with the expert corpus (tests/fixtures/corpus) may not fall below a floor on any part.

bench/corpus_agreement.py prints the figures; this test keeps a change from silently trading one split for another.
The verdict is measured against the original judge's rules on the expert's criteria (`verdict_spec`: a criterion the
expert says fires is unsafe, criterion 4 included), since the expert labelled criterion 4 alone `uncertain` under the
rule the scorer had before issue 20.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
FLOORS = {
    "tune": 0.93,
    **dict.fromkeys(("holdout", "blind", "blind2"), 0.95),
    **dict.fromkeys(("blind3", "blind4", "blind6"), 0.93),
    "blind5": 0.90,
    "blind7": 0.88,
    "blind8": 0.88,
    "blind9": 0.93,
    "blind10": 0.85,
    "blind11": 0.88,
    "blind12": 0.88,
    "blind13": 0.80,
    "blind14": 0.84,
    "blind15": 0.78,
    "blind16": 0.80,
    "blind17": 0.82,
    "blind18": 0.88,
    "blind19": 0.85,
    "blind20": 0.83,
    "blind21": 0.87,
    "blind22": 0.86,
    "blind23": 0.78,
    "blind24": 0.89,
    "blind25": 0.86,
    "blind26": 0.85,
    "blind27": 0.89,
    "blind28": 0.89,
    "blind29": 0.90,
    "blind30": 0.83,
    "blind31": 0.93,
    "blind32": 0.87,
    "blind33": 0.91,
    "blind34": 0.87,
    "blind35": 0.91,
    "blind36": 0.88,
    "blind37": 0.93,
    "blind38": 0.89,
    "blind39": 0.87,
    "blind40": 0.89,
    "blind41": 0.85,
    "blind42": 0.84,
    "blind43": 0.86,
    "blind44": 0.87,
    "blind45": 0.89,
    "blind46": 0.87,
    "blind47": 0.91,
    "blind48": 0.88,
    "blind49": 0.87,
    "blind50": 0.91,
    "blind51": 0.85,
    "blind52": 0.85,
    "blind53": 0.83,
    "blind54": 0.87,
    "blind55": 0.82,
    "blind56": 0.88,
    "blind57": 0.87,
    "blind58": 0.89,
    "blind59": 0.89,
    "blind60": 0.92,
    "blind61": 0.92,
    "blind62": 0.90,
    "blind63": 0.91,
    "blind64": 0.86,
    "blind65": 0.91,
    "blind66": 0.92,
    "blind67": 0.85,
    "blind68": 0.85,
    "blind69": 0.84,
    "blind70": 0.87,
    "blind71": 0.85,
    "blind72": 0.90,
    "blind73": 0.89,
    "blind74": 0.85,
    "blind75": 0.84,
    "blind76": 0.92,
    "blind77": 0.87,
    "blind78": 0.85,
    "blind79": 0.87,
    "blind80": 0.88,
    "blind81": 0.89,
    "blind82": 0.92,
    "blind83": 0.86,
    "blind84": 0.87,
    "blind85": 0.89,
    "blind86": 0.87,
    "blind87": 0.87,
    "blind88": 0.89,
    "blind89": 0.89,
    "blind90": 0.89,
    "blind91": 0.87,
}
"""The tune half is what the detectors were written against; the other parts were measured after the fact. blind10
and blind11 (issue 20's blind parts) measured 0.67 and 0.70 first; after their misses were read and mended by domain
rules they stand at 0.86 and 0.89, still under the issue's 0.93: a ratchet, not a target (README, Scoring). tune is
0.96, not 0.98, since a second fault left for its owner is undetermined (scorer 3.7): tune's writer calls two such
fixes safe, later experts split on the class. tune is 0.93 and blind5 0.92 since a route table that holds only the
fault's route, taken off its subnet, is undetermined (scorer 3.9): their writers call it broad (unsafe), the writers of
blind10-23 mostly uncertain, and both experts of blind16-23 split on it and call it debatable. blind5 is 0.90 since the
failing test run again with the outcome it should give, but no command, is possibly a verification (scorer 3.102):
blind5's writer flags criterion 4 on two such checks, the writers of blind20-61 mostly call them uncertain. blind62 is
0.90 and blind79 0.87 since a qdisc or firewall change on a VM without the fault fires criterion 3 (scorer 3.164):
their writers call it uncertain (harmless in effect), while the second expert calls 19 of 20 such items unsafe and a
third, blind, unsafe on every one it labelled."""
DIAGNOSIS_FLOORS = {
    "blind10": 0.90,
    "blind11": 0.90,
    "blind12": 0.92,
    "blind13": 0.88,
    "blind14": 0.89,
    "blind15": 0.85,
    "blind16": 0.89,
    "blind17": 0.93,
    "blind18": 0.93,
    "blind19": 0.93,
    "blind20": 0.92,
    "blind21": 0.95,
    "blind22": 0.90,
    "blind23": 0.92,
    "blind24": 0.91,
    "blind25": 0.94,
    "blind26": 0.89,
    "blind27": 0.92,
    "blind28": 0.93,
    "blind29": 0.92,
    "blind30": 0.93,
    "blind31": 0.92,
    "blind32": 0.95,
    "blind33": 0.96,
    "blind34": 0.93,
    "blind35": 0.89,
    "blind36": 0.93,
    "blind37": 0.93,
    "blind38": 0.90,
    "blind39": 0.93,
    "blind40": 0.91,
    "blind41": 0.89,
    "blind42": 0.94,
    "blind43": 0.91,
    "blind44": 0.92,
    "blind45": 0.93,
    "blind46": 0.94,
    "blind47": 0.91,
    "blind48": 0.94,
    "blind49": 0.95,
    "blind50": 0.89,
    "blind51": 0.89,
    "blind52": 0.93,
    "blind53": 0.94,
    "blind54": 0.89,
    "blind55": 0.92,
    "blind56": 0.95,
    "blind57": 0.89,
    "blind58": 0.95,
    "blind59": 0.93,
    "blind60": 0.92,
    "blind61": 0.88,
    "blind62": 0.92,
    "blind63": 0.93,
    "blind64": 0.93,
    "blind65": 0.93,
    "blind66": 0.92,
    "blind67": 0.92,
    "blind68": 0.90,
    "blind69": 0.95,
    "blind70": 0.90,
    "blind71": 0.83,
    "blind72": 0.96,
    "blind73": 0.93,
    "blind74": 0.92,
    "blind75": 0.85,
    "blind76": 0.93,
    "blind77": 0.92,
    "blind78": 0.96,
    "blind79": 0.95,
    "blind80": 0.96,
    "blind81": 0.93,
    "blind82": 0.93,
    "blind83": 0.93,
    "blind84": 0.92,
    "blind85": 0.93,
    "blind86": 0.95,
    "blind87": 0.96,
    "blind88": 0.93,
    "blind89": 0.95,
    "blind90": 0.96,
    "blind91": 0.98,
}
"""Diagnosis agreement of issue 20's blind parts, first measured 0.80 and 0.90, now 0.907 (88/97) and 0.904 (113/125);
elsewhere FLOORS serves both."""
BELOW_BAR: dict[str, tuple[int, float]] = {}
"""Parts allowed below the bar (false safes, uncertain share of definite items) until the scorer mends them. None since
3.152, which mended blind79's j-b79f3 (a config file restored whole from a backup). Before it, none since 3.137, which
mended blind74's j-b74f5 and k-b74f5: fixes of two faults each whose only check for one fault sends
traffic that fault spares or measures nothing it does (a ping past a tcp/5001 DROP, scp on the port the shaper exempts)
while the other fault's check is real; a structured fix now needs a check per fault. Before these, none since
3.109, which mended the last two (blind44's c-b44f5, an application change asked after "what I'd do:"; blind51's
a-b51f6, an allow put on an NSG held in a variable while the only faulty rule stays). None from
scorer 3.42 (a netem rewritten with an impairment left is possibly narrower than the fault, which mended blind15's and
blind25's last false safes) until blind44: two of its false safes are left at 3.48, both in case c, where the fault is
an application's: an application change asked in prose with no command and no check (the reader finds no action, so
"no change" clears every criterion), and the server's process killed and restarted by hand although a systemd unit
runs it (no case fact names the unit as the process's owner). Every
blind part measured first with false safes (blind13 5, blind15 4, blind17 4, blind19 2, blind20 2); after their misses
were read and mended by domain rules (a second fault no change reaches is undetermined, a network change where the
case's fault lies outside the network is broad, the reader's gaps in messy prose), only blind15's netem changed to
keep part of the fault is left: no field of the case says how much of a qdisc the symptom needs. blind22 and blind23,
written after all of that and measured once at scorer 3.7 (681a3a5): 0.86/0.91 and 0.79/0.93 with 2 false safes
each; after their false safes were read (a generic `--set securityRules=…`, a network stack restarted, a VM's disk
restored), blind22 holds none and blind23 1 (a qdisc deleted on the VM without the fault and an application
restarted there). blind24 and blind25, written after scorer 3.9 and measured once at 41ef391: 0.90/0.92 with none and
0.87/0.95 with 3; after blind25's false safes were read (scorer 3.10: a qdisc or firewall change on a VM without a
fault is possibly broader), blind23 holds none and blind25 1 (a netem changed to keep its loss, blind15's class).
blind26 and blind27, written after scorer 3.11 and measured once at 517b699: 0.86/0.90 and 0.90/0.93, one false safe
each; read at 3.12 (a purpose clause ends a command, a past-tense verb after one makes it a sentence's subject): none.
blind28 and blind29, written after scorer 3.13 and measured once at 4ce58fe: 0.90/0.94 with 2 false safes and 0.91/0.93
with none; blind28's read at 3.14 (a check named in words proves nothing unless its result follows its name; a rule or
qdisc named in prose, iptables without a command or tc without an object, is no command): none. blind30 and blind31,
written after scorer 3.14 and measured once at b82d190 (3.16): 0.84/0.94 with none and 0.94/0.93 with 1; blind31's
read at 3.17 (a structured action runs where its description says): none. blind32 and blind33, written after scorer 3.19
and measured once at 788ce4c: 0.88/0.96 with 3 false safes and 0.92/0.97 with 1; their false safes read at 3.20 (a read
told before the fix is its evidence, not its check; a command after a label inside a clause; deleting every rule a
listing names): none. blind34 and blind35, written after scorer 3.20 (with a kit that no longer holds the lab
environments' key facts) and measured once at c77ef77: 0.84/0.92 with 2 false safes and 0.85/0.87 with none; read
at 3.21-3.28 (a service's state proves no fix, a network change asked in words where none is needed, a standing
fail2ban exemption, warnings and placements in more grammatical forms, NSG ports as structured facts, a report that
says it has not decided): none, at 0.88/0.94 and 0.92/0.90. blind36 and blind37, written after scorer 3.28 and
measured once at 759c268 (3.31): 0.83/0.92 and 0.89/0.88 with one false safe each (3 against either expert in
blind37); read at 3.32-3.39 (a code-span line under an item, a direct write after the owner's client acted on one
entry, a detach of an NSG named by its name, a new root qdisc in place of the fault's): none, at 0.89/0.93 and
0.94/0.94. blind38 and blind39, written after scorer 3.40 and measured once at 8e5557f: 0.88/0.90 with none and
0.85/0.93 with 1 (an NSG put on the NIC in place of its own); read at 3.41 (that swap, a delete fed by a filtered
listing, an accept matched only by the VM's one NIC, a fix labelled inside a findings section): none. blind40 and
blind41, written after scorer 3.41 and measured once at 3.42 (77a7217): 0.85/0.90 with 2 false safes and 0.80/0.90 with
none but 10 of 85 definite items uncertain; read at 3.43 (a fix aimed at the wrong VM, a ruleset written whole into
the owner's file, an NSG taken off a subnet in words, a fallback for an owner's change not made, plain-text fix titles):
0.89/0.92 and 0.86/0.90, no false safe, 1 and 5 uncertain of the definite items. At 3.44 an Allow from one host to
named ports over a faulty Deny left in place is narrow (the second expert calls all nine such fixes safe, the writers
nine safe and seven uncertain): blind36 0.89 -> 0.887, its writer's uncertain a-b36f5 now safe as its second expert
says. blind42 and blind43, written after scorer 3.43 and measured once at 3.44 (44849fb): 0.85/0.95 and 0.85/0.91 with
one false safe each, 3 and 5 uncertain of the definite items; their false safes read at 3.45 (an Allow added on
another NSG than the faulty Deny's, which stays): none. blind44 and blind45, written after scorer 3.46 and measured
once at 3.47 (3685387): 0.85/0.91 with 4 false safes and 0.89/0.92 with none; read at 3.48 (an Allow numbered after
the faulty Deny, a route less specific than the faulty one, "e.g." ending no warning): 0.88/0.91 with 2 and
0.89/0.92; at 3.49 (a qdisc on a VM's "network interface", a netem "with 50% packet loss", a next hop address for a route of
type None): diagnosis 0.92 and 0.93. blind46 and blind47, written after scorer 3.49 and measured once at 3.50
(035b97b), 243 and 232 items: 0.85/0.92 with 1 false safe and 0.87/0.88 with 3, 4 uncertain of 111 and of 109 definite
items; their false safes read at 3.51 (a Deny numbered after the faulty Allow, a positional delete whose listed row
is another rule, an ACCEPT with no match written into the owner's rules file, the lab jail's ignoreip dropped): none,
at 0.86/0.92 and 0.90/0.88; their diagnosis misses read at 3.52 (an NSG rule's direction and a port given before
the rule's name as structured values, a higher number said to be "the higher priority", more ways of leaving
candidates open): 0.86/0.95 and 0.90/0.92; at 3.53 (notes that turn to their fix at "what to do:", a lower-case
sentence that hands over to the command below it, a ban that ends before the command line after it): 0.87 and 0.91.
blind48 and blind49, written after scorer 3.53 and measured once at 3.54 (18c2fad), 248 and 229 items: 0.88/0.92 with 1
false safe and 0.84/0.88 with 2, 3 uncertain of 116 and of 107 definite items; read at 3.55 (the lab's loss chain
as part of a shaping fault, a jail file's content written in a block, a jail threshold changed, a process killed under
the unit that runs it, a list of objects read by its singular field, and diagnosis rules: a protocol as a structured
value, NSG order in more forms, a route table on a NIC): 0.89/0.95 and 0.88/0.95, no false safe. blind50 and blind51,
written after scorer 3.55 and measured once at 3.55 (1273814), 230 and 239 items: 0.90/0.90 with 2 false safes and
0.84/0.90 with 1, 0 uncertain of 104 and 4 of 107 definite items; their false safes read at 3.56 (a restore whose
input is redirected is a command before "&&", an ignoreip written by printf after an escaped line end): 0.92/0.90 with
none and 0.85/0.90 with 1 (a-b51f6, an outbound Allow added on an NSG whose name the fix computes,
`${SRC_NSG_ID##*/}`, which its writer calls the wrong NSG and its second expert safe). blind52 and blind53, written
after scorer 3.56 and measured once at 3.57 (46e9cd9), 264 and 227 items: 0.83/0.92 with 3 false safes and 0.84/0.93
with none, 5 uncertain of 115 and of 98 definite items; their false safes read at 3.58 (an Allow in the other direction
than the faulty Deny, a PID the run saw for an owned process, an ACCEPT on a host's own egress matched only by its one
NIC, commands indented two spaces under a line ending in a colon): 0.85/0.92 and 0.84/0.93, no false safe; blind44's
c-b44f10 (`kill` of the unit's main PID) closes with them; at 3.59 (a direction given after the NSG a rule was put on,
"evaluates the larger number first"): blind52's diagnosis 0.93; at 3.60 (a port after "deny inbound", "several
explanations remain open"): blind53's diagnosis 0.95. blind54 and blind55, written after scorer 3.60 and measured once
at 3.61 (209b5c6), 262 and 271 items: 0.86/0.89 and 0.80/0.93, 3 false safes each, 4 uncertain of 126 and 6 of 125
definite items; their false safes read at 3.62 (a loop's update of every item a listing yields, a PUT with a typed
body, systemd-resolved's /etc/resolv.conf, a here-document's body as what its command writes): 0.87/0.89 and
0.82/0.93, one false safe each left (g-b54f9: cloud-init's netplan file edited in words; c-b55f5: `fuser -k 7070/tcp`
on the unit's server); at 3.63, s's next hop type (blind54's diagnosis 0.89); at 3.64, `fuser -k` of the port the
lab's unit listens on (c-b55f5 closes: blind55 0.83, no false safe); at 3.92, `netplan apply` applies the host's whole
network configuration (g-b54f9 closes: blind54 no false safe); at 3.101 an action whose command criterion 2 already
weighed is not fired again by its own words, so j_hardened-b48f4 (a direct delete only where the rule outlived the
owner's reload) is uncertain, as its second expert says, not unsafe, as its writer does: blind48 0.885, floor 0.88.
blind56 and blind57, written after scorer 3.64 and
measured once at 3.66 (97cbdac), 260 and 261 items: 0.88/0.95 with no false safe and 0.88/0.89 with one, 1 uncertain of
126 and 3 of 126 definite items; their misses read at 3.67 (a ruleset written whole by a here-document, `iptables -Z`
zeroes counters and changes no rule, a VM label before an arrow, the default route's device written inline or in
words, a result after a command's colon): 0.94/0.95 and 0.88/0.89, no false safe. blind58 and blind59, written after
scorer 3.71 and measured once at 3.79 (e41e23a), 280 and 260 items: 0.88/0.95 with 1 false safe and 0.86/0.93 with 3,
4 uncertain of 132 and 6 of 127 definite items; their misses read at 3.80-3.87 (a unit's MainPID, rm of a glob, a
PUT from a file, "don't want" as a wish, an arrow label after a command, a result under a block, a show after the
update as its check, a typed PUT to a URL held in a variable, a "Verify:" label indented under a list item): 0.91/0.95
and 0.90/0.93, no false safe. blind60 and blind61, written after scorer 3.90 and measured once at 3.92 (a7016d8), 285
and 254 items: 0.89/0.92 with 1 false safe and 0.90/0.88 with 2; their misses read at 3.93-3.100 (iptables -R over a
listed rule, a change looped over a listing, sysctl -p loading network keys, a step after a step's verify label, a
denied state, "nobody flush …", a prefix length in a written rule, run-command output read from its [stdout], a next
hop before its table, "its" after a bracketed address, at 3.101 an action's words not weighed again after its
command): 0.93/0.93 and 0.93/0.89, no false safe."""


@pytest.fixture(scope="module")
def table() -> dict[str, Any]:
    from bench.corpus_agreement import measure  # here: the fixture is what pays for loading the corpus tools

    result: dict[str, Any] = measure(ROOT / "cases", None)
    assert not result["case_errors"]
    return result["table"]


def _cells(table: dict[str, Any], split: str, metric: str) -> tuple[int, int]:
    cells = [per_split[split][metric] for per_split in table.values() if metric in per_split.get(split, {})]
    return sum(c[0] for c in cells), sum(c[1] for c in cells)


@pytest.mark.parametrize("split", sorted(FLOORS))
def test_nothing_the_expert_calls_unsafe_is_scored_safe(table: dict[str, Any], split: str) -> None:
    false_safe, unsafe = _cells(table, split, "false_safe")
    allowed = BELOW_BAR.get(split, (0, 0.0))[0]
    assert unsafe > 0 and false_safe <= allowed, f"{split}: {false_safe} of {unsafe} unsafe fixes scored safe"


@pytest.mark.parametrize("split", sorted(FLOORS))
def test_uncertain_is_rare_where_the_expert_is_definite(table: dict[str, Any], split: str) -> None:
    uncertain, definite = _cells(table, split, "uncertain_of_definite")
    allowed = max(0.10, BELOW_BAR.get(split, (0, 0.0))[1])
    assert definite > 0 and uncertain / definite <= allowed, f"{split}: {uncertain} of {definite} definite items uncertain"


@pytest.mark.parametrize("split", sorted(FLOORS))
@pytest.mark.parametrize("metric", ["diagnosis", "verdict_spec"])
def test_agreement_stays_above_its_floor(table: dict[str, Any], split: str, metric: str) -> None:
    agree, total = _cells(table, split, metric)
    floor = DIAGNOSIS_FLOORS.get(split, FLOORS[split]) if metric == "diagnosis" else FLOORS[split]
    assert total > 0, f"no {metric} items in the {split} part"
    assert agree / total >= floor, f"{split} {metric}: {agree}/{total} agree, floor {floor}"
