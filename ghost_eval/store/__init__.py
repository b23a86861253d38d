"""The append-only artifact store: v1 layout compatible, SQLite-indexed, crash- and concurrency-safe."""

from ghost_eval.store.artifact_store import STORE_ENV, Store, bundled_path, default_store_path
from ghost_eval.store.layout import BLOB_SCHEME, Coverage, IndexEntry, Problem
from ghost_eval.store.query import UNKNOWN_SUITE, RunFilter, single_suite_version
from ghost_eval.store.reader import RunRecord

__all__ = [
    "BLOB_SCHEME",
    "STORE_ENV",
    "UNKNOWN_SUITE",
    "Coverage",
    "IndexEntry",
    "Problem",
    "RunFilter",
    "RunRecord",
    "Store",
    "bundled_path",
    "default_store_path",
    "single_suite_version",
]
