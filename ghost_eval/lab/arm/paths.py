"""Files the emulator process shares with `lab up`: its config (token, certificate, fabric), its endpoint, its state."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

__all__ = ["CONFIG_NAME", "ENDPOINT_NAME", "STATE_NAME", "write_json_atomic"]

CONFIG_NAME = "config.json"
ENDPOINT_NAME = "endpoint.json"
STATE_NAME = "state.json"


def write_json_atomic(path: Path, data: Any) -> None:
    """Readers never see a half-written file: write beside it, then rename over it."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)
