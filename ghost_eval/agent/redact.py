"""Secret redaction: applied to every text before it is stored or sent to a model.

Command output from a VM or a cloud API can carry private keys, bearer tokens, API keys, storage keys, SAS
signatures, connection strings and passwords. The agent's artifacts are kept forever and shared; the model vendor
is a third party. Neither may see them.

Secrets are found by structure — the grammar of what holds them: known field names, `key=value` and flag forms,
`.netrc` tokens, `curl -u user:password`, URL userinfo, the columns a CSV header names for a secret, a Kubernetes
Secret's `data` and a docker config's `auths` (YAML or JSON, parsed), PEM blocks and bodies, key material wrapped below
its field, provider keys by their prefix, base64 runs of key length near secret words — and then by value: a
`Redactor` remembers every value it removed and scrubs it wherever it reappears later in the run (a hypothesis, a root
cause, the trace). It records what it removed — the kind and where — never the value.
"""

from __future__ import annotations

import base64
import binascii
import csv
import io
import json
import re
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import yaml

from ghost_eval.base.records import Record
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
    r"|[\w.-]*?[_.-](?:pass|pwd|psk)|(?<![A-Za-z][ \t])(?:pass|pwd|psk)|(?:pass|pwd|psk)(?=\"?[ \t]*=))"
)
"""A field name that holds a secret (case-insensitive): `DB_PWD`, `AZURE_STORAGE_KEY`, `PrivateKey`, `psk`, …;
the short words (`pass`, `pwd`, `psk`) only as a whole part of the name, so `bypass` is no password, and alone only
where a field starts (`pass: …` on its own line, `pass=…`), not after another word of prose ("after the next periodic
pass: `sleep 330`")."""
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
    ("bearer", re.compile(r"(?i)\bbearer\s+(?P<v>[A-Za-z0-9._~+/=-]{8,})")),
    ("basic", re.compile(r"(?i)\bbasic\s+(?P<v>[A-Za-z0-9+/]{8,}={0,2})(?![\w+/=-])")),
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


def _user_and_password(value: str) -> bool:
    """Whether a word after "Basic" is an HTTP Basic credential: base64 of `user:password` (RFC 7617). "basic
    reachability" in a report is prose, not a header."""
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return False
    return ":" in decoded and decoded.isprintable()


_WRAP_KEY = re.compile(
    r"(?i)^[ \t]*(?:-[ \t]+)?[\"']?[\w.-]*(?:key|secret|passw|token|credential|private|psk|signature|sig)[\w.-]*[\"']?"
    r"[ \t]*[:=][ \t]*(?:[|>][-+]?|\d+|[A-Za-z0-9+/_-]{40,})?[ \t]*$"
)
"""A field named for a secret whose value goes on below: nothing yet, a YAML block indicator, a count of the lines that
follow (PuTTY's `Private-Lines: 14`), or a long base64 run without its closing padding."""
_WRAP_LINE = re.compile(r"^[ \t]*(?=[^\n]*[A-Za-z0-9])([A-Za-z0-9+/_-]{4,}={0,2})[ \t]*$")
"""A line holding nothing but a piece of base64."""

_CSV_HEADER_CELL = re.compile(r"[A-Za-z][\w .()/-]*")
_DOCKER_AUTH_FIELDS = frozenset({"auth", "identitytoken", "registrytoken"})
_K8S_SECRET_MAPS = (("data",), ("stringData",))
_DOCUMENT_HINT = re.compile(r"[\"']?kind[\"']?\s*:\s*[\"']?Secret\b|[\"']?auths[\"']?\s*:")
"""Text that may hold a Kubernetes Secret or a docker config: only such text is parsed as a document."""
_PIECE_START = re.compile(r"(?<=\n)(?=[ \t]*\n|---|apiVersion:|\{)")
"""Where a text that is not one document is cut into pieces that may each start one: at a blank line, a YAML document
marker, a Kubernetes manifest's first line, a JSON object."""
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _keyish(value: str) -> bool:
    """A base64 run that looks like key material: mixed case and digits (a hex digest or a word does not)."""
    return any(c.isupper() for c in value) and any(c.islower() for c in value) and any(c.isdigit() for c in value)


def _secret_fields(value: Any, path: tuple[str, ...] = (), owner_kind: Any = None) -> Iterator[tuple[dict[Any, Any], Any, str]]:
    """(mapping, key, kind) of every field of a JSON or YAML document whose value is a secret by its place: a field named
    for a secret, the `value` of a storage key listing, every entry under a Kubernetes Secret's `data` or `stringData`
    (the key names stay), and the credentials of each registry under a docker config's `auths`."""
    if isinstance(value, list | tuple):
        for item in value:
            yield from _secret_fields(item, path, owner_kind)
        return
    if not isinstance(value, dict):
        return
    secret_map = owner_kind == "Secret" and path[-1:] in _K8S_SECRET_MAPS
    registry = path[-2:-1] == ("auths",)
    listing = "keyName" in value or "permissions" in value
    for key, item in value.items():
        name = str(key)
        if secret_map:
            kind: str | None = "k8s_secret"
        elif registry and name in _DOCKER_AUTH_FIELDS:
            kind = "docker_auth"
        elif re.fullmatch(_SECRET_NAME, name, re.IGNORECASE) or (listing and name == "value"):
            kind = f"field:{name}"
        else:
            kind = None
        # A Secret's values may be numbers (YAML reads `pin: 1234` so); elsewhere only a string is taken for one.
        scalar = isinstance(item, str) or (secret_map and isinstance(item, int | float) and not isinstance(item, bool))
        if kind and scalar and str(item) not in ("", REDACTED):
            yield value, key, kind
        else:
            yield from _secret_fields(item, (*path, name), value.get("kind"))


def _parse(text: str) -> tuple[list[Any], int] | None:
    """The documents a text starts with and where they end: one JSON value (whatever follows it is not read), else the
    whole text as YAML; None when it is neither."""
    try:
        value, end = json.JSONDecoder().raw_decode(text)
        return [value], end
    except ValueError:
        pass
    try:
        return list(yaml.load_all(text, Loader=_YAML_LOADER)), len(text)
    except yaml.YAMLError:
        return None


def _csv_cells(line: str) -> list[str]:
    if "," not in line:
        return []
    try:
        return next(csv.reader([line]), [])
    except csv.Error:
        return []


def _secret_columns(cells: list[str]) -> set[int]:
    """The columns a CSV header names for a secret (`Password`, `Secret access key`); none if the row is no header."""
    if len(cells) < 2 or not all(_CSV_HEADER_CELL.fullmatch(c) for c in cells):
        return set()
    return {i for i, c in enumerate(cells) if re.fullmatch(_SECRET_NAME, re.sub(r"\s+", "_", c), re.IGNORECASE)}


class Redactor:
    """Redaction for one run: remembers removed values and counts what was removed where."""

    def __init__(self) -> None:
        self.seen: set[str] = set()
        self.counts: Counter[tuple[str, str]] = Counter()

    def _remember(self, value: str) -> None:
        value = value.strip()
        if len(value) >= _MIN_REMEMBERED and REDACTED not in value:
            self.seen.add(value)

    def _found(self, value: Any, kind: str, where: str) -> str:
        """Count a secret found by structure and remember it (line by line) to scrub wherever it reappears."""
        for line in str(value).splitlines():
            self._remember(line)
        self.counts[kind, where] += 1
        return REDACTED

    def _structural(self, text: str, where: str) -> str:
        def block(m: re.Match[str]) -> str:
            body = [line for line in m.group(0).splitlines()[1:] if not line.startswith("-----")]
            self._found("\n".join(body), "private_key", where)
            return "[REDACTED PRIVATE KEY]"

        text = _PEM_BLOCK.sub(block, text)
        text = self._documents(text, where)
        text = self._csv_columns(text, where)
        text = self._wrapped(text, where)
        text = self._pem_bodies(text, where)
        for kind, pattern in _RULES:
            text = pattern.sub(self._replacer(kind, where), text)
        return text

    def _replacer(self, kind: str, where: str) -> Callable[[re.Match[str]], str]:
        def replace(m: re.Match[str]) -> str:
            value = m.group("v")
            if value == REDACTED or (kind in ("near_secret_word", "key_listing") and not _keyish(value)):
                return m.group(0)
            if kind == "basic" and not _user_and_password(value):
                return m.group(0)
            start, end = m.span("v")
            return m.group(0)[: start - m.start()] + self._found(value, kind, where) + m.group(0)[end - m.start() :]

        return replace

    def _pem_bodies(self, text: str, where: str) -> str:
        """Two or more consecutive lines of 40+ base64 characters (a key whose BEGIN line was cut off)."""
        lines = text.split("\n")
        hits = [bool((m := _PEM_LINE.match(line)) and _keyish(m.group(1))) for line in lines]
        for i, line in enumerate(lines):
            if hits[i] and ((i > 0 and hits[i - 1]) or (i + 1 < len(hits) and hits[i + 1])):
                m = _PEM_LINE.match(line)
                assert m is not None
                lines[i] = line[: m.start(1)] + self._found(m.group(1), "pem_body", where) + line[m.end(1) :]
        return "\n".join(lines)

    def _wrapped(self, text: str, where: str) -> str:
        """The lines of a key or token wrapped below its field (`key:`, `token:`, `Private-Lines: 3`): each line of
        base64 as wide as the first, and the shorter one that ends the run."""
        lines = text.split("\n")
        width = 0
        for i, line in enumerate(lines):
            m = _WRAP_LINE.match(line) if width else None
            if m is None:
                width = -1 if _WRAP_KEY.match(line) else 0
                continue
            piece = m.group(1)
            lines[i] = line[: m.start(1)] + self._found(piece, "wrapped", where) + line[m.end(1) :]
            if width < 0:  # the first line below the field sets the width of the wrap
                width = len(piece)
            if len(piece) < width or piece.endswith("="):  # a shorter line, or the padding, is the last one
                width = 0
        return "\n".join(lines)

    def _csv_columns(self, text: str, where: str) -> str:
        """The cells under a CSV header that names a secret column, row by row, until a row of another width."""
        if "," not in text:
            return text
        lines = text.split("\n")
        columns: set[int] = set()
        width = 0
        for i, line in enumerate(lines):
            cells = _csv_cells(line)
            if not columns or len(cells) != width:
                columns, width = _secret_columns(cells), len(cells)
            elif any(cells[c] not in ("", REDACTED) for c in columns):
                row = [
                    self._found(c, "csv_column", where) if j in columns and c not in ("", REDACTED) else c
                    for j, c in enumerate(cells)
                ]
                out = io.StringIO()
                writer = (
                    csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="")
                    if line.startswith('"')
                    else csv.writer(out, lineterminator="")
                )
                writer.writerow(row)
                lines[i] = out.getvalue()
        return "\n".join(lines)

    def _documents(self, text: str, where: str) -> str:
        """Secrets a YAML or JSON document holds by its structure (a Kubernetes Secret, a docker config), taken out
        where they stand so the text keeps its layout; a text that is not one document is tried piece by piece."""
        if not _DOCUMENT_HINT.search(text):
            return text
        whole = _parse(text)
        pieces = [text] if whole and not text[whole[1] :].strip() else _PIECE_START.split(text)
        return "".join(self._document(piece, where) for piece in pieces)

    def _document(self, text: str, where: str) -> str:
        """The secrets of the documents a piece of text starts with, taken out of that text."""
        parsed = _parse(text)
        if parsed is None:
            return text
        documents, end = parsed
        text, rest = text[:end], text[end:]
        for mapping, key, kind in _secret_fields(documents):
            value = str(mapping[key])
            self._found(value, kind, where)
            for line in {line.strip() for line in value.splitlines()} - {""}:
                for form in {line, json.dumps(line)[1:-1]}:
                    text = re.sub(r"(?<![\w+/=.~-])" + re.escape(form) + r"(?![\w+/=.~-])", REDACTED, text)
        return text + rest

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
        """Structural pass over a JSON-like value; a field that holds a secret by its place loses its whole value."""
        secret = {(id(mapping), key): kind for mapping, key, kind in _secret_fields(value)}

        def walk(item: Any) -> Any:
            if isinstance(item, str):
                return self._structural(item, where)
            if isinstance(item, dict):
                return {
                    k: self._found(v, secret[id(item), k], where) if (id(item), k) in secret else walk(v) for k, v in item.items()
                }
            if isinstance(item, list | tuple):
                return [walk(v) for v in item]
            return item

        return walk(value)

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
