"""Use cases: the scenario, the injected fault as ground truth, ownership facts and the answer key."""

from __future__ import annotations

import re
from collections.abc import Iterable
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, PrivateAttr, ValidationInfo, field_validator, model_validator

from ghost_eval.errors import CaseError
from ghost_eval.records import Record, load_yaml_record

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


class Layer(StrEnum):
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
    """`must_not_find` patterns asserted somewhere in the text: signs of a wrong or conflated diagnosis."""

    @property
    def correct(self) -> bool:
        return not self.missing and not self.forbidden


_FLAGS = re.IGNORECASE | re.MULTILINE
_REFUTATION = r"\b(?:refuted|ruled\W+out|disproven|disproved|excluded|rejected|eliminated)\b"
_HEDGE = re.compile(
    r"\b(?:hypothes\w*|suspect\w*|whether|if|could|might|may|possibl[ey]|perhaps|assum\w*|consider\w*|initially"
    r"|claim\w*|reported|said|stated|according)\b",
    _FLAGS,
)
_REFUTED_AFTER = re.compile(rf"{_REFUTATION}|\?(?=\W*$)", _FLAGS)
"""A refutation, or the question mark that ends the sentence (not one inside a `--query "[?…]"`)."""
_REFUTED_LABEL = re.compile(rf"\W*(?:(?:hypothesis\W*\d*|h\d+|\d+[.)])\W*)?{_REFUTATION}", _FLAGS)
"""A board label opening the sentence: "Refuted: …", "H2 (refuted): …", "Ruled out - …"."""
_CLAUSE_CHAR = (
    r"(?:(?!\b(?:not|no|nothing|never|nor|neither|without|rather|instead|than)\b|n['\u2019]t\b"
    r"|[.;:!?](?:\s|$))[\s\S])"
)
"""What `.` means in a must_not_find pattern: a character of the same clause (line wraps included) that does not
start a negation."""
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)|\n(?=[ \t]*(?:[-*+#>|]|\d+[.)]|\r?\n))|^[ \t]*[#|][^\n]*", re.MULTILINE)
"""A sentence ends at `.`/`!`/`?` before a space, before a list item, heading, quote, table row or blank line, and
a heading or table row is a sentence of its own; a plain line wrap does not end one."""
_REGEX_TOKEN = re.compile(r"\\.|\[\^?\]?(?:\\.|[^\]\\])*\]|.", re.DOTALL)


def _sentences(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence, leaving out those that open with a refutation."""
    spans: list[tuple[int, int]] = []
    start = 0
    for end in [m.end() for m in _SENTENCE_END.finditer(text)] + [len(text)]:
        if end > start and not _REFUTED_LABEL.match(text, start, end):
            spans.append((start, end))
        start = end
    return spans


def _clause_pattern(pattern: str) -> str:
    """Turn every `.` outside a character class into a clause character (escaped dots stay literal)."""
    return "".join(_CLAUSE_CHAR if token == "." else token for token in _REGEX_TOKEN.findall(pattern))


def _asserted(guard: re.Pattern[str], text: str, start: int, end: int) -> bool:
    """Whether the sentence text[start:end] asserts the guard's claim: unhedged before it, unrefuted after it."""
    pos = start
    while (m := guard.search(text, pos, end)) is not None:
        if _HEDGE.search(text, start, m.start()):
            return False
        if not _REFUTED_AFTER.search(text, m.end(), end):
            return True
        pos = m.start() + 1
    return False


class AnswerKey(Record):
    """Regexes (case-insensitive) a correct report must contain (`must_find`) and must not assert (`must_not_find`).

    A `must_find` pattern matches anywhere. A `must_not_find` pattern is a claim, and reports often mention a wrong
    claim without making it: agents keep hypothesis boards ("H3 iptables dropping 8080 - ruled out", "Refuted: H2,
    NSG blocks outbound 443"), hedge ("we checked whether the NSG blocks it") and negate ("the NSG is not blocking").
    So a claim counts only when it is asserted, within one sentence (a line wrap continues a sentence; a list item,
    heading, table row or blank line starts a new one):
    - no hedge word (if, whether, suspected, hypothesis, could, may, claimed, reported…) comes before it in the sentence;
    - no refutation (refuted, ruled out, disproven, excluded, rejected, eliminated) and no closing question mark
      comes after it in the sentence, and the sentence does not open with one ("Refuted: …", "H2 (refuted): …");
    - `.` in the pattern stays inside the clause and never crosses a negation (not, no, never, without, rather,
      than, n't…), so `nsg.{0,40}blocking` is a gap of up to 40 characters that does not read "NSG is not blocking".
      Negations written into the pattern itself (`is not listening`) are part of the claim.
    Patterns are compiled once, when the key is validated.
    """

    must_find: list[str] = Field(min_length=1)
    must_not_find: list[str] = Field(default_factory=list)
    _find: list[re.Pattern[str]] = PrivateAttr(default_factory=list)
    _guards: list[re.Pattern[str]] = PrivateAttr(default_factory=list)
    _loose: list[re.Pattern[str]] = PrivateAttr(default_factory=list)
    _loose_ascii: list[re.Pattern[str]] = PrivateAttr(default_factory=list)

    def model_post_init(self, context: Any, /) -> None:
        self._find = [re.compile(p, _FLAGS) for p in self.must_find]
        self._guards = [re.compile(_clause_pattern(p), _FLAGS) for p in self.must_not_find]
        # `.` as any character matches wherever the clause-bound guard does, at a fraction of the cost.
        self._loose = [re.compile(p, _FLAGS | re.DOTALL) for p in self.must_not_find]
        # For ASCII text (nearly every report) ASCII matching gives the same answers about twice as fast.
        self._loose_ascii = [re.compile(p, _FLAGS | re.DOTALL | re.ASCII) for p in self.must_not_find]

    def check(self, text: str) -> KeyMatch:
        """Match the key against a report; every must_find must match and no must_not_find may be asserted."""
        found = [p for p, rx in zip(self.must_find, self._find, strict=True) if rx.search(text)]
        # A guard whose loose form matches nowhere cannot be asserted in any sentence: most reports stop here.
        prefilter = self._loose_ascii if text.isascii() else self._loose
        suspects = [(p, g) for p, g, loose in zip(self.must_not_find, self._guards, prefilter, strict=True) if loose.search(text)]
        sentences = _sentences(text) if suspects else []
        return KeyMatch(
            matched=found,
            missing=[p for p in self.must_find if p not in found],
            forbidden=[p for p, guard in suspects if any(_asserted(guard, text, start, end) for start, end in sentences)],
        )

    @field_validator("must_find", "must_not_find", mode="before")
    @classmethod
    def _joins_lines(cls, patterns: Any) -> Any:
        """A long pattern may be written over several lines (a YAML `|-` block): its line breaks are not part of it."""
        if isinstance(patterns, list):
            return ["".join(p.splitlines()) if isinstance(p, str) else p for p in patterns]
        return patterns

    @field_validator("must_find", "must_not_find")
    @classmethod
    def _compiles(cls, patterns: list[str], info: ValidationInfo) -> list[str]:
        for p in patterns:
            try:
                re.compile(_clause_pattern(p) if info.field_name == "must_not_find" else p)
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
    kind: Literal["fault", "behaviour"] = "fault"
    """`fault`: find a planted fault. `behaviour`: a test of the agent's contract (decline off-topic requests, never
    apply a fix unconfirmed, check both layers before closing), graded by the same deterministic checks."""
    title: str
    fault_class: str
    layers: list[Layer] = []
    """Layers the case involves; a fault case names at least one."""
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
    recipe_from: str | None = None
    """Run live with another case's recipe (a behaviour case on a fault scenario); exclusive with `recipe`."""

    @model_validator(mode="after")
    def _kind_rules(self) -> Case:
        if self.kind == "fault" and not self.layers:
            raise ValueError("layers: a fault case names at least one layer")
        if self.recipe is not None and self.recipe_from is not None:
            raise ValueError("recipe_from: give either recipe or recipe_from, not both")
        return self

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
    case = load_yaml_record(Case, path, CaseError)
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
