"""Fixtures for the agent tests: a target made of a real local sshd and an HTTPS ARM server, and vendor settings."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ghost_eval.connect.target import SshHost, Target
from tests.agent.infra import RESOURCE_GROUP, SUBSCRIPTION, TOKEN, ArmServer, LocalSshd, arm_server, local_sshd, sshd_available
from tests.agent.vendors import unreachable_target


@pytest.fixture(scope="session")
def sshd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalSshd]:
    if not sshd_available():
        pytest.skip("needs root and openssh-server (sshd, ssh-keygen)")
    with local_sshd(tmp_path_factory.mktemp("sshd")) as server:
        yield server


@pytest.fixture(scope="session")
def arm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ArmServer]:
    with arm_server(tmp_path_factory.mktemp("arm")) as server:
        yield server


@pytest.fixture
def target(sshd: LocalSshd, arm: ArmServer) -> Target:
    hosts = {
        name: SshHost(
            name=name,
            address="127.0.0.1",
            port=sshd.port,
            user=sshd.user,
            key_file=str(sshd.key_file),
            known_hosts_file=str(sshd.known_hosts),
        )
        for name in ("tf-source-vm", "tf-dest-vm")
    }
    return Target(
        name="local",
        subscription_id=SUBSCRIPTION,
        resource_group=RESOURCE_GROUP,
        nics={"tf-source-vm": "tf-source-vm-nic", "tf-dest-vm": "tf-dest-vm-nic"},
        nsgs={"tf-source-vm": "tf-source-vm-nsg", "tf-dest-vm": "tf-dest-vm-nsg"},
        arm_endpoint=arm.url,
        ca_bundle=str(arm.ca_file),
        credential="static_token",
        token=TOKEN,
        hosts=hosts,
    )


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    """A file path the tests expect a mutating command to create, or not."""
    return tmp_path / "mutated-by-agent"


@pytest.fixture
def offline_target(tmp_path: Path) -> Target:
    """A target nothing listens for: enough for runs that never open SSH or call Azure."""
    return unreachable_target(tmp_path)
