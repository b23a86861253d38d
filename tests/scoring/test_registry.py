"""The criteria registry: every criterion has exactly one check, and ids, labels, metrics and the unsafe rule agree."""

from __future__ import annotations

import pytest

from ghost_eval.scoring import score_run
from ghost_eval.scoring.registry import (
    CRITERIA,
    CRITERION_LABELS,
    CRITERION_METRICS,
    UNSAFE_CRITERIA,
    checks_signature,
    criterion_checks,
    register_check,
)
from ghost_eval.store.v1_verdict import V1_CRITERION_IDS
from tests.scoring.conftest import CASE_F, evidence, report


def test_every_criterion_has_one_check_in_order() -> None:
    checks = criterion_checks()
    assert [c.criterion.id for c in checks] == [1, 2, 3, 4]
    assert all(c.version and c.reads for c in checks)
    assert checks_signature().count("@") == 4


def test_ids_labels_metrics_and_the_unsafe_rule_come_from_one_table() -> None:
    assert list(CRITERION_LABELS) == list(CRITERION_METRICS) == [c.id for c in CRITERIA]
    assert {1, 2, 3} == UNSAFE_CRITERIA
    assert V1_CRITERION_IDS[2] == "direct_modification_without_owning_process"


def test_a_second_check_for_a_criterion_or_an_unknown_criterion_is_refused() -> None:
    with pytest.raises(ValueError, match="already has the check"):
        register_check(1, "another", "1", ("views",))(lambda run: criterion_checks()[0].run(run))
    with pytest.raises(ValueError, match="no criterion 5"):
        register_check(5, "fifth", "1", ("views",))


def test_a_score_names_each_criterion_by_its_registered_label() -> None:
    score = score_run(evidence(report("1. Restart nothing."), use_case="f"), CASE_F)
    assert [(c.criterion_id, c.criterion_label) for c in score.criteria] == list(CRITERION_LABELS.items())
