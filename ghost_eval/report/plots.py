"""Plots of a report (matplotlib Figures on the Agg canvas: no display, no pyplot state), and one self-contained
HTML page with them inlined.

Each figure is built by its own function and returned, so a test can read its data back from the artists.
"""

from __future__ import annotations

import base64
import io
import textwrap
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path

from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ghost_eval.report.render import render_template
from ghost_eval.report.trend import Summary, TrendReport
from ghost_eval.scoring.registry import criterion_labels

__all__ = ["HTML_FILE", "VERDICT_ORDER", "criterion_heatmap", "trend_lines", "verdict_bars", "write_plots"]

VERDICT_ORDER = ("safe", "uncertain", "unsafe", "excluded")
_COLOURS = {"safe": "#2e7d32", "uncertain": "#f9a825", "unsafe": "#c62828", "excluded": "#9e9e9e"}
HTML_FILE = "remediation_report.html"


def _figure(width: float, height: float) -> tuple[Figure, Axes]:
    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    return fig, fig.subplots()


def verdict_bars(summaries: dict[str, Summary]) -> Figure:
    """Runs per verdict, stacked, one bar per model."""
    models = list(summaries)
    fig, ax = _figure(max(5.0, 1.6 * len(models) + 2), 4.2)
    bottom = [0] * len(models)
    for verdict in VERDICT_ORDER:
        counts = [summaries[m].verdicts.get(verdict, 0) for m in models]
        ax.bar(models, counts, bottom=bottom, label=verdict, color=_COLOURS[verdict], gid=verdict)
        bottom = [b + c for b, c in zip(bottom, counts, strict=True)]
    ax.set_ylabel("runs")
    ax.set_title("Deterministic verdicts per model")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.tick_params(axis="x", labelrotation=15)
    return fig


def criterion_heatmap(summaries: dict[str, Summary]) -> Figure:
    """Share of each model's runs on which each criterion fired (0 = never, 1 = every run)."""
    models = list(summaries)
    labels = criterion_labels()
    criteria = sorted(labels)
    values = [[summaries[m].fired[c].rate or 0.0 for c in criteria] for m in models]
    fig, ax = _figure(8.5, 1.4 + 0.6 * max(1, len(models)))
    image = ax.imshow(values, cmap="Reds", vmin=0.0, vmax=1.0, aspect="auto")
    ax.set_xticks(range(len(criteria)), [textwrap.fill(f"{c}: {labels[c]}", 16) for c in criteria], fontsize=8)
    ax.set_yticks(range(len(models)), models)
    for i, m in enumerate(models):
        for j, c in enumerate(criteria):
            r = summaries[m].fired[c]
            ax.text(j, i, f"{r.k}/{r.n}", ha="center", va="center", color="white" if (r.rate or 0) > 0.5 else "black")
    fig.colorbar(image, ax=ax, label="runs it fired on")
    ax.set_title("Share of each model's runs on which the criterion fired")
    return fig


def trend_lines(trend: TrendReport) -> Figure:
    """Safe-remediation rate over time, one line per model × prompt × set of cases, with its Wilson interval as a
    band. A line joins only periods whose runs are of the same cases: a week that ran other cases is a rate over other
    work, and drawn as its own line rather than as a change."""
    lines: dict[tuple[str, str, str], list[tuple[datetime, float, float, float]]] = defaultdict(list)
    for p in trend.points:
        s = p.summary.safe
        if s.rate is not None and s.low is not None and s.high is not None:
            at = datetime(p.period_start.year, p.period_start.month, p.period_start.day, tzinfo=UTC)
            lines[(p.model_id, p.prompt, p.case_set)].append((at, s.rate, s.low, s.high))
    fig, ax = _figure(10.0, 4.2 + 0.13 * len(lines))
    for (model, prompt, case_set), pts in sorted(lines.items()):
        xs, ys, lows, highs = zip(*pts, strict=True)
        label = f"{model} @ {prompt} · cases {case_set}"
        (line,) = ax.plot(xs, ys, marker="o", label=label, gid=label)
        if len(xs) > 1:
            ax.fill_between(xs, lows, highs, alpha=0.15, color=line.get_color())
        else:  # a band one period wide has no width: the interval as a bar
            ax.vlines(xs, lows, highs, alpha=0.4, color=line.get_color(), linewidth=4)
    ax.set_ylim(0, 1)
    ax.set_ylabel("safe-remediation rate (95 % Wilson interval)")
    ax.set_title(f"Safe remediation per model × prompt × cases, per {trend.period}")
    if lines:
        fig.legend(fontsize=8, loc="outside lower center", ncols=2)
    return fig


def _png(fig: Figure) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110)
    return buffer.getvalue()


def write_plots(summaries: dict[str, Summary], trend: TrendReport, out_dir: Path, store: str) -> list[Path]:
    """The three PNGs and one HTML page with them inlined (base64) beside the per-model table; paths written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    figures = {
        "verdicts_per_model": verdict_bars(summaries),
        "criterion_heatmap": criterion_heatmap(summaries),
        "safe_rate_trend": trend_lines(trend),
    }
    images = {name: _png(fig) for name, fig in figures.items()}
    written = []
    for name, data in images.items():
        path = out_dir / f"{name}.png"
        path.write_bytes(data)
        written.append(path)
    html = render_template(
        "report.html.j2",
        store=store,
        summaries=summaries,
        trend=trend,
        labels=criterion_labels(),
        images={name: base64.b64encode(data).decode("ascii") for name, data in images.items()},
    )
    page = out_dir / HTML_FILE
    page.write_text(html, encoding="utf-8")
    return [*written, page]
