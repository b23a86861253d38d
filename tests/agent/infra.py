"""Real local infrastructure for the agent's end-to-end tests: an sshd with a pinned host key, and an HTTPS ARM server.

The sshd is Debian's own, on 127.0.0.1 and a free high port, with its own host key and key-only login; the
agent reaches it through `ghost_eval.connect.ssh` exactly as it reaches a lab VM. The ARM server speaks the
handful of Azure Resource Manager reads the control-plane inspector makes, over HTTPS signed by a throwaway
CA, and refuses requests without the expected bearer token.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import trustme

__all__ = ["ArmServer", "LocalSshd", "arm_server", "local_sshd", "sshd_available"]

SUBSCRIPTION = "00000000-0000-4000-8000-00000000beef"
RESOURCE_GROUP = "nw-forensics-rg"
TOKEN = "lab-token-for-tests"


def sshd_available() -> bool:
    return os.geteuid() == 0 and shutil.which("sshd") is not None and shutil.which("ssh-keygen") is not None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class LocalSshd:
    port: int
    key_file: Path
    known_hosts: Path
    user: str = "root"


@contextmanager
def local_sshd(folder: Path) -> Iterator[LocalSshd]:
    """sshd -D on 127.0.0.1:<free port>, its host key pinned in a known_hosts file, a client key authorised."""
    folder.mkdir(parents=True, exist_ok=True)
    Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
    host_key, client_key = folder / "host_ed25519", folder / "client_ed25519"
    for key in (host_key, client_key):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    (folder / "authorized_keys").write_text(client_key.with_suffix(".pub").read_text())
    port = _free_port()
    config = folder / "sshd_config"
    config.write_text(
        "\n".join(
            [
                f"Port {port}",
                "ListenAddress 127.0.0.1",
                f"HostKey {host_key}",
                f"AuthorizedKeysFile {folder}/authorized_keys",
                "PasswordAuthentication no",
                "KbdInteractiveAuthentication no",
                "UsePAM no",
                "PermitRootLogin prohibit-password",
                "StrictModes no",
                f"PidFile {folder}/sshd.pid",
                "LogLevel ERROR",
            ]
        )
        + "\n"
    )
    known = folder / "known_hosts"
    known.write_text(
        f"[127.0.0.1]:{port} {host_key.with_suffix('.pub').read_text().split(' ')[0]} "
        f"{host_key.with_suffix('.pub').read_text().split(' ')[1]}\n"
    )
    proc = subprocess.Popen(["/usr/sbin/sshd", "-D", "-e", "-f", str(config)], stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            if proc.poll() is not None:
                raise RuntimeError(f"sshd exited: {proc.stderr.read().decode() if proc.stderr else ''}")
            time.sleep(0.02)
        yield LocalSshd(port=port, key_file=client_key, known_hosts=known)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _arm_resources() -> dict[str, Any]:
    """Canned state of the lab subscription: the dest NIC blocked on 8080 by an NSG rule, a UDR on the subnet."""
    base = f"/subscriptions/{SUBSCRIPTION}/resourceGroups/{RESOURCE_GROUP}/providers/Microsoft.Network"
    nsg_id = f"{base}/networkSecurityGroups/tf-dest-vm-nsg"
    rule = {
        "name": "ghost-demo-block-8080",
        "properties": {
            "priority": 150,
            "direction": "Inbound",
            "access": "Deny",
            "protocol": "Tcp",
            "sourceAddressPrefix": "*",
            "sourcePortRange": "*",
            "destinationAddressPrefix": "*",
            "destinationPortRange": "8080",
        },
    }
    return {
        "effectiveRouteTable": {
            "value": [
                {"source": "Default", "state": "Active", "addressPrefix": ["10.0.0.0/16"], "nextHopType": "VnetLocal"},
                {
                    "source": "User",
                    "state": "Active",
                    "addressPrefix": ["10.0.1.5/32"],
                    "nextHopType": "VirtualAppliance",
                    "nextHopIpAddress": ["10.0.1.100"],
                },
            ]
        },
        "effectiveNetworkSecurityGroups": {
            "value": [
                {
                    "networkSecurityGroup": {"id": nsg_id},
                    "association": {"networkInterface": {"id": f"{base}/networkInterfaces/x"}},
                    "effectiveSecurityRules": [
                        {
                            "name": "securityRules/ghost-demo-block-8080",
                            "protocol": "Tcp",
                            "destinationPortRange": "8080-8080",
                            "access": "Deny",
                            "priority": 150,
                            "direction": "Inbound",
                        }
                    ],
                }
            ]
        },
        "networkSecurityGroups/tf-dest-vm-nsg": {
            "id": nsg_id,
            "name": "tf-dest-vm-nsg",
            "location": "westeurope",
            "properties": {"securityRules": [rule]},
        },
        "routeTables": {
            "value": [
                {
                    "name": "ghost-rt",
                    "id": f"{base}/routeTables/ghost-rt",
                    "location": "westeurope",
                    "properties": {
                        "routes": [
                            {
                                "name": "to-dest",
                                "properties": {
                                    "addressPrefix": "10.0.1.5/32",
                                    "nextHopType": "VirtualAppliance",
                                    "nextHopIpAddress": "10.0.1.100",
                                },
                            }
                        ]
                    },
                }
            ]
        },
        "virtualNetworks/forensics-vnet/subnets/default": {
            "name": "default",
            "id": f"{base}/virtualNetworks/forensics-vnet/subnets/default",
            "properties": {"addressPrefix": "10.0.1.0/24", "serviceEndpoints": [{"service": "Microsoft.Sql"}]},
        },
    }


@dataclass
class ArmServer:
    url: str
    ca_file: Path
    requests: list[tuple[str, str, str]] = field(default_factory=list)
    """(method, path, authorization header) of every request."""


@contextmanager
def arm_server(folder: Path) -> Iterator[ArmServer]:
    """HTTPS on 127.0.0.1 with a trustme CA; answers the inspector's reads from `_arm_resources`."""
    folder.mkdir(parents=True, exist_ok=True)
    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1", "localhost")
    ca_file = folder / "ca.pem"
    ca.cert_pem.write_to_path(str(ca_file))
    resources = _arm_resources()
    prefix = f"/subscriptions/{SUBSCRIPTION}/resourceGroups/{RESOURCE_GROUP}/providers/Microsoft.Network/"
    state = ArmServer(url="", ca_file=ca_file)

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            return

        def _answer(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            if length:
                self.rfile.read(length)
            path = self.path.split("?", 1)[0]
            auth = self.headers.get("authorization", "")
            state.requests.append((self.command, path, auth))
            if auth != f"Bearer {TOKEN}":
                self._send(401, {"error": {"code": "AuthenticationFailed", "message": "bad bearer token"}})
                return
            rel = path.removeprefix(prefix)
            key = rel.rsplit("/", 1)[-1] if rel.startswith("networkInterfaces/") else rel
            body = resources.get(key)
            if not path.startswith(prefix) or body is None:
                self._send(404, {"error": {"code": "ResourceNotFound", "message": f"{rel} was not found"}})
                return
            self._send(200, body)

        do_GET = _answer
        do_POST = _answer

        def _send(self, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    cert.configure_cert(context)
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    state.url = f"https://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()
