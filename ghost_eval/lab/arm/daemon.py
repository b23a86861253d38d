"""The emulator as the lab runs it: a background process that serves HTTPS, enforces its state on the fabric and
keeps that state on disk (`arm/state.json`) so `lab status` and a restarted emulator see the same subscription.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ghost_eval.lab.arm.captures import StreamFromVm
from ghost_eval.lab.arm.compute import RunInVm, SignIn
from ghost_eval.lab.arm.paths import CONFIG_NAME, ENDPOINT_NAME, STATE_NAME, write_json_atomic
from ghost_eval.lab.arm.proxy import BlobProxy
from ghost_eval.lab.arm.seed import seed
from ghost_eval.lab.arm.server import ArmServer
from ghost_eval.lab.arm.state import ArmState
from ghost_eval.lab.fabric import apply_fabric, compile_fabric
from ghost_eval.lab.layout import LOCATION, RESOURCE_GROUP, SUBSCRIPTION_ID, TENANT_ID, VMS, LabLayout
from ghost_eval.lab.sandbox import exec_in_vm, stream_from_vm

__all__ = ["RUN_COMMAND_TIMEOUT_S", "main"]

RUN_COMMAND_TIMEOUT_S = 90.0
"""Azure's own limit is 90 minutes; a lab script that runs this long is stuck."""


def _on_change(arm_dir: Path, fabric_netns: str | None) -> Any:
    def changed(state: ArmState) -> None:
        if fabric_netns:
            apply_fabric(fabric_netns, compile_fabric(state))
        write_json_atomic(arm_dir / STATE_NAME, state.dump())

    return changed


def _run_in_vm(state_dir: Path) -> RunInVm:
    """`runCommand` by the lab's own way into the VM (as the Azure VM agent runs scripts as root, without SSH)."""
    layout = LabLayout(state_dir)
    specs = {vm.name.lower(): vm for vm in layout.vms}

    def run(vm: str, script: str) -> tuple[int, str, str]:
        return exec_in_vm(layout, specs[vm.lower()], script, RUN_COMMAND_TIMEOUT_S)

    return run


def _stream_from_vm(state_dir: Path) -> StreamFromVm:
    """Packet captures by the same way in: tcpdump runs inside the VM, its pcap stream read here."""
    layout = LabLayout(state_dir)
    specs = {vm.name.lower(): vm for vm in layout.vms}
    return lambda vm, argv: stream_from_vm(layout, specs[vm.lower()], argv)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="ghost-lab-arm", description=__doc__)
    parser.add_argument("arm_dir", type=Path, help="the lab's arm/ folder (holds config.json)")
    args = parser.parse_args(argv)
    arm_dir: Path = args.arm_dir
    config = json.loads((arm_dir / CONFIG_NAME).read_text(encoding="utf-8"))
    state = ArmState(SUBSCRIPTION_ID, RESOURCE_GROUP, LOCATION)
    saved = arm_dir / STATE_NAME
    if saved.exists():
        state.load(json.loads(saved.read_text(encoding="utf-8")))
    else:
        seed(state, VMS)
    state.on_change = _on_change(arm_dir, config.get("fabric_netns"))
    state.on_change(state)
    server = ArmServer(
        state,
        config["token"],
        Path(config["cert"]),
        Path(config["key"]),
        log_file=arm_dir / "requests.jsonl",
        sign_in=SignIn(TENANT_ID, config["client_id"], config["client_secret"], config["token"]),
        run_in_vm=_run_in_vm(arm_dir.parent) if config.get("fabric_netns") else None,
        blob_root=arm_dir / "blobs",
        stream_from_vm=_stream_from_vm(arm_dir.parent) if config.get("fabric_netns") else None,
    )
    proxy = BlobProxy(server.port).start()
    write_json_atomic(arm_dir / ENDPOINT_NAME, {"pid": os.getpid(), "port": server.port, "url": server.url, "proxy": proxy.url})

    def stop(signum: int, frame: object) -> None:
        threading.Thread(target=server.stop, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
