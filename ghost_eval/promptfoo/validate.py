"""`ghost-eval validate`: CI's cheap check of a suite folder — cases, configs, answer keys and criteria — that
spends no tokens and opens no store. Every problem names its file and, for YAML, its line.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ghost_eval.base.errors import GhostEvalError, RecordError
from ghost_eval.cases.case import Case
from ghost_eval.decide.sentinel import load_criteria
from ghost_eval.evaluation.evaluate import BUNDLED_CASES, load_case_set
from ghost_eval.evaluation.extensions import load_checks
from ghost_eval.promptfoo.adapters import LiveProviderConfig, ProviderConfig, suite_tests
from ghost_eval.scoring.keyfacts import check_key_facts

__all__ = ["Finding", "validate_project"]

_CONFIGS = ("promptfooconfig.yaml", "*/promptfooconfig.yaml")
_YAML_LINE = re.compile(r"line (\d+)")


@dataclass(frozen=True)
class Finding:
    """One problem: the file, the 1-based line when known, and what is wrong."""

    file: str
    line: int | None
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line or 1}: {self.message}"


def _compose(path: Path) -> yaml.Node | None:
    try:
        return yaml.compose(path.read_text(encoding="utf-8"), Loader=yaml.SafeLoader)
    except (OSError, yaml.YAMLError):
        return None


def _line(node: yaml.Node | None, field: str | None) -> int | None:
    """The line of `field` (`a.0.b`, as pydantic names locations) in a composed YAML document: the deepest part
    of the path that exists, so a missing field points at its parent."""
    if node is None:
        return None
    line = node.start_mark.line + 1
    for part in (field or "").split("."):
        child = None
        if isinstance(node, yaml.MappingNode):
            child = next((v for k, v in node.value if k.value == part), None)
        elif isinstance(node, yaml.SequenceNode) and part.isdigit() and int(part) < len(node.value):
            child = node.value[int(part)]
        if child is None:
            break
        node, line = child, child.start_mark.line + 1
    return line


def _record_finding(exc: RecordError) -> Finding:
    path = Path(exc.path)
    marked = _YAML_LINE.search(exc.detail)
    line = int(marked.group(1)) if marked and exc.field is None else _line(_compose(path), exc.field)
    return Finding(exc.path, line, exc.detail if exc.field is None else f"field '{exc.field}': {exc.detail}")


def _answer_keys(cases: dict[str, Case], root: Path) -> Iterator[Finding]:
    """A case's answer key must accept the case's own expected root cause: otherwise no report could pass it."""
    for case in cases.values():
        path = root / "cases" / f"{case.id}.yaml"
        if not path.exists() or not case.key_facts:
            continue
        node = _compose(path)
        index = {f.id: i for i, f in enumerate(case.key_facts)}
        for fact in check_key_facts(case, case.expected_root_cause).facts:
            if fact.status != "found":
                message = f"key fact {fact.id} ({fact.fact!r}) is {fact.status} in expected_root_cause"
                yield Finding(str(path), _line(node, f"key_facts.{index[fact.id]}"), message)


def _file_ref(value: Any, base: Path) -> Path | None:
    """The file of a `file://path[:function]` reference, or None for anything else."""
    if not isinstance(value, str) or not value.startswith("file://"):
        return None
    rel = re.sub(r":[A-Za-z_]\w*$", "", value.removeprefix("file://"))
    return base / rel


def _provider(entry: Any, where: str, base: Path, line: int | None) -> Iterator[Finding]:
    spec = entry if isinstance(entry, dict) else {"id": entry}
    ref = _file_ref(spec.get("id"), base)
    if ref is None:
        return
    if not ref.exists():
        yield Finding(where, line, f"provider {spec.get('id')!r}: {ref} does not exist")
        return
    kind = {"replay.py": ProviderConfig, "live.py": LiveProviderConfig}.get(ref.name)
    if kind is None:
        return
    try:
        config = kind.model_validate(spec.get("config") or {})
        load_checks(config.checks)
    except GhostEvalError as exc:
        yield Finding(where, line, str(exc))
        return
    except ValueError as exc:  # pydantic's ValidationError
        yield Finding(where, line, f"provider config: {exc}".replace("\n", " "))
        return
    if config.addon not in (None, "none") and not (base / str(config.addon)).exists():
        yield Finding(where, line, f"provider config addon: {base / str(config.addon)} does not exist")
    folders = config.cases if isinstance(config.cases, list) else [config.cases] if config.cases else []
    for folder in folders:
        if folder != BUNDLED_CASES and not (base / folder).is_dir():
            yield Finding(where, line, f"provider config cases: folder {base / folder} does not exist")


def _config(path: Path, build_rows: bool) -> Iterator[Finding]:
    where, base = str(path), path.parent
    node = _compose(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        yield Finding(where, mark.line + 1 if mark else None, f"not valid YAML ({exc})".replace("\n", " "))
        return
    if not isinstance(data, dict):
        yield Finding(where, 1, "a Promptfoo config is a mapping")
        return
    for i, entry in enumerate(data.get("providers") or []):
        yield from _provider(entry, where, base, _line(node, f"providers.{i}"))
    default = _file_ref(data.get("defaultTest"), base)
    if default is not None and not default.exists():
        yield Finding(where, _line(node, "defaultTest"), f"defaultTest: {default} does not exist")
    tests = data.get("tests")
    if isinstance(tests, dict):
        ref = _file_ref(tests.get("path"), base)
        if ref is None or not ref.exists():
            yield Finding(where, _line(node, "tests.path"), f"tests.path: {ref or tests.get('path')!r} does not exist")
        elif ref.name == "tests.py" and build_rows:  # our generator: build the rows as Promptfoo would (no tokens, no store)
            config = tests.get("config") or {}
            try:
                rows = suite_tests(str(config.get("suite", "baseline")), config.get("cases"), ref.resolve().parents[1])
            except GhostEvalError as exc:
                yield Finding(where, _line(node, "tests"), str(exc))
            else:
                if not rows:
                    yield Finding(where, _line(node, "tests"), f"suite {config.get('suite')!r} has no rows")


def _criteria(path: Path, cases: dict[str, Case]) -> Iterator[Finding]:
    try:
        criteria = load_criteria(path)
    except RecordError as exc:
        yield _record_finding(exc)
        return
    except GhostEvalError as exc:
        yield Finding(str(path), 1, str(exc))
        return
    node = _compose(path)
    for i, case_id in enumerate(criteria.cases):
        if case_id.removeprefix("use_case_") not in cases:
            yield Finding(str(path), _line(node, f"cases.{i}"), f"sentinel case {case_id!r} is not on the case path")


def validate_project(root: Path) -> list[Finding]:
    """Every problem of the suite folder `root`: its cases (with the bundled ones), configs and criteria."""
    case_path: list[str | Path] = [BUNDLED_CASES]
    if (root / "cases").is_dir():
        case_path.append(root / "cases")
    cases, errors = load_case_set(case_path)
    findings = [_record_finding(e) for e in errors]
    findings += _answer_keys(cases, root)
    for pattern in _CONFIGS:
        for config in sorted(root.glob(pattern)):
            findings += _config(config, build_rows=not errors)  # a broken case file is named once, above
    criteria = root / "sentinel" / "criteria.yaml"
    if criteria.exists():
        findings += _criteria(criteria, cases)
    return findings
