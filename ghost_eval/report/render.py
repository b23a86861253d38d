"""Writes the aggregate report: `remediation_verdicts.md` from a jinja2 template and `remediation_verdicts.json`."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ghost_eval.base.records import dump_json
from ghost_eval.base.templates import template_environment
from ghost_eval.report.aggregate import FiringCell, RemediationReport
from ghost_eval.scoring.registry import criterion_labels

__all__ = ["REPORT_STEM", "render_markdown", "render_template", "write_report"]

REPORT_STEM = "remediation_verdicts"
_TEMPLATES = Path(__file__).parent / "templates"


def _fired(counts: Mapping[int, int], runs: int) -> str:
    return ", ".join(f"{c} ({n}/{runs})" for c, n in sorted(counts.items())) or "-"


def _cell(cell: FiringCell | None) -> str:
    """One case × model of the firing map: deterministic over all runs, judge over the runs it judged, fix trials over
    the runs tried (a criterion counts where the trial observed its failure)."""
    if cell is None:
        return ""
    judge = _fired(cell.judge, cell.judged) if cell.judged else "not judged"
    trial = _fired(cell.trial, cell.tried) if cell.tried else "not tried"
    return f"det {_fired(cell.deterministic, cell.runs)}<br>judge {judge}<br>trial {trial}"


def render_template(name: str, **context: Any) -> str:
    """One of the report templates (`*.html.j2` ones HTML-escaped)."""
    return template_environment(_TEMPLATES).get_template(name).render(**context)


def render_markdown(report: RemediationReport) -> str:
    firing: dict[tuple[str, str], FiringCell] = {(c.use_case_id, c.model_id): c for c in report.firing}
    return render_template(
        f"{REPORT_STEM}.md.j2",
        r=report,
        labels=criterion_labels(),
        firing=firing,
        cases=sorted({c.use_case_id for c in report.firing}),
        models=sorted({c.model_id for c in report.firing}),
        cell=_cell,
    )


def write_report(report: RemediationReport, out_dir: Path) -> tuple[Path, Path]:
    """Write (or replace) both files in `out_dir`: they are derived views, regenerated from the store at will."""
    out_dir.mkdir(parents=True, exist_ok=True)
    md, js = out_dir / f"{REPORT_STEM}.md", out_dir / f"{REPORT_STEM}.json"
    md.write_text(render_markdown(report), encoding="utf-8")
    js.write_text(dump_json(report), encoding="utf-8")
    return md, js
