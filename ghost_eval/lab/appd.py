"""`lab-appd`: stand-ins for the applications the cases talk about (web 8080, PostgreSQL 5432, Redis 6379, iperf3 5001),
and for the Internet's web servers (80, 443) in the lab's Internet namespace.

Each port accepts TCP connections, answers with a short HTTP response naming the service and then takes in
whatever the client still sends until it closes (a bulk transfer), so "the service is up and listening" is true
on tf-dest-vm and a connection test from tf-source-vm shows whether the network lets it through. It speaks no
real protocol beyond that.
"""

from __future__ import annotations

import argparse
import contextlib
import socket
import threading
from collections.abc import Sequence

from ghost_eval.lab.reconciler import log

__all__ = ["SERVICE_NAMES", "main"]

SERVICE_NAMES = {80: "http", 443: "https", 5001: "iperf3", 5432: "postgresql", 6379: "redis", 8080: "web"}
_NAME = "lab-appd"
_IDLE_S = 30.0


def _answer(conn: socket.socket, port: int) -> None:
    with conn:
        conn.settimeout(0.5)
        with contextlib.suppress(OSError):
            conn.recv(4096)
        body = f"{SERVICE_NAMES.get(port, 'app')} on port {port}: ok\n".encode()
        with contextlib.suppress(OSError):
            conn.sendall(b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
            conn.settimeout(_IDLE_S)
            while conn.recv(65536):
                pass  # a bulk sender keeps sending: take everything until it closes


def _serve_port(port: int) -> None:
    srv = socket.create_server(("0.0.0.0", port), reuse_port=False, backlog=64)
    while True:
        conn, _ = srv.accept()
        threading.Thread(target=_answer, args=(conn, port), daemon=True).start()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=_NAME, description=__doc__)
    parser.add_argument("--port", type=int, action="append", required=True)
    args = parser.parse_args(argv)
    threads = [threading.Thread(target=_serve_port, args=(p,), daemon=True) for p in args.port]
    for t in threads:
        t.start()
    log(_NAME, "listening on " + ", ".join(str(p) for p in args.port))
    for t in threads:
        t.join()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
