"""The original Ghost Agent's own eval scripts, unmodified, on runs the live provider stored.

The original's runner calls `eval/capture_run.py` after every run to write `run_summary.json` from the run folder it
left (`ghost_session.json` at the top, the report and audits under `audit/`); its other scripts read that summary.
The live provider gives the original the same folder and runs `capture_run.py` on it (`capture_summary`), so the
stored run carries the summary the original itself made.

Those scripts find their store and output folders next to their own file (`Path(__file__).parent`). To run them
unmodified on a store of ours, `original_scripts` builds a folder of links, `network-ghost-agent/eval/<script>.py` to
the original's files and `network-ghost-agent/demo` to its demo cases, and runs each script by its link path:
`artifact-store` is then whatever that folder says. Nothing of the original is copied or changed.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ghost_eval.base.errors import GhostEvalError
from ghost_eval.store import RunFilter, Store

__all__ = ["EVAL_SCRIPTS", "OriginalScripts", "capture_summary", "original_scripts"]

EVAL_SCRIPTS = ("capture_run.py", "populate_artifact_store.py", "generate_verdict_report.py", "compare.py")
_TIMEOUT_S = 120.0


def _eval_dir(original: Path) -> Path:
    return original / "network-ghost-agent" / "eval"


def _run(python: Path, script: Path, args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """One script of the original, its output kept whatever its exit status (the caller says what it expected)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(
        [str(python), str(script), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=_TIMEOUT_S, check=False
    )


def capture_summary(original: Path, python: Path, run_dir: Path, use_case_id: str, provider: str, model: str) -> str | None:
    """`run_summary.json` as the original's `capture_run.py` writes it for `run_dir`; None when the checkout has no
    such script (not the original) or it fails (the run is then stored without one, as before)."""
    script = _eval_dir(original) / "capture_run.py"
    if not script.is_file():
        return None
    args = ["--run-dir", str(run_dir), "--use-case", use_case_id, "--provider", provider, "--model", model]
    proc = _run(python, script, args, run_dir)
    summary = run_dir / "run_summary.json"
    return summary.read_text(encoding="utf-8") if proc.returncode == 0 and summary.is_file() else None


@dataclass(frozen=True)
class OriginalScripts:
    """What each script printed (stdout then stderr) and wrote."""

    populate: str
    """populate_artifact_store.py --run-dir on every stored run, into a store of the original's own layout."""
    populated_index: str
    verdict_report: str
    """generate_verdict_report.py on our store; `verdicts_md` is the remediation_verdicts.md it wrote there."""
    verdicts_md: str
    compare: str
    """compare.py on the first two stored runs by case and run id ("" with fewer than two)."""
    failed: list[str]
    """The scripts that exited with an error, once each."""


def _linked_tree(original: Path, root: Path, store: Path | None) -> Path:
    """`root/network-ghost-agent/eval` holding links to the original's scripts, `artifact-store` linked to `store`
    (or a fresh folder when None); `demo` linked, whose PROMPT.txt files populate_artifact_store.py copies."""
    agent = root / "network-ghost-agent"
    eval_dir = agent / "eval"
    eval_dir.mkdir(parents=True)
    (agent / "demo").symlink_to(original / "network-ghost-agent" / "demo")
    for name in EVAL_SCRIPTS:
        (eval_dir / name).symlink_to(_eval_dir(original) / name)
    if store is not None:
        (eval_dir / "artifact-store").symlink_to(store.resolve())
    return eval_dir


def original_scripts(store_path: Path, original: Path, python: Path, work: Path) -> OriginalScripts:
    """Run the original's populate, verdict report and compare scripts, unmodified, on the store at `store_path`.
    `work` must not exist; it holds the link folders and what the scripts write outside our store."""
    work = work.absolute()  # the scripts run from `work` by their link paths
    failed: list[str] = []

    def text(proc: subprocess.CompletedProcess[str]) -> str:
        name = Path(proc.args[1]).name
        if proc.returncode != 0 and name not in failed:
            failed.append(name)
        return (proc.stdout + proc.stderr).strip()

    if not (_eval_dir(original) / "compare.py").is_file():
        raise GhostEvalError(f"{original}: no network-ghost-agent/eval/compare.py (not an original checkout)")
    store = Store(store_path)
    try:
        entries = sorted(store.runs(RunFilter()), key=lambda e: (e.use_case_id, e.run_id))  # compare: the first two
        folders = [store.read(entry).folder for entry in entries]
    finally:
        store.close()
    own = _linked_tree(original, work / "original-store", None)
    populate = [text(_run(python, own / "populate_artifact_store.py", ["--run-dir", str(f)], work)) for f in folders]
    index = own / "artifact-store" / "run_index.json"
    ours = _linked_tree(original, work / "our-store", store_path)
    report = text(_run(python, ours / "generate_verdict_report.py", [], work))
    verdicts = store_path / "remediation_verdicts.md"
    compare = text(_run(python, ours / "compare.py", [str(f) for f in folders[:2]], work)) if len(folders) > 1 else ""
    return OriginalScripts(
        populate="\n".join(populate),
        populated_index=index.read_text(encoding="utf-8") if index.is_file() else "",
        verdict_report=report,
        verdicts_md=verdicts.read_text(encoding="utf-8") if verdicts.is_file() else "",
        compare=compare,
        failed=failed,
    )
