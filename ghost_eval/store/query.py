"""Filters over the run index, compiled to SQL so a query over 100,000 runs stays well under 200 ms."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from ghost_eval.base.errors import SuiteVersionError
from ghost_eval.cases.case import case_key

__all__ = ["UNKNOWN_SUITE", "RunFilter", "single_suite_version"]

UNKNOWN_SUITE = "unknown"
"""How runs without a suite version (older runs, the demo store) are named and selected (`--suite-version unknown`)."""


@dataclass(frozen=True)
class RunFilter:
    """Which runs to select; every field left as None matches everything."""

    run_id: str | None = None
    run_ids: frozenset[str] | None = None
    """Exactly these runs (an eval's rows: `report --from-eval`)."""
    use_case: str | None = None
    """Either spelling: `m` or `use_case_m`; several separated by commas (`f,m,q`)."""
    model: str | None = None
    """A model id; several separated by commas."""
    prompt_hash: str | None = None
    """Full hash or a prefix of at least 6 characters."""
    run_label: str | None = None
    suite_version: str | None = None
    """Runs captured under this suite version; `unknown` selects the runs that record none."""
    include_superseded: bool = False

    def case_keys(self) -> frozenset[str] | None:
        """The cases `use_case` names (None: every case)."""
        return None if self.use_case is None else frozenset(case_key(c.strip()) for c in self.use_case.split(","))

    def models(self) -> frozenset[str] | None:
        """The models `model` names (None: every model)."""
        return None if self.model is None else frozenset(m.strip() for m in self.model.split(","))

    def to_sql(self) -> tuple[str, list[object]]:
        clauses = ["1 = 1"]
        params: list[object] = []
        if self.run_id is not None:
            clauses.append("run_id = ?")
            params.append(self.run_id)
        if self.run_ids is not None:
            clauses.append(f"run_id IN ({', '.join('?' * len(self.run_ids))})" if self.run_ids else "0 = 1")
            params.extend(sorted(self.run_ids))
        for column, wanted in (("case_key", self.case_keys()), ("model_id", self.models())):
            if wanted is not None:
                clauses.append(f"{column} IN ({', '.join('?' * len(wanted))})")
                params.extend(sorted(wanted))
        if self.prompt_hash is not None:
            if len(self.prompt_hash) < 6:
                raise ValueError("a prompt hash prefix needs at least 6 characters")
            clauses.append("system_prompt_hash >= ? AND system_prompt_hash < ?")
            params.extend([self.prompt_hash, self.prompt_hash + "\uffff"])
        if self.run_label is not None:
            clauses.append("run_label = ?")
            params.append(self.run_label)
        if self.suite_version is not None:
            # kept in the `extra` JSON column like `environment`: no schema change for existing indexes
            clauses.append(
                "json_extract(extra, '$.suite_version') " + ("IS NULL" if self.suite_version == UNKNOWN_SUITE else "= ?")
            )
            params.extend([] if self.suite_version == UNKNOWN_SUITE else [self.suite_version])
        if not self.include_superseded:
            clauses.append("superseded_by IS NULL")
        return " AND ".join(clauses), params


def single_suite_version(versions: Iterable[str | None]) -> str | None:
    """The one suite version of the runs (one value per run; None when none records one), or an error when they name
    more than one: results of two suite versions mean different things and are never pooled. Runs without a version
    (older runs, the demo store) pool with any one version."""
    counts = Counter(versions)
    known = sorted(v for v in counts if v is not None)
    if len(known) < 2:
        return known[0] if known else None
    listed = ", ".join(f"{v} ({counts[v]} runs)" for v in known)
    unknown = f", and {counts[None]} runs without a suite version ({UNKNOWN_SUITE})" if counts[None] else ""
    raise SuiteVersionError(
        f"the selected runs come from {len(known)} suite versions, which are never pooled: {listed}{unknown}; "
        "select one with --suite-version V"
    )
