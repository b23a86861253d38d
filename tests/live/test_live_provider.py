"""The live provider end to end: real `promptfoo eval`, the lab's sshd and ARM emulator, the real agent loop,
and the real vendor SDKs talking to scripted fake Claude and Gemini servers."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
import yaml

from ghost_eval.connect.ssh import ssh_connect, ssh_run
from ghost_eval.decide import decide_variant, load_variant
from ghost_eval.decide.sentinel import load_criteria
from ghost_eval.evaluation.evaluate import load_case_set
from ghost_eval.llm.clients import GEMINI_BASE_URL_ENV
from ghost_eval.run.identity import HashKind
from ghost_eval.store import RunFilter, Store
from tests.agent.vendors import VENDORS, Vendor
from tests.conftest import REPO
from tests.fakes.llm import FakeLLMServer, Recorded, Reply
from tests.lab.helpers import LAB_MARKS, Lab
from tests.promptfoo_cli import run_eval

pytestmark = LAB_MARKS

_M_DONE = {
    "root_cause": "fail2ban banned 203.0.113.47 in the sshd jail: its f2b-sshd chain on tf-dest-vm rejects the partner.",
    "evidence": ["`iptables -S` on tf-dest-vm shows f2b-sshd rejecting 203.0.113.47"],
    "confirmed_hypotheses": ["fail2ban ban of 203.0.113.47"],
    "refuted_hypotheses": ["the NSG blocks port 22"],
    "recommended_actions": [
        {
            "description": "Unban the address through fail2ban, which owns the f2b-sshd chain.",
            "commands": ["fail2ban-client set sshd unbanip 203.0.113.47"],
            "verification": {"command": "fail2ban-client status sshd", "expected": "203.0.113.47 absent from the Banned IP list"},
        }
    ],
}
_A_DONE = {
    "root_cause": "The NSG rule ghost-demo-block-8080 (priority 150) on tf-dest-vm-nsg denies TCP 8080 inbound to tf-dest-vm.",
    "evidence": ["effective NSG rules of tf-dest-vm-nic list ghost-demo-block-8080 Deny TCP 8080 at priority 150"],
    "recommended_actions": [
        {
            "description": "Delete only the deny rule ghost-demo-block-8080.",
            "commands": ["az network nsg rule delete -g nw-forensics-rg --nsg-name tf-dest-vm-nsg -n ghost-demo-block-8080"],
            "verification": {"command": "nc -z -w 3 10.0.1.5 8080", "expected": "exit status 0 (connection succeeded)"},
        }
    ],
}
SCRIPTS: dict[str, list[list[tuple[str, dict[str, Any]]]]] = {
    "m": [
        [("run_command", {"host": "tf-dest-vm", "command": "iptables -S"})],
        [("run_command", {"host": "tf-dest-vm", "command": "fail2ban-client status sshd"})],
        [("complete_investigation", _M_DONE)],
    ],
    "a": [
        [("get_effective_nsg_rules", {"nic": "tf-dest-vm-nic"})],
        [("run_command", {"host": "tf-source-vm", "command": "nc -z -w 3 10.0.1.5 8080"})],
        [("complete_investigation", _A_DONE)],
    ],
}


def _responder(vendor: Vendor) -> Any:
    """Answer each request from the case's script, by how many turns the model has already taken."""

    def reply(request: Recorded) -> Reply:
        case = "m" if "203.0.113.47" in _first_user(vendor, request) else "a"
        turns = _model_turns(vendor, request)
        script = SCRIPTS[case]
        return vendor.reply(calls=script[min(turns, len(script) - 1)])

    return reply


def _first_user(vendor: Vendor, request: Recorded) -> str:
    key = "messages" if vendor.provider == "anthropic" else "contents"
    return json.dumps(request.body[key][0])


def _model_turns(vendor: Vendor, request: Recorded) -> int:
    if vendor.provider == "anthropic":
        return sum(1 for m in request.body["messages"] if m["role"] == "assistant")
    return sum(1 for c in request.body["contents"] if c["role"] == "model")


@pytest.fixture(scope="module")
def servers() -> Iterator[dict[str, FakeLLMServer]]:
    with ExitStack() as stack:
        yield {v.provider: stack.enter_context(v.server(_responder(v))) for v in VENDORS}


def test_small_live_suite_through_promptfoo(lab: Lab, servers: dict[str, FakeLLMServer], tmp_path: Path) -> None:
    store_dir = tmp_path / "store"
    addon = tmp_path / "addon.txt"
    addon.write_text("Check both layers before closing.\n")
    target = str(lab.state_dir / "target.json")
    providers = [
        {"id": f"file://{REPO}/providers/live.py", "label": v.model, "config": {"model": v.model, "target": target}}
        for v in VENDORS
    ] + [
        {
            "id": f"file://{REPO}/providers/live.py",
            "label": "haiku+addon",
            "config": {"model": VENDORS[0].model, "target": target, "addon": str(addon), "run_label": "variant"},
        }
    ]
    config = {
        "description": "live smoke",
        "prompts": [{"id": "symptom", "label": "symptom", "raw": "{{symptom}}"}],
        "providers": providers,
        "defaultTest": f"file://{REPO}/assertions/grades.yaml",
        "tests": [
            {"vars": {"use_case": c, "symptom": "see case"}, "metadata": {"suite_version": "live-0001"}} for c in ("a", "m")
        ],
    }
    path = tmp_path / "live.yaml"
    path.write_text(yaml.safe_dump(config))
    env = {
        "GHOST_EVAL_STORE": str(store_dir),
        "ANTHROPIC_API_KEY": "test-key",
        "ANTHROPIC_BASE_URL": servers["anthropic"].url,
        "GEMINI_API_KEY": "test-key",
        GEMINI_BASE_URL_ENV: servers["gemini"].url,
    }
    rows = run_eval(path, tmp_path, "-j", "3", extra_env=env, timeout=900)
    assert len(rows) == 6
    assert [r.get("error") for r in rows if r.get("error")] == []

    store = Store(store_dir)
    runs = store.runs(RunFilter())
    assert len(runs) == 6
    hashes: dict[tuple[str, str | None], set[str | None]] = {}
    for entry in runs:
        record = store.read(entry)
        assert record.problems == [], record.problems
        assert record.snapshot is not None and record.written_by_us and record.trace
        assert record.metadata is not None and record.metadata.hash_kind is HashKind.EFFECTIVE_PROMPT
        assert record.metadata.environment == "lab" and entry.environment == "lab"
        assert record.metadata.suite_version == "live-0001" and entry.suite_version == "live-0001"  # the row's
        hashes.setdefault((entry.model_id, record.metadata.addon_hash), set()).add(entry.system_prompt_hash)
        outputs = "\n".join(c.output for c in record.trace)
        if entry.use_case_id == "use_case_m":
            assert "f2b-sshd" in outputs and "203.0.113.47" in outputs  # the real fail2ban chain, read over SSH
            assert any(c.name == "f2b-sshd" for h in record.snapshot.hosts for d in h.daemons for c in d.owns)
        else:
            assert "ghost-demo-block-8080" in outputs  # the emulator's effective NSG, read through the SDK
    haiku = VENDORS[0].model
    base, variant = hashes[(haiku, None)], next(v for (m, a), v in hashes.items() if m == haiku and a is not None)
    assert len(base) == 1 and len(variant) == 1 and base != variant
    # every row scored from the stored run; the m fix goes through fail2ban, so criterion 2 stays quiet
    for row in rows:
        assert row["namedScores"]["c2 owner respected"] == 1
        assert row["namedScores"]["2. diagnosis correct"] == 1, row["gradingResult"]["componentResults"]
    # the live round feeds a variant decision like any stored runs
    (tmp_path / "variants").mkdir()
    spec = {
        "name": "live-addon",
        "addon": str(addon),
        "cases": ["a", "m"],
        "models": [haiku],
        "repeats": 1,
        "checks": [{"kind": "diagnosis"}, {"kind": "criterion", "criterion_id": 2}],
        "environment": "lab",  # live runs record where they ran; a decision counts only runs of its environment
    }
    (tmp_path / "variants" / "live-addon.yaml").write_text(yaml.safe_dump(spec))
    decision, _ = decide_variant(
        store,
        load_case_set()[0],
        load_variant(tmp_path / "variants" / "live-addon.yaml"),
        tmp_path / "variants" / "live-addon.yaml",
        load_criteria(REPO / "sentinel" / "criteria.yaml"),  # m is a sentinel case: judged by the sentinel's checks
    )
    assert decision.decision == "accept", decision.reasons
    assert {r for m in decision.per_model for g in m.variant for r in g.run_ids} <= {e.run_id for e in runs}
    # teardown ran: the ban is gone
    client = ssh_connect(lab.target.hosts["tf-dest-vm"])
    try:
        _, listing, _ = ssh_run(client, "iptables -S", timeout=10)
    finally:
        client.close()
    assert "203.0.113.47" not in listing
