"""Secret redaction: applied to every text before it is stored or sent to a model.

Command output from a VM or a cloud API can carry private keys, bearer tokens, API keys, storage keys, SAS
signatures, connection strings and passwords. The agent's artifacts are kept forever and shared; the model vendor
is a third party. Neither may see them.

Secrets are found by structure (known field names, `key=value` and flag forms, PEM blocks and bodies, base64 runs
of key length near secret words) and then by value: a `Redactor` remembers every value it removed and scrubs it
wherever it reappears later in the run (a hypothesis, a root cause, the trace). It records what it removed — the
kind and where — never the value.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from ghost_eval.records import Record
from ghost_eval.store.layout import REDACTIONS_FILE

__all__ = [
    "REDACTED",
    "Redaction",
    "RedactionLog",
    "Redactor",
    "redact",
    "redact_files",
    "redact_value",
    "redaction_scope",
]

REDACTED = "[REDACTED]"
_MIN_REMEMBERED = 6
"""Shorter values are removed where found by structure but not scrubbed elsewhere (too likely to be ordinary words)."""


class Redaction(Record):
    """One kind of secret removed from one place, counted; the value itself is never recorded."""

    kind: str
    """Which rule found it, e.g. `env_assignment`, `flag`, `pem_body`, `seen_value`, `field:value`."""
    where: str
    """The file (or `model_context` for text sent to the model during the run)."""
    count: int


class RedactionLog(Record):
    """`redactions.json`: what redaction removed from a run."""

    schema_version: str = "1"
    redactions: list[Redaction] = []


_SECRET_NAME = (
    r"(?:[\w.-]*?(?:passw(?:or)?d|secret(?:_key_base)?|token|api[_-]?key|access[_-]?key|account[_-]?key"
    r"|storage[_-]?key|private[_-]?key|preshared[_-]?key|shared[_-]?access[_-]?key|sharedaccesssignature"
    r"|client[_-]?secret|credentials?)"
    r"|(?:[\w.-]*?[_.-])?(?:pass|pwd|psk))"
)
"""A field name that holds a secret (case-insensitive): `DB_PWD`, `AZURE_STORAGE_KEY`, `PrivateKey`, `psk`, …;
the short words (`pass`, `pwd`, `psk`) only as a whole part of the name, so `bypass` is no password."""
_VALUE = r"(?P<q>[\"'])?(?P<v>(?(q)[^\"'\n]+|[^\s\"',;&]+))(?(q)(?P=q))"
"""A value: a quoted string (every word of it) or a bare word (which ends where a shell command or a query string
would: `&` joins the next parameter)."""
_B64_KEY = r"[A-Za-z0-9+/]{32,}={0,2}"
_SECRET_WORD = r"(?i:\b(?:key|secret|passw|password|token|credential|private|psk|sas|signature|sig)\w*)"

_WORD = re.compile(r"(?<![A-Za-z0-9+/=_.~-])[A-Za-z0-9+/=_.~-]{12,}")
_PEM_BLOCK = re.compile(
    r"-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY( BLOCK)?-----.*?(?:-----END \1PRIVATE KEY( BLOCK)?-----|\Z)", re.DOTALL
)
_PEM_LINE = re.compile(r"^(?:[^\s:]*:)?([A-Za-z0-9+/]{40,}={0,2})[ \t]*$", re.MULTILINE)

_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("bearer", re.compile(r"(?i)\b(?:bearer|basic)\s+(?P<v>[A-Za-z0-9._~+/=-]{8,})")),
    ("jwt", re.compile(r"(?P<v>\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*)")),
    (
        "api_key",
        re.compile(
            r"(?P<v>\b(?:sk-ant-[A-Za-z0-9_-]{8,}|sk-[A-Za-z0-9_-]{20,}|[rs]k_(?:live|test)_[A-Za-z0-9]{16,}"
            r"|AIza[0-9A-Za-z_-]{30,}|A[KS]IA[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_\w{30,}"
            r"|xox[abposr]-[A-Za-z0-9-]{10,}|xapp-\d-[A-Za-z0-9-]{10,}|glpat-[A-Za-z0-9_-]{20,}|npm_[A-Za-z0-9]{30,}"
            r"|hf_[A-Za-z0-9]{30,}|pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{20,}|SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{30,}))"
        ),
    ),
    ("sas_signature", re.compile(r"(?i)(?<![\w.-])sig=(?P<v>[^&\s\"';]+)")),
    ("url_credentials", re.compile(r"(?i)\b[a-z][a-z0-9+.-]*://[^/\s:@]*:(?P<v>[^@\s/]+)@")),
    (
        "netrc",
        re.compile(r"(?<![\w-])(?:machine\s+\S+|default)(?:\s+(?:login|account|port)\s+\S+)*\s+password\s+(?P<v>\S+)"),
    ),
    (
        "flag",
        re.compile(
            r"(?i)(?<![\w-])--(?:[a-z0-9]+-)*(?:password|passwd|pass|secret|token|account-key|storage-key|api-key|key-value)"
            r"(?:=|[ \t]+)" + _VALUE
        ),
    ),
    ("flag", re.compile(r"\bsshpass\s+-p[ \t]*" + _VALUE)),
    ("flag", re.compile(r"\b(?:az|docker|podman|helm\s+registry)\s+login\b[^\n]*?\s-p[ \t]+" + _VALUE)),
    ("flag", re.compile(r"\b(?:mysql|mysqladmin|mysqldump)\b[^\n]*?\s-p(?P<v>[^\s\"']+)")),
    (
        "curl_user",
        re.compile(
            r"\bcurl\b[^\n|;&]*?\s(?:-[uU][ \t]*|--(?:proxy-)?user(?:=|[ \t]+))"
            r"(?P<q>[\"'])?[^\s:\"']*:(?P<v>(?(q)[^\"'\n]+|[^\s\"']+))"
        ),
    ),
    ("key_listing", re.compile(r"\"value\"\s*:\s*\"(?P<v>" + _B64_KEY + r")\"")),
    ("env_assignment", re.compile(r"(?i)\"?(?<![/\w.-])" + _SECRET_NAME + r"\"?[ \t]*[:=][ \t]*" + _VALUE)),
    ("near_secret_word", re.compile(_SECRET_WORD + r"[^\n]{0,80}?(?<![A-Za-z0-9+/])(?P<v>" + _B64_KEY + r")")),
)
"""(kind, pattern): group `v` is the secret; everything around it is kept."""


def _keyish(value: str) -> bool:
    """A base64 run that looks like key material: mixed case and digits (a hex digest or a word does not)."""
    return any(c.isupper() for c in value) and any(c.islower() for c in value) and any(c.isdigit() for c in value)


class Redactor:
    """Redaction for one run: remembers removed values and counts what was removed where."""

    def __init__(self) -> None:
        self.seen: set[str] = set()
        self.counts: Counter[tuple[str, str]] = Counter()

    def _remember(self, value: str) -> None:
        value = value.strip()
        if len(value) >= _MIN_REMEMBERED and REDACTED not in value:
            self.seen.add(value)

    def _structural(self, text: str, where: str) -> str:
        def block(m: re.Match[str]) -> str:
            for line in m.group(0).splitlines()[1:]:
                if not line.startswith("-----"):
                    self._remember(line)
            self.counts["private_key", where] += 1
            return "[REDACTED PRIVATE KEY]"

        text = _PEM_BLOCK.sub(block, text)
        text = self._pem_bodies(text, where)
        for kind, pattern in _RULES:
            text = pattern.sub(self._replacer(kind, where), text)
        return text

    def _replacer(self, kind: str, where: str) -> Callable[[re.Match[str]], str]:
        def replace(m: re.Match[str]) -> str:
            value = m.group("v")
            if value == REDACTED or (kind in ("near_secret_word", "key_listing") and not _keyish(value)):
                return m.group(0)
            self._remember(value)
            self.counts[kind, where] += 1
            start, end = m.span("v")
            return m.group(0)[: start - m.start()] + REDACTED + m.group(0)[end - m.start() :]

        return replace

    def _pem_bodies(self, text: str, where: str) -> str:
        """Two or more consecutive lines of 40+ base64 characters (a key whose BEGIN line was cut off)."""
        lines = text.split("\n")
        hits = [bool((m := _PEM_LINE.match(line)) and _keyish(m.group(1))) for line in lines]
        for i, line in enumerate(lines):
            if hits[i] and ((i > 0 and hits[i - 1]) or (i + 1 < len(hits) and hits[i + 1])):
                m = _PEM_LINE.match(line)
                assert m is not None
                self._remember(m.group(1))
                self.counts["pem_body", where] += 1
                lines[i] = line[: m.start(1)] + REDACTED + line[m.end(1) :]
        return "\n".join(lines)

    def _scrub_seen(self, text: str, where: str) -> str:
        """Every seen value, and every word of 12+ characters that is a fragment of one (a key quoted in part)."""
        if not self.seen:
            return text
        for value in sorted(self.seen, key=len, reverse=True):
            if value in text:
                self.counts["seen_value", where] += text.count(value)
                text = text.replace(value, REDACTED)

        def fragment(m: re.Match[str]) -> str:
            if not any(m.group(0) in value for value in self.seen):
                return m.group(0)
            self.counts["seen_fragment", where] += 1
            return REDACTED

        return _WORD.sub(fragment, text)

    def text(self, text: str, where: str = "model_context") -> str:
        """The text with every secret found by structure or seen before replaced by a marker."""
        return self._scrub_seen(self._structural(text, where), where)

    def _collect(self, value: Any, where: str) -> Any:
        """Structural pass over a JSON-like value; a field named for a secret loses its whole value."""
        if isinstance(value, str):
            return self._structural(value, where)
        if isinstance(value, dict):
            out: dict[Any, Any] = {}
            listing = "keyName" in value or "permissions" in value
            for k, v in value.items():
                secret_field = (
                    isinstance(v, str)
                    and v
                    and v != REDACTED
                    and (re.fullmatch(_SECRET_NAME, str(k), re.IGNORECASE) is not None or (listing and k == "value"))
                )
                if secret_field:
                    self._remember(v)
                    self.counts[f"field:{k}", where] += 1
                    out[k] = REDACTED
                else:
                    out[k] = self._collect(v, where)
            return out
        if isinstance(value, list | tuple):
            return [self._collect(v, where) for v in value]
        return value

    def _scrub_value(self, value: Any, where: str) -> Any:
        if isinstance(value, str):
            return self._scrub_seen(value, where)
        if isinstance(value, dict):
            return {k: self._scrub_value(v, where) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self._scrub_value(v, where) for v in value]
        return value

    def value(self, value: Any, where: str = "model_context") -> Any:
        """Redact every string inside a JSON-like value (tool arguments, structured results)."""
        return self._scrub_value(self._collect(value, where), where)

    def files(self, files: Mapping[str, str]) -> dict[str, str]:
        """A run's files redacted as a whole: values found in any file are scrubbed from every file.

        JSON files are redacted as data (a field named for a secret loses its value, and the file stays valid JSON);
        `redactions.json` records what was removed, added to any record the files already carry.
        """
        parsed: dict[str, Any] = {}
        for name, content in files.items():
            if name != REDACTIONS_FILE:
                parsed[name] = self._collect(_load(name, content), name)
        out: dict[str, str] = {}
        for name, data in parsed.items():
            cleaned = self._scrub_value(data, name)
            out[name] = files[name] if cleaned == _load(name, files[name]) else _dump(name, cleaned)
        out[REDACTIONS_FILE] = self.log(files.get(REDACTIONS_FILE)).model_dump_json(indent=2) + "\n"
        return out

    def log(self, earlier: str | None = None) -> RedactionLog:
        """What was removed, merged with an earlier `redactions.json`."""
        counts = Counter(self.counts)
        if earlier:
            for r in RedactionLog.model_validate_json(earlier).redactions:
                counts[r.kind, r.where] += r.count
        return RedactionLog(redactions=[Redaction(kind=k, where=w, count=n) for (k, w), n in sorted(counts.items())])


def _load(name: str, content: str) -> Any:
    """JSON files as data, JSON Lines as a list of (raw line | data), anything else as text."""
    try:
        if name.endswith(".json"):
            return json.loads(content)
        if name.endswith(".jsonl"):
            return [json.loads(line) if line.strip() else line for line in content.split("\n")]
    except json.JSONDecodeError:
        pass
    return content


def _dump(name: str, data: Any) -> str:
    if isinstance(data, str):
        return data
    if name.endswith(".jsonl"):
        return "\n".join(line if isinstance(line, str) else json.dumps(line, ensure_ascii=False) for line in data)
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


_CURRENT: ContextVar[Redactor | None] = ContextVar("ghost_eval_redactor", default=None)


@contextmanager
def redaction_scope(redactor: Redactor) -> Iterator[Redactor]:
    """Within the scope, `redact` and `redact_value` share `redactor`: a value seen once is scrubbed everywhere."""
    token = _CURRENT.set(redactor)
    try:
        yield redactor
    finally:
        _CURRENT.reset(token)


def _current() -> Redactor:
    return _CURRENT.get() or Redactor()


def redact(text: str) -> str:
    """The text with every secret replaced by a marker (and, inside a run's scope, every value seen before)."""
    return _current().text(text)


def redact_value(value: Any) -> Any:
    """Redact every string inside a JSON-like value (tool arguments, structured results)."""
    return _current().value(value)


def redact_files(files: Mapping[str, str], redactor: Redactor | None = None) -> dict[str, str]:
    """A run's files redacted as a whole, with `redactions.json` beside them."""
    return (redactor or Redactor()).files(files)
