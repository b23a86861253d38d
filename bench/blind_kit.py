"""The kit a blind corpus writer gets: every case with its answer keys stripped, and the writing guide; and the items
of a written part with their labels stripped, for a second expert to label again.

    python bench/blind_kit.py /tmp/blind-kit                              # then give the writer /tmp/blind-kit
    python bench/blind_kit.py /tmp/relabel --unlabelled blind16           # a part's items for a second expert

A blind part is only blind if its writer never sees the scorer, the answer keys or another part: the kit holds the
cases' facts (symptom, ground truth, expected root cause, environments, phases) and nothing the scorer matches against
(`key_facts`, `wrong_claims`, `trajectory`, `recipe`, `criteria`, `fault_scope`, `list_arguments`, ownership, a fault's
`reported`, `probe_visible` and `next_hop_absent`). The guide (`docs/corpus/writing-a-blind-part.md`) names the
original's files as the other source and says how items are written and labelled. A second expert gets the kit too, and
the part's items without `why`, `expected_flags`, `expected_verdict`, `correct` and a paragraph's `style` (`wrong_host`
would give its label away); their labels go to `tests/fixtures/corpus/second-labels/<part>.yaml`
(`python -m bench.expert_agreement`).
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "fixtures" / "corpus"
ANSWER_KEYS = frozenset(
    {"key_facts", "wrong_claims", "trajectory", "recipe", "recipe_from", "criteria", "fault_scope", "list_arguments"}
    | {"ownership", "ownership_reason"}
)
FAULT_KEYS = frozenset({"reported", "probe_visible", "next_hop_absent"})
"""A fault's fields the scorer judges by (whether its prompt reports its symptom, whether a probe can see it, the next
hop nothing holds): the writer judges these alone, from setup.sh."""
LABELS = frozenset({"why", "expected_flags", "expected_verdict", "correct"})
"""What a part's writer decided about an item: a second expert must not see it."""


def write_kit(out: Path) -> int:
    """The stripped cases and the guide under `out` (created; refuses an existing folder); the number of cases."""
    cases = out / "cases"
    cases.mkdir(parents=True, exist_ok=False)
    for path in sorted((ROOT / "cases").glob("*.yaml")):
        case = yaml.safe_load(path.read_text(encoding="utf-8"))
        if case.get("kind") == "behaviour" or case["id"].startswith("x_"):
            continue  # behaviour cases test the agent's contract, not a fault: no corpus items
        facts = _stripped(case)
        facts["ground_truth"] = [{k: v for k, v in f.items() if k not in FAULT_KEYS} for f in facts.get("ground_truth", [])]
        (cases / path.name).write_text(yaml.safe_dump(facts, sort_keys=False, width=120, allow_unicode=True), encoding="utf-8")
    shutil.copyfile(ROOT / "docs" / "corpus" / "writing-a-blind-part.md", out / "FORMAT.md")
    return len(list(cases.glob("*.yaml")))


def _stripped(value: Any) -> Any:
    """`value` without an answer key at any depth: an environment or a phase restates key facts, scope and owners."""
    if isinstance(value, dict):
        return {k: _stripped(v) for k, v in value.items() if k not in ANSWER_KEYS}
    if isinstance(value, list):
        return [_stripped(v) for v in value]
    return value


def write_unlabelled(part: str, out: Path) -> int:
    """The part's fix and diagnosis files under `out/<part>` with every label removed; the number of items."""
    source = CORPUS / part
    if not (source / "fixes").is_dir():
        raise SystemExit(f"no corpus part {part!r} under {CORPUS}")
    count = 0
    for kind, key in (("fixes", "fixes"), ("diagnosis", "paragraphs")):
        target = out / part / kind
        target.mkdir(parents=True, exist_ok=False)
        for path in sorted((source / kind).glob("*.yaml")):
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
            hidden = LABELS | ({"style"} if kind == "diagnosis" else set())
            data[key] = [{k: v for k, v in item.items() if k not in hidden} for item in data[key]]
            count += len(data[key])
            (target / path.name).write_text(
                yaml.safe_dump(data, sort_keys=False, width=120, allow_unicode=True), encoding="utf-8"
            )
    return count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path, help="folder to write into (created; nothing in it is overwritten)")
    parser.add_argument("--unlabelled", metavar="PART", help="write PART's items without their labels, for a second expert")
    args = parser.parse_args()
    if args.unlabelled:
        print(f"wrote {write_unlabelled(args.unlabelled, args.out)} unlabelled items of {args.unlabelled} to {args.out}")
    else:
        print(f"wrote {write_kit(args.out)} stripped cases and FORMAT.md to {args.out}")


if __name__ == "__main__":
    main()
