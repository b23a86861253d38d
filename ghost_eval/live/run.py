"""One live run, end to end: fault setup → snapshot → agent → capture into the store → teardown, always.

Rows that share a target never plant their faults at the same time: a file lock per target
serialises them across Promptfoo's worker processes; different targets run in parallel. The locks live
in a folder only this user can write (root: /run/ghost-eval), and are opened without following links or
truncating, so no other local user can point one at a file of theirs.
"""

from __future__ import annotations

import fcntl
import os
import shlex
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urlsplit

from ghost_eval.agent.capture import artifact_files, read_artifacts, store_payload
from ghost_eval.agent.loop import Limits
from ghost_eval.agent.prompt import Addon
from ghost_eval.agent.redact import redact, redact_files
from ghost_eval.agent.runner import AgentConfig, Provider, investigate
from ghost_eval.base.errors import GhostEvalError, RunExistsError
from ghost_eval.base.records import dump_json
from ghost_eval.base.settings import DEFAULTS, Settings, env_name, revealed
from ghost_eval.cases.case import Case
from ghost_eval.connect.target import Target, load_target
from ghost_eval.lab.agentbox import VENDOR_API, AgentBox
from ghost_eval.lab.azcli import az_environment, az_login, original_env
from ghost_eval.live.original import capture_summary
from ghost_eval.live.recipes import applied, recipe_of
from ghost_eval.live.scripted import ScriptedModel, script_for
from ghost_eval.live.snapshot import take_snapshot
from ghost_eval.run.identity import (
    METADATA_SCHEMA_VERSION,
    HashKind,
    RunMetadata,
    addon_hash,
    make_run_id,
    parse_run_id,
    v1_use_case_id,
)
from ghost_eval.store import IndexEntry, Store
from ghost_eval.store.layout import AGENT_RUN_FILE, REPORT, SNAPSHOT_FILE, SUMMARY_FILE

__all__ = ["LiveConfig", "LiveRun", "run_case", "target_path"]

_VENDOR_KEYS: dict[Provider, str] = {"anthropic": "anthropic_api_key", "gemini": "gemini_api_key"}
"""The settings field of the key the original's adapter reads for each provider: the one secret a sandboxed agent is given."""
_RUNTIME_DIR = Path("/run/ghost-eval")
"""Root's lock folder; other users get `$XDG_RUNTIME_DIR/ghost-eval`, else a private folder in the temp folder."""


@dataclass(frozen=True)
class LiveConfig:
    """What the live provider's config names."""

    provider: Provider
    model: str
    store: Path
    target: str = "lab"
    """`lab` (the local lab's target.json) or a target file naming subscription, resource group, hosts and keys."""
    agent: str = "reference"
    """`reference`, or a command template for an original Ghost Agent checkout, e.g.
    `python ghost_agent.py --llm-provider {provider} --model {model} --auto-approve --audit-dir {audit_dir}`
    (`{addon}` becomes `--prompt-addon FILE` when an addon is set). The symptom goes to standard input."""
    addon_file: Path | None = None
    run_label: str | None = None
    auto_approve: bool = False
    """Eval mode: commands needing approval run and are recorded as `eval_auto`, never as human approvals."""
    limits: Limits = field(default_factory=Limits)
    scripted: bool = False
    """The model is the scripted model replaying the case's script (`ghost_eval.live.scripted`): no key, no network."""
    host_commands: bool = False
    """Run an external agent on the lab's host itself instead of in its sandbox (`ghost_eval.lab.agentbox`). The
    original's shell runs every command that is not `az` on the machine it runs on: set it only on a host you can
    lose."""
    agent_timeout_s: float = 900.0
    suite_version: str | None = None
    """The suite version of the row being run (its test metadata), recorded in the stored run's metadata."""
    settings: Settings = DEFAULTS
    """The provider's settings: the vendors' keys, the lab's folder, the lock folder, the original checkout and where
    the azure-cli environment is built."""


@dataclass
class LiveRun:
    entry: IndexEntry
    aborted: str | None
    """Why the agent did not complete (timeout, crash, turn limit), or None."""


def target_path(target: str, lab_dir: Path = DEFAULTS.lab_dir) -> Path:
    return lab_dir / "target.json" if target == "lab" else Path(target)


def lock_dir(runtime_dir: Path | None = DEFAULTS.runtime_dir) -> Path:
    """The folder of the target locks, in the user's `runtime_dir` ($XDG_RUNTIME_DIR) when there is one: owned by this
    user, writable by no one else (checked, not assumed)."""
    uid = os.geteuid()
    if uid == 0:
        folder = _RUNTIME_DIR
    elif runtime_dir:
        folder = runtime_dir / "ghost-eval"
    else:
        folder = Path(tempfile.gettempdir()) / f"ghost-eval-{uid}"
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = os.lstat(folder)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != uid or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise GhostEvalError(f"{folder}: the lock folder must be a directory owned by uid {uid} and writable only by it")
    return folder


@contextmanager
def _exclusive(target: Target, runtime_dir: Path | None) -> Iterator[None]:
    """One fault at a time per target, across processes; a link planted at the lock path is refused, never followed."""
    path = lock_dir(runtime_dir) / f"{target.name}.lock"
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        raise GhostEvalError(f"{path}: cannot open the target lock ({exc.strerror}); is it a symlink?") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _reference(case: Case, target: Target, config: LiveConfig) -> tuple[dict[str, str], str | None]:
    addon = Addon.from_file(config.addon_file) if config.addon_file else None
    run = investigate(
        case.symptom,
        target,
        AgentConfig(
            config.provider,
            config.model,
            auto_approve=config.auto_approve,
            addon=addon,
            limits=config.limits,
            settings=config.settings,
        ),
    )
    return artifact_files(run), run.result.aborted


def external_argv(config: LiveConfig, audit_dir: str, python: str = sys.executable) -> list[str]:
    """The command template split first, then filled per word: a model name or path is always one argument.
    `{python}` is the interpreter of the agent's environment (the lab's original-agent environment on the lab);
    `{original}` is the settings' `original` ($GHOST_EVAL_ORIGINAL), the folder of an original agentic-network-tools
    checkout (left as `$GHOST_EVAL_ORIGINAL` when unset)."""
    original = str(config.settings.original) if config.settings.original else f"${env_name('original')}"
    addon = ["--prompt-addon", str(config.addon_file)] if config.addon_file else []
    argv: list[str] = []
    for word in shlex.split(config.agent):
        if word == "{addon}":
            argv += addon
        else:
            argv.append(
                word.format(
                    provider=config.provider,
                    model=config.model,
                    audit_dir=audit_dir,
                    addon=" ".join(addon),
                    python=python,
                    original=original,
                )
            )
    return argv


class _Agent:
    """How the external agent runs: its environment, its interpreter, and, on the lab, the sandbox it runs in."""

    def __init__(self, env: dict[str, str], python: str, box: AgentBox | None = None):
        self.env, self.python, self.box = env, python, box

    def run(self, argv: list[str], stdin: str, cwd: str, timeout: float) -> subprocess.CompletedProcess[str]:
        if self.box is not None:
            return self.box.run(argv, stdin, self.env, timeout)
        return subprocess.run(
            argv, input=stdin, text=True, capture_output=True, env=self.env, cwd=cwd, timeout=timeout, check=False
        )


def _external_agent(case: Case, target: Target, target_file: Path, config: LiveConfig, cwd: Path, stack: ExitStack) -> _Agent:
    """On the lab, the agent runs in a sandbox of its own (`ghost_eval.lab.agentbox`) with the real `az` signed in
    to the lab and the original's packages; with `host_commands`, on this host as before. With `scripted`, the case's
    scripted model is the Anthropic endpoint; else the model's key is passed and its API is the one way out."""
    model = stack.enter_context(ScriptedModel(script_for(case.id))) if config.scripted else None
    model_env = {"ANTHROPIC_BASE_URL": model.url, "ANTHROPIC_API_KEY": "scripted-model"} if model else {}
    if target.name != "lab":
        inherited = dict(os.environ)  # a child's environment: this process's, passed on
        return _Agent({**inherited, env_name("target"): str(target_file), **model_env}, sys.executable)
    tools = original_env(config.settings.cache_dir)
    if config.host_commands:
        az_login(target_file.parent, tools)
        env = {**az_environment(target_file.parent, tools), env_name("target"): str(target_file), **model_env}
        return _Agent(env, str(tools.python))
    original = config.settings.original
    box = AgentBox(
        target_file.parent,
        tools,
        cwd,
        readonly=[original] if original else [],
        models=[urlsplit(model.url).port or 80] if model else [],
        egress=() if model else VENDOR_API[config.provider],
    )
    stack.enter_context(box)
    key = None if model else revealed(getattr(config.settings, _VENDOR_KEYS[config.provider]))
    keys = {env_name(_VENDOR_KEYS[config.provider]): key} if key else {}
    return _Agent({**box.environment(), **model_env, **keys}, str(tools.python), box)


def _original_summary(case: Case, config: LiveConfig, python: str, run_dir: Path) -> dict[str, str]:
    """`run_summary.json` from the original's own `capture_run.py`, when the template runs an original checkout."""
    original = config.settings.original
    if "{original}" not in config.agent or not original:
        return {}
    summary = capture_summary(original, Path(python), run_dir, v1_use_case_id(case.id), config.provider, config.model)
    return {SUMMARY_FILE: summary} if summary is not None else {}


def _drop_links(folder: Path) -> None:
    """Remove what the agent left in its folder that is not a file of its own: a symbolic link, a hard link or a
    special file would make the capture (run as root on the host) read a host file, or hang, in the agent's name."""
    for path in folder.iterdir():
        info = path.lstat()
        if stat.S_ISDIR(info.st_mode):
            continue
        if not stat.S_ISREG(info.st_mode) or info.st_nlink > 1:
            path.unlink()


def _external(case: Case, target: Target, target_file: Path, config: LiveConfig) -> tuple[dict[str, str], str | None]:
    """Drive an original checkout through its command-line contract; a crash or timeout is recorded, not raised.
    It runs in a folder laid out as the original's runner leaves one (the agent's working folder, its audit folder
    `audit/` inside), whose files (the original's `ghost_session.json`) are kept with the run."""
    with tempfile.TemporaryDirectory(prefix="ghost-cwd-") as cwd, ExitStack() as stack:
        audit_dir = os.path.join(cwd, "audit")
        os.mkdir(audit_dir)
        agent = _external_agent(case, target, target_file, config, Path(cwd), stack)
        python = agent.python
        aborted = None
        try:
            proc = agent.run(external_argv(config, audit_dir, python), case.symptom, cwd, config.agent_timeout_s)
            if proc.returncode != 0:
                said = proc.stderr.strip() or proc.stdout.strip()  # the original prints its errors to stdout
                aborted = f"agent exited with status {proc.returncode}: {said[-500:]}"
        except subprocess.TimeoutExpired:
            aborted = f"agent timed out after {config.agent_timeout_s:.0f} s"
        except OSError as exc:
            aborted = f"agent could not start: {exc}"
        for folder in (cwd, audit_dir):
            _drop_links(Path(folder))
        files = {
            p.name: p.read_text(encoding="utf-8", errors="replace")
            for folder in (cwd, audit_dir)
            for p in Path(folder).iterdir()
            if p.is_file()
        } | _original_summary(case, config, python, Path(cwd))
        try:
            return read_artifacts(Path(audit_dir)), aborted
        except GhostEvalError:
            return files, aborted or ("agent wrote no report" if not any(n.startswith(REPORT.prefix) for n in files) else None)


def _external_metadata(case: Case, config: LiveConfig, repeat_index: int | None, environment: str) -> RunMetadata:
    """An original checkout does not report its prompt: the hash kind says so instead of guessing."""
    started = datetime.now(UTC).replace(microsecond=0)
    addon = config.addon_file.read_text(encoding="utf-8") if config.addon_file else None
    use_case_id = v1_use_case_id(case.id)
    return RunMetadata(
        schema_version=METADATA_SCHEMA_VERSION,
        run_id=make_run_id(use_case_id, config.model, started),
        use_case_id=use_case_id,
        model_id=config.model,
        hash_kind=HashKind.UNKNOWN,
        addon_name=config.addon_file.stem if config.addon_file else None,
        addon_hash=addon_hash(addon) if addon else None,
        provider=config.provider,
        run_label=config.run_label,
        repeat_index=repeat_index,
        started_at=started,
        environment=environment,
        suite_version=config.suite_version,
    )


def _append(store: Store, metadata: RunMetadata, files: dict[str, str]) -> IndexEntry:
    """Run ids have one-second resolution; a repeat that started in the same second takes the next free id."""
    while True:
        try:
            return store.append(metadata, files)
        except RunExistsError:
            parsed = parse_run_id(metadata.run_id)
            if parsed is None:
                raise
            metadata = metadata.model_copy(update={"run_id": make_run_id(parsed[0], parsed[1], parsed[2] + timedelta(seconds=1))})


def run_case(case: Case, config: LiveConfig, repeat_index: int | None = None, recipe_case: Case | None = None) -> LiveRun:
    """`recipe_case` is the fault case whose recipe a behaviour case runs on (its `recipe_from`)."""
    recipe = recipe_of(recipe_case or case)
    if recipe is None:
        raise GhostEvalError(f"case {case.id} has no recipe: it cannot be run live (cases/{case.id}.yaml, field 'recipe')")
    target_file = target_path(config.target, config.settings.lab_dir)
    target = load_target(target_file)
    with _exclusive(target, config.settings.runtime_dir), applied(target, recipe, label=f"case {case.id}"):
        # The fault is in place from here: whatever fails, the run is stored (as aborted) before teardown.
        files, aborted = _investigate(case, target, target_file, config)
        metadata: RunMetadata | None = None
        if AGENT_RUN_FILE in files:
            try:
                metadata, files = store_payload(
                    files,
                    case.id,
                    run_label=config.run_label,
                    repeat_index=repeat_index,
                    environment=target.name,
                    suite_version=config.suite_version,
                )
            except GhostEvalError as exc:
                aborted = aborted or f"unreadable agent_run.json: {exc}"
        if metadata is None:
            metadata = _external_metadata(case, config, repeat_index, target.name)
        store = Store(config.store, create=True)
        try:
            return LiveRun(_append(store, metadata, redact_files(files)), aborted)
        finally:
            store.close()


def _investigate(case: Case, target: Target, target_file: Path, config: LiveConfig) -> tuple[dict[str, str], str | None]:
    """Snapshot and agent; a failure of either is recorded in the run, never raised past the stored run."""
    files: dict[str, str] = {}
    aborted: str | None = None
    try:
        files[SNAPSHOT_FILE] = dump_json(take_snapshot(target))
        if config.agent == "reference":
            agent_files, aborted = _reference(case, target, config)
        else:
            agent_files, aborted = _external(case, target, target_file, config)
        files.update(agent_files)
    except Exception as exc:  # any failure after the fault is planted becomes an aborted run
        aborted = f"crash: {type(exc).__name__}: {redact(str(exc))}"
    return files, aborted
