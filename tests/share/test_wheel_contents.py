"""A wheel built straight from a used checkout ships the tracked package data and nothing the checkout made: no
verdict a `ghost-eval score` wrote into the demo store, no decision record, no results."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.conftest import REPO

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("package")]


def test_a_wheel_from_a_dirty_checkout_holds_no_ignored_file(tmp_path: Path) -> None:
    checkout = tmp_path / "checkout"
    subprocess.run(["git", "clone", "-q", str(REPO), str(checkout)], check=True)
    run = next(p for p in (checkout / "demo_store").rglob("metadata.json")).parent
    made = [
        run / "verdicts" / "deterministic@9.9.9.cafe.json",
        run / "remediation_verdict.json",
        checkout / "demo_store" / "decisions" / "variant-x.json",
        checkout / "demo_store" / ".index" / "runs.sqlite",
        checkout / "results" / "baseline.json",
    ]
    for path in made:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{}\n")
    done = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(tmp_path / "dist"), str(checkout)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    (wheel,) = (tmp_path / "dist").glob("ghost_eval-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    shipped = [n for n in names if any(n.endswith(str(p.relative_to(checkout)).replace("demo_store/", "")) for p in made)]
    assert shipped == []
    assert "ghost_eval/_data/cases/m.yaml" in names and "ghost_eval/_data/demo_store/run_index.json" in names
    assert any(n.startswith("ghost_eval/_data/demo_store/") and "/verdicts/lab-trial@" in n for n in names)
    assert "ghost_eval/cli/__init__.py" in names and not [n for n in names if "__pycache__" in n]
