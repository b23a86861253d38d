from __future__ import annotations

from datetime import datetime

from ghost_eval.identity import HashKind, RunMetadata, effective_prompt_hash, make_run_id, parse_run_id


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
    from ghost_eval.identity import addon_hash

    assert addon_hash("Check tc first.\n") == addon_hash("Check tc first.") == addon_hash("  Check tc first.\n\n")
    assert addon_hash("Check tc first.") != addon_hash("Check nft first.")
