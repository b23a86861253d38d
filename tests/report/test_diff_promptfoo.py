"""`ghost-eval diff` over two real Promptfoo evals of the baseline suite: output files and eval ids alike."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ghost_eval.cli import main
from tests.conftest import REPO
from tests.judge.helpers import demo_copy
from tests.promptfoo_cli import run_eval
from tests.report.helpers import changed_copy

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("promptfoo")]
CHANGED = {"m · claude-sonnet-4-6 · r0", "q · claude-haiku-4-5-20251001 · r0"}


@pytest.fixture(scope="module")
def evals(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """Two baseline evals in one Promptfoo database: on the demo store, then on a copy with two reports swapped."""
    tmp = tmp_path_factory.mktemp("pfdiff")
    outputs = []
    for name, store in (("a", demo_copy(tmp / "a")), ("b", changed_copy(tmp / "b"))):
        run_eval(REPO / "promptfooconfig.yaml", tmp, extra_env={"GHOST_EVAL_STORE": str(store)})
        outputs.append(Path(shutil.copy(tmp / "promptfoo-out.json", tmp / f"{name}.json")))
    return outputs[0], outputs[1], tmp / "promptfoo" / "promptfoo.db"


def _changes(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, dict]:  # type: ignore[type-arg]
    assert main(["diff", *argv, "--json"]) == 0
    diff = json.loads(capsys.readouterr().out)
    assert diff["rows_a"] == diff["rows_b"] == 30
    return {c["key"]: c for c in diff["changes"]}


def test_output_files_and_eval_ids_give_the_same_changes(
    evals: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    a, b, db = evals
    by_file = _changes(capsys, str(a), str(b))
    assert set(by_file) == CHANGED
    assert by_file["m · claude-sonnet-4-6 · r0"]["summary"] == "verdict safe → unsafe; criteria +2 +4"
    ids = [json.loads(p.read_text())["evalId"] for p in (a, b)]
    by_id = _changes(capsys, *ids, "--promptfoo-db", str(db))
    assert by_id == by_file


def test_an_eval_lines_up_with_the_store_it_replayed(evals: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    a, _, _ = evals
    assert _changes(capsys, str(a), f"store:{a.parent / 'a' / 'store'}") == {}
