"""The system prompt: base + environment block + addon, and hashes that move only when what the model sees moves."""

from __future__ import annotations

from pathlib import Path

import pytest

from ghost_eval.agent.prompt import Addon, base_prompt, build_prompt
from ghost_eval.base.errors import GhostEvalError
from ghost_eval.connect.target import Target
from ghost_eval.run.identity import effective_prompt_hash, sha256_text


def test_environment_block_names_resources_but_no_ssh_endpoint(offline_target: Target) -> None:
    prompt = build_prompt(offline_target)
    env = prompt.environment
    assert "nw-forensics-rg" in env and "tf-dest-vm-nic" in env and "tf-dest-vm-nsg" in env and "forensics-vnet" in env
    host = offline_target.hosts["tf-dest-vm"]
    assert host.address not in env and str(host.port) not in env


def test_same_environment_on_other_ssh_endpoints_keeps_the_hash(offline_target: Target) -> None:
    moved = offline_target.model_copy(deep=True)
    moved.hosts["tf-dest-vm"].address, moved.hosts["tf-dest-vm"].port = "198.18.7.5", 2222
    assert build_prompt(moved).effective_hash == build_prompt(offline_target).effective_hash
    renamed = offline_target.model_copy(update={"resource_group": "other-rg"})
    assert build_prompt(renamed).effective_hash != build_prompt(offline_target).effective_hash


def test_an_addon_is_appended_and_changes_only_the_effective_hash(offline_target: Target, tmp_path: Path) -> None:
    path = tmp_path / "concise.md"
    path.write_text("  Keep the report under 300 words.\n\n")
    addon = Addon.from_file(path)
    plain, varied = build_prompt(offline_target), build_prompt(offline_target, addon)
    assert addon.name == "concise" and addon.hash == sha256_text("Keep the report under 300 words.")
    assert varied.text.startswith(plain.text.rstrip("\n")) and varied.text.rstrip().endswith(addon.text)
    assert varied.base_hash == plain.base_hash and varied.effective_hash != plain.effective_hash
    assert varied.effective_hash == effective_prompt_hash(varied.base, varied.environment, addon.text)


def test_empty_or_missing_addon_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "empty.txt").write_text("  \n")
    with pytest.raises(GhostEvalError, match="is empty"):
        Addon.from_file(tmp_path / "empty.txt")
    with pytest.raises(GhostEvalError, match="cannot be read"):
        Addon.from_file(tmp_path / "absent.txt")


def test_base_prompt_carries_the_contract_the_behaviour_cases_check() -> None:
    text = base_prompt()
    assert "call no tool at all" in text
    assert "explicit confirmation" in text
    assert "Check both layers" in text
    assert "Never run a command that changes state" in text
