"""Promptfoo provider: serves stored Ghost Agent runs so they can be rescored at zero agent cost.

Config: `store` (folder; default $GHOST_EVAL_STORE, else the bundled demo store), `cases` (folder).
A test selects a run by vars `run_id`, or `use_case` + `model` (+ `prompt_hash`, `repeat_index`).
Config and vars are validated first (ghost_eval.promptfoo.adapters): a bad one is an error row naming the field.
"""

from __future__ import annotations

from typing import Any

from ghost_eval.base.settings import read_settings
from ghost_eval.promptfoo.adapters import replay_response


def call_api(prompt: str, options: dict[str, Any], context: dict[str, Any]) -> dict[str, Any]:
    return replay_response(options.get("config") or {}, context, read_settings())
