"""JSON Schemas of the hand-written files (cases, variant specs, sentinel criteria, targets), generated from their
pydantic models for editors: with `# yaml-language-server: $schema=…` at the top of a file, an editor completes its
keys and marks a misspelt one before `ghost-eval validate` would. The loaders refuse unknown keys
(`load_yaml_record`), so every object in a schema says `additionalProperties: false`, although stored records of the
same models keep unknown fields from other writers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ghost_eval.cases.case import Case
from ghost_eval.connect.target import Target
from ghost_eval.decide.sentinel import SentinelCriteria
from ghost_eval.decide.variants import VariantSpec

__all__ = ["HANDWRITTEN", "json_schema", "write_schemas"]

HANDWRITTEN: dict[str, type[BaseModel]] = {
    "case": Case,
    "variant": VariantSpec,
    "sentinel-criteria": SentinelCriteria,
    "target": Target,
}
"""Schema file stem → the model its files are loaded as (cases/*.yaml, variants/*.yaml, sentinel/criteria.yaml,
the live provider's target file)."""


def _closed(node: Any) -> None:
    """Every object schema with named properties refuses other keys, as the hand-written-file loader does."""
    if isinstance(node, dict):
        if node.get("type") == "object" and "properties" in node:
            node["additionalProperties"] = False
        for value in node.values():
            _closed(value)
    elif isinstance(node, list):
        for value in node:
            _closed(value)


def json_schema(model: type[BaseModel], name: str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of one hand-written file kind, closed to unknown keys."""
    schema = model.model_json_schema(mode="validation")
    _closed(schema)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": f"{name}.schema.json", **schema}


def write_schemas(folder: Path) -> list[Path]:
    """Write `<name>.schema.json` for every hand-written file kind into `folder`; the paths written."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, model in HANDWRITTEN.items():
        path = folder / f"{name}.schema.json"
        path.write_text(json.dumps(json_schema(model, name), indent=2, sort_keys=True) + "\n", encoding="utf-8")
        written.append(path)
    return written
