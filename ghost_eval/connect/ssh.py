"""SSH to a target's VMs with paramiko: key-only login, host keys verified against the pinned known_hosts file and
never accepted on first sight, and one command at a time with both output streams drained."""

from __future__ import annotations

import time
from pathlib import Path

import paramiko
from tenacity import Retrying, retry_if_exception, stop_after_attempt

from ghost_eval.connect.target import SshHost, TargetError

__all__ = ["CommandTimedOut", "ssh_connect", "ssh_run"]


class CommandTimedOut(TargetError):
    """The command ran past its time; the SSH session itself may be fine (the command may still be running)."""


def _where(host: SshHost) -> str:
    return f"{host.name} at {host.address}:{host.port}"


def ssh_connect(host: SshHost, timeout: float = 10) -> paramiko.SSHClient:
    """Open an SSH session with key-only login; the host key must already be in the pinned known_hosts file."""
    known = Path(host.known_hosts_file)
    if not known.is_file():
        raise TargetError(f"{_where(host)}: known_hosts file {known} is missing (host keys are never auto-accepted)")
    if not Path(host.key_file).is_file():
        raise TargetError(f"{_where(host)}: private key {host.key_file} is missing")
    try:
        for attempt in Retrying(stop=stop_after_attempt(2), retry=retry_if_exception(_handshake_stalled), reraise=True):
            with attempt:
                return _connect(host, known, timeout)
    except paramiko.BadHostKeyException as exc:
        raise TargetError(f"{_where(host)}: host key does not match {known} ({exc})") from None
    except paramiko.SSHException as exc:
        if "not found in known_hosts" in str(exc):
            raise TargetError(f"{_where(host)}: host key is not in {known}; it is never accepted unseen") from None
        raise TargetError(f"{_where(host)}: SSH failed ({exc})") from None
    except TimeoutError:
        raise TargetError(f"{_where(host)}: unreachable (no answer within {timeout:g} s)") from None
    except OSError as exc:
        raise TargetError(f"{_where(host)}: unreachable ({exc.strerror or exc})") from None
    raise AssertionError("unreachable: Retrying either returns or re-raises")


def _handshake_stalled(exc: BaseException) -> bool:
    """A banner or login that timed out after the TCP connection was made: sshd was slow (a loaded machine), not wrong,
    so one more try is worth it. A refused key, a bad host key or an unreachable address fail the same way twice."""
    if not isinstance(exc, paramiko.SSHException):
        return False  # paramiko says "Authentication timeout." with the same exception class as a refused key
    return str(exc).startswith(("Authentication timeout", "Error reading SSH protocol banner"))


def _connect(host: SshHost, known: Path, timeout: float) -> paramiko.SSHClient:
    client = paramiko.SSHClient()
    client.load_host_keys(str(known))
    client.set_missing_host_key_policy(paramiko.RejectPolicy())
    try:
        client.connect(
            host.address,
            port=host.port,
            username=host.user,
            key_filename=host.key_file,
            timeout=timeout,
            banner_timeout=timeout,
            auth_timeout=timeout,
            look_for_keys=False,
            allow_agent=False,
        )
    except BaseException:
        client.close()
        raise
    return client


def ssh_run(client: paramiko.SSHClient, command: str, timeout: float) -> tuple[int, str, str]:
    """Run one command and return (exit code, stdout, stderr); both streams are drained together so neither blocks."""
    transport = client.get_transport()
    if transport is None or not transport.is_active():
        raise TargetError("SSH session is closed")
    channel = transport.open_session(timeout=timeout)
    deadline = time.monotonic() + timeout
    out: list[bytes] = []
    err: list[bytes] = []
    try:
        channel.exec_command(command)
        while True:
            busy = False
            if channel.recv_ready():
                out.append(channel.recv(65536))
                busy = True
            if channel.recv_stderr_ready():
                err.append(channel.recv_stderr(65536))
                busy = True
            drained = channel.eof_received or channel.closed
            if drained and channel.exit_status_ready() and not channel.recv_ready() and not channel.recv_stderr_ready():
                break  # EOF comes after the last byte of both streams; the exit status may come before or after it
            if time.monotonic() > deadline:
                raise CommandTimedOut(f"command timed out after {timeout:g} s: {command}")
            if not busy:
                time.sleep(0.01)
        code = channel.recv_exit_status()
    finally:
        channel.close()
    return code, b"".join(out).decode("utf-8", "replace"), b"".join(err).decode("utf-8", "replace")
