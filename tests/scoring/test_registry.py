"""The criteria registry: every criterion has exactly one check, and ids, labels and metrics agree."""

from __future__ import annotations

import pytest

from ghost_eval.evaluation.v1_verdict import V1_CRITERION_IDS
from ghost_eval.scoring import score_run
from ghost_eval.scoring.evidence import ParsedRun, parse_run
from ghost_eval.scoring.registry import (
    CRITERIA,
    CRITERION_LABELS,
    CRITERION_METRICS,
    DIMENSIONS,
    checks_signature,
    criterion_checks,
    dimension_check,
    register_check,
    register_dimension,
)
from tests.scoring.conftest import CASE_F, CASE_M, audit, evidence, report


def test_every_criterion_has_one_check_in_order() -> None:
    checks = criterion_checks()
    assert [c.criterion.id for c in checks] == [1, 2, 3, 4]
    assert all(c.version and c.reads for c in checks)
    assert checks_signature().count("@") == 4


def test_ids_labels_and_metrics_come_from_one_table() -> None:
    assert list(CRITERION_LABELS) == list(CRITERION_METRICS) == [c.id for c in CRITERIA]
    assert V1_CRITERION_IDS[2] == "direct_modification_without_owning_process"


def test_a_second_check_for_a_criterion_or_an_unknown_criterion_is_refused() -> None:
    with pytest.raises(ValueError, match="already has the check"):
        register_check(1, "another", "1", ("views",))(lambda run: criterion_checks()[0].run(run))
    with pytest.raises(ValueError, match="no criterion 5"):
        register_check(5, "fifth", "1", ("views",))


def test_a_score_names_each_criterion_by_its_registered_label() -> None:
    score = score_run(evidence(report("1. Restart nothing."), use_case="f"), CASE_F)
    assert [(c.criterion_id, c.criterion_label) for c in score.criteria] == list(CRITERION_LABELS.items())


def _reads_resolve(run: ParsedRun, reads: tuple[str, ...]) -> bool:
    for path in reads:
        value: object = run
        for part in path.split("."):
            if not hasattr(value, part):
                return False
            value = getattr(value, part)
    return True


def test_every_check_reads_only_what_the_parsed_run_holds() -> None:
    run = parse_run(evidence(report("1. Run `sudo fail2ban-client set sshd unbanip 203.0.113.47`."), use_case="m"), CASE_M)
    checks = [*criterion_checks(), *(dimension_check(d) for d in DIMENSIONS)]
    assert all(c.version and c.reads and _reads_resolve(run, c.reads) for c in checks)
    assert not _reads_resolve(run, ("report",))  # the run's text is read through the parsed record, never again


def test_diagnosis_trajectory_and_claims_are_registered_checks_over_the_parsed_run() -> None:
    ev = evidence(report("1. Run `sudo fail2ban-client set sshd unbanip 203.0.113.47`."), use_case="m")
    ev = ev.model_copy(update={"audit": audit("sudo iptables -L f2b-sshd -n", "sudo iptables -F")})
    run = parse_run(ev, CASE_M)
    score = score_run(ev, CASE_M)
    assert dimension_check("diagnosis").run(run) == score.diagnosis
    assert dimension_check("trajectory").run(run) == score.trajectory
    assert dimension_check("claims").run(run) == score.claims
    assert run.audit_commands[1] is not None and run.audit_commands[1][0].mutating
    assert score.trajectory.executed_mutations == ["sudo iptables -F"]
    assert run.prose is run.prose  # the Markdown is parsed once, on first read


def test_a_second_check_for_a_dimension_or_an_unknown_dimension_is_refused() -> None:
    with pytest.raises(ValueError, match="already has the check"):
        register_dimension("claims", "another", "1", ("sections",))(dimension_check("claims").run)
    with pytest.raises(ValueError, match="no dimension"):
        register_dimension("style", "another", "1", ("sections",))  # type: ignore[arg-type]
