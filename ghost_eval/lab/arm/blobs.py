"""The lab's Blob service: the data plane of the emulator's storage accounts, on disk under `arm/blobs/`.

`az storage container …` and `az storage blob …` send the Blob REST API to `https://<account>.blob.core.windows.net`;
the lab's proxy (`proxy.py`) brings those connections to the emulator, which answers them here: containers (create,
properties, list) and block blobs put in one request (upload, download with ranges, properties, list, delete), with
the service's XML bodies, headers and error codes. Network Watcher writes its captures here too. Azurite is not used:
the lab runs without Node, and Azurite accepts OAuth only for tokens Entra ID issued, which the lab's are not.

A request is authorized by the lab's bearer token (`--auth-mode login`) or by Shared Key with one of the account's
keys (what `az` uses after `listKeys`, and `--account-key`); the account's firewall applies as Azure applies it to a
caller outside every virtual network (the host running `az`): a default action of Deny refuses it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import threading
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import format_datetime
from pathlib import Path
from typing import Literal
from urllib.parse import unquote
from xml.etree import ElementTree

from pydantic import BaseModel, Field

from ghost_eval.lab.arm.paths import write_json_atomic
from ghost_eval.lab.arm.state import ArmError, ArmState

__all__ = ["BlobReply", "BlobService", "BlobStore", "StorageError", "account_keys"]

_API_VERSION = "2021-08-06"


def account_keys(secret: str, account: str) -> list[str]:
    """The account's two keys, derived from the lab's secret: stable across emulator restarts, different per lab."""
    return [
        base64.b64encode(hashlib.sha512(f"{secret}\n{account.lower()}\n{name}".encode()).digest()).decode()
        for name in ("key1", "key2")
    ]


class StorageError(Exception):
    """A Blob service error: its HTTP status, `x-ms-error-code` and message."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


class BlobRecord(BaseModel):
    """One block blob of a container."""

    file: str = Field(description="The file under the container's folder that holds the blob's bytes.")
    size: int
    content_type: str
    content_md5: str = Field(description="Base64 MD5 of the content, as the service reports it.")
    etag: str
    created: datetime
    modified: datetime


class ContainerIndex(BaseModel):
    """A container's properties and its blobs (`index.json` in the container's folder)."""

    schema_version: Literal[1] = 1
    name: str
    created: datetime
    etag: str
    blobs: dict[str, BlobRecord] = Field(default_factory=dict)


def _etag() -> str:
    return f'"0x{uuid.uuid4().hex[:15].upper()}"'


def _http_date(when: datetime) -> str:
    return format_datetime(when.astimezone(UTC), usegmt=True)


class BlobStore:
    """Containers and block blobs per account, kept on disk so a restarted emulator serves what was written."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._lock = threading.RLock()

    def _dir(self, account: str, container: str) -> Path:
        return self.root / account.lower() / container

    def _index(self, account: str, container: str) -> ContainerIndex:
        path = self._dir(account, container) / "index.json"
        if not path.exists():
            raise StorageError(404, "ContainerNotFound", "The specified container does not exist.")
        return ContainerIndex.model_validate_json(path.read_text(encoding="utf-8"))

    def _save(self, account: str, index: ContainerIndex) -> None:
        write_json_atomic(self._dir(account, index.name) / "index.json", index.model_dump(mode="json"))

    def containers(self, account: str) -> list[ContainerIndex]:
        base = self.root / account.lower()
        with self._lock:
            found = sorted(p.name for p in base.iterdir() if (p / "index.json").exists()) if base.exists() else []
            return [self._index(account, name) for name in found]

    def container(self, account: str, container: str) -> ContainerIndex:
        with self._lock:
            return self._index(account, container)

    def create_container(self, account: str, container: str) -> ContainerIndex:
        if not (3 <= len(container) <= 63) or not all(c.islower() or c.isdigit() or c == "-" for c in container):
            raise StorageError(400, "InvalidResourceName", "The specifed resource name contains invalid characters.")
        with self._lock:
            if (self._dir(account, container) / "index.json").exists():
                raise StorageError(409, "ContainerAlreadyExists", "The specified container already exists.")
            self._dir(account, container).mkdir(parents=True, exist_ok=True)
            index = ContainerIndex(name=container, created=datetime.now(UTC), etag=_etag())
            self._save(account, index)
            return index

    def put_blob(self, account: str, container: str, name: str, data: bytes, content_type: str) -> BlobRecord:
        with self._lock:
            index = self._index(account, container)
            now = datetime.now(UTC)
            old = index.blobs.get(name)
            record = BlobRecord(
                file=old.file if old else f"{uuid.uuid4().hex}.bin",
                size=len(data),
                content_type=content_type or "application/octet-stream",
                content_md5=base64.b64encode(hashlib.md5(data).digest()).decode(),
                etag=_etag(),
                created=old.created if old else now,
                modified=now,
            )
            (self._dir(account, container) / record.file).write_bytes(data)
            index.blobs[name] = record
            self._save(account, index)
            return record

    def blob(self, account: str, container: str, name: str) -> tuple[BlobRecord, Path]:
        with self._lock:
            record = self._index(account, container).blobs.get(name)
            if record is None:
                raise StorageError(404, "BlobNotFound", "The specified blob does not exist.")
            return record, self._dir(account, container) / record.file

    def delete_blob(self, account: str, container: str, name: str) -> None:
        with self._lock:
            index = self._index(account, container)
            record = index.blobs.pop(name, None)
            if record is None:
                raise StorageError(404, "BlobNotFound", "The specified blob does not exist.")
            (self._dir(account, container) / record.file).unlink(missing_ok=True)
            self._save(account, index)


@dataclass
class BlobReply:
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""


def _xml(root: ElementTree.Element) -> bytes:
    return b'<?xml version="1.0" encoding="utf-8"?>' + ElementTree.tostring(root, encoding="unicode").encode()


def _sub(parent: ElementTree.Element, tag: str, text: str | None = None) -> ElementTree.Element:
    el = ElementTree.SubElement(parent, tag)
    if text is not None:
        el.text = text
    return el


def _string_to_sign(method: str, account: str, path: str, query: dict[str, list[str]], headers: dict[str, str]) -> str:
    """Shared Key's string to sign (service version 2015-02-21 and later)."""
    length = headers.get("content-length", "")
    parts = [method, headers.get("content-encoding", ""), headers.get("content-language", ""),
             "" if length == "0" else length, headers.get("content-md5", ""), headers.get("content-type", ""),
             headers.get("date", ""), headers.get("if-modified-since", ""), headers.get("if-match", ""),
             headers.get("if-none-match", ""), headers.get("if-unmodified-since", ""), headers.get("range", "")]  # fmt: skip
    canonical_headers = "".join(f"{k}:{headers[k].strip()}\n" for k in sorted(h for h in headers if h.startswith("x-ms-")))
    resource = f"/{account}{path}" + "".join(
        f"\n{k.lower()}:{','.join(sorted(unquote(v) for v in query[k]))}" for k in sorted(query, key=str.lower)
    )
    return "\n".join(parts) + "\n" + canonical_headers + resource


class BlobService:
    """Answers one Blob REST request for `<account>.blob.core.windows.net` over the emulator's state and store."""

    def __init__(self, state: ArmState, store: BlobStore, token: str, key_secret: str) -> None:
        self.state = state
        self.store = store
        self.token = token
        self.key_secret = key_secret

    def handle(
        self, method: str, account: str, path: str, query: dict[str, list[str]], headers: dict[str, str], body: bytes
    ) -> BlobReply:
        try:
            reply = self._handle(method, account, path, query, headers, body)
        except StorageError as exc:
            payload = b""
            if method != "HEAD":
                root = ElementTree.Element("Error")
                _sub(root, "Code", exc.code)
                _sub(root, "Message", f"{exc.message}\nRequestId:{uuid.uuid4()}\nTime:{datetime.now(UTC).isoformat()}")
                payload = _xml(root)
            reply = BlobReply(exc.status, {"x-ms-error-code": exc.code, "Content-Type": "application/xml"}, payload)
        reply.headers.setdefault("x-ms-version", headers.get("x-ms-version", _API_VERSION))
        reply.headers.setdefault("Date", _http_date(datetime.now(UTC)))
        return reply

    def _authorize(self, method: str, account: str, path: str, query: dict[str, list[str]], headers: dict[str, str]) -> None:
        auth = headers.get("authorization", "")
        scheme, _, credential = auth.partition(" ")
        if not auth:
            raise StorageError(401, "NoAuthenticationInformation", "Server failed to authenticate the request.")
        if scheme.lower() == "bearer":
            if credential.strip() != self.token:
                raise StorageError(401, "InvalidAuthenticationInfo", "Server failed to authenticate the request.")
            return
        name, _, signature = credential.partition(":")
        expected = [
            base64.b64encode(
                hmac.new(
                    base64.b64decode(key), _string_to_sign(method, account, path, query, headers).encode(), hashlib.sha256
                ).digest()
            ).decode()
            for key in account_keys(self.key_secret, account)
        ]
        if scheme != "SharedKey" or name != account or signature not in expected:
            raise StorageError(
                403,
                "AuthenticationFailed",
                "Server failed to authenticate the request. Make sure the value of Authorization header is formed "
                "correctly including the signature.",
            )

    def _handle(
        self, method: str, account: str, path: str, query: dict[str, list[str]], headers: dict[str, str], body: bytes
    ) -> BlobReply:
        try:
            acls = self.state.render_storage_account(account)["properties"]["networkAcls"]
        except ArmError:  # an account the subscription does not hold has no blob endpoint
            raise StorageError(404, "ResourceNotFound", f"The storage account {account} does not exist.") from None
        self._authorize(method, account, path, query, headers)
        if acls.get("defaultAction") == "Deny":
            raise StorageError(403, "AuthorizationFailure", "This request is not authorized to perform this operation.")
        segments = [unquote(s) for s in path.lstrip("/").split("/", 1) if s]
        restype = (query.get("restype") or [""])[0]
        comp = (query.get("comp") or [""])[0]
        if not segments:
            if method == "GET" and comp == "list":
                return self._list_containers(account, query)
            raise StorageError(400, "UnsupportedHttpVerb", "The resource doesn't support specified Http Verb.")
        container = segments[0]
        if len(segments) == 1:
            if restype != "container":
                raise StorageError(400, "InvalidQueryParameterValue", "Value for one of the query parameters is not valid.")
            if method == "PUT" and not comp:
                index = self.store.create_container(account, container)
                return BlobReply(201, self._container_headers(index))
            if method in ("GET", "HEAD") and comp == "list":
                return self._list_blobs(account, container, query)
            if method in ("GET", "HEAD") and not comp:
                return BlobReply(200, self._container_headers(self.store.container(account, container)))
            raise StorageError(400, "UnsupportedHttpVerb", "The resource doesn't support specified Http Verb.")
        name = segments[1]
        if method == "PUT" and not comp:
            if headers.get("x-ms-blob-type", "BlockBlob") != "BlockBlob":
                raise StorageError(400, "InvalidHeaderValue", "The lab's Blob service stores block blobs only.")
            record = self.store.put_blob(account, container, name, body, headers.get("x-ms-blob-content-type", ""))
            return BlobReply(201, {"ETag": record.etag, "Last-Modified": _http_date(record.modified),
                                   "Content-MD5": record.content_md5, "x-ms-request-server-encrypted": "true"})  # fmt: skip
        if method in ("GET", "HEAD") and not comp:
            return self._get_blob(method, account, container, name, headers)
        if method == "DELETE" and not comp:
            self.store.delete_blob(account, container, name)
            return BlobReply(202, {"x-ms-delete-type-permanent": "true"})
        raise StorageError(400, "UnsupportedHttpVerb", "The lab's Blob service does not serve this operation.")

    @staticmethod
    def _container_headers(index: ContainerIndex) -> dict[str, str]:
        return {"ETag": index.etag, "Last-Modified": _http_date(index.created), "x-ms-lease-status": "unlocked",
                "x-ms-lease-state": "available", "x-ms-has-immutability-policy": "false", "x-ms-has-legal-hold": "false",
                "x-ms-default-encryption-scope": "$account-encryption-key",
                "x-ms-deny-encryption-scope-override": "false"}  # fmt: skip

    def _get_blob(self, method: str, account: str, container: str, name: str, headers: dict[str, str]) -> BlobReply:
        record, file = self.store.blob(account, container, name)
        data = file.read_bytes() if method == "GET" else b""
        out = {"ETag": record.etag, "Last-Modified": _http_date(record.modified), "Content-Type": record.content_type,
               "x-ms-blob-type": "BlockBlob", "x-ms-creation-time": _http_date(record.created),
               "x-ms-lease-status": "unlocked", "x-ms-lease-state": "available", "x-ms-server-encrypted": "true",
               "Accept-Ranges": "bytes", "Content-MD5": record.content_md5,
               "x-ms-access-tier": "Hot", "x-ms-access-tier-inferred": "true"}  # fmt: skip
        wanted = headers.get("x-ms-range") or headers.get("range")
        if method == "GET" and wanted and record.size:
            first, _, last = wanted.removeprefix("bytes=").partition("-")
            start, end = int(first), min(int(last) if last else record.size - 1, record.size - 1)
            if start >= record.size:
                raise StorageError(416, "InvalidRange", "The range specified is invalid for the current size of the resource.")
            out["Content-Range"] = f"bytes {start}-{end}/{record.size}"
            out["x-ms-blob-content-md5"] = out.pop("Content-MD5")
            return BlobReply(206, out, data[start : end + 1])
        if method == "HEAD":
            out["Content-Length"] = str(record.size)
        return BlobReply(200, out, data)

    def _list_containers(self, account: str, query: dict[str, list[str]]) -> BlobReply:
        prefix = (query.get("prefix") or [""])[0]
        root = ElementTree.Element("EnumerationResults", ServiceEndpoint=f"https://{account}.blob.core.windows.net/")
        items = _sub(root, "Containers")
        for index in self.store.containers(account):
            if not index.name.startswith(prefix):
                continue
            item = _sub(items, "Container")
            _sub(item, "Name", index.name)
            props = _sub(item, "Properties")
            _sub(props, "Last-Modified", _http_date(index.created))
            _sub(props, "Etag", index.etag)
            for tag, value in (("LeaseStatus", "unlocked"), ("LeaseState", "available"),
                               ("DefaultEncryptionScope", "$account-encryption-key"),
                               ("DenyEncryptionScopeOverride", "false"), ("HasImmutabilityPolicy", "false"),
                               ("HasLegalHold", "false")):  # fmt: skip
                _sub(props, tag, value)
        _sub(root, "NextMarker")
        return BlobReply(200, {"Content-Type": "application/xml"}, _xml(root))

    def _list_blobs(self, account: str, container: str, query: dict[str, list[str]]) -> BlobReply:
        index = self.store.container(account, container)
        prefix = (query.get("prefix") or [""])[0]
        limit = int((query.get("maxresults") or ["5000"])[0])
        root = ElementTree.Element(
            "EnumerationResults",
            ServiceEndpoint=f"https://{account}.blob.core.windows.net/",
            ContainerName=container,
        )
        items = _sub(root, "Blobs")
        for name in sorted(n for n in index.blobs if n.startswith(prefix))[:limit]:
            record = index.blobs[name]
            item = _sub(items, "Blob")
            _sub(item, "Name", name)
            props = _sub(item, "Properties")
            for tag, value in (("Creation-Time", _http_date(record.created)), ("Last-Modified", _http_date(record.modified)),
                               ("Etag", record.etag), ("Content-Length", str(record.size)),
                               ("Content-Type", record.content_type), ("Content-MD5", record.content_md5),
                               ("BlobType", "BlockBlob"), ("AccessTier", "Hot"), ("AccessTierInferred", "true"),
                               ("LeaseStatus", "unlocked"), ("LeaseState", "available"),
                               ("ServerEncrypted", "true")):  # fmt: skip
                _sub(props, tag, value)
        _sub(root, "NextMarker")
        return BlobReply(200, {"Content-Type": "application/xml"}, _xml(root))
