"""CI output: junit XML (one test case per run), a Markdown summary for a pull-request comment, and a threshold gate.

The gate is advisory unless thresholds are given: with none, CI shows the numbers and passes; with
`--fail-under safe_remediation_rate=0.8` every model must reach the threshold, and the ones that do not are named.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import Field

from ghost_eval.base.errors import GhostEvalError
from ghost_eval.base.records import Record
from ghost_eval.report.render import render_template
from ghost_eval.report.timeline import TimedRun
from ghost_eval.report.trend import Summary, summarise
from ghost_eval.scoring.model import CRITERION_LABELS, CRITERION_METRICS

__all__ = [
    "METRICS",
    "SUMMARY_MARKER",
    "Gate",
    "Threshold",
    "by_model",
    "check_gate",
    "junit_xml",
    "summary_markdown",
]

SUMMARY_MARKER = "<!-- ghost-eval-summary -->"
"""First line of the summary: a CI step finds its earlier comment by it and edits that one instead of adding another."""


def _held(criterion: int) -> Callable[[Summary], float | None]:
    def value(s: Summary) -> float | None:
        fired = s.fired[criterion].rate
        return None if fired is None else 1 - fired

    return value


METRICS: dict[str, Callable[[Summary], float | None]] = {
    "safe_remediation_rate": lambda s: s.safe.rate,
    "diagnosis_accuracy": lambda s: s.diagnosis.rate,
    "diagnosis_safety_gap": lambda s: s.gap,
    **{CRITERION_METRICS[c]: _held(c) for c in sorted(CRITERION_LABELS)},
}
"""Per-model metrics a threshold may name; the criterion ones read as in Promptfoo (share of runs where it held)."""


def by_model(runs: Sequence[TimedRun]) -> dict[str, Summary]:
    grouped: dict[str, list[TimedRun]] = defaultdict(list)
    for r in runs:
        grouped[r.entry.model_id].append(r)
    return {m: summarise(rs) for m, rs in sorted(grouped.items())}


@dataclass(frozen=True)
class Threshold:
    metric: str
    bound: float
    direction: Literal["under", "over"]
    """`under`: fail when a model's value is below the bound; `over`: when above it (for the gap)."""

    @classmethod
    def parse(cls, text: str, direction: Literal["under", "over"]) -> Threshold:
        m = re.fullmatch(r"\s*([a-z0-9_]+)\s*=\s*([0-9.]+)\s*", text)
        if not m or m[1] not in METRICS:
            raise GhostEvalError(f"--fail-{direction} {text!r}: expected METRIC=NUMBER with METRIC one of {sorted(METRICS)}")
        return cls(m[1], float(m[2]), direction)

    def __str__(self) -> str:
        return f"{self.metric} {'≥' if self.direction == 'under' else '≤'} {self.bound:g}"


class Gate(Record):
    """The outcome of the thresholds on one report."""

    mode: Literal["advisory", "gate"]
    thresholds: list[str] = Field(default_factory=list)
    failures: list[str] = Field(default_factory=list)
    """One line per model and threshold missed, with the value."""

    @property
    def failed(self) -> bool:
        return bool(self.failures)


def check_gate(summaries: dict[str, Summary], thresholds: Sequence[Threshold]) -> Gate:
    failures = []
    for t in thresholds:
        for model, s in summaries.items():
            value = METRICS[t.metric](s)
            if value is None:
                failures.append(f"{model}: {t.metric} cannot be computed (no runs to count), needs {t}")
            elif (value < t.bound) if t.direction == "under" else (value > t.bound):
                failures.append(f"{model}: {t.metric} is {value:.2f}, needs {t}")
    if not summaries and thresholds:
        failures.append("no runs selected: nothing meets the thresholds")
    return Gate(mode="gate" if thresholds else "advisory", thresholds=[str(t) for t in thresholds], failures=failures)


def junit_xml(runs: Sequence[TimedRun]) -> str:
    """One <testsuite> per model, one <testcase> per run: safe passes, uncertain and unsafe fail, excluded is skipped."""
    root = ET.Element("testsuites", name="ghost-eval")
    grouped: dict[str, list[TimedRun]] = defaultdict(list)
    for r in runs:
        grouped[r.entry.model_id].append(r)
    for model, rs in sorted(grouped.items()):
        failing = [r for r in rs if r.score.verdict in ("uncertain", "unsafe")]
        skipped = [r for r in rs if r.score.verdict == "excluded"]
        suite = ET.SubElement(
            root, "testsuite", name=model, tests=str(len(rs)), failures=str(len(failing)), errors="0", skipped=str(len(skipped))
        )
        for r in rs:
            case = ET.SubElement(suite, "testcase", classname=model, name=f"{r.entry.use_case_id} · {r.entry.run_id}")
            s = r.score
            if s.verdict in ("uncertain", "unsafe"):
                fired = [c.criterion_id for c in s.criteria if c.fired]
                open_ = [c for c in s.criteria if c.outcome == "undetermined"]
                message = f"{s.verdict}: criteria {fired or '-'} fired" + (
                    f", {[c.criterion_id for c in open_]} undetermined" if open_ else ""
                )
                failure = ET.SubElement(case, "failure", type=s.verdict, message=message)
                failure.text = "\n".join(
                    [f"criterion {f.criterion_id} on action {f.action_index}: {f.explanation}" for f in s.flags]
                    + [f"criterion {c.criterion_id} undetermined: {why}" for c in open_ for why in c.evidence[-1:]]
                )
            elif s.verdict == "excluded":
                ET.SubElement(case, "skipped", message="excluded from scoring")
            diagnosis = {True: "correct", False: "wrong", None: "not checked"}[s.diagnosis.correct]
            ET.SubElement(case, "system-out").text = f"verdict {s.verdict}; diagnosis {diagnosis}; scorer {s.scorer}"
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def summary_markdown(summaries: dict[str, Summary], gate: Gate, store: str) -> str:
    """One table, per model; starts with `SUMMARY_MARKER` so a CI step can update its comment in place."""
    return render_template(
        "summary.md.j2",
        marker=SUMMARY_MARKER,
        summaries=summaries,
        gate=gate,
        store=store,
        metrics={c: CRITERION_METRICS[c] for c in sorted(CRITERION_LABELS)},
        held=METRICS,
    )
