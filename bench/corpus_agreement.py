"""Agreement of the deterministic scorer with the calibration corpus (tests/fixtures/corpus), per case and overall.

The corpus was written from the original use cases before the detectors were tuned: root-cause paragraphs an
expert marks correct or wrong, and fixes with the criteria an expert says they trip. Key facts and detectors are
tuned on the `tune` half; the `holdout` half measures them; the `blind` set (tests/fixtures/corpus/blind) was written
afterwards by someone who never saw the scorer or its results, and `blind2` likewise after `blind` had been read
while fixing the scorer (each set stops being blind once its misses are looked at). Prints agreement for the
diagnosis, for each criterion and for the verdict, on each part.

A fix item is a run: its `report`, its `reads` (each a command with its full `output`, or with the
`output_summary` a v1 run keeps: the first 200 characters; an item with one is a v1 run and is scored as one), an
optional structured `result` (an `investigation_result.json`, scored from its fields first) and an optional
`style` (`whole` or `messy`; reported beside a miss, never scored). A diagnosis paragraph may say the `phase` of a
case with phases (1 or 2 for case t: which of its prompts the agent was given).

    python bench/corpus_agreement.py                   # this checkout
    python bench/corpus_agreement.py --before REV      # also the scorer as it was at REV, side by side
    python bench/corpus_agreement.py --cases f,m --split tune --show-misses

Only the scorer's stable entry points are used (`check_diagnosis`, `score_run`), so `--before` runs this same script
against an older checkout (a temporary git worktree) with that checkout's cases.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import yaml

if __package__:  # imported as bench.corpus_agreement (the tests)
    from bench.revision import ROOT, checkout
else:  # run as `python bench/corpus_agreement.py`: its own folder is first on sys.path
    from revision import ROOT, checkout

CORPUS = ROOT / "tests" / "fixtures" / "corpus"
COMING_SPLITS = ("blind90", "blind91")
"""Blind parts being written from the original's files only: each is measured once its folder exists."""
SPLITS = (
    "tune",
    "holdout",
    *(f"blind{n}" if n > 1 else "blind" for n in range(1, 90)),
    *(s for s in COMING_SPLITS if (CORPUS / s).is_dir()),
)
CRITERIA = (1, 2, 3, 4)
STYLES = frozenset({"whole", "messy"})
V1_SUMMARY_CHARS = 200
"""A v1 audit line keeps the first 200 characters of a command's output (`output_summary`)."""


_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's safe loader where PyYAML has it: the corpus is 14 MB, which the pure-Python one reads in minutes."""


def load_items(kind: str, wanted: set[str] | None) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for path in sorted([*(CORPUS / kind).glob("*.yaml"), *CORPUS.glob(f"blind*/{kind}/*.yaml")]):
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_LOADER)
        if wanted and data["case"] not in wanted:
            continue
        out.setdefault(data["case"], []).extend(data["paragraphs" if kind == "diagnosis" else "fixes"])
    return out


def _audit_line(fix_id: str, read: dict[str, Any]) -> Any:
    """A read as the audit line a run leaves: full output (ours), or a v1 line whose `output_summary` goes through the
    same reader as a stored v1 audit's, cut where v1 cuts it."""
    from ghost_eval.run.artifacts import AuditEntry

    if "output_summary" not in read:
        return AuditEntry(command=read["command"], output=read.get("output", ""), host=read.get("host"))
    if "output" in read:
        raise ValueError(f"corpus fix {fix_id}: a read has both `output` and `output_summary`")
    line = {"command": read["command"], "host": read.get("host"), "status": "completed", "action": "auto_approved"}
    return AuditEntry.model_validate({**line, "output_summary": read["output_summary"][:V1_SUMMARY_CHARS]})


def evidence(case_id: str, fix: dict[str, Any]) -> Any:
    """The fix item as a run's evidence: a v1 run (incomplete audit) when a read holds only a v1 summary."""
    from pydantic import ValidationError

    from ghost_eval.run.artifacts import InvestigationResult
    from ghost_eval.run.snapshot import InfraSnapshot
    from ghost_eval.scoring import RunEvidence

    if fix.get("style", "whole") not in STYLES:
        raise ValueError(f"corpus fix {fix['id']}: style {fix['style']!r} is not one of {sorted(STYLES)}")
    reads = fix.get("reads") or []
    snapshot = InfraSnapshot.model_validate(fix["snapshot"]) if fix.get("snapshot") else None
    try:
        result = InvestigationResult.model_validate(fix["result"]) if fix.get("result") else None
    except ValidationError as exc:
        raise ValueError(f"corpus fix {fix['id']}: its structured result is not valid: {exc}") from exc
    return RunEvidence(
        run_id=f"use_case_{case_id}_corpus_{fix['id']}",
        use_case_id=f"use_case_{case_id}",
        model_id="corpus",
        report=fix.get("report", ""),
        result=result,
        audit=[_audit_line(fix["id"], r) for r in reads],
        snapshot=snapshot,
        audit_complete=not any("output_summary" in r for r in reads),
        environment=fix.get("environment", "azure_demo"),
    )


def diagnose(case: Any, paragraph: dict[str, Any]) -> Any:
    """The paragraph's diagnosis scored against its case, in the phase it answers (the prompt its agent was given)."""
    from ghost_eval.scoring.diagnosis import check_diagnosis

    phase = paragraph.get("phase")
    if phase is not None and phase not in (1, 2):
        raise ValueError(f"corpus paragraph {paragraph['id']}: phase {phase!r} is not 1 or 2")
    phase_id = case.phases[phase - 1].id if phase is not None and case is not None and len(case.phases) >= phase else None
    return check_diagnosis(case, paragraph["text"], None, phase_id)


def measure(cases_dir: Path, wanted: set[str] | None) -> dict[str, Any]:
    """{case: {split: {metric: [agree, total]}}} and the misses, for this process's ghost_eval."""
    from ghost_eval.cases.case import load_cases
    from ghost_eval.scoring import score_run

    cases, errors = load_cases(cases_dir)
    table: dict[str, dict[str, dict[str, list[int]]]] = defaultdict(lambda: defaultdict(lambda: defaultdict(lambda: [0, 0])))
    misses: list[str] = []
    for case_id, paragraphs in load_items("diagnosis", wanted).items():
        case = cases.get(case_id)
        for p in paragraphs:
            got = diagnose(case, p).correct if case else None
            ok = got is p["correct"]
            cell = table[case_id][p["split"]]["diagnosis"]
            cell[0] += ok
            cell[1] += 1
            if not ok:
                misses.append(f"{p['id']} ({p['split']}, {p['style']}): expected {p['correct']}, scored {got}")
    for case_id, fixes in load_items("fixes", wanted).items():
        case = cases.get(case_id)
        for fix in fixes:
            score = score_run(evidence(case_id, fix), case)
            label = f"{fix['id']} ({fix['split']}, {fix.get('style', 'whole')})"
            fired = {c.criterion_id for c in score.criteria if c.fired}
            expected = set(fix["expected_flags"])
            for criterion in CRITERIA:
                cell = table[case_id][fix["split"]][f"c{criterion}"]
                ok = (criterion in fired) == (criterion in expected)
                cell[0] += ok
                cell[1] += 1
                if not ok:
                    why = "; ".join(f.explanation for f in score.flags if f.criterion_id == criterion) or "did not fire"
                    misses.append(f"{label} c{criterion}: expected {criterion in expected}: {why}")
            cell = table[case_id][fix["split"]]["verdict"]
            cell[0] += score.verdict == fix["expected_verdict"]
            cell[1] += 1
            # The original judge's rules on the expert's criteria: any criterion the expert says fires is unsafe.
            cell = table[case_id][fix["split"]]["verdict_spec"]
            cell[0] += score.verdict == ("unsafe" if fix["expected_flags"] else fix["expected_verdict"])
            cell[1] += 1
            definite = fix["expected_verdict"] in ("safe", "unsafe")
            if definite:
                cell = table[case_id][fix["split"]]["uncertain_of_definite"]
                cell[0] += score.verdict == "uncertain"
                cell[1] += 1
            if fix["expected_verdict"] == "unsafe":
                cell = table[case_id][fix["split"]]["false_safe"]
                cell[0] += score.verdict == "safe"
                cell[1] += 1
                if score.verdict == "safe":
                    misses.append(f"{label} FALSE SAFE: expected unsafe")
            if score.verdict != fix["expected_verdict"]:
                misses.append(f"{label} verdict: expected {fix['expected_verdict']}, scored {score.verdict}")
    return {"table": table, "misses": misses, "case_errors": [str(e) for e in errors]}


def _at_revision(rev: str, wanted: set[str] | None) -> dict[str, Any]:
    """Run this script's measurement against the scorer and cases of an older commit, in a temporary worktree."""
    with checkout(rev) as tree:
        args = [sys.executable, __file__, "--json", "--cases-dir", str(tree / "cases")]
        if wanted:
            args += ["--cases", ",".join(sorted(wanted))]
        env = {"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"}
        out = subprocess.run(args, check=True, capture_output=True, text=True, env=env, cwd=tree.parent).stdout
    result: dict[str, Any] = json.loads(out)
    return result


def _rate(cells: list[list[int]]) -> tuple[float | None, int]:
    agree, total = sum(c[0] for c in cells), sum(c[1] for c in cells)
    return (agree / total if total else None), total


def _fmt(rate: float | None) -> str:
    return "   -  " if rate is None else f"{rate:6.3f}"


def _print(results: dict[str, dict[str, Any]], splits: tuple[str, ...]) -> None:
    """One table per half: a row per case and OVERALL, a column per metric, `before → now` when compared."""
    metrics = ["diagnosis", *(f"c{c}" for c in CRITERIA), "verdict"]
    labels = list(results)
    cases = sorted({c for r in results.values() for c in r["table"]})
    width = 9 * len(labels)
    for split in splits:
        print(f"\n## {split}: agreement with the corpus ({' → '.join(labels)}; n = judged items)")
        print(f"{'case':<14}" + "".join(f"{m:>{width}}" for m in metrics) + f"{'n':>6}")
        for case_id in [*cases, "OVERALL"]:
            keys = cases if case_id == "OVERALL" else [case_id]
            row, n = f"{case_id:<14}", 0
            for metric in metrics:
                parts = []
                for label in labels:
                    table = results[label]["table"]
                    rate, total = _rate([table[k][split][metric] for k in keys if metric in table.get(k, {}).get(split, {})])
                    parts.append(_fmt(rate).strip())
                    if label == labels[-1] and metric in ("diagnosis", "verdict"):
                        n += total
                row += f"{' → '.join(parts):>{width}}"
            print(row + f"{n:>6}")


def _print_summary(results: dict[str, dict[str, Any]], splits: tuple[str, ...]) -> None:
    """One row per part: verdict agreement with the expert's verdict and with the verdict the original judge's rules
    give on the expert's criteria (`verdict_spec`: any criterion fired is unsafe), diagnosis agreement, false safe
    (expert: unsafe; scored safe) and the uncertain share of the items the expert calls definitely safe or unsafe;
    `before → now` when compared."""
    metrics = ("verdict", "verdict_spec", "diagnosis", "false_safe", "uncertain_of_definite")
    labels = list(results)
    print(f"\n## summary per part ({' → '.join(labels)})")
    print(f"{'part':<10}" + "".join(f"{m:>30}" for m in metrics))
    for split in (*splits, "ALL"):
        row = f"{split:<10}"
        for metric in metrics:
            parts = []
            for label in labels:
                table = results[label]["table"]
                cells = [
                    per_split[s][metric]
                    for per_split in table.values()
                    for s in (splits if split == "ALL" else (split,))
                    if metric in per_split.get(s, {})
                ]
                agree, total = sum(c[0] for c in cells), sum(c[1] for c in cells)
                parts.append(f"{agree}/{total}" + (f" {agree / total:.2f}" if total else ""))
            row += f"{' → '.join(parts):>30}"
        print(row)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", help="comma-separated case ids (default: every case in the corpus)")
    parser.add_argument("--split", choices=SPLITS, help="only this half")
    parser.add_argument("--before", metavar="REV", help="also measure the scorer at this git revision")
    parser.add_argument("--cases-dir", type=Path, default=ROOT / "cases")
    parser.add_argument("--json", action="store_true", help="print the raw table as JSON")
    parser.add_argument("--show-misses", action="store_true", help="list every disagreement")
    parser.add_argument("--summary", action="store_true", help="only the per-part summary (agreement, false safe, uncertain)")
    args = parser.parse_args()
    wanted = set(args.cases.split(",")) if args.cases else None
    now = json.loads(json.dumps(measure(args.cases_dir, wanted)))
    if args.json:
        print(json.dumps(now))
        return 0
    results = {args.before: _at_revision(args.before, wanted)} if args.before else {}
    results["now"] = now
    splits = (args.split,) if args.split else SPLITS
    if args.summary:
        _print_summary(results, splits)
    else:
        _print(results, splits)
    for error in now["case_errors"]:
        print(f"case file error: {error}")
    if args.show_misses:
        print("\n## disagreements (now)")
        for miss in now["misses"]:
            if not args.split or f"({args.split}" in miss:
                print(f"- {miss}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
