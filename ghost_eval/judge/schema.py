"""The answer shape each kind of question asks for, in each vendor's schema dialect, derived from the models that parse
the answer (`JudgeAnswer`, `DiagnosisAnswer`): what the vendor is told and what the parser accepts cannot drift apart.

Anthropic takes JSON Schema (lower-case types, `anyOf` with `null`, closed objects); Gemini takes its own OpenAPI
subset (upper-case types, `nullable`). Both list every property as required, so an answer always carries each field
(an empty or null one where it has nothing to say). Titles, defaults and docstrings stay out: only the shape is sent.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel

from ghost_eval.judge.answer import DiagnosisAnswer, JudgeAnswer

__all__ = ["Dialect", "answer_schema"]

Dialect = Literal["anthropic", "gemini"]
Json = dict[str, Any]

_MODELS: dict[str, type[BaseModel]] = {"criterion": JudgeAnswer, "diagnosis": DiagnosisAnswer}


def _translate(node: Json, defs: dict[str, Json], dialect: Dialect) -> Json:
    ref = node.get("$ref")
    if ref is not None:
        return _translate(defs[ref.rsplit("/", 1)[-1]], defs, dialect)
    options = node.get("anyOf")
    if options is not None:
        (present,) = [o for o in options if o.get("type") != "null"]  # the answer models have `X | None` unions only
        inner = _translate(present, defs, dialect)
        return {"anyOf": [inner, {"type": "null"}]} if dialect == "anthropic" else {**inner, "nullable": True}
    kind = str(node["type"])
    out: Json = {"type": kind if dialect == "anthropic" else kind.upper()}
    if "enum" in node:
        out["enum"] = list(node["enum"])
    if kind == "array":
        out["items"] = _translate(node["items"], defs, dialect)
    elif kind == "object":
        properties = {name: _translate(sub, defs, dialect) for name, sub in node["properties"].items()}
        out |= {"properties": properties, "required": list(properties)}
        if dialect == "anthropic":
            out["additionalProperties"] = False
    return out


def answer_schema(kind: str, dialect: Dialect) -> Json:
    """The schema of a `criterion` or `diagnosis` answer in the vendor's dialect."""
    schema = _MODELS[kind].model_json_schema()
    return _translate(schema, schema.get("$defs", {}), dialect)
