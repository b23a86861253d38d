"""SSH keys of a lab: the client key the agent logs in with, one host key per VM, and the known_hosts that pins them."""

from __future__ import annotations

from pathlib import Path

from ghost_eval.lab.shell import run

__all__ = ["generate_key", "known_hosts_line"]


def generate_key(path: Path, comment: str) -> Path:
    """An ed25519 key pair at `path` / `path.pub` (no passphrase); returns the private key path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path)])
    return path


def known_hosts_line(address: str, port: int, host_key: Path) -> str:
    """The known_hosts entry pinning a host key (`[addr]:port` when the port is not 22)."""
    key_type, key_b64 = Path(f"{host_key}.pub").read_text().split()[:2]
    where = address if port == 22 else f"[{address}]:{port}"
    return f"{where} {key_type} {key_b64}\n"
