"""The Target file and the clients opened from it: strict reading, pinned host keys, robust command runs."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
import yaml

from ghost_eval.base.errors import RecordError
from ghost_eval.connect.azure import StaticTokenCredential
from ghost_eval.connect.ssh import ssh_connect, ssh_run
from ghost_eval.connect.target import Target, TargetError, load_target
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
