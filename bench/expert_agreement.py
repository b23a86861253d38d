"""How often two experts agree, and how the scorer fares against each: the ceiling a blind part's figure is read against.

A second expert labelled a blind part's items again, from the same sources and without the first labels
(tests/fixtures/corpus/second-labels/<part>.yaml: `{id, expected_flags, expected_verdict}` per fix item, `{id,
correct}` per paragraph). The first writer's labels stay the corpus's; these only measure them.

Where the two differ, a third expert labelled those items again, blind to both (tests/fixtures/corpus/third-labels/
<part>.yaml, the same format). The label two of the three give is the part's majority label: one expert's label is a
noisy yardstick (two experts agree on 0.88-0.98 of verdicts), so the scorer is also measured against the majority. An
item all three label differently has no majority and is counted apart.

    python -m bench.expert_agreement                  # every part that has second labels
    python -m bench.expert_agreement --part blind16 --show-disagreements
"""

from __future__ import annotations

import argparse
import functools
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from bench.corpus_agreement import CORPUS, diagnose, evidence, load_items

SECOND = CORPUS / "second-labels"
THIRD = CORPUS / "third-labels"


@dataclass(frozen=True)
class _Item:
    id: str
    kind: str  # "verdict" or "diagnosis"
    first: object
    second: object
    scored: object
    third: object = None

    @property
    def majority(self) -> object:
        return majority_label(self.first, self.second, self.third)


def majority_label(first: object, second: object, third: object) -> object:
    """The label two of the three experts give; None when all three differ or the third is missing."""
    if first == second:
        return first
    return third if third is not None and third in (first, second) else None


def second_labels(part: str, folder: Path = SECOND) -> dict[str, dict[str, Any]]:
    """The second expert's labels of a part by item id; raises ValueError naming a malformed or repeated entry."""
    path = folder / f"{part}.yaml"
    entries = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(entries, list):
        raise ValueError(f"{path}: expected a list of labels")
    labels: dict[str, dict[str, Any]] = {}
    for i, entry in enumerate(entries):
        ok = isinstance(entry, dict) and isinstance(entry.get("id"), str)
        ok = ok and (entry.get("expected_verdict") in ("safe", "uncertain", "unsafe") or isinstance(entry.get("correct"), bool))
        if not ok or entry["id"] in labels:
            raise ValueError(f"{path}: entry {i} is malformed or repeats an id: {entry!r}")
        labels[entry["id"]] = entry
    return labels


@functools.cache
def _corpus() -> tuple[dict[str, Any], dict[str, list[dict[str, Any]]], dict[str, list[dict[str, Any]]]]:
    """The cases and every part's items, read once: each part's report picks its own from them."""
    from ghost_eval.cases.case import load_cases

    cases, _ = load_cases(CORPUS.parents[2] / "cases")
    return cases, load_items("fixes", None), load_items("diagnosis", None)


def items(part: str) -> list[_Item]:
    """Every item of the part with both experts' labels and the scorer's answer; raises ValueError when the second
    labels miss an item or name one the part does not hold."""
    cases, fixes_by_case, paragraphs_by_case = _corpus()
    labels = second_labels(part)
    thirds = second_labels(part, THIRD) if (THIRD / f"{part}.yaml").is_file() else {}
    out: list[_Item] = []
    for case_id, fixes in fixes_by_case.items():
        for fix in (f for f in fixes if f["split"] == part):
            scored = score_verdict(case_id, fix, cases)
            second = _label(labels, fix["id"], "expected_verdict")
            third = thirds.get(fix["id"], {}).get("expected_verdict")
            out.append(_Item(fix["id"], "verdict", fix["expected_verdict"], second, scored, third))
    for case_id, paragraphs in paragraphs_by_case.items():
        for p in (p for p in paragraphs if p["split"] == part):
            scored = diagnose(cases[case_id], p).correct
            third = thirds.get(p["id"], {}).get("correct")
            out.append(_Item(p["id"], "diagnosis", p["correct"], _label(labels, p["id"], "correct"), scored, third))
    if unknown := set(labels) - {i.id for i in out}:
        raise ValueError(f"{SECOND / part}.yaml labels items {part} does not hold: {sorted(unknown)[:5]}")
    if thirds and (odd := set(thirds) ^ {i.id for i in out if i.first != i.second}):
        raise ValueError(f"{THIRD / part}.yaml must label exactly the items the first two differ on: {sorted(odd)[:5]}")
    return out


def score_verdict(case_id: str, fix: dict[str, Any], cases: dict[str, Any]) -> str:
    from ghost_eval.scoring import score_run

    return score_run(evidence(case_id, fix), cases.get(case_id)).verdict


def _label(labels: dict[str, dict[str, Any]], item_id: str, key: str) -> object:
    if item_id not in labels or key not in labels[item_id]:
        raise ValueError(f"the second labels have no {key} for {item_id}")
    return labels[item_id][key]


def _rate(hits: int, n: int) -> str:
    return f"{hits}/{n} {hits / n:.2f}" if n else "-"


def report(part: str, show: bool) -> None:
    rows = items(part)
    for kind in ("verdict", "diagnosis"):
        of = [r for r in rows if r.kind == kind]
        agreed = [r for r in of if r.first == r.second]
        first = _rate(sum(r.scored == r.first for r in of), len(of))
        second = _rate(sum(r.scored == r.second for r in of), len(of))
        on_agreed = _rate(sum(r.scored == r.first for r in agreed), len(agreed))
        print(
            f"{part} {kind:9}  experts agree {_rate(len(agreed), len(of))}  scorer~first {first}  scorer~second {second}"
            f"  scorer on items they agree on {on_agreed}"
        )
        if kind == "verdict":
            unsafe_by_either = [r for r in of if "unsafe" in (r.first, r.second)]
            print(
                f"{part} false safe: of the first's unsafe {sum(r.scored == 'safe' for r in of if r.first == 'unsafe')}, of the"
                f" second's {sum(r.scored == 'safe' for r in of if r.second == 'unsafe')}, of either's"
                f" {sum(r.scored == 'safe' for r in unsafe_by_either)}/{len(unsafe_by_either)}"
            )
            pairs = Counter((str(r.first), str(r.second)) for r in of if r.first != r.second)
            print(f"{part} where the experts differ (first -> second): {dict(pairs)}")
        if any(r.third is not None for r in of):
            _report_majority(part, kind, of)
        if show:
            for r in of:
                if r.first != r.second:
                    print(f"  {r.id}: first {r.first}, second {r.second}, third {r.third}, scorer {r.scored}")


def _report_majority(part: str, kind: str, of: list[_Item]) -> None:
    """The scorer against the label two of three experts give, and the false safes against it."""
    held = [r for r in of if r.majority is not None]
    line = f"{part} {kind:9}  scorer~majority {_rate(sum(r.scored == r.majority for r in held), len(held))}"
    line += f"  no majority {len(of) - len(held)}"
    if kind == "verdict":
        unsafe = [r for r in held if r.majority == "unsafe"]
        line += f"  false safe of the majority's unsafe {sum(r.scored == 'safe' for r in unsafe)}/{len(unsafe)}"
    print(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--part", action="append", help="a part with second labels (default: every one)")
    parser.add_argument("--show-disagreements", action="store_true", help="list the items the experts label differently")
    args = parser.parse_args()
    for part in args.part or sorted(p.stem for p in SECOND.glob("*.yaml")):
        report(part, args.show_disagreements)


if __name__ == "__main__":
    main()
