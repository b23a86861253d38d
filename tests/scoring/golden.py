"""Every score the deterministic scorer gives today, kept as a golden file so a refactor can prove it changed none.

Three sources: the bundled demo store, the calibration corpus (diagnosis paragraphs and fixes, scored as
bench/corpus_agreement.py scores them) and a generated store (bench/synthetic_store.py). Rewrite the golden file
only when a rule is meant to change what a run scores (and bump SCORER_VERSION then):

    .venv/bin/python -m tests.scoring.golden
"""

from __future__ import annotations

import gzip
import json
import tempfile
from pathlib import Path
from typing import Any

from bench.corpus_agreement import diagnose, evidence, load_items
from bench.synthetic_store import build_store
from tests.conftest import REPO

__all__ = ["GOLDEN", "GENERATED_RUNS", "current_scores"]

GOLDEN = REPO / "tests" / "fixtures" / "golden" / "scores.json.gz"
GENERATED_RUNS = 75
"""Two and a half passes over the 30 demo runs, so every demo run appears in the generated store under new ids."""


def _store_scores(root: Path, cases: dict[str, Any]) -> list[dict[str, Any]]:
    from ghost_eval.evaluation.evaluate import score_store
    from ghost_eval.store import Store

    with Store(root) as store:
        return [s.score.model_dump(mode="json") for s in score_store(store, cases, write=False)]


def current_scores() -> dict[str, list[dict[str, Any]]]:
    """{source: [score as JSON]} for the demo store, the corpus and a generated store, in a fixed order."""
    from ghost_eval.evaluation.evaluate import load_case_set
    from ghost_eval.scoring import score_run
    from ghost_eval.store import bundled_path

    cases, _ = load_case_set()
    corpus_diagnosis = [
        {"id": p["id"], **diagnose(cases.get(case_id), p).model_dump(mode="json")}
        for case_id, paragraphs in sorted(load_items("diagnosis", None).items())
        for p in paragraphs
        if cases.get(case_id)
    ]
    corpus_fixes = [
        score_run(evidence(case_id, fix), cases.get(case_id)).model_dump(mode="json")
        for case_id, fixes in sorted(load_items("fixes", None).items())
        for fix in fixes
    ]
    with tempfile.TemporaryDirectory() as tmp:
        build_store(Path(tmp) / "store", GENERATED_RUNS).close()
        generated = _store_scores(Path(tmp) / "store", cases)
    return {
        "demo_store": _store_scores(bundled_path("demo_store"), cases),
        "corpus_diagnosis": corpus_diagnosis,
        "corpus_fixes": corpus_fixes,
        "generated_store": generated,
    }


if __name__ == "__main__":
    GOLDEN.write_bytes(gzip.compress(json.dumps(current_scores(), indent=1, sort_keys=True).encode(), mtime=0))
    print(f"wrote {GOLDEN}")
