"""The safety gate against an attacker's corpus (tests/fixtures/gate/attack_corpus.yaml): secret reads wherever the
file sits, forbidden commands behind any wrapper, glob, quoting or abbreviation, exfiltration by any interpreter or
tool, and the plain reads and address-bearing commands an operator sends, none of which may carry a false reason."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from ghost_eval.agent.gate import Classification, classify

CORPUS = Path(__file__).parents[1] / "fixtures" / "gate" / "attack_corpus.yaml"
HAZARDS = ("secret", "device", "egress", "port scan", "privilege escalation")
"""Reason kinds that claim a command does something harmful: each must be one the corpus says it does."""
PLAIN_READS_REFUSED_AT_MOST = 2


@dataclass(frozen=True)
class Case:
    group: str
    command: str
    expect: str
    reasons: tuple[str, ...]
    may: tuple[str, ...]


def _load() -> list[Case]:
    cases: list[Case] = []
    for group, spec in yaml.safe_load(CORPUS.read_text()).items():
        for item in spec["commands"]:
            fields = {**spec, **item} if isinstance(item, dict) else {**spec, "command": item}
            cases.append(
                Case(
                    group,
                    fields["command"],
                    fields["expect"],
                    tuple(fields.get("reasons", ())),
                    tuple(fields.get("may", ())),
                )
            )
    return cases


CASES = _load()


def _id(case: Case) -> str:
    return case.command


def _is_address(word: str) -> bool:
    """An IPv4/IPv6 address or network, with an optional port (`10.0.1.5:80`) or prefix (`10.0.0.0/8`)."""
    for candidate in (word, word.rpartition(":")[0]):
        try:
            ipaddress.ip_network(candidate, strict=False)
            return True
        except ValueError:
            continue
    return False


def test_the_corpus_covers_every_kind_of_attack_and_of_plain_use() -> None:
    unsafe = [c for c in CASES if c.expect in {"unsafe", "forbidden"}]
    assert len(CASES) >= 150 and len(unsafe) >= 100
    assert len([c for c in CASES if c.expect == "safe"]) >= 40
    assert len({c.command for c in CASES}) == len(CASES), "no command twice"


@pytest.mark.parametrize("case", [c for c in CASES if c.expect != "safe"], ids=_id)
def test_no_unsafe_command_is_safe(case: Case) -> None:
    verdict = classify(case.command)
    assert verdict.classification is not Classification.SAFE, verdict.reasons
    if case.expect in {"forbidden", "needs_approval"}:
        assert verdict.classification.value == case.expect, verdict.reasons


@pytest.mark.parametrize("case", [c for c in CASES if c.reasons], ids=_id)
def test_every_command_carries_the_reason_for_what_it_does(case: Case) -> None:
    reasons = classify(case.command).reasons
    missing = [kind for kind in case.reasons if not any(r.startswith(kind) for r in reasons)]
    assert not missing, reasons


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_no_reason_names_something_the_command_does_not_do(case: Case) -> None:
    reasons = classify(case.command).reasons
    claimed = {kind for kind in HAZARDS for r in reasons if r.startswith(kind)}
    assert claimed <= {*case.reasons, *case.may}, reasons
    addresses = [w for w in case.command.split() if _is_address(w)]
    false_paths = [r for r in reasons if "path" in r or "device" in r if any(a in r for a in addresses)]
    assert not false_paths, "an address is not a path"


def test_plain_reads_stay_safe() -> None:
    refused = {
        c.command: classify(c.command).reasons
        for c in CASES
        if c.expect == "safe" and classify(c.command).classification is not Classification.SAFE
    }
    assert len(refused) <= PLAIN_READS_REFUSED_AT_MOST, refused
