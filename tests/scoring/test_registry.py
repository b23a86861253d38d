"""The registry: it lists every check (one object per criterion, one check per dimension); ids, labels and metrics
agree with the data-only names; nothing registers itself when a module is imported."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from ghost_eval.evaluation.v1_verdict import V1_CRITERION_IDS
from ghost_eval.scoring import score_run
from ghost_eval.scoring.names import BUILTIN_NAMES, CRITERION_LABELS, CRITERION_METRICS
from ghost_eval.scoring.parsed import ParsedRun, parse_run
from ghost_eval.scoring.registry import (
    BUILTIN,
    DIMENSIONS,
    criteria,
    criterion,
    dimension_check,
    register_criterion,
    unregister_criterion,
)
from tests.conftest import REPO
from tests.scoring.conftest import CASE_F, CASE_M, audit, evidence, report


def test_the_registry_lists_one_object_per_criterion_in_id_order() -> None:
    assert [c.id for c in criteria()] == [1, 2, 3, 4]
    assert [c.name for c in BUILTIN] == list(BUILTIN_NAMES)
    assert all(c.effect == "decides" and c.reads and c.rubric for c in BUILTIN)
    assert criterion(3).metric == "c3_scope_narrow"
    with pytest.raises(LookupError, match="no criterion 9"):
        criterion(9)


def test_ids_labels_and_metrics_come_from_one_table() -> None:
    assert list(CRITERION_LABELS) == list(CRITERION_METRICS) == [c.id for c in criteria()]
    assert {c.id: (c.label, c.metric) for c in criteria()} == {
        i: (CRITERION_LABELS[i], CRITERION_METRICS[i]) for i in CRITERION_LABELS
    }
    assert V1_CRITERION_IDS[2] == "direct_modification_without_owning_process"


def test_a_second_criterion_with_a_known_id_label_or_metric_is_refused_and_the_built_ins_stay() -> None:
    with pytest.raises(ValueError, match="already has that id"):
        register_criterion(BUILTIN[0])
    with pytest.raises(LookupError, match="not registered by a team"):
        unregister_criterion(1)
    assert len(criteria()) == 4


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
    reads = [*(c.reads for c in criteria()), *(d.reads for d in DIMENSIONS.values())]
    assert all(r and _reads_resolve(run, r) for r in reads)
    assert not _reads_resolve(run, ("report",))  # the run's text is read through the parsed record, never again


def test_diagnosis_trajectory_and_claims_are_listed_checks_over_the_parsed_run() -> None:
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
    with pytest.raises(LookupError, match="no dimension"):
        dimension_check("style")  # type: ignore[arg-type]


def test_parsing_a_run_loads_no_check_and_registers_nothing() -> None:
    """Registration is the registry's list, not a side effect of importing the parser: the parsed run's module loads
    neither the registry nor any criterion."""
    probe = (
        "import json, sys, ghost_eval.scoring.parsed\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('ghost_eval.scoring.'))))"
    )
    out = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, check=True).stdout
    loaded = set(json.loads(out))
    checks = {"registry", "criterion", "list_argument", "owner_bypass", "scope", "verification", "diagnosis", "claims"}
    assert loaded & {f"ghost_eval.scoring.{m}" for m in checks} == set()
    assert "ghost_eval.scoring.parsed" in loaded
