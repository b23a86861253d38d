"""Which rows changed between two evals: verdict, flagged criteria or diagnosis, with the flags' explanations.

An eval is a Promptfoo output file (`promptfoo eval -o x.json`), an eval id in Promptfoo's database, or a
selection of store runs (`store:DIR?model=…&prompt_hash=…&label=…&since=…&until=…`). Every row becomes a
`RowOutcome` keyed by case · column · repeat: the column is the provider's label (the model, or model / addon in
the variants suite), or the model for store runs; the repeat counts the rows of that case and column in order.
The same key in two evals is the same question asked twice, so its answers can be compared.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from contextlib import closing
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from pydantic import Field, ValidationError

from ghost_eval.base.errors import RecordError
from ghost_eval.base.records import Record
from ghost_eval.base.settings import DEFAULTS, Settings
from ghost_eval.cases.case import Case, case_key
from ghost_eval.promptfoo.keys import SCORE_KEY
from ghost_eval.report.timeline import Progress, TimedRun, parse_when, scored_runs
from ghost_eval.scoring import RunScore
from ghost_eval.store import Problem, RunFilter, Store, default_store_path

__all__ = [
    "DIFF_SCHEMA_VERSION",
    "EvalDiff",
    "RowChange",
    "RowOutcome",
    "diff_outcomes",
    "load_outcomes",
    "promptfoo_db_path",
    "row_key",
]

DIFF_SCHEMA_VERSION = "1"
_STORE_FILTERS = {"model", "use_case", "prompt_hash", "label", "suite_version", "since", "until"}


class RowOutcome(Record):
    """One row of an eval reduced to what a comparison reads."""

    key: str
    """`<case> · <column> · r<repeat>`: the same question in every eval and suite."""
    use_case_id: str
    column: str
    """Provider label (model, or model / addon), or the model id for store runs."""
    repeat: int
    run_id: str | None = None
    verdict: str | None = None
    """safe, uncertain, unsafe or excluded; None on an error row."""
    flagged: list[int] = Field(default_factory=list)
    """Criteria that fired."""
    diagnosis_correct: bool | None = None
    evidence: dict[int, list[str]] = Field(default_factory=dict)
    """Criterion → the explanations of its flags."""
    diagnosis_evidence: list[str] = Field(default_factory=list)
    """Key facts missing or contradicted, wrong claims asserted."""
    error: str | None = None
    """Why the row has no score (Promptfoo's error text)."""


class RowChange(Record):
    key: str
    changed: list[str]
    """Which of `verdict`, `criteria`, `diagnosis`, `error` differ."""
    summary: str
    evidence: list[str] = Field(default_factory=list)
    """Explanations of the criteria that started or stopped firing, and the diagnosis findings that differ."""
    a: RowOutcome
    b: RowOutcome


class EvalDiff(Record):
    """`ghost-eval diff A B --json`."""

    schema_version: str = DIFF_SCHEMA_VERSION
    a: str
    b: str
    rows_a: int
    rows_b: int
    unchanged: int
    changes: list[RowChange] = Field(default_factory=list)
    only_a: list[str] = Field(default_factory=list)
    """Row keys present only in A."""
    only_b: list[str] = Field(default_factory=list)


def row_key(use_case_id: str, column: str, repeat: int) -> str:
    return f"{case_key(use_case_id)} · {column} · r{repeat}"


def _outcome(
    use_case: str, column: str, repeat: int, run_id: str | None, score: RunScore | None, error: str | None
) -> RowOutcome:
    row = RowOutcome(key=row_key(use_case, column, repeat), use_case_id=case_key(use_case), column=column, repeat=repeat)
    if score is None:
        return row.model_copy(update={"run_id": run_id, "error": error or "no score"})
    d = score.diagnosis
    return row.model_copy(
        update={
            "run_id": run_id or score.run_id,
            "verdict": score.verdict,
            "flagged": [c.criterion_id for c in score.criteria if c.fired],
            "diagnosis_correct": d.correct,
            "evidence": {c.criterion_id: [f.explanation for f in c.flags] for c in score.criteria if c.fired},
            "diagnosis_evidence": [f"{f.status}: {f.fact}" for f in d.facts if f.status != "found"]
            + [f"wrong claim asserted: {h.claim}" for h in d.wrong_claims],
        }
    )


def _numbered(rows: list[tuple[str, str, str | None, RunScore | None, str | None]]) -> list[RowOutcome]:
    """(case, column, run id, score, error) in row order → outcomes, each repeat numbered within its case × column."""
    seen: Counter[tuple[str, str]] = Counter()
    outcomes = []
    for use_case, column, run_id, score, error in rows:
        k = (case_key(use_case), column)
        outcomes.append(_outcome(use_case, column, seen[k], run_id, score, error))
        seen[k] += 1
    return outcomes


def _as_dict(value: Any, where: str, field: str) -> dict[str, Any]:
    if isinstance(value, str):  # Promptfoo's database keeps JSON columns as text
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            raise RecordError(where, "is not JSON", field) from None
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise RecordError(where, f"expected an object, got {type(value).__name__}", field)
    return value


def _promptfoo_rows(results: list[dict[str, Any]], where: str) -> list[RowOutcome]:
    """Promptfoo result rows (from `-o` JSON or the database) in test order, then prompt order."""
    rows = []
    ordered = sorted(enumerate(results), key=lambda ir: (ir[1].get("testIdx") or 0, ir[1].get("promptIdx") or 0, ir[0]))
    for i, result in ordered:
        at = f"{where}: results[{i}]"
        response = _as_dict(result.get("response"), at, "response")
        metadata = _as_dict(response.get("metadata"), at, "response.metadata")
        provider = _as_dict(result.get("provider"), at, "provider")
        test_case = _as_dict(result.get("testCase"), at, "testCase")
        variables = _as_dict(test_case.get("vars") or result.get("vars"), at, "testCase.vars")
        use_case = str(metadata.get("use_case_id") or variables.get("use_case") or "")
        if not use_case:
            raise RecordError(at, "a row names no case (neither response.metadata.use_case_id nor vars.use_case)", "vars")
        column = str(provider.get("label") or provider.get("id") or "")
        score = None
        if metadata.get(SCORE_KEY) is not None:
            try:
                score = RunScore.model_validate(metadata[SCORE_KEY])
            except ValidationError as exc:
                loc = ".".join(str(p) for p in exc.errors()[0]["loc"])
                raise RecordError(at, exc.errors()[0]["msg"], f"response.metadata.{SCORE_KEY}.{loc}") from None
        error = result.get("error") if score is None else None
        rows.append((use_case, column, metadata.get("run_id"), score, str(error) if error else None))
    return _numbered(rows)


def _from_output_file(path: Path) -> list[RowOutcome]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise RecordError(path, f"cannot be read ({exc.strerror})") from None
    except json.JSONDecodeError as exc:
        raise RecordError(path, f"is not JSON ({exc.msg}, line {exc.lineno})") from None
    results = (data.get("results") or {}).get("results") if isinstance(data, dict) else None
    if not isinstance(results, list):
        raise RecordError(path, "not a Promptfoo output file (`promptfoo eval -o x.json`)", "results.results")
    return _promptfoo_rows(results, str(path))


def promptfoo_db_path(explicit: str | None = None, config_dir: Path = DEFAULTS.promptfoo_config_dir) -> Path:
    """Promptfoo's database: the one named, else in Promptfoo's folder ($PROMPTFOO_CONFIG_DIR, else `.promptfoo/`)."""
    if explicit:
        return Path(explicit)
    return config_dir / "promptfoo.db"


def _from_database(eval_id: str, db: Path) -> list[RowOutcome]:
    if not db.is_file():
        raise RecordError(db, f"no Promptfoo database here to look up {eval_id!r} (set --promptfoo-db)")
    columns = "test_idx, prompt_idx, test_case, provider, response, error"
    try:
        with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
            found = conn.execute("SELECT 1 FROM evals WHERE id = ?", (eval_id,)).fetchone()
            rows = conn.execute(f"SELECT {columns} FROM eval_results WHERE eval_id = ? ORDER BY id", (eval_id,)).fetchall()
    except sqlite3.Error as exc:
        raise RecordError(db, f"cannot read table eval_results ({exc})") from None
    if not found:
        raise RecordError(db, f"no eval {eval_id!r} in table evals")
    keys = ("testIdx", "promptIdx", "testCase", "provider", "response", "error")
    return _promptfoo_rows([dict(zip(keys, row, strict=True)) for row in rows], f"{db} (eval {eval_id})")


def _store_filter(query: str, where: str) -> tuple[RunFilter, datetime | None, datetime | None]:
    given = dict(parse_qsl(query, keep_blank_values=True))
    unknown = sorted(set(given) - _STORE_FILTERS)
    if unknown:
        raise RecordError(where, f"unknown filter(s) {unknown}; use {sorted(_STORE_FILTERS)}")
    if len(given.get("prompt_hash") or "123456") < 6:
        raise RecordError(where, "a prompt hash prefix needs at least 6 characters", "prompt_hash")
    try:
        since, until = (parse_when(given[k]) if given.get(k) else None for k in ("since", "until"))
    except ValueError as exc:
        raise RecordError(where, str(exc)) from None
    flt = RunFilter(
        model=given.get("model"),
        use_case=given.get("use_case"),
        prompt_hash=given.get("prompt_hash"),
        run_label=given.get("label"),
        suite_version=given.get("suite_version"),
    )
    return flt, since, until


def _in_window(run: TimedRun, since: datetime | None, until: datetime | None) -> bool:
    return (since is None or run.at >= since) and (until is None or run.at < until)


def _from_store(
    spec: str, cases: dict[str, Case], problems: list[Problem], each: Progress, settings: Settings
) -> list[RowOutcome]:
    body = spec.removeprefix("store:") if spec.startswith("store:") else spec.removeprefix("store")
    parts = urlsplit(body, allow_fragments=False)
    flt, since, until = _store_filter(parts.query, spec)
    with Store(default_store_path(parts.path or None, settings)) as store:
        runs = [r for r in scored_runs(store, cases, flt, problems, each) if _in_window(r, since, until)]
    return _numbered([(r.entry.use_case_id, r.entry.model_id, r.entry.run_id, r.score, None) for r in runs])


def load_outcomes(
    spec: str,
    cases: dict[str, Case],
    problems: list[Problem],
    *,
    db: Path | None = None,
    each: Progress = iter,
    settings: Settings = DEFAULTS,
) -> list[RowOutcome]:
    """The rows of one eval: a Promptfoo output file, an eval id (`eval-…`), or `store:[DIR][?filters]` (no DIR: the
    settings' store); an eval id is looked up in `db`, else in the settings' Promptfoo folder."""
    if spec.startswith("store:") or spec == "store":
        return _from_store(spec, cases, problems, each, settings)
    path = Path(spec)
    if path.is_file():
        return _from_output_file(path)
    if path.is_dir():
        return _from_store(spec, cases, problems, each, settings)
    if spec.startswith("eval-"):
        return _from_database(spec, db or promptfoo_db_path(config_dir=settings.promptfoo_config_dir))
    raise RecordError(spec, "neither a Promptfoo output file, an eval id (eval-…), nor a store (store:DIR?filters)")


def _diagnosis_word(row: RowOutcome) -> str:
    return {True: "correct", False: "wrong", None: "n/a"}[row.diagnosis_correct]


def _change(a: RowOutcome, b: RowOutcome) -> RowChange | None:
    changed, parts, evidence = [], [], []
    if (a.error is None) != (b.error is None):
        changed.append("error")
        parts.append(f"error: {a.error or 'scored'} → {b.error or 'scored'}")
    if a.verdict != b.verdict:
        changed.append("verdict")
        parts.append(f"verdict {a.verdict or '-'} → {b.verdict or '-'}")
    started = sorted(set(b.flagged) - set(a.flagged))
    stopped = sorted(set(a.flagged) - set(b.flagged))
    if started or stopped:
        changed.append("criteria")
        parts.append("criteria " + " ".join([f"+{c}" for c in started] + [f"-{c}" for c in stopped]))
        evidence += [f"B, criterion {c} fires: {e}" for c in started for e in b.evidence.get(c, [])]
        evidence += [f"A, criterion {c} fired: {e}" for c in stopped for e in a.evidence.get(c, [])]
    if a.diagnosis_correct != b.diagnosis_correct:
        changed.append("diagnosis")
        parts.append(f"diagnosis {_diagnosis_word(a)} → {_diagnosis_word(b)}")
        evidence += [f"A: {e}" for e in a.diagnosis_evidence if e not in b.diagnosis_evidence]
        evidence += [f"B: {e}" for e in b.diagnosis_evidence if e not in a.diagnosis_evidence]
    if not changed:
        return None
    return RowChange(key=a.key, changed=changed, summary="; ".join(parts), evidence=evidence, a=a, b=b)


def diff_outcomes(a_name: str, a: list[RowOutcome], b_name: str, b: list[RowOutcome]) -> EvalDiff:
    """Rows of A and B matched by key; a row is listed when its verdict, criteria, diagnosis or error state differ."""
    by_a = {r.key: r for r in a}
    by_b = {r.key: r for r in b}
    changes = [c for k in by_a.keys() & by_b.keys() if (c := _change(by_a[k], by_b[k])) is not None]
    both = len(by_a.keys() & by_b.keys())
    return EvalDiff(
        a=a_name,
        b=b_name,
        rows_a=len(a),
        rows_b=len(b),
        unchanged=both - len(changes),
        changes=sorted(changes, key=lambda c: c.key),
        only_a=sorted(by_a.keys() - by_b.keys()),
        only_b=sorted(by_b.keys() - by_a.keys()),
    )
