"""Promptfoo provider: runs Ghost Agent live on a use case (fault setup, snapshot, agent, capture, teardown).

Config: `model` (or vars `model`), `provider` (anthropic|gemini; inferred from the model), `store` (required, or
$GHOST_EVAL_STORE), `target` (`lab` or a target file), `agent` (`reference` or a command template for an original
checkout), `addon` (prompt addon file), `run_label`, `auto_approve`, `limits` ({max_turns, …}), `cases`.
A test names the case by vars `use_case`; each repeat is a separate stored run.
Config and vars are validated first (ghost_eval.promptfoo.adapters): a bad one is an error row naming the field.
"""

from __future__ import annotations

from typing import Any

from ghost_eval.base.settings import read_settings
from ghost_eval.promptfoo.adapters import live_response


def call_api(prompt: str, options: dict[str, Any], context: dict[str, Any]) -> dict[str, Any]:
    return live_response(options.get("config") or {}, context, read_settings())
