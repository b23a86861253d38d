"""Secret redaction: applied to every text before it is stored or sent to a model.

Command output from a VM or a cloud API can carry private keys, bearer tokens, API keys, storage SAS
signatures, connection strings and passwords embedded in URLs. The agent's artifacts are kept forever and
shared; the model vendor is a third party. Neither may see them.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["REDACTED", "redact", "redact_value"]

REDACTED = "[REDACTED]"

_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    # PEM / OpenSSH private key blocks (an unterminated block is cut to the end of the text)
    (re.compile(r"-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY( BLOCK)?-----.*?(-----END \1PRIVATE KEY( BLOCK)?-----|\Z)", re.DOTALL),
     "[REDACTED PRIVATE KEY]"),
    # Authorization headers and bearer tokens
    (re.compile(r"(?i)\b(bearer|basic)(\s+)[A-Za-z0-9._~+/=-]{8,}"), rf"\1\2{REDACTED}"),
    # JSON Web Tokens wherever they appear
    (re.compile(r"\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*"), REDACTED),
    # vendor API keys with recognisable shapes
    (re.compile(r"\b(sk-ant-[A-Za-z0-9_-]{8,}|sk-[A-Za-z0-9_-]{20,}|AIza[0-9A-Za-z_-]{30,}|AKIA[0-9A-Z]{16}"
                r"|gh[pousr]_[A-Za-z0-9]{20,}|xox[abpr]-[A-Za-z0-9-]{10,})"), REDACTED),
    # Azure connection strings and SAS tokens: keep the key name, drop the value
    (re.compile(r"(?i)\b(AccountKey|SharedAccessKey|SharedAccessSignature|Password|Pwd)=([^;\s\"']+)"), rf"\1={REDACTED}"),
    (re.compile(r"(?i)([?&]sig=)[^&\s\"']+"), rf"\1{REDACTED}"),
    # credentials inside URLs: scheme://user:password@host
    (re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://[^/\s:@]+:)[^@\s/]+@"), rf"\1{REDACTED}@"),
    # key = value / "key": "value" for secret-looking names
    (re.compile(r"(?i)(\"?\b[\w.-]*(?:api[_-]?key|secret|token|passw(?:or)?d|passwd|client[_-]?secret|access[_-]?key)\b\"?"
                r"\s*[:=]\s*\"?)([^\s\"',;]{4,})"), rf"\1{REDACTED}"),
)


def redact(text: str) -> str:
    """The text with every secret the rules recognise replaced by a marker; everything else is kept as it is."""
    for pattern, replacement in _RULES:
        text = pattern.sub(replacement, text)
    return text


def redact_value(value: Any) -> Any:
    """Redact every string inside a JSON-like value (tool arguments, structured results)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: redact_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_value(v) for v in value]
    return value
