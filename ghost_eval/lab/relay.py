"""The only ways out of the external agent's sandbox: listeners on its loopback that the host answers.

The agent's network namespace (`agentbox`) has no route to the host. Each endpoint it needs gets a listener on
127.0.0.1 inside that namespace, at the same port the host's endpoint uses (so URLs and certificates need no
change): the ARM emulator's HTTPS port, the scripted model's port. The socket is made by a short-lived thread that
joins the namespace (a thread's network namespace is its own; the process's other threads never change), and is
served by ordinary threads in the host's namespace, which connect to that one host endpoint and copy bytes.

A real model's API is reached through `Tunnel`: an HTTP CONNECT proxy whose listener is in the namespace and which
opens a connection only to an allowed `host:port` (the vendor's API name on 443), so TLS runs end to end between the
agent and the vendor and no other address on the host or the Internet is reachable. It is CONNECT only, about forty
lines: a general proxy library would bring plain-HTTP forwarding and configuration this needs to rule out.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import socket
import socketserver
import threading
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType

from ghost_eval.lab.errors import LabError

__all__ = ["Relay", "listen_in_netns"]

_CLONE_NEWNET = 0x40000000
_HEAD_LIMIT = 8192
_CONNECT_TIMEOUT_S = 15.0
_POLL_S = 0.05
"""How often a listener's loop checks for shutdown (the default 0.5 s would add up to that to every run's end)."""


def listen_in_netns(netns: str, port: int) -> socket.socket:
    """A TCP socket listening on 127.0.0.1:`port` inside the named network namespace."""
    made: list[socket.socket] = []
    failed: list[str] = []

    def make() -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        fd = os.open(Path("/run/netns") / netns, os.O_RDONLY | os.O_CLOEXEC)
        try:
            if libc.setns(fd, _CLONE_NEWNET) != 0:
                failed.append(f"setns {netns}: {os.strerror(ctypes.get_errno())}")
                return
        finally:
            os.close(fd)
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(("127.0.0.1", port))
            sock.listen(64)
        except OSError as exc:
            sock.close()
            failed.append(f"listen on 127.0.0.1:{port} in {netns}: {exc.strerror}")
            return
        made.append(sock)

    thread = threading.Thread(target=make, name=f"join-{netns}")  # ends in that namespace; nothing else runs on it
    thread.start()
    thread.join()
    if failed or not made:
        raise LabError(failed[0] if failed else f"no listener made in {netns}")
    return made[0]


def _copy(source: socket.socket, sink: socket.socket) -> None:
    """One direction of a connection, until the source closes; then the sink is told no more is coming."""
    with contextlib.suppress(OSError):
        while data := source.recv(65536):
            sink.sendall(data)
    with contextlib.suppress(OSError):
        sink.shutdown(socket.SHUT_WR)


def _splice(client: socket.socket, upstream: socket.socket) -> None:
    back = threading.Thread(target=_copy, args=(upstream, client), daemon=True)
    back.start()
    _copy(client, upstream)
    back.join()
    upstream.close()


class _Server(socketserver.ThreadingTCPServer):
    """A threading server on a socket made elsewhere (in the agent's namespace)."""

    daemon_threads = True

    def __init__(self, sock: socket.socket, handler: type[socketserver.BaseRequestHandler], allowed: frozenset[str]):
        super().__init__(sock.getsockname(), handler, bind_and_activate=False)
        self.socket.close()
        self.socket = sock
        self.allowed = allowed
        """`host:port` this listener may reach: one for a forward, the vendor's names for a tunnel."""


class _Forward(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        assert isinstance(self.server, _Server)
        host, port = next(iter(self.server.allowed)).rsplit(":", 1)
        try:
            upstream = socket.create_connection((host, int(port)), timeout=_CONNECT_TIMEOUT_S)
        except OSError:
            return
        upstream.settimeout(None)
        _splice(self.request, upstream)


class _Tunnel(socketserver.BaseRequestHandler):
    """`CONNECT host:port` to an allowed name opens the tunnel; anything else gets 403 (or 405) and is closed."""

    def handle(self) -> None:
        assert isinstance(self.server, _Server)
        head = b""
        while b"\r\n\r\n" not in head and len(head) < _HEAD_LIMIT:
            chunk = self.request.recv(_HEAD_LIMIT)
            if not chunk:
                return
            head += chunk
        line, _, rest = head.partition(b"\r\n")
        words = line.decode("latin-1").split()
        if len(words) != 3 or words[0] != "CONNECT":
            self.request.sendall(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
            return
        authority = words[1].lower()
        if authority not in self.server.allowed:
            self.request.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
            return
        host, port = authority.rsplit(":", 1)
        try:
            upstream = socket.create_connection((host, int(port)), timeout=_CONNECT_TIMEOUT_S)
        except OSError:
            self.request.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
            return
        upstream.settimeout(None)
        self.request.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        if body := rest.partition(b"\r\n\r\n")[2]:
            upstream.sendall(body)
        _splice(self.request, upstream)


class Relay:
    """Listeners in `netns`: each port in `forwards` reaches the host's 127.0.0.1 at that port; `tunnel_port`, when
    set, is a CONNECT proxy to the `egress` names (`host:port`). Closing stops them all."""

    def __init__(self, netns: str, forwards: Iterable[int], tunnel_port: int | None = None, egress: Iterable[str] = ()):
        self._servers: list[_Server] = []
        try:
            for port in forwards:
                self._add(listen_in_netns(netns, port), _Forward, frozenset({f"127.0.0.1:{port}"}))
            if tunnel_port is not None:
                self._add(listen_in_netns(netns, tunnel_port), _Tunnel, frozenset(e.lower() for e in egress))
        except BaseException:
            self.close()
            raise

    def _add(self, sock: socket.socket, handler: type[socketserver.BaseRequestHandler], allowed: frozenset[str]) -> None:
        server = _Server(sock, handler, allowed)
        self._servers.append(server)
        serve = threading.Thread(target=server.serve_forever, args=(_POLL_S,), name=f"relay-{sock.getsockname()[1]}", daemon=True)
        serve.start()

    def close(self) -> None:
        for server in self._servers:
            server.shutdown()
            server.server_close()
        self._servers.clear()

    def __enter__(self) -> Relay:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        self.close()
