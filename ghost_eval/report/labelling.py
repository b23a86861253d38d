"""`ghost-eval label`: walk through runs nobody has labelled yet, show what a reviewer needs, append the answers.

The scorers' own answers are not shown, so the labels stay an independent yardstick. Answers are read line by line
from a text stream (the terminal, or a file or pipe in tests and batch sessions); end of input stops cleanly, and
every finished run is on disk before the next one is shown.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

from rich.console import Console
from rich.markdown import Markdown
from rich.panel import Panel

from ghost_eval.cases.case import Case, case_key
from ghost_eval.evaluation.evaluate import evidence_of
from ghost_eval.judge import recommended_actions
from ghost_eval.report.labels import HumanVerdict, Label, append_label, read_labels
from ghost_eval.scoring.registry import criterion_labels
from ghost_eval.store import IndexEntry, RunFilter, RunRecord, Store

__all__ = ["label_runs", "unlabelled"]

_YES = {"y": "YES", "yes": "YES", "n": "NO", "no": "NO"}
_VERDICTS: dict[str, HumanVerdict] = {"safe": "safe", "uncertain": "uncertain", "unsafe": "unsafe"}
_DIAGNOSIS: dict[str, bool | None] = {"y": True, "yes": True, "n": False, "no": False, "?": None}


class _Stop(Exception):
    """The labeller quit, or the input ended."""


class _Skip(Exception):
    """The labeller skipped this run."""


def unlabelled(store: Store, labels_path: Path, labeller: str, flt: RunFilter | None = None) -> list[IndexEntry]:
    """Runs this labeller has not labelled yet, in store order."""
    labels, _ = read_labels(labels_path)
    done = {lab.run_id for lab in labels if lab.labeller == labeller}
    return [e for e in store.runs(flt) if e.run_id not in done]


def _case_facts(case: Case | None, record: RunRecord) -> str:
    """The case as the run met it: the prompt the run stored (else the case's), the facts of its environment."""
    if case is None:
        return f"Unknown case {record.entry.use_case_id}: no ground truth."
    told = record.prompt.strip() if record.prompt and record.prompt.strip() else case.symptom
    facts = case.facts(record.entry.environment)
    lines = [f"**{case.id}: {case.title}**", "", f"What the agent was told: {told}", "", "Ground truth:"]
    lines += [f"- [{f.layer.value}] {f.description}" for f in case.ground_truth] or ["- no fault injected"]
    lines += ["", f"Expected root cause: {case.expected_root_cause}"]
    if case.key_facts:
        lines += ["", "Key facts of a correct diagnosis:"] + [f"- ({k.kind}) {k.fact}" for k in case.key_facts]
    lines += ["", f"Facts of environment {facts.environment}:"]
    if facts.ownership:
        lines += ["Owned resources:"] + [f"- {o.kind} `{o.name}` owned by {o.owner}" for o in facts.ownership]
    else:
        lines += ["- no reconciling process owns anything here"]
    if facts.list_arguments:
        lines += ["", "List-valued settings:"]
        lines += [f"- {a.resource} `{a.argument}`: {', '.join(a.current_values) or '(empty)'}" for a in facts.list_arguments]
    if case.fault_scope:
        lines += ["", f"Fault scope: {', '.join(case.fault_scope)}"]
    return "\n".join(lines)


def _show(console: Console, record: RunRecord, case: Case | None, position: str) -> None:
    evidence = evidence_of(record)
    console.rule(f"{position}  {record.entry.run_id}")
    console.print(Panel(Markdown(_case_facts(case, record)), title="case facts"))
    snapshot = "taken" if evidence.snapshot is not None else "missing: criterion 1 must rest on the case and the run's reads"
    console.print(f"infrastructure snapshot: {snapshot}", markup=False)
    console.print(Panel(Markdown(evidence.report or "(no report)"), title="report"))
    actions = recommended_actions(evidence)
    numbered = "\n".join(
        f"{i}. {a.description}" + "".join(f"\n   `{c}`" for c in a.commands) for i, a in enumerate(actions, start=1)
    )
    console.print(Panel(numbered or "(no recommended actions found)", title="recommended actions, numbered"), markup=False)


def _ask(console: Console, answers: TextIO, question: str, allowed: dict[str, object]) -> str:
    """One line of input mapped through `allowed`; asks again on anything else."""
    while True:
        console.print(question, markup=False)
        line = answers.readline()
        if not line:
            raise _Stop
        reply = line.strip().lower()
        if reply == "q":
            raise _Stop
        if reply == "s":
            raise _Skip
        if reply in allowed:
            return reply
        console.print(f"  please answer one of: {', '.join(sorted(allowed))} (s skips this run, q quits)", markup=False)


def _label_one(console: Console, answers: TextIO, run_id: str, labeller: str) -> Label:
    criteria = {}
    for c, label in criterion_labels().items():
        reply = _ask(console, answers, f"criterion {c} ({label}) fires? [y/n]", dict(_YES))
        criteria[c] = "YES" if _YES[reply] == "YES" else "NO"
    verdict = _VERDICTS[_ask(console, answers, "verdict? [safe/uncertain/unsafe]", dict(_VERDICTS))]
    diagnosis = _DIAGNOSIS[_ask(console, answers, "diagnosis correct? [y/n/? for cannot tell]", dict(_DIAGNOSIS))]
    return Label(
        run_id=run_id,
        labeller=labeller,
        criteria=criteria,
        verdict=verdict,
        diagnosis_correct=diagnosis,
        labelled_at=datetime.now(UTC),
    )


def label_runs(
    store: Store,
    cases: dict[str, Case],
    labels_path: Path,
    labeller: str,
    answers: TextIO,
    console: Console,
    *,
    flt: RunFilter | None = None,
    limit: int | None = None,
    seed: int | None = None,
) -> list[Label]:
    """Label unlabelled runs (shuffled by `seed` when given, so a sample is not biased to the store's order)."""
    todo: Sequence[IndexEntry] = unlabelled(store, labels_path, labeller, flt)
    if seed is not None:
        todo = random.Random(seed).sample(list(todo), len(todo))
    if limit is not None:
        todo = todo[:limit]
    written: list[Label] = []
    for n, entry in enumerate(todo, start=1):
        record = store.read(entry)
        _show(console, record, cases.get(case_key(entry.use_case_id)), f"{n}/{len(todo)}")
        try:
            label = _label_one(console, answers, entry.run_id, labeller)
        except _Skip:
            continue
        except _Stop:
            break
        append_label(labels_path, label)
        written.append(label)
    console.print(f"{len(written)} labels appended to {labels_path}", markup=False)
    return written
