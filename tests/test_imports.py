"""Import cost: a fresh interpreter (as Promptfoo starts for every Python assertion) loads only what it uses."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

HEAVY = (
    "paramiko",
    "rich",
    "anthropic",
    "google.genai",
    "azure",
    "jinja2",
    "ghost_eval.lab",
    "ghost_eval.judge",
    "ghost_eval.agent",
    "ghost_eval.live",
    "ghost_eval.connect",
    "ghost_eval.decide",
    "ghost_eval.report",
)


SCORER = ("markdown_it", "ghost_eval.evaluation.evaluate", "ghost_eval.scoring.verdict", "ghost_eval.scoring.registry")
"""The scorer's checks and the Markdown parser: needed only where a run is scored."""


def _loaded_after(code: str, heavy: tuple[str, ...] = HEAVY) -> set[str]:
    """The heavy packages a fresh interpreter has imported after running `code`."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, check=True).stdout
    modules = json.loads(out.splitlines()[-1])
    return {h for h in heavy if any(m == h or m.startswith(h + ".") for m in modules)}


def test_the_package_root_and_scoring_import_nothing_heavy() -> None:
    assert _loaded_after("import ghost_eval, ghost_eval.scoring") == set()
    assert _loaded_after("from ghost_eval import Store, load_cases") == set()


def test_the_grades_assertion_imports_nothing_heavy() -> None:
    code = f"import runpy; runpy.run_path({str(REPO / 'assertions' / 'grades.py')!r})"
    assert _loaded_after(code) == set()


def test_score_imports_only_its_own_command(tmp_path: Path) -> None:
    code = f"from ghost_eval.cli import main; main(['score', '--store', {str(tmp_path)!r}, '--format', 'jsonl', '--no-write'])"
    assert _loaded_after(code) <= {"rich"}  # the consoles every command prints through


def test_reading_scores_imports_no_scorer() -> None:
    assert _loaded_after("from ghost_eval.scoring import RunScore, CRITERION_LABELS", SCORER) == set()


def test_grading_an_attached_score_imports_neither_the_store_nor_the_scorer() -> None:
    code = f"import runpy; runpy.run_path({str(REPO / 'assertions' / 'grades.py')!r})"
    assert _loaded_after(code, (*SCORER, "ghost_eval.store")) == set()


def test_an_attached_grade_is_returned_without_loading_pydantic_or_the_provider(tmp_path: Path) -> None:
    """What one Promptfoo assertion process pays on a replay row: the provider graded the run with this scorer, so
    the assertion returns those grades, combined, and imports no models."""
    from ghost_eval.promptfoo.adapters import replay_response
    from ghost_eval.promptfoo.grading import combine
    from ghost_eval.promptfoo.keys import GRADES_KEY
    from ghost_eval.store import RunFilter, Store, bundled_path

    demo = bundled_path("demo_store")
    run_id = Store(demo).runs(RunFilter(use_case="m"))[0].run_id
    response = replay_response({"store": str(demo)}, {"vars": {"run_id": run_id}})
    context = tmp_path / "context.json"
    context.write_text(json.dumps({"providerResponse": response}))
    grades = REPO / "assertions" / "grades.py"
    code = (
        f"import json, runpy; ctx = json.load(open({str(context)!r}))\n"
        f"print(json.dumps(runpy.run_path({str(grades)!r})['get_assert']('', ctx)))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True).stdout
    attached = response["metadata"][GRADES_KEY]
    assert json.loads(out) == combine({family: attached[family] for family in ("remediation", "diagnosis", "trajectory")})
    assert _loaded_after(code, ("pydantic", "yaml", "ghost_eval.promptfoo.adapters", "ghost_eval.store")) == set()


def test_score_on_an_empty_store_loads_no_scorer(tmp_path: Path) -> None:
    code = f"from ghost_eval.cli import main; main(['score', '--store', {str(tmp_path)!r}, '--format', 'jsonl', '--no-write'])"
    assert _loaded_after(code, SCORER) == set()


@pytest.mark.parametrize("argv", [["--help"], ["nonsense"]])
def test_help_and_unknown_commands_still_list_every_command(argv: list[str]) -> None:
    proc = subprocess.run([str(Path(sys.executable).parent / "ghost-eval"), *argv], cwd=REPO, capture_output=True, text=True)
    listing = proc.stdout + proc.stderr
    for command in ("store", "score", "variant", "sentinel", "judge", "report", "calibrate", "gate", "lab"):
        assert command in listing
