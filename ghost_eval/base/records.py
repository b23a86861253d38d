"""Base of every persisted record: typed, versioned, tolerant of unknown fields, strict on known ones."""

from __future__ import annotations

import difflib
import json
import types
import typing
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from ghost_eval.base.errors import RecordError
from ghost_eval.base.safe_read import load_json

__all__ = ["Record", "dump_json", "load_record", "load_yaml_record", "parse_record"]

R = TypeVar("R", bound=BaseModel)
_YAML_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's safe loader when PyYAML was built with it (several times faster), else the pure-Python one."""


class Record(BaseModel):
    """A persisted record; fields written by older or newer writers are kept, not dropped."""

    model_config = ConfigDict(extra="allow", populate_by_name=True, use_attribute_docstrings=True)


def _first_error(exc: ValidationError) -> tuple[str, str]:
    err = exc.errors()[0]
    field = ".".join(str(p) for p in err["loc"]) or None
    return field or "(root)", err["msg"]


def parse_record(cls: type[R], data: Any, path: Path | str, error: type[RecordError] = RecordError) -> R:
    """Validate already-decoded data, raising an error that names the file and field."""
    try:
        return cls.model_validate(data)
    except ValidationError as exc:
        field, msg = _first_error(exc)
        raise error(path, msg, field) from None


def _records_in(annotation: Any) -> list[type[BaseModel]]:
    """The record types a field holds: itself, or inside list[...], dict[str, ...], X | None."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    origin = typing.get_origin(annotation)
    if origin in (list, tuple, set, dict, typing.Union, types.UnionType):
        return [m for arg in typing.get_args(annotation) for m in _records_in(arg)]
    return []


def _unknown_keys(cls: type[BaseModel], node: yaml.Node | None) -> list[str]:
    """Keys of a hand-written mapping that no field of `cls` has (recursively), each with its line and the nearest
    valid key: a misspelt `wrong_claim:` would otherwise load as a field kept for a newer writer, silently."""
    if not isinstance(node, yaml.MappingNode):
        return []
    names = {alias for name, f in cls.model_fields.items() for alias in (name, f.alias) if alias}
    found = []
    for key, value in node.value:
        if not isinstance(key, yaml.ScalarNode):
            continue
        field = cls.model_fields.get(key.value) or next((f for f in cls.model_fields.values() if f.alias == key.value), None)
        if field is None:
            near = difflib.get_close_matches(key.value, sorted(names), n=1)
            hint = f" (did you mean '{near[0]}'?)" if near else f" (valid: {', '.join(sorted(names))})"
            found.append(f"line {key.start_mark.line + 1}: unknown key '{key.value}'{hint}")
            continue
        for model in _records_in(field.annotation):
            items = value.value if isinstance(value, yaml.SequenceNode) else [value]
            if typing.get_origin(field.annotation) is dict and isinstance(value, yaml.MappingNode):
                items = [v for _, v in value.value]
            for item in items:
                found += _unknown_keys(model, item)
    return found


def load_yaml_record(cls: type[R], path: Path, error: type[RecordError] = RecordError) -> R:
    """Read and validate a hand-written YAML record file (YAML is a superset of JSON, so JSON files read too). Unlike
    a stored record, a hand-written one may not carry a key its schema does not know: that is a typo."""
    try:
        text = path.read_text(encoding="utf-8")
        data = yaml.load(text, Loader=_YAML_LOADER)
    except FileNotFoundError:
        raise error(path, "file is missing") from None
    except OSError as exc:
        raise error(path, f"cannot be read ({exc.strerror})") from None
    except yaml.YAMLError as exc:
        kind = "JSON" if path.suffix == ".json" else "YAML"
        raise error(path, f"is not valid {kind} ({exc})".replace("\n", " ")) from None
    if not isinstance(data, dict):
        raise error(path, "must be a mapping of fields")
    unknown = _unknown_keys(cls, yaml.compose(text, Loader=_YAML_LOADER))
    if unknown:
        raise error(path, "; ".join(unknown))
    return parse_record(cls, data, path, error)


def load_record(cls: type[R], path: Path, *, follow: bool = True) -> R:
    """Read and validate one JSON record file: a regular file under `JSON_LIMIT` (`safe_read`), every failure named.

    `follow=False` refuses a symbolic link (inside a run folder nothing is read through one)."""
    return parse_record(cls, load_json(path, follow=follow), path)


def dump_json(record: BaseModel) -> str:
    """Stable, human-readable JSON for a record (sorted keys keep diffs and checksums stable)."""
    return json.dumps(record.model_dump(mode="json", by_alias=True, exclude_none=False), indent=2, sort_keys=True) + "\n"
