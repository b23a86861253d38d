"""Stores built in the test from the demo runs' files, under new identities (model, addon, repeat); case and variant folders."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

import pytest
import yaml

from ghost_eval.run.identity import HashKind, RunMetadata, addon_hash, effective_prompt_hash
from ghost_eval.store import RunFilter, Store, bundled_path
from ghost_eval.store.layout import METADATA_FILE
from tests.conftest import REPO

Clone = Callable[..., str]
ADDON = (REPO / "variants" / "addons" / "tc-netfilter-boundary.txt").read_text()


def _demo_files(case: str, model: str) -> dict[str, bytes]:
    demo = Store(bundled_path("demo_store"))
    entry = demo.runs(RunFilter(use_case=case, model=model))[0]
    return {p.name: p.read_bytes() for p in demo.folder(entry).iterdir() if p.is_file() and p.name != METADATA_FILE}


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(tmp_path / "store", create=True)


@pytest.fixture
def clone(store: Store) -> Clone:
    """clone(case, as_model, like_model, n=1, addon=None, …) → appends n runs whose files are the demo run of like_model."""
    counter = [0]

    def _clone(
        case: str,
        as_model: str,
        like_model: str,
        n: int = 1,
        addon: str | None = None,
        label: str | None = None,
        environment: str | None = None,
        suite_version: str | None = None,
    ) -> str:
        files = _demo_files(case, like_model)
        for _ in range(n):
            counter[0] += 1
            when = datetime(2026, 5, 1) + timedelta(minutes=counter[0])
            meta = RunMetadata(
                schema_version="2",
                run_id=f"{case}_{as_model}_{when:%Y%m%d_%H%M%S}",
                use_case_id=case,
                model_id=as_model,
                system_prompt_hash=effective_prompt_hash("base", "env", addon),
                hash_kind=HashKind.EFFECTIVE_PROMPT,
                addon_name="tc-netfilter-boundary" if addon else None,
                addon_hash=addon_hash(addon) if addon else None,
                run_label=label,
                repeat_index=counter[0],
                synthetic=True,
                environment=environment,
                suite_version=suite_version,
            )
            store.append(meta, files)
        return case

    return _clone


def cases_with_a_broken_one(folder: Path, broken: str, keep: tuple[str, ...] = ()) -> Path:
    """A cases folder: copies of the bundled `keep` cases, and `broken` whose `id` is a list (fails on field 'id')."""
    folder.mkdir(parents=True)
    bundled = bundled_path("cases")
    for case in keep:
        shutil.copy(bundled / f"{case}.yaml", folder / f"{case}.yaml")
    data = yaml.safe_load((bundled / f"{broken}.yaml").read_text())
    (folder / f"{broken}.yaml").write_text(yaml.safe_dump({**data, "id": [broken]}))
    return folder


def variant_dir(tmp_path: Path, k: int, checks: list[dict[str, object]] | None = None) -> Path:
    """A variants folder holding `demo-variant` (case m, three models, k repeats; by default criterion 2 and the
    diagnosis decide a run) and its addon."""
    folder = tmp_path / "variants"
    (folder / "addons").mkdir(parents=True)
    (folder / "addons" / "a.txt").write_text(ADDON)
    (folder / "demo-variant.yaml").write_text(
        yaml.safe_dump(
            {
                "name": "demo-variant",
                "addon": "addons/a.txt",
                "cases": ["m"],
                "models": ["x-model", "y-model", "z-model"],
                "repeats": k,
                "checks": checks or [{"kind": "criterion", "criterion_id": 2}, {"kind": "diagnosis"}],
                "rule": {"min_pass_hat_k": 0.8, "every_model": True, "sentinel_margin": 0.2},
            }
        )
    )
    return folder
