"""Every environment variable the package reads, with its default and what it does, in one typed object.

A process reads them once where it starts (the `ghost-eval` command, `python -m ghost_eval.agent`, the Promptfoo
providers, assertions and test generator) with `read_settings()`, and passes them in: library functions take the
values they need as arguments whose defaults are `DEFAULTS`'s, so a function called twice with the same arguments does
the same thing whatever the environment holds. `tests/test_settings.py` keeps it so, and keeps the README's table (the
output of `python -m ghost_eval.base.settings`) equal to this object.

An empty variable counts as unset, as it always did here (`GHOST_EVAL_STORE= make eval` uses the demo store).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, SecretStr

__all__ = ["DEFAULTS", "Settings", "env_name", "env_names", "read_settings", "revealed", "settings_table"]


class Settings(BaseModel):
    """The package's environment, typed; field names are the Python names, aliases the variables'."""

    model_config = ConfigDict(frozen=True, extra="ignore", use_attribute_docstrings=True)

    store: Path | None = Field(None, validation_alias="GHOST_EVAL_STORE")
    """The store a command, provider or assertion uses when none is named; unset: the bundled demo store (the live
    provider then refuses to run: live runs are never written into the demo store)."""
    data_home: Path = Field(default_factory=lambda: Path.home() / ".local" / "share", validation_alias="XDG_DATA_HOME")
    """An installed package copies its demo store under `<this>/ghost-eval/` before writing to it (a checkout uses
    its own)."""
    mirror: Path = Field(
        default_factory=lambda: Path.home() / ".cache" / "ghost-eval" / "mirrors", validation_alias="GHOST_EVAL_MIRROR"
    )
    """Where readers keep the local mirror of a shared `azblob://` store, one folder per account and container."""
    azure_storage_connection_string: SecretStr | None = Field(None, validation_alias="AZURE_STORAGE_CONNECTION_STRING")
    """Credentials of a shared `azblob://` store; unset: `AZURE_STORAGE_ACCOUNT_URL` with azure-identity."""
    azure_storage_account_url: str | None = Field(None, validation_alias="AZURE_STORAGE_ACCOUNT_URL")
    """The storage account of a shared store, signed in with azure-identity's `DefaultAzureCredential`."""
    cache_home: Path = Field(default_factory=lambda: Path.home() / ".cache", validation_alias="XDG_CACHE_HOME")
    """The user's cache folder; the azure-cli environment lives in `<this>/ghost-eval` unless `GHOST_EVAL_CACHE`
    says otherwise."""
    cache: Path | None = Field(None, validation_alias="GHOST_EVAL_CACHE")
    """Where the azure-cli + original agent virtualenv is built (about 600 MB); unset: `$XDG_CACHE_HOME/ghost-eval`."""
    lab_dir: Path = Field(Path("/run/ghost-eval-lab"), validation_alias="GHOST_EVAL_LAB_DIR")
    """The local lab's state folder (its `target.json`, keys, az profile); `--state-dir` overrides it."""
    target: Path | None = Field(None, validation_alias="GHOST_EVAL_TARGET")
    """The target file of `python -m ghost_eval.agent` when `--target` is not given; unset: the lab's
    `target.json`. The live provider sets it for the agent it starts."""
    original: Path | None = Field(None, validation_alias="GHOST_EVAL_ORIGINAL")
    """An original agentic-network-tools checkout: `{original}` in the live provider's `agent` template, and the
    original's own `capture_run.py` for the stored run summary."""
    runtime_dir: Path | None = Field(None, validation_alias="XDG_RUNTIME_DIR")
    """The user's runtime folder: the live provider keeps its target locks in `<this>/ghost-eval` (root uses
    `/run/ghost-eval`; unset: a private folder in the temporary folder)."""
    shard: str | None = Field(None, validation_alias="GHOST_EVAL_SHARD")
    """`k/n`: a suite's test generator yields only every n-th row from the k-th (the config's `shard` wins)."""
    anthropic_api_key: SecretStr | None = Field(None, validation_alias="ANTHROPIC_API_KEY")
    """The key of the Claude judge and of the reference agent on Claude."""
    anthropic_base_url: str | None = Field(None, validation_alias="ANTHROPIC_BASE_URL")
    """Where Anthropic requests go instead of Anthropic's endpoint (the anthropic SDK's own variable; tests point
    it at a local fake)."""
    gemini_api_key: SecretStr | None = Field(None, validation_alias=AliasChoices("GEMINI_API_KEY", "GOOGLE_API_KEY"))
    """The key of the Gemini judge and of the reference agent on Gemini; `GOOGLE_API_KEY` when `GEMINI_API_KEY` is
    unset."""
    gemini_base_url: str | None = Field(None, validation_alias="GHOST_EVAL_GEMINI_BASE_URL")
    """Where Gemini requests go instead of Google's endpoint (tests point it at a local fake)."""
    promptfoo_config_dir: Path = Field(Path(".promptfoo"), validation_alias="PROMPTFOO_CONFIG_DIR")
    """Promptfoo's folder, whose `promptfoo.db` `ghost-eval diff` reads an eval id from (the Makefile sets it to the
    project's `.promptfoo/`)."""
    user: str = Field("unknown", validation_alias="USER")
    """Who labels, by default, in `ghost-eval calibrate label`."""

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> Settings:
        """The settings an environment gives; a variable set to the empty string counts as unset."""
        return cls.model_validate({name: value for name, value in environ.items() if value})

    @property
    def cache_dir(self) -> Path:
        """Where the azure-cli environment is built: `GHOST_EVAL_CACHE`, else `$XDG_CACHE_HOME/ghost-eval`."""
        return self.cache or self.cache_home / "ghost-eval"

    @property
    def target_file(self) -> Path:
        """The agent's target file: `GHOST_EVAL_TARGET`, else the lab's `target.json`."""
        return self.target or self.lab_dir / "target.json"


DEFAULTS = Settings()
"""The settings of an empty environment: the defaults library functions fall back to."""


def read_settings() -> Settings:
    """The process's settings, read from its environment: only where a process starts (see the module's docstring)."""
    return Settings.from_environ(os.environ)


def revealed(secret: SecretStr | None) -> str | None:
    """A key's text, where it is handed to the client that sends it (a `SecretStr` prints as `**********`)."""
    return secret.get_secret_value() if secret is not None else None


def env_names(field: str) -> tuple[str, ...]:
    """The variables that set `field`, in the order they are read."""
    alias = Settings.model_fields[field].validation_alias
    if isinstance(alias, AliasChoices):
        return tuple(str(choice) for choice in alias.choices)
    return (str(alias),)


def env_name(field: str) -> str:
    """The variable that sets `field` (the first, where several do)."""
    return env_names(field)[0]


def _shown(value: object) -> str:
    """A default as the README shows it: the user's home as `~`, nothing for unset."""
    if value is None:
        return "unset"
    text = str(value)
    home = str(Path.home())
    return f"`~{text[len(home) :]}`" if text.startswith(home + os.sep) else f"`{text}`"


def settings_table() -> str:
    """The README's table of the variables, one row per setting."""
    rows = ["| Variable | Default | What it does |", "| --- | --- | --- |"]
    for field, info in Settings.model_fields.items():
        names = " or ".join(f"`{name}`" for name in env_names(field))
        about = " ".join((info.description or "").split())
        rows.append(f"| {names} | {_shown(getattr(DEFAULTS, field))} | {about} |")
    return "\n".join(rows) + "\n"


if __name__ == "__main__":
    print(settings_table(), end="")
