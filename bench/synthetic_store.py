"""Builds large stores for benchmarks by re-issuing the demo runs under new run ids."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from ghost_eval.run.identity import RunMetadata, parse_run_id
from ghost_eval.store import RunFilter, Store, bundled_path
from ghost_eval.store.layout import METADATA_FILE

__all__ = ["build_store"]


def build_store(root: Path, n: int) -> Store:
    """A store of n runs cycling through the hand-written demo runs' files (reports, audits) with fresh identities.

    The demo store's derived repeats and addon runs (`ghost_eval.store.demo`) are copies of these, left out.
    """
    demo = Store(bundled_path("demo_store"))
    sources = []
    for entry in demo.runs(RunFilter()):
        meta = demo.read_metadata(entry)
        if meta is not None and meta.repeat_index is not None:
            continue
        folder = demo.folder(entry)
        files = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file() and p.name != METADATA_FILE}
        sources.append((entry, files))
    store = Store(root, create=True)
    for i in range(n):
        entry, files = sources[i % len(sources)]
        parsed = parse_run_id(entry.run_id)
        assert parsed is not None
        when = parsed[2] + timedelta(days=1 + i // len(sources))
        meta = RunMetadata(
            schema_version="2",
            run_id=f"{entry.use_case_id}_{entry.model_id}_{when:%Y%m%d_%H%M%S}",
            use_case_id=entry.use_case_id,
            model_id=entry.model_id,
            system_prompt_hash=entry.system_prompt_hash,
            synthetic=True,
            repeat_index=i // len(sources),
        )
        store.append(meta, files)
    return store
