"""A case file that fails to load is named (file, field, reason) by the decisions and the suites' row generator."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from ghost_eval.base.errors import GhostEvalError
from ghost_eval.cli import main
from ghost_eval.store import Store
from suites.tests import generate_tests
from tests.conftest import REPO
from tests.decide.conftest import cases_with_a_broken_one, variant_dir
from tests.promptfoo_cli import PROMPTFOO, promptfoo_env

NOT_A_STRING = "field 'id': Input should be a valid string"


def _decide(capsys: pytest.CaptureFixture[str], command: str, tmp_path: Path, cases: Path, store: Store) -> tuple[int, str]:
    """`variant decide` (case m, plus the sentinel cases) or `sentinel decide` (m, f, q); returns (exit code, stderr)."""
    argv = (
        ["variant", "decide", "demo-variant", "--variants-dir", str(variant_dir(tmp_path, k=1))]
        if command == "variant"
        else ["sentinel", "decide", "--current", "x-model", "--candidate", "y-model"]
    )
    code = main([*argv, "--cases", str(cases), "--store", str(store.root)])
    return code, capsys.readouterr().err


@pytest.mark.parametrize("command", ["variant", "sentinel"])
def test_a_decision_is_refused_when_a_case_it_needs_failed_to_load(
    store: Store, tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    cases = cases_with_a_broken_one(tmp_path / "cases", "m", keep=("f", "q"))
    code, err = _decide(capsys, command, tmp_path, cases, store)
    assert code == 2
    assert f"problem: {cases / 'm.yaml'}: {NOT_A_STRING}" in err
    assert f"error: nothing decided: the decision needs {cases / 'm.yaml'}, which failed to load" in err
    assert not (store.root / "decisions").exists()


@pytest.mark.parametrize("command", ["variant", "sentinel"])
def test_a_broken_case_the_decision_does_not_need_is_named_and_the_decision_goes_on(
    store: Store, tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    cases = cases_with_a_broken_one(tmp_path / "cases", "a", keep=("f", "m", "q"))
    code, err = _decide(capsys, command, tmp_path, cases, store)
    assert code == 2 and "decision record:" in err  # an empty store: not enough runs, but decided
    assert f"problem: {cases / 'a.yaml'}: {NOT_A_STRING}" in err


@pytest.mark.parametrize("suite", ["baseline", "sentinel", "variant:tc-netfilter-boundary"])
def test_the_suites_row_generator_fails_loudly_on_a_broken_case(tmp_path: Path, suite: str) -> None:
    cases = cases_with_a_broken_one(tmp_path / "cases", "m", keep=("a", "f", "q"))
    with pytest.raises(GhostEvalError, match="case file") as raised:
        generate_tests({"suite": suite, "cases": str(cases)})
    assert f"{cases / 'm.yaml'}: {NOT_A_STRING}" in str(raised.value)


@pytest.mark.slow
@pytest.mark.xdist_group("promptfoo")
def test_promptfoo_eval_fails_on_a_broken_case_naming_it(tmp_path: Path) -> None:
    assert PROMPTFOO.exists(), "promptfoo is not installed: run `make test`, which installs it"
    cases = cases_with_a_broken_one(tmp_path / "cases", "q", keep=("f", "m"))
    config = tmp_path / "promptfooconfig.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "prompts": [{"raw": "{{symptom}}"}],
                "providers": [{"id": "echo"}],
                "tests": {
                    "path": f"file://{REPO}/suites/tests.py:generate_tests",
                    "config": {"suite": "sentinel", "cases": str(cases)},
                },
            }
        )
    )
    proc = subprocess.run(
        [str(PROMPTFOO), "eval", "-c", str(config), "--no-progress-bar", "--no-cache"],
        cwd=REPO,
        env=promptfoo_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode not in (0, 100)
    assert f"{cases / 'q.yaml'}: {NOT_A_STRING}" in proc.stdout + proc.stderr
