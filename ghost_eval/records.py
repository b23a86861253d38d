"""Base of every persisted record: typed, versioned, tolerant of unknown fields, strict on known ones."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from ghost_eval.errors import RecordError
from ghost_eval.safe_read import load_json

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


def load_yaml_record(cls: type[R], path: Path, error: type[RecordError] = RecordError) -> R:
    """Read and validate a YAML record file (YAML is a superset of JSON, so JSON files read too)."""
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_YAML_LOADER)
    except FileNotFoundError:
        raise error(path, "file is missing") from None
    except OSError as exc:
        raise error(path, f"cannot be read ({exc.strerror})") from None
    except yaml.YAMLError as exc:
        kind = "JSON" if path.suffix == ".json" else "YAML"
        raise error(path, f"is not valid {kind} ({exc})".replace("\n", " ")) from None
    if not isinstance(data, dict):
        raise error(path, "must be a mapping of fields")
    return parse_record(cls, data, path, error)


def load_record(cls: type[R], path: Path, *, follow: bool = True) -> R:
    """Read and validate one JSON record file: a regular file under `JSON_LIMIT` (`safe_read`), every failure named.

    `follow=False` refuses a symbolic link (inside a run folder nothing is read through one)."""
    return parse_record(cls, load_json(path, follow=follow), path)


def dump_json(record: BaseModel) -> str:
    """Stable, human-readable JSON for a record (sorted keys keep diffs and checksums stable)."""
    return json.dumps(record.model_dump(mode="json", by_alias=True, exclude_none=False), indent=2, sort_keys=True) + "\n"
