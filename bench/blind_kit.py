"""The kit a blind corpus writer gets: every case with its answer keys stripped, and the writing guide.

    python bench/blind_kit.py /tmp/blind-kit          # then give the writer /tmp/blind-kit and the original's files

A blind part is only blind if its writer never sees the scorer, the answer keys or another part: the kit holds the
cases' facts (symptom, ground truth, expected root cause, environments, phases) and nothing the scorer matches
against (`key_facts`, `wrong_claims`, `trajectory`, `recipe`, `criteria`, `fault_scope`, `list_arguments`,
ownership). The guide (`docs/corpus/writing-a-blind-part.md`) names the original's files as the other source and
says how items are written and labelled.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
ANSWER_KEYS = frozenset(
    {"key_facts", "wrong_claims", "trajectory", "recipe", "recipe_from", "criteria", "fault_scope", "list_arguments"}
    | {"ownership", "ownership_reason"}
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path, help="folder to write the kit into (created; nothing in it is overwritten)")
    args = parser.parse_args()
    cases = args.out / "cases"
    cases.mkdir(parents=True, exist_ok=False)
    for path in sorted((ROOT / "cases").glob("*.yaml")):
        case = yaml.safe_load(path.read_text(encoding="utf-8"))
        if case.get("kind") == "behaviour" or case["id"].startswith("x_"):
            continue  # behaviour cases test the agent's contract, not a fault: no corpus items
        facts = {k: v for k, v in case.items() if k not in ANSWER_KEYS}
        (cases / path.name).write_text(yaml.safe_dump(facts, sort_keys=False, width=120, allow_unicode=True), encoding="utf-8")
    shutil.copyfile(ROOT / "docs" / "corpus" / "writing-a-blind-part.md", args.out / "FORMAT.md")
    print(f"wrote {len(list(cases.glob('*.yaml')))} stripped cases and FORMAT.md to {args.out}")


if __name__ == "__main__":
    main()
