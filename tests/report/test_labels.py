"""The labels file and `ghost-eval label`, driven through stdin."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from ghost_eval.cli import main
from ghost_eval.report import Label, append_label, latest_labels, read_labels
from tests.judge.helpers import demo_copy


def test_append_read_and_latest(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    append_label(path, Label(run_id="r1", labeller="a", criteria={1: "YES"}, verdict="unsafe"))
    with open(path, "a", encoding="utf-8") as fh:
        fh.write("{not json\n")
        fh.write(json.dumps({"run_id": "r3", "labeller": "a", "criteria": {"7": "YES"}}) + "\n")
    append_label(path, Label(run_id="r1", labeller="b", criteria={1: "NO"}, verdict="safe", diagnosis_correct=False))
    labels, problems = read_labels(path)
    assert [(lab.run_id, lab.labeller) for lab in labels] == [("r1", "a"), ("r1", "b")]
    assert [p.message.split(":")[0] for p in problems] == ["line 2", "line 3"] and "numbered 1-4" in problems[1].message
    latest = latest_labels(labels)["r1"]
    assert latest.labeller == "b" and latest.criteria == {1: "NO"} and latest.diagnosis_correct is False
    assert read_labels(tmp_path / "absent.jsonl") == ([], [])


def test_label_walks_unlabelled_runs_from_stdin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root, labels = demo_copy(tmp_path), tmp_path / "labels.jsonl"
    answers = (
        "\n".join(
            [
                "y",
                "perhaps",
                "n",
                "n",
                "y",
                "unsafe",
                "y",  # run 1 ("perhaps" is asked again)
                "s",  # run 2 skipped
                "n",
                "n",
                "n",
                "n",
                "bogus",
                "safe",
                "?",  # run 3
            ]
        )
        + "\n"
    )
    monkeypatch.setattr("sys.stdin", io.StringIO(answers))
    argv = ["label", "--store", str(root), "--labels", str(labels), "--labeller", "tester", "--use-case", "f"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "recommended actions, numbered" in out and "please answer one of" in out and "2 labels appended" in out
    lines = [json.loads(line) for line in labels.read_text().splitlines()]
    assert [line["criteria"] for line in lines] == [
        {"1": "YES", "2": "NO", "3": "NO", "4": "YES"},
        {"1": "NO", "2": "NO", "3": "NO", "4": "NO"},
    ]
    assert [line["verdict"] for line in lines] == ["unsafe", "safe"]
    assert lines[0]["diagnosis_correct"] is True and "diagnosis_correct" not in lines[1]
    assert all(line["labeller"] == "tester" and line["run_id"].startswith("use_case_f_") for line in lines)
    # the next session offers only the skipped run, and end of input stops cleanly
    monkeypatch.setattr("sys.stdin", io.StringIO("n\n"))
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "1/1" in out and "0 labels appended" in out
    assert len(labels.read_text().splitlines()) == 2


def test_label_shows_what_the_run_was_told_and_the_facts_of_its_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root, labels = demo_copy(tmp_path), tmp_path / "labels.jsonl"
    (prompt,) = list(root.glob("use_case_m/gemini-2.5-flash/*/PROMPT.txt"))
    told = prompt.read_text(encoding="utf-8").split()[:6]
    monkeypatch.setattr("sys.stdin", io.StringIO("q\n"))
    argv = [
        "label",
        "--store",
        str(root),
        "--labels",
        str(labels),
        "--labeller",
        "t",
        "--use-case",
        "m",
        "--model",
        "gemini-2.5-flash",
    ]
    assert main(argv) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "What the agent was told: " + " ".join(told) in out
    assert "Facts of environment azure_demo" in out and "owned by fail2ban" in out
