"""The editor schemas under schemas/ are what `ghost-eval schema` writes from the models today, every bundled
hand-written file passes its schema, and a misspelt key fails it, as the loader refuses it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema import Draft202012Validator

from ghost_eval.cli import main
from tests.conftest import REPO
from tests.connect.test_target import _TARGET

BUNDLED = {
    "case": sorted((REPO / "cases").glob("*.yaml")),
    "variant": [p for p in sorted((REPO / "variants").glob("*.yaml")) if p.name != "promptfooconfig.yaml"],
    "sentinel-criteria": [REPO / "sentinel" / "criteria.yaml"],
}


def _schema(name: str) -> Draft202012Validator:
    schema = json.loads((REPO / "schemas" / f"{name}.schema.json").read_text())
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def _problems(name: str, document: Any) -> list[str]:
    return [f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in _schema(name).iter_errors(document)]


def test_the_committed_schemas_are_what_the_command_writes(tmp_path: Path) -> None:
    assert main(["schema", str(tmp_path)]) == 0
    written = {p.name: p.read_text() for p in tmp_path.iterdir()}
    committed = {p.name: p.read_text() for p in (REPO / "schemas").iterdir()}
    assert written.keys() == committed.keys() == {f"{n}.schema.json" for n in (*BUNDLED, "target")}
    stale = sorted(name for name in written if written[name] != committed[name])
    assert not stale, f"schemas/ is out of date with the models: run `ghost-eval schema schemas` ({stale})"


@pytest.mark.parametrize(("name", "path"), [(n, p) for n, ps in BUNDLED.items() for p in ps], ids=lambda x: getattr(x, "name", x))
def test_every_bundled_file_passes_its_schema(name: str, path: Path) -> None:
    assert not _problems(name, yaml.safe_load(path.read_text())), path


def test_a_misspelt_key_fails_the_schema_as_the_loader_refuses_it() -> None:
    case = yaml.safe_load((REPO / "cases" / "m.yaml").read_text())
    case["wrong_claim"] = case.pop("wrong_claims")
    assert any("'wrong_claim' was unexpected" in p for p in _problems("case", case))
    case = yaml.safe_load((REPO / "cases" / "m.yaml").read_text())
    case["key_facts"][0]["idd"] = case["key_facts"][0].pop("id")
    assert any(p.startswith("key_facts.0: ") and "'idd' was unexpected" in p for p in _problems("case", case))
    target = {**_TARGET, "resource_grup": "rg"}
    assert not _problems("target", _TARGET)
    assert any("'resource_grup' was unexpected" in p for p in _problems("target", target))
