"""The scorer's verdicts on the demo store, the calibration corpus and a generated store equal the golden file."""

from __future__ import annotations

import gzip
import json
from typing import Any

import pytest

from ghost_eval.scoring.model import SCORE_SCHEMA_VERSION
from tests.scoring.golden import GOLDEN, current_scores

_CACHE_KEY = ("schema_version", "case_hash", "run_digest")
"""Added with the verdict cache (schema 3): where a verdict came from, not what it says."""
_TEAM = "team_checks"
"""Added with teams' checks (schema 4): not the built-in verdict; scoring given no team check leaves it empty."""


def _verdict(row: dict[str, Any]) -> dict[str, Any]:
    """The built-in fields of a score (every field the golden file has); the scorer without its rules hash, which
    moves with any edit of a rule file, a refactor included: this test is what proves a refactor changed no score."""
    kept = {k: v for k, v in row.items() if k not in (*_CACHE_KEY, _TEAM)}
    if isinstance(kept.get("scorer"), str):
        kept["scorer"] = kept["scorer"].partition("+rules.")[0]
    return kept


@pytest.mark.slow
def test_every_score_equals_the_golden_file() -> None:
    golden = json.loads(gzip.decompress(GOLDEN.read_bytes()))
    now = current_scores()
    assert sorted(now) == sorted(golden)
    for source, rows in golden.items():
        assert len(now[source]) == len(rows), source
        for i, (want, got) in enumerate(zip(rows, now[source], strict=True)):
            assert _verdict(got) == _verdict(want), f"{source} row {i} ({want.get('run_id') or want.get('id')}) changed"
            if "run_id" in got:
                assert got["schema_version"] == SCORE_SCHEMA_VERSION and got[_TEAM] == []
