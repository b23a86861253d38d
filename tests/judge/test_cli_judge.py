"""`ghost-eval judge` end to end against the fakes: summary, cache, errors, and the missing-key message."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ghost_eval.cli import main
from tests.conftest import tree_digest
from tests.fakes.llm import FakeLLMServer, Recorded, Reply, anthropic_message, anthropic_server, gemini_response, gemini_server
from tests.judge.helpers import criterion_of, demo_copy, diagnosis_json, judge_env, reply_json, scripted

KEYS = ("ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY")


def _point(monkeypatch: pytest.MonkeyPatch, anthropic: FakeLLMServer | None, gemini: FakeLLMServer | None) -> None:
    for key in KEYS:
        monkeypatch.delenv(key, raising=False)
    for name, value in judge_env(anthropic, gemini).items():
        monkeypatch.setenv(name, value)


def test_no_key_names_the_variables_and_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = demo_copy(tmp_path)
    _point(monkeypatch, None, None)
    before = tree_digest(root)
    assert main(["judge", "--store", str(root)]) == 2
    err = capsys.readouterr().err
    assert all(key in err for key in KEYS) and "ghost-eval score" in err
    assert tree_digest(root) == before
    assert main(["judge", "--store", str(root), "--judge", "gemini-2.5-pro"]) == 2
    assert "GEMINI_API_KEY" in capsys.readouterr().err
    assert main(["score", "--store", str(root), "--format", "jsonl", "--no-write"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 30


def test_judge_summary_and_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    root = demo_copy(tmp_path)
    with (
        anthropic_server(scripted(anthropic_message, {2: reply_json("YES", 1, "Bypasses fail2ban.")})) as a,
        gemini_server(scripted(gemini_response, {})) as g,
    ):
        _point(monkeypatch, a, g)
        argv = ["judge", "--store", str(root), "--judge", "claude-sonnet-4-6", "--judge", "gemini-2.5-pro", "--use-case", "m"]
        assert main(argv) == 0
        first = capsys.readouterr().out
        assert main(argv) == 0
        second = capsys.readouterr().out
    assert "judged 3 of 3 selected runs" in first
    assert "calls: 15 (answers reused from the cache: 0); tokens: 1800 in, 600 out; cost: $" in first
    assert "calls: 0 (answers reused from the cache: 15); tokens: 0 in, 0 out" in second
    assert len(a.requests) == 5 and len(g.requests) == 10
    assert "disagreements with the deterministic scorer" in first
    stored = [json.loads(p.read_text()) for p in root.rglob("verdicts/judge_*.json")]
    assert sorted(v["verdict"] for v in stored) == ["safe", "safe", "unsafe"]


def test_errors_exit_1_and_are_listed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = demo_copy(tmp_path)

    def reply(rec: Recorded) -> Reply:
        criterion = criterion_of(rec)
        return anthropic_message("no json here" if criterion == 1 else reply_json("NO") if criterion else diagnosis_json())

    with anthropic_server(reply) as a:
        _point(monkeypatch, a, None)
        code = main(
            ["judge", "--store", str(root), "--judge", "claude-haiku-4-5", "--use-case", "a", "--model", "gemini-2.5-flash"]
        )
    out = capsys.readouterr().out
    assert code == 1 and "runs with judge errors (1" in out and "criterion 1: malformed answer" in out


def test_sample_and_seed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    root = demo_copy(tmp_path)
    with gemini_server(scripted(gemini_response, {})) as g:
        _point(monkeypatch, None, g)
        assert main(["judge", "--store", str(root), "--judge", "gemini-2.5-pro", "--sample", "10", "--seed", "4"]) == 0
    out = capsys.readouterr().out
    assert "judged 3 of 30 selected runs (sample 10%, seed 4)" in out
    assert len(list(root.rglob("verdicts/judge_*.json"))) == 3
