"""The planted-secret corpus: every shape is redacted by structure, a value seen once is scrubbed everywhere, and the
reference agent's stored run and what the model was sent hold no canary."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ghost_eval.agent.capture import artifact_files, store_payload
from ghost_eval.agent.redact import REDACTED, RedactionLog, Redactor, redact, redact_files
from ghost_eval.agent.runner import AgentConfig, investigate
from ghost_eval.agent.tools import COMPLETE_TOOL
from ghost_eval.connect.target import Target
from ghost_eval.store import Store, bundled_path
from ghost_eval.store.layout import REDACTIONS_FILE
from tests.agent.infra import ArmServer
from tests.agent.vendors import VENDORS, Vendor
from tests.conftest import REPO
from tests.fixtures.secrets.canaries import CANARIES, CORPUS, SHAPES, count_canaries


@pytest.mark.parametrize(("shape", "text", "canary"), SHAPES, ids=[s for s, _, _ in SHAPES])
def test_every_planted_shape_is_redacted(shape: str, text: str, canary: str) -> None:
    cleaned = redact(text)
    assert canary not in cleaned, cleaned
    assert "REDACTED" in cleaned


def test_the_whole_corpus_keeps_no_canary() -> None:
    assert count_canaries(CORPUS) == len(CANARIES)
    assert count_canaries(redact(CORPUS)) == 0


@pytest.mark.parametrize(
    "text",
    [
        "ssh -p 2222 admin@10.0.1.5",
        "iptables -A INPUT -p tcp --dport 22 -j ACCEPT",
        "[Peer]\nPublicKey = xTIBA5rboUvnH4htodjb6e697QjLERt1NAB4mZqp8Dg=",
        "PasswordAuthentication yes",
        '{"defaultAction": "Deny", "bypass": "AzureServices"}',
        "/etc/passwd:root:x:0:0:root:/root:/bin/bash",
        "2. After the next periodic pass: `sleep 330 && tc qdisc show dev eth0 | grep -c tbf` prints `0`.",
        "A timeout counts as a pass: the SYN now reaches the VM.",
        "sha256sum: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        '{"name": "tf-dest-vm-nsg", "id": "/subscriptions/0000-1111/resourceGroups/rg/providers/x/y"}',
    ],
)
def test_look_alikes_that_hold_no_secret_are_kept(text: str) -> None:
    assert redact(text) == text


def test_a_value_seen_once_is_scrubbed_wherever_it_reappears() -> None:
    redactor = Redactor()
    assert redactor.text("DB_PWD=Cn4ryPwdV4lue") == f"DB_PWD={REDACTED}"
    hypothesis = redactor.text("the app logs in with Cn4ryPwdV4lue as its database password")
    assert "Cn4ryPwdV4lue" not in hypothesis
    assert redactor.value({"root_cause": "password Cn4ryPwdV4lue expired"}) == {"root_cause": f"password {REDACTED} expired"}


def test_run_files_are_redacted_as_a_whole_and_the_record_names_kind_and_place_never_the_value() -> None:
    rules = "-A INPUT -m comment --comment 'psk=Cn4ryWifiPsk42' -j ACCEPT"
    snapshot = {
        "hosts": [{"name": "vm", "iptables_save": rules}],
        "nsgs": [{"name": "n", "rules": [], "description": f"backup storage key {CANARIES[15]}"}],
    }
    files = {
        "infra_snapshot.json": json.dumps(snapshot),
        "ghost_report_ghost_20260101_000000.md": "Root cause: the Wi-Fi key Cn4ryWifiPsk42 rotated.",
        "tool_trace.jsonl": json.dumps({"output": SHAPES[0][1]}) + "\n",
    }
    out = redact_files(files)
    assert sum(count_canaries(text) for text in out.values()) == 0
    assert json.loads(out["infra_snapshot.json"])["hosts"][0]["name"] == "vm"
    log = RedactionLog.model_validate_json(out[REDACTIONS_FILE])
    places = {(r.kind, r.where) for r in log.redactions}
    assert ("env_assignment", "infra_snapshot.json") in places
    assert ("seen_value", "ghost_report_ghost_20260101_000000.md") in places
    assert "Cn4ry" not in out[REDACTIONS_FILE]
    again = redact_files(out)
    assert {k: v for k, v in again.items() if k != REDACTIONS_FILE} == {k: v for k, v in out.items() if k != REDACTIONS_FILE}


@pytest.mark.parametrize("vendor", VENDORS, ids=[v.provider for v in VENDORS])
def test_canaries_reach_neither_the_store_nor_the_model(
    vendor: Vendor, target: Target, arm: ArmServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The agent reads a file holding the corpus over SSH; the model then writes the canaries it saw into its
    hypotheses and root cause. Counted in every stored file and in every request the model server received."""
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(CORPUS, encoding="utf-8")
    corpus.chmod(0o644)
    leaked = " ".join(CANARIES)
    script = [
        vendor.reply("Read the service's settings.", [("run_command", {"host": "tf-dest-vm", "command": f"cat {corpus}"})]),
        vendor.reply(
            calls=[
                ("record_hypothesis", {"hypothesis": f"credentials {CANARIES[4]} were rotated", "status": "open"}),
                ("run_command", {"host": "tf-dest-vm", "command": "iptables -S"}),
            ]
        ),
        vendor.reply(
            calls=[
                (
                    COMPLETE_TOOL,
                    {
                        "root_cause": f"the service uses {leaked}",
                        "evidence": [f"cat showed {leaked}"],
                        "confirmed_hypotheses": [f"credentials {CANARIES[4]} were rotated"],
                        "recommended_actions": [{"description": f"rotate {CANARIES[2]}", "commands": [f"echo {CANARIES[5]}"]}],
                    },
                )
            ]
        ),
    ]
    with vendor.server(script) as server:
        run = investigate(
            "Port 8080 on tf-dest-vm times out.",
            target,
            AgentConfig(vendor.provider, vendor.model, settings=vendor.settings_for(server)),
        )
    assert run.loop.outcome == "completed", run.loop.aborted
    assert run.audit[0].executed, run.audit[0]

    tool_output = vendor.tool_results(server.requests[1])[0][0]
    assert REDACTED in tool_output and "ListenPort = 51820" in tool_output
    # Only what the agent sends is counted: the model's own turns are echoed back as it wrote them.
    sent = [json.dumps(r.body) for r in server.requests]
    assert sum(count_canaries(body) for body in sent) == 0

    metadata, files = store_payload(artifact_files(run), "a")
    with Store(tmp_path / "store", create=True) as store:
        entry = store.append(metadata, files)
        folder = store.read(entry).folder
    stored = {p.name: p.read_text(encoding="utf-8") for p in folder.iterdir() if p.is_file()}
    assert REDACTIONS_FILE in stored
    assert {name: count_canaries(text) for name, text in stored.items() if count_canaries(text)} == {}


@pytest.mark.parametrize("prose", ["neither the listener nor basic reachability is the problem", "basic connectivity"])
def test_basic_before_a_word_is_a_credential_only_when_it_decodes_to_user_and_password(prose: str) -> None:
    """RFC 7617: a Basic credential is base64 of `user:password`; "basic reachability" in a report is prose."""
    assert redact(prose) == prose
    assert redact("Authorization: Basic dXNlcjpzM2NyZXQ=") == f"Authorization: Basic {REDACTED}"


def test_the_bundled_runs_cases_and_corpus_hold_nothing_redaction_would_touch() -> None:
    """Diagnostic text that names settings like `bypass: AzureServices` must reach the scorers as it was written."""
    roots = [bundled_path("demo_store"), REPO / "cases", REPO / "tests" / "fixtures" / "corpus"]
    touched = [
        str(p)
        for root in roots
        for p in sorted(root.rglob("*"))
        if p.is_file()
        and p.suffix in {".md", ".json", ".jsonl", ".txt", ".yaml"}
        and redact(text := p.read_text(encoding="utf-8", errors="replace")) != text
    ]
    assert touched == []
