"""The classic pcap file format (what tcpdump writes and Network Watcher stores as `.cap`): records and a cut at a
record boundary, so a capture bounded by bytes stays a file every reader opens."""

from __future__ import annotations

import struct
from dataclasses import dataclass

__all__ = ["GLOBAL_HEADER_SIZE", "PcapError", "PcapRecord", "cut", "read_pcap"]

GLOBAL_HEADER_SIZE = 24
_RECORD_HEADER_SIZE = 16
_MAGICS = {b"\xd4\xc3\xb2\xa1": "<", b"\xa1\xb2\xc3\xd4": ">", b"\x4d\x3c\xb2\xa1": "<", b"\xa1\xb2\x3c\x4d": ">"}


class PcapError(ValueError):
    """Bytes that are not a pcap file (or are cut inside a record)."""


@dataclass(frozen=True)
class PcapRecord:
    seconds: int
    fraction: int
    original_length: int
    data: bytes


def _order(data: bytes) -> str:
    if len(data) < GLOBAL_HEADER_SIZE or data[:4] not in _MAGICS:
        raise PcapError(f"not a pcap file: {len(data)} bytes, magic {data[:4].hex() or 'missing'}")
    return _MAGICS[data[:4]]


def _spans(data: bytes, order: str) -> list[tuple[int, int]]:
    """(start, end) of each complete record; stops at the first incomplete one."""
    spans, at = [], GLOBAL_HEADER_SIZE
    while at + _RECORD_HEADER_SIZE <= len(data):
        (included,) = struct.unpack_from(f"{order}I", data, at + 8)
        end = at + _RECORD_HEADER_SIZE + included
        if end > len(data):
            break
        spans.append((at, end))
        at = end
    return spans


def read_pcap(data: bytes) -> tuple[int, list[PcapRecord]]:
    """The link type and the records of a whole pcap file; a truncated record is an error."""
    order = _order(data)
    link_type = struct.unpack_from(f"{order}I", data, 20)[0]
    spans = _spans(data, order)
    end = spans[-1][1] if spans else GLOBAL_HEADER_SIZE
    if end != len(data):
        raise PcapError(f"{len(data) - end} bytes after the last complete record (at byte {end})")
    records = []
    for start, stop in spans:
        seconds, fraction, _included, original = struct.unpack_from(f"{order}IIII", data, start)
        records.append(PcapRecord(seconds, fraction, original, data[start + _RECORD_HEADER_SIZE : stop]))
    return link_type, records


def cut(data: bytes, limit: int) -> bytes:
    """The longest prefix of a pcap stream that ends on a record boundary and is at most `limit` bytes (the global
    header always kept); also drops a record still being written at the end of a stream."""
    order = _order(data)
    end = GLOBAL_HEADER_SIZE
    for _start, stop in _spans(data, order):
        if stop > limit:
            break
        end = stop
    return data[:end]
