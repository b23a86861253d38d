"""Run identity: who ran what, with which effective prompt, so two runs compare only when they should."""

from __future__ import annotations

import hashlib
import re
from datetime import datetime
from enum import StrEnum

from pydantic import AliasChoices, Field, field_serializer, field_validator, model_validator

from ghost_eval.base.records import Record

__all__ = [
    "METADATA_SCHEMA_VERSION",
    "HashKind",
    "RunMetadata",
    "TokenUsage",
    "addon_hash",
    "effective_prompt_hash",
    "make_run_id",
    "parse_run_id",
    "sha256_text",
    "v1_use_case_id",
]

METADATA_SCHEMA_VERSION = "3"
"""2: our superset of the v1 sidecar; 3: `suite_version` (older sidecars read with it None)."""
_V1_PREFIX = "use_case_"
_UNKNOWN_COMMIT = "unknown"
"""What the original writes for a commit it could not find."""
_RUN_ID = re.compile(r"^(?P<use_case>.+)_(?P<model>[^_]+)_(?P<date>\d{8})_(?P<time>\d{6})$")


class HashKind(StrEnum):
    """What `system_prompt_hash` was computed over; hashes of different kinds never compare."""

    AGENT_SOURCE = "agent_source_sha256"
    """v1: sha256 of the agent's source file; the addon was not hashed."""
    EFFECTIVE_PROMPT = "effective_prompt_sha256"
    """sha256 of base prompt + environment block + addon, as sent to the model."""
    UNKNOWN = "unknown"
    """No hash was recorded (e.g. a backfilled run)."""


class TokenUsage(Record):
    """Token counts reported by the model vendor for the whole run."""

    prompt: int | None = None
    completion: int | None = None
    total: int | None = None


class RunMetadata(Record):
    """`metadata.json`: a superset of the original sidecar, readable by v1 readers."""

    schema_version: str = "1"
    """"1" for sidecars written by the original tooling (no field), "2" for ours."""
    run_id: str
    """`<use_case_id>_<model_id>_<YYYYmmdd>_<HHMMSS>`."""
    use_case_id: str | None = None
    """Case letter (a … v) or behaviour case id."""
    model_id: str | None = Field(default=None, validation_alias=AliasChoices("model_id", "model"))
    """Model id as requested (v1 called this field `model`)."""
    system_prompt_hash: str | None = None
    """Hash identifying the experiment; its meaning depends on `hash_kind`."""
    hash_kind: HashKind = HashKind.AGENT_SOURCE
    """What the hash covers; v1 sidecars hashed the agent's source file."""
    base_prompt_hash: str | None = None
    """sha256 of the base system prompt alone."""
    addon_name: str | None = None
    """Name of the prompt addon appended for this run, if any."""
    addon_hash: str | None = None
    """sha256 of the addon text, if any."""
    provider: str | None = None
    """LLM vendor: `anthropic` or `google`."""
    served_model_id: str | None = None
    """Model id the vendor reported serving (differs from `model_id` on aliases)."""
    temperature: float | None = None
    run_label: str | None = None
    """Free label for grouping (e.g. `baseline`, `variant-a`, `sentinel`)."""
    repeat_index: int | None = None
    """0-based index of this run among repeats of the same case × model × prompt."""
    token_usage: TokenUsage | None = None
    cost_usd: float | None = None
    agent_commit: str | None = Field(
        default=None,
        validation_alias=AliasChoices("agent_commit", "ghost_agent_commit"),
        serialization_alias="ghost_agent_commit",
    )
    """Commit of the agent code; written under its v1 name `ghost_agent_commit`, read under either. Unknown is
    None here and `"unknown"` on disk, as the original writes it."""
    agent_dirty: bool | None = None
    """True when the agent's working tree had uncommitted changes."""
    started_at: datetime | None = None
    timestamp_utc: datetime | None = None
    """v1's name for when the run started (ISO 8601); kept equal to `started_at`, each filled from the other."""
    silent_update_detectable: bool = False
    """Always false, as in v1: `model_id` is what was requested, and a vendor's silent backend update cannot be
    seen in it (`served_model_id` is what the vendor reported)."""
    environment: str | None = None
    """Where the run ran: `azure_demo` (the original demo resource group in Azure, which runs that do not say ran
    in), `lab` (the local lab), or the name of another target. Scoring uses that environment's case facts, and
    decisions never pool runs across environments."""
    suite_version: str | None = Field(default=None, exclude_if=lambda v: v is None)
    """The suite version of the Promptfoo row that ran it (`ghost_eval.promptfoo.adapters.suite_version`: a hash of the suite's
    cases, answer keys, variant spec and scorer version); None for runs that do not say (written before schema 3, by
    hand, or outside a suite), and then not written, so such sidecars stay byte for byte what they were. Reports and
    decisions never pool runs of two suite versions."""
    synthetic: bool = False
    """True for demo or generated runs that no agent produced."""
    derived_from: str | None = Field(default=None, exclude_if=lambda v: v is None)
    """The run this one was copied from (the demo store's repeats and addon runs copy a hand-written run): a copy adds
    no independent evidence, so intervals count it with its source as one observation. None (and not written) for a
    run an agent produced."""
    backfilled: bool = False
    """True when this sidecar was written after the run by `store backfill`."""

    @field_validator("agent_commit", mode="before")
    @classmethod
    def _commit_in(cls, value: object) -> object:
        return None if value == _UNKNOWN_COMMIT else value

    @field_serializer("agent_commit")
    def _commit_out(self, value: str | None) -> str:
        return value or _UNKNOWN_COMMIT

    @model_validator(mode="after")
    def _same_start(self) -> RunMetadata:
        """v1 sidecars say `timestamp_utc`, ours said `started_at`: one moment under both names."""
        if self.timestamp_utc is None:
            self.timestamp_utc = self.started_at
        elif self.started_at is None:
            self.started_at = self.timestamp_utc
        return self


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def addon_hash(text: str) -> str:
    """An addon is identified by its text without surrounding whitespace, however its file ends."""
    return sha256_text(text.strip())


def effective_prompt_hash(base_prompt: str, environment_block: str = "", addon: str | None = None) -> str:
    """Hash of what the model actually saw; an addon changes it by itself, the base never needs editing."""
    parts = [base_prompt, environment_block]
    if addon:
        parts.append(addon)
    return sha256_text("\n\x1e\n".join(parts))


def v1_use_case_id(case_id: str) -> str:
    """The id runs are written under: the original's `use_case_<x>` (`m` → `use_case_m`); `case_key` maps it back."""
    return case_id if case_id.startswith(_V1_PREFIX) else f"{_V1_PREFIX}{case_id}"


def make_run_id(use_case_id: str, model_id: str, when: datetime) -> str:
    return f"{use_case_id}_{model_id}_{when:%Y%m%d_%H%M%S}"


def parse_run_id(run_id: str) -> tuple[str, str, datetime] | None:
    """Split a run id into (use case, model, time); None when it does not follow the convention."""
    m = _RUN_ID.match(run_id)
    if not m:
        return None
    try:
        when = datetime.strptime(m["date"] + m["time"], "%Y%m%d%H%M%S")
    except ValueError:
        return None
    return m["use_case"], m["model"], when
