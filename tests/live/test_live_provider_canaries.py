"""The planted-secret corpus through a live run on the lab: a fault planted for real, a snapshot with a secret in a
firewall rule comment, the reference agent reading the corpus over SSH and repeating it, fake model servers
recording what they were sent. Canaries counted in every stored file and in every request: 0."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from ghost_eval.evaluation.evaluate import load_case_set
from ghost_eval.live.run import LiveConfig, run_case
from ghost_eval.store import Store
from tests.agent.vendors import VENDORS
from tests.fakes.llm import Recorded, Reply
from tests.fixtures.secrets.canaries import CANARIES, CORPUS, count_canaries
from tests.lab.helpers import LAB_MARKS, Lab, vm_run

pytestmark = LAB_MARKS

_COMMENT = f"psk={CANARIES[9]} backup storage key {CANARIES[15]}"


def test_canaries_reach_neither_the_store_nor_the_model_in_a_live_run(lab: Lab, tmp_path: Path, monkeypatch: Any) -> None:
    vendor = VENDORS[0]
    corpus = "/var/tmp/service-settings.txt"  # on the VM: the lab's VMs do not share the test's /tmp
    encoded = base64.b64encode(CORPUS.encode()).decode()
    code, _, err = vm_run(lab.target, "tf-dest-vm", f"echo {encoded} | base64 -d > {corpus}")
    assert code == 0, err
    code, _, err = vm_run(lab.target, "tf-dest-vm", f"iptables -I INPUT -m comment --comment '{_COMMENT}' -j RETURN")
    assert code == 0, err
    leaked = " ".join(CANARIES)
    script = [
        [("run_command", {"host": "tf-dest-vm", "command": f"cat {corpus}"})],
        [
            ("record_hypothesis", {"hypothesis": f"the key {CANARIES[0]} leaked", "status": "open"}),
            ("run_command", {"host": "tf-dest-vm", "command": "iptables -S"}),
        ],
        [
            (
                "complete_investigation",
                {
                    "root_cause": f"settings {leaked}",
                    "evidence": [leaked],
                    "recommended_actions": [{"description": f"rotate {CANARIES[2]}", "commands": []}],
                },
            )
        ],
    ]

    def reply(request: Recorded) -> Reply:
        turns = sum(1 for m in request.body["messages"] if m["role"] == "assistant")
        return vendor.reply(calls=script[min(turns, len(script) - 1)])

    with vendor.server(reply) as server:
        config = LiveConfig(
            provider="anthropic",
            model=vendor.model,
            store=tmp_path / "store",
            target=str(lab.state_dir / "target.json"),
            settings=vendor.settings_for(server),
        )
        run = run_case(load_case_set()[0]["m"], config)
    assert run.aborted is None
    assert len(server.requests) == 3
    assert "ListenPort = 51820" in json.dumps(server.requests[1].body)  # the agent did read the corpus
    assert sum(count_canaries(json.dumps(r.body)) for r in server.requests) == 0

    with Store(tmp_path / "store") as store:
        record = store.read(store.get(run.entry.run_id))
    stored = {p.name: p.read_text(encoding="utf-8") for p in record.folder.iterdir() if p.is_file()}
    assert record.problems == [], record.problems
    assert record.snapshot is not None and any("[REDACTED]" in (h.iptables_save or "") for h in record.snapshot.hosts)
    assert {name: count_canaries(text) for name, text in stored.items() if count_canaries(text)} == {}
