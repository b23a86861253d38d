"""The lab's HTTPS proxy: how `az` on the host reaches the storage accounts' blob endpoints.

`az storage …` and the Blob SDK address `https://<account>.blob.core.windows.net`, a name only Azure's DNS resolves.
The lab's `az` runs with `HTTPS_PROXY` set to this proxy (`azcli.az_environment`), which tunnels a CONNECT to a blob
endpoint of the lab's cloud to the emulator (TLS end to end: the emulator's certificate, issued by the lab's CA,
names `*.blob.core.windows.net`, and only the lab's `az` trusts that CA) and every other CONNECT to the host it
names, as if there were no proxy. It listens on 127.0.0.1 only; the lab's VMs cannot reach the host.
"""

from __future__ import annotations

import re
import select
import socket
import socketserver
import threading
from io import BufferedIOBase

__all__ = ["BLOB_HOST", "BlobProxy"]

BLOB_HOST = re.compile(r"^(?P<account>[a-z0-9]{3,24})\.blob\.core\.windows\.net$", re.I)
_CONNECT_TIMEOUT_S = 10.0


def _pump(a: socket.socket, b: socket.socket) -> None:
    """Copy bytes both ways until either side closes."""
    peers = {a: b, b: a}
    while True:
        ready, _, _ = select.select(list(peers), [], [], 60)
        if not ready:
            return
        for sock in ready:
            data = sock.recv(65536)
            if not data:
                return
            peers[sock].sendall(data)


class BlobProxy:
    """A CONNECT-only proxy on 127.0.0.1; blob endpoints go to `emulator_port`, other hosts straight through."""

    def __init__(self, emulator_port: int) -> None:
        proxy = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                proxy._tunnel(self.request, self.rfile)

        self.emulator_port = emulator_port
        self._server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> BlobProxy:
        self._thread = threading.Thread(target=self._server.serve_forever, name="blob-proxy", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _tunnel(self, client: socket.socket, reader: BufferedIOBase) -> None:
        """`reader` is the client socket's buffered reader: the request line and headers come through it."""
        request = reader.readline(8192).decode("latin-1").split()
        while reader.readline(8192) not in (b"\r\n", b"\n", b""):
            pass
        if len(request) != 3 or request[0].upper() != "CONNECT":
            client.sendall(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
            return
        host, _, port = request[1].rpartition(":")
        blob = BLOB_HOST.match(host) is not None
        try:
            upstream = socket.create_connection(
                ("127.0.0.1", self.emulator_port) if blob else (host, int(port)), timeout=_CONNECT_TIMEOUT_S
            )
        except (OSError, ValueError) as exc:
            client.sendall(f"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nX-Reason: {type(exc).__name__}\r\n\r\n".encode())
            return
        upstream.settimeout(None)
        with upstream:
            client.sendall(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            _pump(client, upstream)
