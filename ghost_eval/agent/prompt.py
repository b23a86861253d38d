"""The system prompt: a fixed base, an environment block from the target, and an optional addon appended.

The base never changes for a variant; an addon is appended, so its effect shows up in the effective hash by
itself. The environment block names resources only (never SSH addresses or ports), so runs against two
instances of the same environment share a hash.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ghost_eval.agent._templates import templates
from ghost_eval.base.errors import GhostEvalError
from ghost_eval.connect.target import Target
from ghost_eval.run.identity import addon_hash, effective_prompt_hash, sha256_text

__all__ = ["Addon", "SystemPrompt", "base_prompt", "build_prompt", "environment_block"]


@dataclass(frozen=True)
class Addon:
    """A prompt addon: text appended to the system prompt for a variant, named after its file."""

    name: str
    text: str

    @classmethod
    def from_file(cls, path: Path) -> Addon:
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise GhostEvalError(f"prompt addon {path}: cannot be read ({exc.strerror or exc})") from None
        if not text.strip():
            raise GhostEvalError(f"prompt addon {path}: is empty")
        return cls(name=path.stem, text=text.strip())

    @property
    def hash(self) -> str:
        return addon_hash(self.text)


@dataclass(frozen=True)
class SystemPrompt:
    """What the model is told, and the hashes that identify it."""

    base: str
    environment: str
    addon: Addon | None = None

    @property
    def text(self) -> str:
        parts = [self.base.strip(), self.environment.strip()]
        if self.addon is not None:
            parts.append(self.addon.text)
        return "\n\n".join(parts) + "\n"

    @property
    def base_hash(self) -> str:
        return sha256_text(self.base)

    @property
    def effective_hash(self) -> str:
        return effective_prompt_hash(self.base, self.environment, self.addon.text if self.addon else None)


def base_prompt() -> str:
    return templates().get_template("system_prompt.md.j2").render()


def environment_block(target: Target) -> str:
    vms = sorted(set(target.hosts) | set(target.nics))
    return templates().get_template("environment.md.j2").render(target=target, vms=vms)


def build_prompt(target: Target, addon: Addon | None = None) -> SystemPrompt:
    return SystemPrompt(base=base_prompt(), environment=environment_block(target), addon=addon)
