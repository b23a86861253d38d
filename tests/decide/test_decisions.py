from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from ghost_eval.cli import main
from ghost_eval.store import Store
from tests.conftest import REPO
from tests.decide.conftest import ADDON, Clone, variant_dir

SONNET, HAIKU, GEMINI = "claude-sonnet-4-6", "claude-haiku-4-5-20251001", "gemini-2.5-flash"


def _decide_variant(store: Store, folder: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, dict[str, object]]:
    code = main(["variant", "decide", "demo-variant", "--variants-dir", str(folder), "--store", str(store.root)])
    out, err = capsys.readouterr()
    path = Path(err.split("decision record: ")[1].split(" (and")[0])
    assert path.with_suffix(".md").exists()
    return code, out, json.loads(path.read_text())


def test_variant_that_helps_two_models_and_not_the_third(
    store: Store, clone: Clone, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = variant_dir(tmp_path, k=3)
    clone("m", "x-model", SONNET, n=3, addon=ADDON)
    clone("m", "y-model", SONNET, n=3, addon=ADDON)
    clone("m", "z-model", GEMINI, n=3, addon=ADDON)  # raw iptables on fail2ban's chain: criterion 2
    code, out, record = _decide_variant(store, folder, capsys)
    assert code == 1 and record["decision"] == "reject"
    assert "passes for x-model, y-model; fails for z-model" in out
    per_model = {m["model_id"]: m for m in record["per_model"]}  # type: ignore[union-attr]
    assert per_model["z-model"]["passed"] is False and "pass^3 = 0.00" in per_model["z-model"]["reasons"][0]
    assert len(record["run_ids"]) == 9  # type: ignore[arg-type]


def test_variant_accept_then_a_new_decision_points_at_the_old(
    store: Store, clone: Clone, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = variant_dir(tmp_path, k=2)
    for model in ("x-model", "y-model", "z-model"):
        clone("m", model, SONNET, n=2, addon=ADDON)
        clone("m", model, GEMINI, n=2)  # baseline runs without the addon do not count for the variant
    code, _, first = _decide_variant(store, folder, capsys)
    assert code == 0 and first["decision"] == "accept" and first["previous"] is None
    clone("m", "x-model", GEMINI, n=3, addon=ADDON)
    code, _, second = _decide_variant(store, folder, capsys)
    assert code == 1 and second["decision"] == "reject" and second["previous"] is not None
    assert len(list((store.root / "decisions" / "variants" / "demo-variant").glob("*.json"))) == 2


def test_variant_without_enough_runs_says_how_many(
    store: Store, clone: Clone, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = variant_dir(tmp_path, k=3)
    clone("m", "x-model", SONNET, n=1, addon=ADDON)
    code, out, record = _decide_variant(store, folder, capsys)
    assert code == 2 and record["decision"] == "insufficient"
    assert record["more_runs_needed"] == {"m/x-model": 2, "m/y-model": 3, "m/z-model": 3}
    assert "8 more needed" in out


@pytest.mark.parametrize("variant_on_f", [GEMINI, SONNET])
def test_variant_worse_on_a_sentinel_case_by_the_sentinels_checks_is_rejected(
    store: Store, clone: Clone, tmp_path: Path, capsys: pytest.CaptureFixture[str], variant_on_f: str
) -> None:
    """The variant's own check (criterion 2) holds on f on both sides; the sentinel's checks for f (criterion 1, the
    diagnosis) do not hold for the variant's runs when they copy gemini's f run: that sentinel case got worse."""
    folder = variant_dir(tmp_path, k=3, checks=[{"kind": "criterion", "criterion_id": 2}])
    for model in ("x-model", "y-model", "z-model"):
        clone("m", model, SONNET, n=3, addon=ADDON)
        clone("f", model, SONNET, n=3)
    clone("f", "x-model", variant_on_f, n=3, addon=ADDON)
    clone("f", "y-model", SONNET, n=3, addon=ADDON)
    code, out, record = _decide_variant(store, folder, capsys)
    per_model = {m["model_id"]: m for m in record["per_model"]}  # type: ignore[union-attr]
    sentinel_f = {s["use_case_id"]: s for s in per_model["x-model"]["sentinel_variant"]}["f"]
    assert record["sentinel_checks"]["f"] == ["criterion 1 does not fire", "diagnosis key satisfied"]  # type: ignore[index]
    assert "sentinel case f: no variant runs, not compared" in per_model["z-model"]["reasons"]
    if variant_on_f == GEMINI:
        assert code == 1 and record["decision"] == "reject"
        assert sentinel_f["passes"] == 0 and sentinel_f["n"] == 3
        assert per_model["x-model"]["passed"] is False and per_model["y-model"]["passed"] is True
        assert (
            "x-model: sentinel case f got worse by the sentinel's checks (criterion 1 does not fire; diagnosis key "
            "satisfied): 0/3 runs pass (0.00) vs baseline 3/3 (1.00), margin 0.2" in out
        )
    else:
        assert code == 0 and record["decision"] == "accept" and sentinel_f["passes"] == 3


def _criteria(tmp_path: Path, cases: list[str], k: int, environment: str | None = None) -> Path:
    data = yaml.safe_load((REPO / "sentinel" / "criteria.yaml").read_text())
    data["cases"], data["repeats"] = cases, k
    if environment:
        data["environment"] = environment
    path = tmp_path / "criteria.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def _decide_sentinel(store: Store, criteria: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, object]]:
    code = main(
        ["sentinel", "decide", "--current", "cur", "--candidate", "cand", "--criteria", str(criteria), "--store", str(store.root)]
    )
    _, err = capsys.readouterr()
    path = Path(err.split("decision record: ")[1].split(" (and")[0])
    return code, json.loads(path.read_text())


def test_sentinel_go(store: Store, clone: Clone, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for model in ("cur", "cand"):
        clone("m", model, SONNET, n=3)
        clone("f", model, SONNET, n=3)
    code, record = _decide_sentinel(store, _criteria(tmp_path, ["m", "f"], 3), capsys)
    assert code == 0 and record["decision"] == "go"


def test_sentinel_never_pools_runs_of_another_environment(
    store: Store, clone: Clone, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for model in ("cur", "cand"):
        clone("m", model, SONNET, n=3)
    clone("m", "cand", GEMINI, n=3, environment="lab")
    code, record = _decide_sentinel(store, _criteria(tmp_path, ["m"], 3), capsys)
    assert code == 0 and record["decision"] == "go", "the lab's failing runs do not count for the Azure demo"
    clone("m", "cur", SONNET, n=3, environment="lab")
    code, record = _decide_sentinel(store, _criteria(tmp_path, ["m"], 3, environment="lab"), capsys)
    assert code == 1 and record["decision"] == "no-go", "in the lab, the candidate's runs bypass fail2ban"


def test_sentinel_leaves_out_runs_made_with_a_prompt_addon(
    store: Store, clone: Clone, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for model in ("cur", "cand"):
        clone("m", model, SONNET, n=3)
    clone("m", "cand", GEMINI, n=3, addon=ADDON)  # a variant experiment on the candidate: criterion 2 fires
    code, record = _decide_sentinel(store, _criteria(tmp_path, ["m"], 3), capsys)
    assert code == 0 and record["decision"] == "go", "the variant's runs do not decide the migration"
    assert len(record["run_ids"]) == 6  # type: ignore[arg-type]
    data = yaml.safe_load((tmp_path / "criteria.yaml").read_text())
    (tmp_path / "criteria.yaml").write_text(yaml.safe_dump({**data, "addon_runs": True}))
    code, record = _decide_sentinel(store, tmp_path / "criteria.yaml", capsys)
    assert code == 1 and record["decision"] == "no-go", "asked to, the sentinel counts them"


def test_sentinel_criterion_2_regression_on_m_blocks(
    store: Store, clone: Clone, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    clone("m", "cur", SONNET, n=3)
    clone("m", "cand", GEMINI, n=3)
    code, record = _decide_sentinel(store, _criteria(tmp_path, ["m"], 3), capsys)
    assert code == 1 and record["decision"] == "no-go"
    verdict = record["per_case"][0]  # type: ignore[index]
    assert verdict["verdict"] == "block" and "criterion 2 does not fire" in verdict["failing_checks"]


def test_sentinel_diagnosis_only_drop_on_q_asks_for_more_repeats(
    store: Store, clone: Clone, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    clone("q", "cur", SONNET, n=3)
    clone("q", "cand", HAIKU, n=3)  # conflates the two faults: diagnosis fails, remediation fine
    code, record = _decide_sentinel(store, _criteria(tmp_path, ["q"], 3), capsys)
    assert code == 2 and record["decision"] == "insufficient"
    assert record["per_case"][0]["verdict"] == "more_repeats"  # type: ignore[index]
    assert record["more_runs_needed"] == {"q/cand": 3, "q/cur": 3}


def test_sentinel_not_enough_runs_and_drift(
    store: Store, clone: Clone, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    criteria = _criteria(tmp_path, ["m"], 3)
    clone("m", "cur", SONNET, n=3)
    clone("m", "cand", SONNET, n=2)
    code, record = _decide_sentinel(store, criteria, capsys)
    assert code == 2 and record["more_runs_needed"] == {"m/cand": 1}
    clone("m", "cand", SONNET, n=1)
    assert _decide_sentinel(store, criteria, capsys)[0] == 0
    # same model id, now behaving worse: drift, stated as consistent with a backend update
    clone("m", "cur", GEMINI, n=6)
    _, record = _decide_sentinel(store, criteria, capsys)
    assert any("model cur" in d and "consistent with, not proof of" in d for d in record["drift"])  # type: ignore[union-attr]
