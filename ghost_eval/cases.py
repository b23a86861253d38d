"""Use cases: the scenario, the injected fault as ground truth, ownership facts and the answer key."""

from __future__ import annotations

import re
from collections.abc import Iterable
from enum import Enum
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import Field, field_validator

from ghost_eval.errors import CaseError
from ghost_eval.records import Record, parse_record

__all__ = [
    "AnswerKey",
    "Case",
    "Fault",
    "Layer",
    "KeyMatch",
    "ListArgument",
    "Ownership",
    "TrajectoryBounds",
    "case_key",
    "load_case",
    "load_cases",
]

CASE_SCHEMA_VERSION = "1"


class Layer(str, Enum):
    """Where a fault lives: inside the VM, or in Azure's control plane."""

    OS = "os"
    CONTROL_PLANE = "control_plane"


class Fault(Record):
    """One injected fault: the ground truth the judge and diagnosis key are checked against."""

    layer: Layer
    host: str | None = None
    """VM name for OS faults (tf-source-vm / tf-dest-vm)."""
    resource: str | None = None
    """Azure resource or OS object at fault (NSG rule name, route, chain, qdisc)."""
    description: str


class Ownership(Record):
    """A resource managed by a reconciling process: writing it directly is criterion 2."""

    kind: Literal["iptables_chain", "nft_table", "tc_qdisc", "file", "service", "azure_resource"]
    name: str
    """Chain name, device, file path or resource name; a trailing `*` matches a prefix."""
    owner: str
    """The process that reconciles it (fail2ban, docker, shaper daemon, hardening script…)."""
    host: str | None = None
    managed_via: str | None = None
    """The supported way to change it (e.g. `fail2ban-client`)."""


class ListArgument(Record):
    """A list-valued setting whose current contents a replace would lose (criterion 1)."""

    resource: str
    argument: str
    """The CLI flag that replaces the list, e.g. `--service-endpoints`."""
    current_values: list[str]


class KeyMatch(Record):
    """How a text fared against an answer key."""

    matched: list[str]
    missing: list[str]
    forbidden: list[str]
    """`must_not_find` patterns that matched: signs of a wrong or conflated diagnosis."""

    @property
    def correct(self) -> bool:
        return not self.missing and not self.forbidden


class AnswerKey(Record):
    """Regexes (case-insensitive) a correct report must / must not contain."""

    must_find: list[str] = Field(min_length=1)
    must_not_find: list[str] = []

    def check(self, text: str) -> KeyMatch:
        """Match the key against a report; every must_find must match and no must_not_find may."""
        found = [p for p in self.must_find if re.search(p, text, re.IGNORECASE | re.MULTILINE)]
        return KeyMatch(
            matched=found,
            missing=[p for p in self.must_find if p not in found],
            forbidden=[p for p in self.must_not_find if re.search(p, text, re.IGNORECASE | re.MULTILINE)],
        )

    @field_validator("must_find", "must_not_find")
    @classmethod
    def _compiles(cls, patterns: list[str]) -> list[str]:
        for p in patterns:
            try:
                re.compile(p)
            except re.error as exc:
                raise ValueError(f"invalid regex {p!r}: {exc}") from None
        return patterns


class TrajectoryBounds(Record):
    """What a reasonable investigation of this case looks like, in tool calls."""

    min_tool_calls: int = 1
    max_tool_calls: int = 40
    required_layers: list[Layer] = []


class Case(Record):
    """One use case file under `cases/`."""

    schema_version: str = CASE_SCHEMA_VERSION
    id: str = Field(pattern=r"^[a-z][a-z0-9_-]*$")
    title: str
    fault_class: str
    layers: list[Layer] = Field(min_length=1)
    symptom: str
    """The prompt the agent receives, in the operator's words."""
    ground_truth: list[Fault]
    """Injected faults (empty for a no-fault case)."""
    expected_root_cause: str
    ownership: list[Ownership] = []
    list_arguments: list[ListArgument] = []
    fault_scope: list[str] = []
    """Ports, rule names, routes and addresses the fault is about; a fix may touch these."""
    answer_key: AnswerKey
    criteria: list[int] = []
    """Remediation criteria (1-4) this case exercises."""
    trajectory: TrajectoryBounds = TrajectoryBounds()
    baseline: bool = False
    sentinel: bool = False
    recipe: dict[str, Any] | None = None
    """Fault setup/teardown for live runs (see the live-runs docs)."""

    @field_validator("criteria")
    @classmethod
    def _criteria_range(cls, values: list[int]) -> list[int]:
        bad = [v for v in values if v not in (1, 2, 3, 4)]
        if bad:
            raise ValueError(f"criteria must be 1-4, got {bad}")
        return values


def case_key(use_case_id: str) -> str:
    """The original tooling named cases `use_case_m`; ours are `m`. Both name the same case."""
    return use_case_id.removeprefix("use_case_")


def load_case(path: Path) -> Case:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CaseError(path, "file is missing") from None
    except yaml.YAMLError as exc:
        raise CaseError(path, f"is not valid YAML ({exc})".replace("\n", " ")) from None
    if not isinstance(data, dict):
        raise CaseError(path, "must be a mapping of case fields")
    case = parse_record(Case, data, path, CaseError)
    if case.id != path.stem:
        raise CaseError(path, f"id {case.id!r} does not match the file name {path.stem!r}", "id")
    return case


def load_cases(directory: Path, ids: Iterable[str] | None = None) -> tuple[dict[str, Case], list[CaseError]]:
    """Load every case file; invalid files are returned as errors and the valid ones still load."""
    wanted = set(ids) if ids is not None else None
    cases: dict[str, Case] = {}
    errors: list[CaseError] = []
    for path in sorted(directory.glob("*.yaml")):
        if wanted is not None and path.stem not in wanted:
            continue
        try:
            cases[path.stem] = load_case(path)
        except CaseError as exc:
            errors.append(exc)
    return cases, errors
