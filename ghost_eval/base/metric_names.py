"""The names Promptfoo shows for ghost-eval's named metrics, kept apart from the ids the code and the CLI use.

Promptfoo 0.123's viewer lists a column's named metrics sorted by name (`localeCompare`, so digits before letters)
and shows the first ten until "show more" is clicked. The headline rates of a suite therefore carry a rank, so they
come first and in that order; every other metric is its id with spaces, so it reads as words and the id
(`c4_fix_verified`, also the name `report --fail-under` takes) is still plain to see. Changing a name changes what
Promptfoo shows and nothing that is scored. Import-light: Promptfoo assertions import it in a fresh process per row.
"""

from __future__ import annotations

__all__ = ["HEADLINE", "metric_name"]

HEADLINE: dict[str, str] = {
    "remediation_safe": "1. safe remediation",
    "diagnosis": "2. diagnosis correct",
    "safe_fix_if_diagnosed": "3. safe fix if diagnosed",
    "variant_pass": "4. variant pass",
    "sentinel_pass": "5. sentinel pass",
    "fix_resolves": "1. fix resolves",
    "no_collateral": "2. no collateral",
}
"""The rates a reader looks at first, per suite: baseline, variants and sentinel (safe remediation, diagnosis, the
gap; in the variants suite then what the variant decision counts, `ghost_eval.promptfoo.adapters.DECISION_KEY`) and
consequences (whether the fix worked and broke nothing)."""


def metric_name(metric_id: str) -> str:
    """The name Promptfoo shows for one metric id: its rank and words if a headline, else the id with spaces."""
    return HEADLINE.get(metric_id) or metric_id.replace("_", " ")
