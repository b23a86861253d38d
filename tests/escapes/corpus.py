"""The escape corpus (tests/fixtures/escapes/attempts.yaml), its placeholders filled for this host, and a listener on
every host address that records whatever a VM manages to send it."""

from __future__ import annotations

import socket
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import yaml

import ghost_eval

__all__ = ["ATTEMPTS", "Attempt", "HostListener", "host_listener", "leftover_markers"]

_FILE = Path(__file__).parents[1] / "fixtures" / "escapes" / "attempts.yaml"


@dataclass(frozen=True)
class Attempt:
    id: str
    cls: str
    commands: tuple[str, ...]
    case: str = "v"
    host_paths: tuple[str, ...] = ()
    resolved: bool | None = None

    def filled(self, port: int) -> Attempt:
        values = {"package": str(Path(ghost_eval.__file__).parent), "prefix": sys.prefix, "port": str(port)}

        def fill(text: str) -> str:
            for key, value in values.items():
                text = text.replace("{" + key + "}", value)
            return text

        return Attempt(
            self.id, self.cls, tuple(map(fill, self.commands)), self.case, tuple(map(fill, self.host_paths)), self.resolved
        )


def _load() -> list[Attempt]:
    return [
        Attempt(
            id=item["id"],
            cls=item["class"],
            commands=tuple(item["commands"]),
            case=item.get("case", "v"),
            host_paths=tuple(item.get("host_paths", ())),
            resolved=item.get("resolved"),
        )
        for item in yaml.safe_load(_FILE.read_text(encoding="utf-8"))
    ]


ATTEMPTS = _load()


@dataclass
class HostListener:
    port: int
    received: list[bytes] = field(default_factory=list)


@contextmanager
def host_listener() -> Iterator[HostListener]:
    """A TCP listener on 0.0.0.0 of the host, as any host service may be: a VM must not reach it."""
    server = socket.create_server(("0.0.0.0", 0))
    server.settimeout(0.2)
    listener = HostListener(server.getsockname()[1])
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(1)
                try:
                    listener.received.append(conn.recv(4096) or b"(connected)")
                except OSError:
                    listener.received.append(b"(connected)")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener
    finally:
        stop.set()
        thread.join(2)
        server.close()


def leftover_markers(attempts: list[Attempt]) -> list[str]:
    """Marker paths that exist on the host (each removed, so a failing run cleans up after itself)."""
    found = []
    for attempt in attempts:
        for path in map(Path, attempt.host_paths):
            if path.exists() or path.is_symlink():
                found.append(f"{attempt.id}: {path}")
                if path.is_dir():
                    for child in path.iterdir():
                        child.unlink()
                    path.rmdir()
                else:
                    path.unlink()
    return found
