"""Reading files a store holds without trusting them: only regular files, never blocking, never without bound.

A store may be damaged, copied from elsewhere or written by an attacker: a FIFO where a file should be blocks a
plain `open` forever, a link to `/dev/zero` reads forever, a huge file costs its size in memory, and a deeply
nested JSON document raises RecursionError. Every read here opens with `O_NONBLOCK` (a FIFO then cannot block),
checks with `fstat` that what was opened is a regular file, refuses one above its size limit and names the file in
each error (`RecordError`), so a caller reports it and goes on with the other files.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ghost_eval.base.errors import RecordError

__all__ = [
    "INDEX_LIMIT",
    "JSONL_LIMIT",
    "JSON_LIMIT",
    "MB",
    "TEXT_LIMIT",
    "decode_json",
    "human_size",
    "load_json",
    "read_chunks",
    "read_head",
    "read_limited",
]

MB = 1024 * 1024
JSON_LIMIT = 16 * MB
"""A JSON record (metadata, summary, result, snapshot, manifest, verdict): real ones are kilobytes."""
JSONL_LIMIT = 64 * MB
"""A shell audit or tool trace: one line per command, outputs cut by the agent."""
INDEX_LIMIT = 512 * MB
"""`run_index.json`: about 400 bytes a run, so over a million runs."""
TEXT_LIMIT = 1 * MB
"""A report or prompt is read up to this and the rest left unread: real reports are tens of kilobytes, and scoring
time grows faster than the text (a report's own text repeated to 1 MB scores in about 6 s, to 2 MB in about 15 s)."""
_CHUNK = MB


def human_size(size: int) -> str:
    """`3.2 GB`, `16 MB`, `812 bytes`: sizes as an error message shows them."""
    for unit, scale in (("GB", 1024 * MB), ("MB", MB), ("KB", 1024)):
        if size >= scale:
            return f"{size / scale:.1f}".removesuffix(".0") + f" {unit}"
    return f"{size} bytes"


def _kind(mode: int) -> str:
    kinds = (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISLNK, "a symbolic link"),
    )
    return next((name for test, name in kinds if test(mode)), "not a regular file")


def _open_regular(path: Path, follow: bool) -> tuple[int, int]:
    """An open descriptor on `path` and its size, or RecordError when it is not a regular file (or is a link and
    `follow` is False). `O_NONBLOCK`: opening a FIFO returns at once instead of waiting for a writer."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise RecordError(path, "file is missing") from None
    except OSError as exc:
        try:
            mode = os.stat(path, follow_symlinks=follow).st_mode
        except OSError:
            raise RecordError(path, f"cannot be read ({exc.strerror})") from None
        raise RecordError(path, f"is {_kind(mode)}, not a regular file; refused, not read") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise RecordError(path, f"is {_kind(info.st_mode)}, not a regular file; refused, not read")
    return fd, info.st_size


def _read(fd: int, limit: int) -> bytes:
    """At most `limit` bytes, read in chunks (a file that grows while read is still bounded)."""
    parts: list[bytes] = []
    left = limit
    while left > 0:
        chunk = os.read(fd, min(_CHUNK, left))
        if not chunk:
            break
        parts.append(chunk)
        left -= len(chunk)
    return b"".join(parts)


def read_limited(path: Path, limit: int, what: str, *, follow: bool = True) -> bytes:
    """The whole of a regular file, refused (naming its size and the limit) when larger than `limit`."""
    fd, size = _open_regular(path, follow)
    try:
        data = _read(fd, limit + 1) if size <= limit else b""
    finally:
        os.close(fd)
    if size > limit or len(data) > limit:
        shown = human_size(max(size, len(data)))
        raise RecordError(path, f"is {shown}, above the {human_size(limit)} limit for {what}; not read")
    return data


def read_head(path: Path, limit: int, *, follow: bool = False) -> tuple[bytes, int]:
    """The first `limit` bytes of a regular file and its whole size (a caller says when it was cut)."""
    fd, size = _open_regular(path, follow)
    try:
        return _read(fd, limit), size
    finally:
        os.close(fd)


def read_chunks(path: Path, *, follow: bool = False) -> Iterator[bytes]:
    """A regular file in chunks of 1 MB: hashing a file of any size in bounded memory."""
    fd, _ = _open_regular(path, follow)
    try:
        while chunk := os.read(fd, _CHUNK):
            yield chunk
    finally:
        os.close(fd)


def decode_json(data: bytes | str, path: Path | str) -> Any:
    """Parse JSON, naming the file on every failure; a UTF-8 byte order mark (Windows editors) is accepted."""
    text = data
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            bom = 3 if data.startswith(b"\xef\xbb\xbf") else 0
            raise RecordError(path, f"is not valid UTF-8 (byte {exc.start + bom})") from None
    if not text.strip():
        raise RecordError(path, "is empty")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise RecordError(path, f"is not valid JSON ({exc.msg} at line {exc.lineno})") from None
    except RecursionError:
        raise RecordError(path, f"is nested deeper than {sys.getrecursionlimit()} levels; not read") from None


def load_json(path: Path, limit: int = JSON_LIMIT, what: str = "JSON files", *, follow: bool = True) -> Any:
    """A JSON file, read under `limit` and parsed (see `read_limited` and `decode_json`)."""
    return decode_json(read_limited(path, limit, what, follow=follow), path)
