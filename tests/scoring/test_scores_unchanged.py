"""The scorer's verdicts on the demo store, the calibration corpus and a generated store equal the golden file."""

from __future__ import annotations

import gzip
import json

import pytest

from tests.scoring.golden import GOLDEN, current_scores


@pytest.mark.slow
def test_every_score_equals_the_golden_file() -> None:
    golden = json.loads(gzip.decompress(GOLDEN.read_bytes()))
    now = current_scores()
    assert sorted(now) == sorted(golden)
    for source, rows in golden.items():
        assert len(now[source]) == len(rows), source
        for i, (want, got) in enumerate(zip(rows, now[source], strict=True)):
            assert got == want, f"{source} row {i} ({want.get('run_id') or want.get('id')}) changed"
