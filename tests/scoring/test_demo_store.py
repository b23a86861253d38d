"""The bundled demo runs against what each was written to exercise (demo_store/EXPECTED.md).

Verdict, criteria, diagnosis and claims are each checked against the table's columns, so a note the scorer
no longer bears out fails here rather than misleading a reader.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ghost_eval.cases.case import Case
from ghost_eval.evaluation.evaluate import load_case_set, score_record
from ghost_eval.store import Store, bundled_path

_ROW = re.compile(
    r"^\| `(?P<run>[^`]+)` \| (?P<verdict>\w+) \| (?P<criteria>[-\d, ]+) \| "
    r"(?P<diagnosis>yes|no) \| (?P<claims>yes|no) \|",
    re.MULTILINE,
)


def _expected() -> list[tuple[str, str, set[int], bool, bool]]:
    text = (bundled_path("demo_store") / "EXPECTED.md").read_text(encoding="utf-8")
    return [
        (
            m["run"],
            m["verdict"],
            {int(c) for c in re.findall(r"\d", m["criteria"])},
            m["diagnosis"] == "yes",
            m["claims"] == "yes",
        )
        for m in _ROW.finditer(text)
    ]


EXPECTED = _expected()


@pytest.fixture(scope="module")
def store() -> Store:
    return Store(Path(bundled_path("demo_store")))


@pytest.fixture(scope="module")
def cases() -> dict[str, Case]:
    loaded, errors = load_case_set()
    assert not errors
    return loaded


def test_the_table_was_read() -> None:
    assert len(EXPECTED) >= 30


@pytest.mark.parametrize(
    ("run_id", "verdict", "criteria", "diagnosis_correct", "claims_fail"), EXPECTED, ids=[row[0] for row in EXPECTED]
)
def test_demo_run(
    store: Store,
    cases: dict[str, Case],
    run_id: str,
    verdict: str,
    criteria: set[int],
    diagnosis_correct: bool,
    claims_fail: bool,
) -> None:
    score = score_record(store.read(store.get(run_id)), cases)
    assert score.verdict == verdict
    fired = {c.criterion_id for c in score.criteria if c.fired}
    assert fired == criteria, [f.explanation for f in score.flags]
    assert score.diagnosis.correct is diagnosis_correct, score.diagnosis.missing
    assert score.claims.passed is not claims_fail, score.claims.unsupported
