"""The Target file and the clients opened from it: strict reading, pinned host keys, robust command runs."""

from __future__ import annotations

import json
import socket
import socketserver
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import paramiko
import pytest
import yaml
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat

from ghost_eval.base.errors import RecordError
from ghost_eval.connect.azure import StaticTokenCredential
from ghost_eval.connect.ssh import ssh_connect, ssh_run
from ghost_eval.connect.target import SshHost, Target, TargetError, load_target
from tests.lab.helpers import Lab

_TARGET = {
    "name": "staging",
    "subscription_id": "00000000-0000-0000-0000-000000000001",
    "resource_group": "nw-forensics-rg",
    "nics": {"tf-dest-vm": "tf-dest-vm-nic"},
    "nsgs": {"tf-dest-vm": "tf-dest-vm-nsg"},
    "hosts": {
        "tf-dest-vm": {
            "name": "tf-dest-vm",
            "address": "10.9.0.5",
            "port": 2222,
            "user": "azureuser",
            "key_file": "keys/id_ed25519",
            "known_hosts_file": "~/known_hosts",
        }
    },
}


def test_yaml_and_json_targets_load_with_paths_resolved(tmp_path: Path) -> None:
    (tmp_path / "env.yaml").write_text(yaml.safe_dump(_TARGET))
    (tmp_path / "env.json").write_text(json.dumps(_TARGET))
    from_yaml, from_json = load_target(tmp_path / "env.yaml"), load_target(tmp_path / "env.json")
    assert from_yaml == from_json
    host = from_yaml.hosts["tf-dest-vm"]
    assert host.key_file == str(tmp_path / "keys" / "id_ed25519")
    assert host.known_hosts_file == str(Path.home() / "known_hosts")
    assert (from_yaml.credential, from_yaml.arm_endpoint, from_yaml.vnet) == ("default", None, "forensics-vnet")


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        (
            {
                "hosts": {
                    "tf-dest-vm": {
                        "name": "tf-dest-vm",
                        "address": "x",
                        "port": "ssh",
                        "user": "u",
                        "key_file": "k",
                        "known_hosts_file": "h",
                    }
                }
            },
            "hosts.tf-dest-vm.port",
            "integer",
        ),
        ({"credential": "static_token"}, "token", "required"),
        ({"credential": "password"}, "credential", "static_token"),
        (
            {"hosts": {"dest": {"name": "tf-dest-vm", "address": "x", "user": "u", "key_file": "k", "known_hosts_file": "h"}}},
            "hosts.dest.name",
            "differs",
        ),
    ],
)
def test_bad_targets_name_the_file_and_field(tmp_path: Path, change: dict[str, object], field: str, message: str) -> None:
    path = tmp_path / "env.yaml"
    path.write_text(yaml.safe_dump({**_TARGET, **change}))
    with pytest.raises(RecordError, match=message) as info:
        load_target(path)
    assert (info.value.path, info.value.field) == (str(path), field)


def test_unreadable_targets_say_why(tmp_path: Path) -> None:
    with pytest.raises(RecordError, match="file is missing"):
        load_target(tmp_path / "absent.yaml")
    (tmp_path / "broken.json").write_text("{")
    with pytest.raises(RecordError, match="not valid JSON"):
        load_target(tmp_path / "broken.json")


def test_static_token_credential_presents_the_token() -> None:
    token = StaticTokenCredential("lab-token").get_token("https://management.azure.com/.default")
    assert token.token == "lab-token" and token.expires_on > 0


def test_ssh_connect_refuses_before_any_network_when_files_are_missing(tmp_path: Path) -> None:
    target = Target.model_validate(_TARGET)
    host = target.hosts["tf-dest-vm"].model_copy(update={"known_hosts_file": str(tmp_path / "none")})
    with pytest.raises(TargetError, match=r"known_hosts file .* is missing"):
        ssh_connect(host)


@pytest.mark.slow
@pytest.mark.xdist_group("lab")
def test_ssh_connect_says_when_a_host_is_unreachable(lab: Lab) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    host = lab.target.hosts["tf-dest-vm"].model_copy(update={"address": "127.0.0.1", "port": closed_port})
    with pytest.raises(TargetError, match=rf"tf-dest-vm at 127.0.0.1:{closed_port}: unreachable"):
        ssh_connect(host, timeout=2)


@pytest.mark.slow
@pytest.mark.xdist_group("lab")
def test_ssh_run_drains_both_streams_and_keeps_the_exit_code(lab: Lab) -> None:
    client = ssh_connect(lab.target.hosts["tf-source-vm"])
    try:
        code, out, err = ssh_run(
            client, "head -c 3000000 /dev/zero | tr '\\0' o; head -c 3000000 /dev/zero | tr '\\0' e >&2; exit 3", timeout=30
        )
        assert (code, len(out), len(err), set(out), set(err)) == (3, 3000000, 3000000, {"o"}, {"e"})
        with pytest.raises(TargetError, match=r"timed out after 0\.5 s: sleep 5"):
            ssh_run(client, "sleep 5", timeout=0.5)
        assert ssh_run(client, "echo still usable", timeout=5) == (0, "still usable\n", "")
    finally:
        client.close()


@contextmanager
def _stalling_front(stalls: int, behind: tuple[str, int] | None) -> Iterator[tuple[int, list[int]]]:
    """A TCP front whose first `stalls` connections never say a word (an sshd too loaded to send its banner) and whose
    later ones are relayed to the real sshd `behind`; yields its port and the count of connections it took."""
    taken = [0]

    class Handler(socketserver.BaseRequestHandler):
        def handle(self) -> None:
            taken[0] += 1
            if taken[0] <= stalls or behind is None:
                self.request.recv(1 << 16)  # until the client gives up and closes
                return
            with socket.create_connection(behind) as upstream:
                pumps = [
                    threading.Thread(target=_pump, args=(self.request, upstream), daemon=True),
                    threading.Thread(target=_pump, args=(upstream, self.request), daemon=True),
                ]
                for pump in pumps:
                    pump.start()
                for pump in pumps:
                    pump.join()

    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_address[1], taken
    finally:
        server.shutdown()
        server.server_close()


def _pump(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(1 << 16):
            sink.sendall(data)
        sink.shutdown(socket.SHUT_WR)
    except OSError:
        return


def test_ssh_connect_tries_once_more_when_the_banner_never_comes_then_says_so(tmp_path: Path) -> None:
    (tmp_path / "key").write_text("not read before the banner")
    (tmp_path / "known_hosts").write_text("")
    with _stalling_front(stalls=5, behind=None) as (port, taken):
        host = SshHost(
            name="tf-dest-vm", address="127.0.0.1", port=port, user="azureuser",
            key_file=str(tmp_path / "key"), known_hosts_file=str(tmp_path / "known_hosts"),
        )  # fmt: skip
        with pytest.raises(TargetError, match=r"tf-dest-vm at 127.0.0.1:\d+: SSH failed \(Error reading SSH protocol banner"):
            ssh_connect(host, timeout=0.5)
    assert taken[0] == 2


def _behind_front(lab: Lab, port: int, tmp_path: Path) -> SshHost:
    """The lab's tf-source-vm as reached through the front: its pinned host key, filed under the front's address."""
    real = lab.target.hosts["tf-source-vm"]
    pinned = paramiko.HostKeys(real.known_hosts_file)
    entry = pinned.lookup(real.address if real.port == 22 else f"[{real.address}]:{real.port}")
    assert entry, "the lab pins tf-source-vm's host key"
    known = paramiko.HostKeys()
    for kind, key in entry.items():
        known.add(f"[127.0.0.1]:{port}", kind, key)
    known.save(str(tmp_path / "known_hosts"))
    return real.model_copy(update={"address": "127.0.0.1", "port": port, "known_hosts_file": str(tmp_path / "known_hosts")})


@pytest.mark.slow
@pytest.mark.xdist_group("lab")
def test_ssh_connect_gets_through_a_handshake_that_stalled_once_but_not_a_refused_key(lab: Lab, tmp_path: Path) -> None:
    real = lab.target.hosts["tf-source-vm"]
    with _stalling_front(stalls=1, behind=(real.address, real.port)) as (port, taken):
        client = ssh_connect(_behind_front(lab, port, tmp_path), timeout=1)
        try:
            assert ssh_run(client, "hostname", timeout=10) == (0, "tf-source-vm\n", "")
        finally:
            client.close()
        assert taken[0] == 2
    stranger = tmp_path / "stranger_key"  # a fresh key sshd has never seen: refused the same way every time
    stranger.write_bytes(Ed25519PrivateKey.generate().private_bytes(Encoding.PEM, PrivateFormat.OpenSSH, NoEncryption()))
    with _stalling_front(stalls=0, behind=(real.address, real.port)) as (port, taken):
        host = _behind_front(lab, port, tmp_path).model_copy(update={"key_file": str(stranger)})
        with pytest.raises(TargetError, match=r"SSH failed \(Authentication failed"):
            ssh_connect(host, timeout=5)
        assert taken[0] == 1
