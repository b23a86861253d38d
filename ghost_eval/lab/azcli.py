"""The real Azure CLI against the lab, in an environment of its own.

azure-cli pins hundreds of Azure SDK packages that would clash with ours, and the original Ghost Agent needs its own
(anthropic, google-genai, python-dotenv): both go into one virtualenv under the cache folder, built on first use
(`original_env()`, or `ghost-eval lab az --setup`), reused after, rebuilt only when the pinned list changes. The
lab's CLI profile lives in `<state_dir>/az` (`AZURE_CONFIG_DIR`), so nothing touches the user's ~/.azure: a cloud
registered with the emulator's endpoints, the emulator's CA trusted through `REQUESTS_CA_BUNDLE` (azure-cli, MSAL
and the SDKs all send through `requests`), instance discovery off (the authority is not Microsoft's), and a
service-principal login that the emulator's token endpoint answers.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ghost_eval.base.settings import DEFAULTS
from ghost_eval.lab.arm.paths import CONFIG_NAME, ENDPOINT_NAME
from ghost_eval.lab.errors import LabError
from ghost_eval.lab.layout import SP_CLIENT_ID, SUBSCRIPTION_ID, TENANT_ID, LabLayout

__all__ = [
    "AZURE_CLI",
    "ORIGINAL_REQUIREMENTS",
    "ToolEnv",
    "az",
    "az_environment",
    "az_variables",
    "az_login",
    "original_env",
]

AZURE_CLI = "azure-cli==2.91.0"
ORIGINAL_REQUIREMENTS = ("anthropic>=0.97.0", "google-genai>=1.64.0", "python-dotenv>=1.2.1", "setuptools<82")
"""The original Ghost Agent's dependencies, as its network-ghost-agent/pyproject.toml states them."""
CLOUD = "GhostEvalLab"
_BUILD_TIMEOUT_S = 1800.0
_AZ_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class ToolEnv:
    """A built environment: its folder, its interpreter and its `az`."""

    root: Path

    @property
    def bin(self) -> Path:
        return self.root / "bin"

    @property
    def python(self) -> Path:
        return self.bin / "python"

    @property
    def az(self) -> Path:
        return self.bin / "az"


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def original_env(cache: Path = DEFAULTS.cache_dir) -> ToolEnv:
    """The azure-cli + original-agent environment in `cache` (the settings' `cache_dir`: $GHOST_EVAL_CACHE, else
    $XDG_CACHE_HOME/ghost-eval), built once under a lock; a build that did not finish (no
    `.complete` marker) is removed and redone, so a crash or a concurrent build never leaves a half-built one in use."""
    requirements = [AZURE_CLI, *ORIGINAL_REQUIREMENTS]
    key = hashlib.sha256(f"{sys.version_info[:2]}\n{chr(10).join(requirements)}".encode()).hexdigest()[:12]
    base = cache
    base.mkdir(parents=True, exist_ok=True)
    env = ToolEnv(base / f"original-env-{key}")
    done = env.root / ".complete"
    if done.exists():
        return env
    with _locked(base / f".original-env-{key}.lock"):
        if done.exists():
            return env
        shutil.rmtree(env.root, ignore_errors=True)
        steps = [
            [sys.executable, "-m", "venv", str(env.root)],
            [str(env.python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *requirements],
        ]
        for step in steps:
            try:
                proc = subprocess.run(step, capture_output=True, text=True, timeout=_BUILD_TIMEOUT_S, check=False)
            except subprocess.TimeoutExpired:
                raise LabError(f"building {env.root} timed out after {_BUILD_TIMEOUT_S:g} s: {' '.join(step)}") from None
            if proc.returncode != 0:
                tail = " | ".join((proc.stderr or proc.stdout).strip().splitlines()[-3:])
                raise LabError(
                    f"cannot build the azure-cli environment {env.root} ({' '.join(step[1:4])} exited {proc.returncode}): "
                    f"{tail}. It needs PyPI (pip's index) and about 600 MB; set GHOST_EVAL_CACHE to build it elsewhere."
                )
        done.write_text("\n".join(requirements) + "\n", encoding="utf-8")
    return env


def az_environment(state_dir: Path, env: ToolEnv) -> dict[str, str]:
    """Variables under which `az` (and anything it starts) talks to this lab only: HTTPS through the lab's proxy,
    which brings `<account>.blob.core.windows.net` to the emulator and lets every other host through (`proxy.py`)."""
    layout = LabLayout(state_dir)
    inherited = dict(os.environ)  # a child's environment: this process's, passed on
    try:
        proxy = str(json.loads((layout.arm_dir / ENDPOINT_NAME).read_text(encoding="utf-8"))["proxy"])
    except (OSError, ValueError, KeyError):
        proxy = ""  # a lab that is not up: `az` fails on its own, naming the endpoint it cannot reach
    no_proxy = ",".join(filter(None, ("127.0.0.1", "localhost", inherited.get("NO_PROXY"))))
    return {
        **inherited,
        **({"HTTPS_PROXY": proxy, "https_proxy": proxy, "NO_PROXY": no_proxy, "no_proxy": no_proxy} if proxy else {}),
        "PATH": f"{env.bin}{os.pathsep}{inherited.get('PATH', '')}",
        **az_variables(state_dir / "az", layout.arm_dir / "ca.pem"),
    }


def az_variables(config_dir: Path, ca_bundle: Path) -> dict[str, str]:
    """The CLI's own settings: the lab's profile folder, the emulator's CA, nothing sent to Microsoft."""
    return {
        "AZURE_CONFIG_DIR": str(config_dir),
        "REQUESTS_CA_BUNDLE": str(ca_bundle),
        "AZURE_CORE_INSTANCE_DISCOVERY": "false",
        "AZURE_CORE_COLLECT_TELEMETRY": "false",
        "AZURE_CORE_SURVEY_MESSAGE": "false",
        "AZURE_CORE_NO_COLOR": "true",
        "AZURE_EXTENSION_USE_DYNAMIC_INSTALL": "no",
    }


def az(state_dir: Path, args: Sequence[str], env: ToolEnv) -> subprocess.CompletedProcess[str]:
    """One `az` command against the lab with the CLI of `env` (signed in first if this lab's profile is not)."""
    az_login(state_dir, env)
    return _az(state_dir, env, args)


def _az(state_dir: Path, env: ToolEnv, args: Sequence[str]) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            [str(env.az), *args],
            capture_output=True,
            text=True,
            env=az_environment(state_dir, env),
            timeout=_AZ_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise LabError(f"az {' '.join(args[:4])} did not finish within {_AZ_TIMEOUT_S:g} s") from None


def az_login(state_dir: Path, env: ToolEnv) -> None:
    """Register the lab's cloud and sign its service principal in, once per lab (the profile goes with the lab)."""
    layout = LabLayout(state_dir)
    profile = state_dir / "az"
    with _locked(state_dir / ".az.lock"):
        if (profile / "azureProfile.json").exists() and (profile / ".ghost-eval-signed-in").exists():
            return
        try:
            config = json.loads((layout.arm_dir / CONFIG_NAME).read_text(encoding="utf-8"))
            endpoint = json.loads((layout.arm_dir / "endpoint.json").read_text(encoding="utf-8"))["url"]
        except (OSError, ValueError, KeyError) as exc:
            raise LabError(f"the lab in {state_dir} is not up (its emulator config cannot be read: {exc})") from None
        profile.mkdir(mode=0o700, exist_ok=True)
        steps = [
            ["cloud", "register", "--name", CLOUD, "--endpoint-resource-manager", endpoint],
            ["cloud", "set", "--name", CLOUD],
            ["login", "--service-principal", "--username", SP_CLIENT_ID, f"--password={config['client_secret']}",
             "--tenant", TENANT_ID, "--output", "none"],
            ["account", "set", "--subscription", SUBSCRIPTION_ID],
        ]  # fmt: skip
        for step in steps:
            if step[:2] == ["cloud", "register"] and CLOUD in _az(state_dir, env, ["cloud", "list", "-o", "tsv"]).stdout:
                continue
            proc = _az(state_dir, env, step)
            if proc.returncode != 0:
                raise LabError(f"az {' '.join(step[:2])} against the lab failed: {proc.stderr.strip()[-400:]}")
        (profile / ".ghost-eval-signed-in").touch()
