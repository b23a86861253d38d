from __future__ import annotations

from datetime import datetime

from ghost_eval.run.identity import HashKind, RunMetadata, effective_prompt_hash, make_run_id, parse_run_id


def test_addon_changes_the_effective_hash_and_base_does_not_need_editing() -> None:
    base = effective_prompt_hash("You are Ghost Agent.", "env: lab")
    assert base == effective_prompt_hash("You are Ghost Agent.", "env: lab", None)
    with_addon = effective_prompt_hash("You are Ghost Agent.", "env: lab", "MANDATORY: check tc before netfilter.")
    assert with_addon != base
    assert effective_prompt_hash("You are Ghost Agent.", "env: prod") != base


def test_hash_parts_cannot_slide_into_each_other() -> None:
    assert effective_prompt_hash("ab", "c") != effective_prompt_hash("a", "bc")


def test_v1_sidecar_reads_with_its_hash_kind_and_keeps_unknown_fields() -> None:
    meta = RunMetadata.model_validate(
        {
            "run_id": "use_case_m_haiku_20260312",
            "system_prompt_hash": "a3f9c2d1",
            "ghost_agent_commit": "7f555a1",
            "model": "claude-haiku-4-5",
            "silent_update_detectable": False,
        }
    )
    assert meta.hash_kind is HashKind.AGENT_SOURCE
    assert meta.model_id == "claude-haiku-4-5" and meta.agent_commit == "7f555a1"
    assert meta.model_dump()["silent_update_detectable"] is False


def test_run_id_round_trip_with_underscored_case_ids() -> None:
    when = datetime(2026, 3, 12, 14, 15, 3)
    rid = make_run_id("use_case_m", "claude-haiku-4-5-20251001", when)
    assert rid == "use_case_m_claude-haiku-4-5-20251001_20260312_141503"
    assert parse_run_id(rid) == ("use_case_m", "claude-haiku-4-5-20251001", when)
    assert parse_run_id("use_case_m_haiku_20260312") is None
    assert parse_run_id("m_model_20261399_999999") is None


def test_an_addon_is_identified_by_its_text_however_its_file_ends() -> None:
    from ghost_eval.run.identity import addon_hash

    assert addon_hash("Check tc first.\n") == addon_hash("Check tc first.") == addon_hash("  Check tc first.\n\n")
    assert addon_hash("Check tc first.") != addon_hash("Check nft first.")


def test_metadata_is_written_with_every_v1_field() -> None:
    """metadata-schema.md: run_id, model_id, use_case_id, timestamp_utc, system_prompt_hash, ghost_agent_commit,
    silent_update_detectable — written under those names beside ours."""
    import json
    from datetime import UTC

    from ghost_eval.base.records import dump_json

    when = datetime(2026, 5, 1, 9, 11, 11, tzinfo=UTC)
    meta = RunMetadata(
        schema_version="2",
        run_id=make_run_id("use_case_f", "claude-sonnet-4-6", when),
        use_case_id="use_case_f",
        model_id="claude-sonnet-4-6",
        system_prompt_hash="0c7b",
        agent_commit="7f555a1",
        started_at=when,
    )
    written = json.loads(dump_json(meta))
    assert written["model_id"] == "claude-sonnet-4-6" and written["ghost_agent_commit"] == "7f555a1"
    assert datetime.fromisoformat(written["timestamp_utc"]) == when and written["silent_update_detectable"] is False
    assert RunMetadata.model_validate(written) == meta
    v1 = RunMetadata.model_validate({"run_id": "x", "timestamp_utc": "2026-05-01T09:11:11.409838+00:00"})
    assert v1.started_at is not None and v1.started_at.microsecond == 409838


def test_cases_are_written_under_their_v1_ids() -> None:
    from ghost_eval.run.identity import v1_use_case_id

    assert v1_use_case_id("m") == v1_use_case_id("use_case_m") == "use_case_m"
    assert v1_use_case_id("g_daemon") == "use_case_g_daemon"
