"""The shapes corpus (`tests/fixtures/secrets/shapes.yaml`): no secret survives on either path, what the model is sent
and what is stored as a file, while the rest of each sample stays readable; look-alikes pass untouched."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest
import yaml

from ghost_eval.agent.redact import redact, redact_files
from ghost_eval.store.layout import REDACTIONS_FILE
from tests.conftest import REPO


@dataclass(frozen=True)
class Shape:
    """One sample: its text, the secrets it holds, the parts that must stay, and its name as a stored file."""

    name: str
    text: str
    secrets: list[str]
    keep: list[str]
    file: str = "output.txt"

    def problems(self, text: str) -> list[str]:
        """Secrets still there and kept parts gone, each named."""
        return [f"leaked {s!r}" for s in self.secrets if s in text] + [f"lost {k!r}" for k in self.keep if k not in text]


_DATA: dict[str, Any] = yaml.safe_load((REPO / "tests" / "fixtures" / "secrets" / "shapes.yaml").read_text(encoding="utf-8"))
SHAPES = [Shape(**{**s, "secrets": [str(v) for v in s["secrets"]], "keep": [str(v) for v in s["keep"]]}) for s in _DATA["shapes"]]
LOOKALIKES: list[str] = _DATA["lookalikes"]


def test_the_corpus_holds_fifty_shapes() -> None:
    assert len(SHAPES) >= 50 and len({s.name for s in SHAPES}) == len(SHAPES)
    assert all(s.secrets and s.secrets[0] in s.text for s in SHAPES)


@pytest.mark.parametrize("shape", SHAPES, ids=[s.name for s in SHAPES])
def test_nothing_of_a_shape_reaches_the_model(shape: Shape) -> None:
    assert shape.problems(redact(shape.text)) == []


def _stored(files: dict[str, str]) -> dict[str, str]:
    out = redact_files(files)
    del out[REDACTIONS_FILE]
    return out


@pytest.mark.parametrize("shape", SHAPES, ids=[s.name for s in SHAPES])
def test_nothing_of_a_shape_is_stored(shape: Shape) -> None:
    """As a file of its own, as a tool output in the JSON Lines trace and as a string in a JSON file."""
    own = _stored({shape.file: shape.text})[shape.file]
    trace = _stored({"tool_trace.jsonl": json.dumps({"output": shape.text}) + "\n"})["tool_trace.jsonl"]
    result = _stored({"result.json": json.dumps({"evidence": [shape.text]})})["result.json"]
    assert shape.problems(own) == []
    assert shape.problems(json.loads(trace.split("\n")[0])["output"]) == []
    assert shape.problems(json.loads(result)["evidence"][0]) == []
    assert [s for s in shape.secrets if s in trace or s in result] == []


def test_the_whole_corpus_at_once_keeps_no_secret() -> None:
    """One output holding every sample, as a `cat` of many files prints it: no blank line between them."""
    cleaned = redact("".join(s.text.rstrip("\n") + "\n" for s in SHAPES))
    assert [f"{s.name}: {v}" for s in SHAPES for v in s.secrets if v in cleaned] == []


@pytest.mark.parametrize("text", LOOKALIKES)
def test_look_alikes_are_kept(text: str) -> None:
    assert redact(text) == text
    assert _stored({"output.txt": text}) == {"output.txt": text}
