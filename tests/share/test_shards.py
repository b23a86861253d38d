"""Sharded suites: n runners split a suite's rows without overlap, and every row and response carries the suite
version (cases + answer keys + variant spec + scorer version), which changes when any of them does."""

from __future__ import annotations

from pathlib import Path

import pytest

from ghost_eval.base.errors import GhostEvalError
from ghost_eval.promptfoo.adapters import SHARD_ENV, replay_response, suite_tests
from suites.tests import generate_tests
from tests.conftest import REPO


def _ids(rows: list[dict[str, object]]) -> list[str]:
    return [r["vars"]["use_case"] for r in rows]  # type: ignore[index]


def test_shards_partition_the_rows_in_order() -> None:
    whole = _ids(suite_tests("baseline"))
    shards = [_ids(suite_tests("baseline", shard=f"{k}/3")) for k in (1, 2, 3)]
    assert sorted(i for s in shards for i in s) == sorted(whole) and sum(len(s) for s in shards) == len(whole)
    assert all(s == [i for i in whole if i in s] for s in shards)


def test_the_shard_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """The test generator (where Promptfoo starts Python) reads $GHOST_EVAL_SHARD; the config's `shard` wins."""
    monkeypatch.setenv(SHARD_ENV, "2/2")
    assert _ids(generate_tests({"suite": "baseline"})) == _ids(suite_tests("baseline", shard="2/2"))
    assert _ids(generate_tests({"suite": "baseline", "shard": "1/2"})) == _ids(suite_tests("baseline", shard="1/2"))
    assert _ids(suite_tests("baseline")) != _ids(suite_tests("baseline", shard="2/2"))  # the library reads no variable


@pytest.mark.parametrize("bad", ["0/3", "4/3", "one/3", "3"])
def test_a_bad_shard_is_named(bad: str) -> None:
    with pytest.raises(GhostEvalError, match=f"shard '{bad}'"):
        suite_tests("baseline", shard=bad)


def _versions(rows: list[dict[str, object]]) -> set[str]:
    return {r["metadata"]["suite_version"] for r in rows}  # type: ignore[index]


def test_one_suite_version_per_suite_that_moves_with_the_cases(tmp_path: Path) -> None:
    (baseline,) = _versions(suite_tests("baseline"))
    assert _versions(suite_tests("baseline", shard="1/2")) == {baseline}  # shards of one suite share it
    assert _versions(suite_tests("sentinel")) != {baseline}
    for case in (REPO / "cases").glob("*.yaml"):
        (tmp_path / case.name).write_text(case.read_text())
    assert _versions(suite_tests("baseline", tmp_path)) == {baseline}
    m = tmp_path / "m.yaml"
    m.write_text(m.read_text().replace("fault_scope: [203.0.113.47, 22/tcp]", "fault_scope: [203.0.113.47]"))
    assert _versions(suite_tests("baseline", tmp_path)) != {baseline}


def test_replay_copies_the_rows_suite_version_into_the_response() -> None:
    (row,) = [r for r in suite_tests("baseline") if r["vars"]["use_case"] == "m"]
    response = replay_response({"model": "claude-haiku-4-5-20251001"}, {"vars": row["vars"], "test": row})
    assert response["metadata"]["suite_version"] == row["metadata"]["suite_version"]
