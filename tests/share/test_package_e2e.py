"""Done-when for sharing: the wheel, installed in a clean venv outside the repository, scaffolds a suite with
`ghost-eval init` whose baseline runs through the real Promptfoo on the bundled demo store."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.promptfoo_cli import PROMPTFOO, promptfoo_env

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("package")]
METRICS = {*(f"c{n} {w}" for n, w in enumerate(("list kept", "owner respected", "scope narrow", "fix verified"), 1))}
METRICS |= {"remediation verdict", "2. diagnosis correct"}


def _run(*cmd: str | Path, cwd: Path, env: dict[str, str] | None = None, timeout: float = 900) -> str:
    done = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{cmd}: exit {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def test_the_installed_wheel_scaffolds_a_suite_that_promptfoo_runs(tmp_path: Path) -> None:
    import json

    _run(sys.executable, "-m", "build", "--outdir", tmp_path / "dist", REPO, cwd=tmp_path)  # sdist, then the wheel from it
    (wheel,) = (tmp_path / "dist").glob("ghost_eval-*.whl")
    assert list((tmp_path / "dist").glob("ghost_eval-*.tar.gz"))
    venv = tmp_path / "venv"
    _run(sys.executable, "-m", "venv", venv, cwd=tmp_path)
    clean = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV", "GHOST_EVAL_STORE"}}
    clean["XDG_DATA_HOME"] = str(tmp_path / "user-data")
    _run(venv / "bin/python", "-m", "pip", "install", "--quiet", wheel, cwd=tmp_path, env=clean)
    shipped = next(venv.rglob("ghost_eval/_data/demo_store"))
    files_before = sorted(p.relative_to(shipped) for p in shipped.rglob("*"))
    team = tmp_path / "team-suite"
    printed = _run(venv / "bin/ghost-eval", "init", team, "--team", "netops", cwd=tmp_path, env=clean)
    steps = printed.split("next:\n", 1)[1].split("\n")
    cd, validate, evaluate = (line.strip() for line in steps[:3])
    assert cd == f"cd {team}" and evaluate.startswith(f"PROMPTFOO_PYTHON={venv}/bin/python npx --yes promptfoo@0.123.1 eval")
    _run(venv / "bin" / validate.split()[0], *validate.split()[1:], cwd=team, env=clean)  # as printed
    # the README and the CI example install this very package, from where it came (no index serves it by name)
    assert f"pip install '{wheel}'" in (team / "README.md").read_text()
    assert f"pip install '{wheel}'" in (team / "ci" / "ghost-eval.yml").read_text()

    env = promptfoo_env(tmp_path, {"PROMPTFOO_PYTHON": str(venv / "bin/python"), "XDG_DATA_HOME": clean["XDG_DATA_HOME"]})
    env.pop("PYTHONPATH", None)
    out = tmp_path / "baseline.json"
    cmd = [PROMPTFOO, "eval", "-c", "promptfooconfig.yaml", "-o", out, "--no-progress-bar", "--no-cache"]
    done = subprocess.run([str(c) for c in cmd], cwd=team, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode in (0, 100), done.stdout[-3000:] + done.stderr[-3000:]  # 100: some rows failed their checks
    rows = json.loads(out.read_text())["results"]["results"]
    assert len(rows) == 30 and not [r for r in rows if r["response"].get("error")]
    assert {r["vars"]["use_case"] for r in rows} == {"a", "d", "e", "f", "g", "j", "m", "q", "s", "v"}
    # the installed package is never written: its demo store is copied, pristine, to the user's data folder and used there
    _run(venv / "bin/ghost-eval", "score", "--format", "jsonl", cwd=team, env=clean)
    user_copy = tmp_path / "user-data" / "ghost-eval"
    for row in rows:
        assert set(row["namedScores"]) >= METRICS, row["namedScores"]
        store = Path(row["response"]["metadata"]["store_path"]).resolve()
        assert user_copy.resolve() in store.parents, f"{store} is not the user's copy of the demo store"
    assert sorted(p.relative_to(shipped) for p in shipped.rglob("*")) == files_before
    assert list(user_copy.glob("demo_store-*/use_case_*/*/*/verdicts/deterministic@*.json"))
