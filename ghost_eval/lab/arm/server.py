"""The ARM emulator's HTTPS front: the REST paths, bearer-token check and long-running-operation pattern of Azure.

It answers what azure-mgmt-network sends for VNets, subnets, NSGs, security rules, route tables, routes and NICs
(GET, list, PUT, DELETE), what azure-mgmt-storage sends for a storage account's firewall (GET, list, PUT, PATCH of
`Microsoft.Storage/storageAccounts`), and the two long-running POSTs on a NIC (`effectiveRouteTable`,
`effectiveNetworkSecurityGroups`): 202 with `Azure-AsyncOperation`, `Location` and `Retry-After: 0`, then
`{"status": "Succeeded"}` on the operation URL and the result on the Location URL. A request without the lab's
bearer token gets ARM's 401. A request whose Host is a storage account's blob endpoint (brought here by the lab's
proxy) goes to the Blob service (`blobs`), and Network Watcher's packet captures to `captures`.
Every request is recorded (method, path, status, body) so tests can see exactly
what the SDK sent.
"""

from __future__ import annotations

import json
import re
import shlex
import ssl
import threading
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from ghost_eval.lab.arm import compute
from ghost_eval.lab.arm.blobs import BlobService, BlobStore, account_keys
from ghost_eval.lab.arm.captures import PacketCaptures, StreamFromVm
from ghost_eval.lab.arm.compute import NETWORK_WATCHER_RG, RunInVm, SignIn
from ghost_eval.lab.arm.proxy import BLOB_HOST
from ghost_eval.lab.arm.state import ArmError, ArmState, Json

__all__ = ["ArmServer", "RecordedRequest"]

_NET = r"/subscriptions/(?P<sub>[^/]+)/resourcegroups/(?P<rg>[^/]+)/providers/microsoft\.network"
_STORAGE = r"/subscriptions/(?P<sub>[^/]+)/resourcegroups/(?P<rg>[^/]+)/providers/microsoft\.storage/storageaccounts"
_SUB = r"/subscriptions/(?P<sub>[^/]+)"
_VMS = r"/subscriptions/(?P<sub>[^/]+)/resourcegroups/(?P<rg>[^/]+)/providers/microsoft\.compute/virtualmachines"
_WATCHER = rf"^{_SUB}/resourcegroups/{NETWORK_WATCHER_RG.lower()}/providers/microsoft\.network/networkwatchers/(?P<name>[^/]+)"
_ROUTES: list[tuple[str, re.Pattern[str]]] = [
    ("subscriptions", re.compile(r"^/subscriptions$")),
    ("tenants", re.compile(r"^/tenants$")),
    ("subscription", re.compile(rf"^{_SUB}$")),
    ("provider", re.compile(rf"^{_SUB}/providers/(?P<namespace>[^/]+)$")),
    ("rg", re.compile(r"^/subscriptions/(?P<sub>[^/]+)/resourcegroups/(?P<rg>[^/]+)$")),
    ("rg_resources", re.compile(r"^/subscriptions/(?P<sub>[^/]+)/resourcegroups/(?P<rg>[^/]+)/resources$")),
    ("vm_list", re.compile(rf"^{_VMS}$")),
    ("vm_list_all", re.compile(rf"^{_SUB}/providers/microsoft\.compute/virtualmachines$")),
    ("vm", re.compile(rf"^{_VMS}/(?P<name>[^/]+)$")),
    ("vm_action", re.compile(rf"^{_VMS}/(?P<name>[^/]+)/(?P<action>[a-z]+)$")),
    ("watchers", re.compile(rf"^{_SUB}/providers/microsoft\.network/networkwatchers$")),
    ("watcher", re.compile(rf"{_WATCHER}$")),
    ("watcher_action", re.compile(rf"{_WATCHER}/(?P<action>[a-z]+)$")),
    ("capture", re.compile(rf"{_WATCHER}/packetcaptures/(?P<capture>[^/]+)(?:/(?P<verb>querystatus|stop))?$")),
    ("sub_resources", re.compile(rf"^{_SUB}/resources$")),
    ("storage_list", re.compile(rf"^{_STORAGE}$")),
    ("storage_list_all", re.compile(rf"^{_SUB}/providers/microsoft\.storage/storageaccounts$")),
    ("storage", re.compile(rf"^{_STORAGE}/(?P<name>[^/]+)$")),
    ("storage_keys", re.compile(rf"^{_STORAGE}/(?P<name>[^/]+)/listkeys$")),
    ("list_all", re.compile(r"^/subscriptions/(?P<sub>[^/]+)/providers/microsoft\.network/(?P<kind>[a-z]+)$")),
    (
        "operation",
        re.compile(
            r"^/subscriptions/(?P<sub>[^/]+)/providers/microsoft\.network/locations/[^/]+/"
            r"(?P<what>operations|operationresults)/(?P<op>[^/]+)$"
        ),
    ),
    ("list", re.compile(rf"^{_NET}/(?P<kind>[a-z]+)$")),
    (
        "action",
        re.compile(
            rf"^{_NET}/networkinterfaces/(?P<name>[^/]+)/"
            r"(?P<action>effectiveroutetable|effectivenetworksecuritygroups)$"
        ),
    ),
    ("item", re.compile(rf"^{_NET}/(?P<kind>[a-z]+)/(?P<name>[^/]+)$")),
    ("children", re.compile(rf"^{_NET}/(?P<kind>[a-z]+)/(?P<name>[^/]+)/(?P<child>[a-z]+)$")),
    ("child", re.compile(rf"^{_NET}/(?P<kind>[a-z]+)/(?P<name>[^/]+)/(?P<child>[a-z]+)/(?P<cname>[^/]+)$")),
]
_AAD = re.compile(r"^/(?P<tenant>[^/]+)/(?:v2\.0/\.well-known/(?P<oidc>openid-configuration)|oauth2/v2\.0/(?P<token>token))$")
_METADATA = re.compile(r"^/+metadata/endpoints$")
"""ARM's unauthenticated cloud description, which `az cloud register --endpoint-resource-manager` reads."""
_CHILD_SEGMENTS = {
    "subnets": "virtualnetworks",
    "securityrules": "networksecuritygroups",
    "routes": "routetables",
    "defaultsecurityrules": "networksecuritygroups",
}


@dataclass
class RecordedRequest:
    method: str
    path: str
    query: dict[str, list[str]]
    status: int
    body: Any = None


@dataclass
class _Reply:
    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


class ArmServer:
    """An HTTPS ARM endpoint over one `ArmState`; `start()` serves it on a background thread."""

    def __init__(
        self,
        state: ArmState,
        token: str,
        cert_file: Path,
        key_file: Path,
        host: str = "127.0.0.1",
        port: int = 0,
        log_file: Path | None = None,
        sign_in: SignIn | None = None,
        run_in_vm: RunInVm | None = None,
        blob_root: Path | None = None,
        stream_from_vm: StreamFromVm | None = None,
    ) -> None:
        self.state = state
        self.token = token
        self.sign_in = sign_in
        """The tenant and service principal whose token endpoint answers `az login`; None: no sign-in endpoint."""
        self.run_in_vm = run_in_vm
        """How `runCommand` reaches a VM; None: run-command answers as for a VM whose agent does not respond."""
        store = BlobStore(blob_root) if blob_root is not None else None
        self.blobs = BlobService(state, store, token, token) if store is not None else None
        """The storage accounts' Blob service; None: blob endpoints answer as an account with no blob service."""
        self.captures = PacketCaptures(state, store, stream_from_vm) if store is not None else None
        """Network Watcher's packet captures; None: a capture cannot be created (no store to write it to)."""
        self.requests: list[RecordedRequest] = []
        self._ops: dict[str, tuple[int, Any]] = {}
        self._lock = threading.Lock()
        self._log_file = log_file
        self._thread: threading.Thread | None = None
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def _serve(self) -> None:
                server._handle(self)

            do_GET = do_PUT = do_DELETE = do_POST = do_PATCH = do_HEAD = _serve

        self._httpd = ThreadingHTTPServer((host, port), Handler)
        self._httpd.daemon_threads = True
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(str(cert_file), str(key_file))
        self._httpd.socket = ctx.wrap_socket(self._httpd.socket, server_side=True)

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    def start(self) -> ArmServer:
        self._thread = threading.Thread(target=self.serve_forever, name="arm-emulator", daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self._httpd.serve_forever(poll_interval=0.05)

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    # -- request handling ----------------------------------------------------------------------------

    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        split = urlsplit(h.path)
        query = parse_qs(split.query)
        length = int(h.headers.get("Content-Length") or 0)
        raw = h.rfile.read(length) if length else b""
        body: Any = None
        base = f"https://{h.headers.get('Host')}"
        blob_host = BLOB_HOST.match((h.headers.get("Host") or "").rsplit(":443", 1)[0])
        if blob_host is not None:
            self._blob(h, blob_host["account"], split.path, query, raw)
            return
        aad = _AAD.match(split.path)
        if aad is not None and self.sign_in is not None:
            self._send(h, split.path, self._aad(h.command, aad, raw, base))
            return
        if _METADATA.match(split.path) and self.sign_in is not None and h.command == "GET":
            self._send(h, split.path, _Reply(200, compute.cloud_metadata(base, self.sign_in)))
            return
        try:
            if raw:
                try:
                    body = json.loads(raw)
                except json.JSONDecodeError:
                    raise ArmError(
                        400, "InvalidRequestContent", "The request content was invalid and could not be deserialized."
                    ) from None
            self._authorize(h.headers.get("Authorization"))
            if not query.get("api-version"):
                raise ArmError(
                    400,
                    "MissingApiVersionParameter",
                    "The api-version query parameter (?api-version=) is required for all requests.",
                )
            reply = self._dispatch(h.command, split.path, body, base, query)
        except (KeyError, TypeError, AttributeError, ValueError) as exc:  # a body the emulator could not read
            reply = _Reply(400, {"error": {"code": "InvalidRequestContent", "message": f"{type(exc).__name__}: {exc}"}})
        except ArmError as exc:
            reply = _Reply(exc.status, exc.body())
            if exc.status == 401:
                reply.headers["WWW-Authenticate"] = (
                    'Bearer authorization_uri="https://login.microsoftonline.com/common", '
                    'error="invalid_token", error_description="' + exc.message + '"'
                )
        self._record(RecordedRequest(h.command, split.path, query, reply.status, body))
        self._send(h, split.path, reply)

    def _send(self, h: BaseHTTPRequestHandler, path: str, reply: _Reply) -> None:
        payload = b"" if reply.body is None else json.dumps(reply.body).encode()
        h.send_response(reply.status)
        h.send_header("x-ms-request-id", str(uuid.uuid4()))
        for k, v in reply.headers.items():
            h.send_header(k, v)
        if payload:
            h.send_header("Content-Type", "application/json; charset=utf-8")
        h.send_header("Content-Length", str(len(payload)))
        h.end_headers()
        h.wfile.write(payload)

    def _blob(self, h: BaseHTTPRequestHandler, account: str, path: str, query: dict[str, list[str]], raw: bytes) -> None:
        """A Blob REST request: answered by the Blob service, with its own headers and XML (not ARM's JSON)."""
        if self.blobs is None:
            reply_status, reply_headers, payload = 404, {"x-ms-error-code": "ResourceNotFound"}, b""
        else:
            headers = {k.lower(): v for k, v in h.headers.items()}
            reply = self.blobs.handle(h.command, account, path, query, headers, raw)
            reply_status, reply_headers, payload = reply.status, reply.headers, reply.body
        self._record(RecordedRequest(h.command, f"//{account}.blob{path}", query, reply_status))
        h.send_response(reply_status)
        h.send_header("x-ms-request-id", str(uuid.uuid4()))
        for k, v in reply_headers.items():
            h.send_header(k, v)
        if "Content-Length" not in reply_headers:
            h.send_header("Content-Length", str(len(payload)))
        h.end_headers()
        if h.command != "HEAD":
            h.wfile.write(payload)

    def _record(self, rec: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(rec)
            if self._log_file is not None:
                with self._log_file.open("a", encoding="utf-8") as f:
                    f.write(json.dumps({"method": rec.method, "path": rec.path, "status": rec.status}) + "\n")

    def _aad(self, method: str, m: re.Match[str], raw: bytes, base: str) -> _Reply:
        """The tenant's sign-in endpoints; their errors have AAD's OAuth 2 shape. Never recorded: a form holds the secret."""
        assert self.sign_in is not None
        try:
            if m["oidc"] and method == "GET":
                return _Reply(200, compute.openid_configuration(base, m["tenant"], self.sign_in))
            if m["token"] and method == "POST":
                status, body = compute.token_reply(m["tenant"], parse_qs(raw.decode()), self.sign_in)
                return _Reply(status, body)
        except ArmError as exc:
            return _Reply(exc.status, {"error": exc.code, "error_description": exc.message})
        return _Reply(405, {"error": "invalid_request", "error_description": f"{method} is not supported here."})

    def _authorize(self, header: str | None) -> None:
        if not header:
            raise ArmError(401, "AuthenticationFailed", "Authentication failed. The 'Authorization' header is missing.")
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or token.strip() != self.token:
            raise ArmError(401, "InvalidAuthenticationToken", "The access token is invalid.")

    def _check_scope(self, groups: dict[str, str]) -> None:
        if "sub" not in groups:
            return
        if groups["sub"].lower() != self.state.subscription_id.lower():
            raise ArmError(404, "SubscriptionNotFound", f"The subscription '{groups['sub']}' could not be found.")
        if "rg" in groups and groups["rg"].lower() != self.state.resource_group.lower():
            raise ArmError(404, "ResourceGroupNotFound", f"Resource group '{groups['rg']}' could not be found.")

    def _accepted(self, base: str, api_version: str, status: int, result: Any) -> _Reply:
        op = str(uuid.uuid4())
        with self._lock:
            self._ops[op] = (status, result)
        root = f"{base}/subscriptions/{self.state.subscription_id}/providers/Microsoft.Network/locations/{self.state.location}"
        return _Reply(
            202,
            None,
            {
                "Azure-AsyncOperation": f"{root}/operations/{op}?api-version={api_version}",
                "Location": f"{root}/operationResults/{op}?api-version={api_version}",
                "Retry-After": "0",
            },
        )

    def _dispatch(self, method: str, path: str, body: Any, base: str, query: dict[str, list[str]]) -> _Reply:
        low = path.lower().rstrip("/")
        for route, pattern in _ROUTES:
            m = pattern.match(low)
            if m is None:
                continue
            groups = m.groupdict()
            self._check_scope(groups)
            # names keep the caller's spelling: take them from the original path at the same positions
            parts = [unquote(p) for p in path.rstrip("/").split("/")]
            return self._route(route, method, groups, parts, body, base, query)
        raise ArmError(404, "InvalidResourceType", f"No route for {method} {path}.")

    def _route(
        self, route: str, method: str, g: dict[str, str], parts: list[str], body: Any, base: str, query: dict[str, list[str]]
    ) -> _Reply:
        state = self.state
        api_version = query["api-version"][0]
        allowed = {
            "subscriptions": {"GET"},
            "tenants": {"GET"},
            "subscription": {"GET"},
            "provider": {"GET"},
            "rg_resources": {"GET"},
            "vm_list": {"GET"},
            "vm_list_all": {"GET"},
            "vm": {"GET"},
            "vm_action": {"POST"},
            "watchers": {"GET"},
            "watcher": {"GET"},
            "watcher_action": {"GET", "POST"},
            "capture": {"GET", "PUT", "POST", "DELETE"},
            "sub_resources": {"GET"},
            "rg": {"GET"},
            "storage_list": {"GET"},
            "storage_list_all": {"GET"},
            "storage": {"GET", "PUT", "PATCH"},
            "storage_keys": {"POST"},
            "list_all": {"GET"},
            "operation": {"GET"},
            "list": {"GET"},
            "action": {"POST"},
            "item": {"GET", "PUT", "DELETE"},
            "children": {"GET"},
            "child": {"GET", "PUT", "DELETE"},
        }[route]
        if method not in allowed:
            raise ArmError(405, "MethodNotAllowed", f"{method} is not supported on this resource.")
        if route in _OTHER_ROUTES:
            return self._other(route, method, g, parts, body, base, query)
        with state.lock:
            if route == "rg":
                return _Reply(
                    200,
                    {
                        "id": state.rg_id,
                        "name": state.resource_group,
                        "location": state.location,
                        "type": "Microsoft.Resources/resourceGroups",
                        "properties": {"provisioningState": "Succeeded"},
                    },
                )
            if route == "operation":
                with self._lock:
                    found = self._ops.get(g["op"])
                if found is None:
                    raise ArmError(404, "OperationNotFound", f"Operation {g['op']} was not found.")
                if g["what"] == "operations":
                    return _Reply(200, {"name": g["op"], "status": "Succeeded"})
                return _Reply(found[0], found[1])
            if route in ("storage_list", "storage_list_all"):
                return _Reply(200, {"value": state.list_storage_accounts()})
            if route == "storage":
                if method == "GET":
                    return _Reply(200, state.render_storage_account(parts[8]))
                rendered, created = state.put_storage_account(parts[8], _object(body), patch=method == "PATCH")
                return _Reply(201 if created and method == "PUT" else 200, rendered)
            if route == "storage_keys":
                name = state.render_storage_account(parts[8])["name"]
                return _Reply(200, {"keys": [{"keyName": f"key{i}", "value": key, "permissions": "FULL"}
                                             for i, key in enumerate(account_keys(self.token, name), 1)]})  # fmt: skip
            if route in ("list", "list_all"):
                return _Reply(200, {"value": state.list_resources(g["kind"])})
            if route == "action":
                name = parts[-2]
                result = (
                    state.effective_routes(name)
                    if g["action"] == "effectiveroutetable"
                    else state.effective_security_groups(name)
                )
                return self._accepted(base, api_version, 200, result)
            name = parts[8]
            if route == "item":
                return self._item(method, g["kind"], name, body, base, api_version)
            if _CHILD_SEGMENTS.get(g["child"]) != g["kind"]:
                raise ArmError(404, "InvalidResourceType", f"'{g['child']}' is not a child of '{g['kind']}'.")
            if route == "children":
                if g["child"] == "defaultsecurityrules":
                    state.render(g["kind"], name)
                    return _Reply(200, {"value": state.render(g["kind"], name)["properties"]["defaultSecurityRules"]})
                return _Reply(200, {"value": state.list_children(g["kind"], name)})
            child = parts[10]
            if g["child"] == "defaultsecurityrules":
                if method != "GET":
                    raise ArmError(405, "MethodNotAllowed", "Default security rules are read-only.")
                return _Reply(200, state.render_default_rule(name, child))
            return self._child(method, g["kind"], name, child, body, base, api_version)

    def _other(
        self, route: str, method: str, g: dict[str, str], parts: list[str], body: Any, base: str, query: dict[str, list[str]]
    ) -> _Reply:
        """Subscription, provider, generic-resource, Compute and Network Watcher paths (`compute`)."""
        state = self.state
        api_version = query["api-version"][0]
        tenant = self.sign_in.tenant_id if self.sign_in else ""
        if route == "subscriptions":
            return _Reply(200, {"value": [compute.subscription(state, tenant)]})
        if route == "tenants":
            return _Reply(200, {"value": [{"id": f"/tenants/{tenant}", "tenantId": tenant, "tenantCategory": "Home"}]})
        if route == "subscription":
            return _Reply(200, compute.subscription(state, tenant))
        if route == "provider":
            return _Reply(200, compute.provider(g["namespace"]))
        if route in ("rg_resources", "sub_resources"):
            return _Reply(200, {"value": compute.resource_list(state, next(iter(query.get("$filter") or []), None))})
        if route in ("vm_list", "vm_list_all"):
            return _Reply(200, {"value": compute.list_vms(state)})
        if route == "vm":
            return _Reply(200, compute.render_vm(state, parts[8]))
        if route == "vm_action":
            return self._run_command(g["action"], parts[8], body, base, api_version)
        if route == "watchers":
            return _Reply(200, {"value": [compute.watcher(state)]})
        if parts[8].lower() != compute.watcher(state)["name"].lower():
            raise ArmError(404, "ResourceNotFound", f"The Resource 'Microsoft.Network/networkWatchers/{parts[8]}' was not found.")
        if route == "watcher":
            return _Reply(200, compute.watcher(state))
        if route == "capture":
            return self._capture(method, parts[10], g["verb"], body, base, api_version)
        if g["action"] == "packetcaptures" and method == "GET":
            return _Reply(200, {"value": self.captures.list() if self.captures else []})
        if g["action"] != "ipflowverify" or method != "POST":
            raise ArmError(
                400,
                "FeatureNotSupportedInLab",
                f"Network Watcher '{parts[9]}' is not emulated in the lab (only ipFlowVerify is).",
            )
        return self._accepted(base, api_version, 200, compute.ip_flow_verify(state, _object(body)))

    def _capture(self, method: str, name: str, verb: str | None, body: Any, base: str, api_version: str) -> _Reply:
        """A packet capture: PUT creates (201 and an async operation, as ARM), GET shows, DELETE ends and forgets,
        POST `queryStatus` and `stop` are long-running operations."""
        captures = self.captures
        if captures is None:
            raise ArmError(400, "FeatureNotSupportedInLab", "This emulator has no blob store to write captures to.")
        if verb is None and method == "PUT":
            return self._written(captures.create(name, _object(body)), True, base, api_version)
        if verb is None and method == "GET":
            return _Reply(200, captures.show(name))
        if verb is None and method == "DELETE":
            return self._accepted(base, api_version, 204, None) if captures.delete(name) else _Reply(204)
        if verb == "querystatus" and method == "POST":
            return self._accepted(base, api_version, 200, captures.status(name))
        if verb == "stop" and method == "POST":
            captures.stop(name)
            return self._accepted(base, api_version, 200, None)
        raise ArmError(405, "MethodNotAllowed", f"{method} is not supported on this resource.")

    def _run_command(self, action: str, vm: str, body: Any, base: str, api_version: str) -> _Reply:
        if action != "runcommand":
            raise ArmError(400, "OperationNotSupported", f"Virtual machine operation '{action}' is not emulated in the lab.")
        compute.render_vm(self.state, vm)
        request = _object(body)
        if request.get("commandId") != "RunShellScript":
            raise ArmError(
                400,
                "InvalidParameter",
                f"Command id '{request.get('commandId')}' is not available for a Linux VM; use RunShellScript.",
            )
        if self.run_in_vm is None:
            raise ArmError(409, "VMAgentStatusCommunicationError", f"VM '{vm}' has not reported status for VM agent.")
        args = [str(p.get("value", "")) for p in request.get("parameters") or []]
        script = "\n".join(str(line) for line in request.get("script") or [])
        prologue = f"set -- {' '.join(shlex.quote(a) for a in args)}\n" if args else ""
        status, out, err = self.run_in_vm(vm, prologue + script)
        return self._accepted(base, api_version, 200, compute.run_command_output(status, out, err))

    def _written(self, rendered: Json, created: bool, base: str, api_version: str) -> _Reply:
        op = self._accepted(base, api_version, 200, rendered)
        return _Reply(201 if created else 200, rendered, {"Azure-AsyncOperation": op.headers["Azure-AsyncOperation"]})

    def _item(self, method: str, kind: str, name: str, body: Any, base: str, api_version: str) -> _Reply:
        if method == "GET":
            return _Reply(200, self.state.render(kind, name))
        if method == "PUT":
            rendered, created = self.state.put(kind, name, _object(body))
            return self._written(rendered, created, base, api_version)
        return self._accepted(base, api_version, 204, None) if self.state.delete(kind, name) else _Reply(204)

    def _child(self, method: str, kind: str, name: str, child: str, body: Any, base: str, api_version: str) -> _Reply:
        if method == "GET":
            return _Reply(200, self.state.render_child(kind, name, child))
        if method == "PUT":
            rendered, created = self.state.put_child(kind, name, child, _object(body))
            return self._written(rendered, created, base, api_version)
        return self._accepted(base, api_version, 204, None) if self.state.delete_child(kind, name, child) else _Reply(204)


_OTHER_ROUTES = frozenset(
    {"subscriptions", "tenants", "subscription", "provider", "rg_resources", "vm_list", "vm_list_all", "vm",
     "vm_action", "watchers", "watcher", "watcher_action", "capture", "sub_resources"}
)  # fmt: skip


def _object(body: Any) -> Json:
    if not isinstance(body, dict):
        raise ArmError(400, "InvalidRequestContent", "The request content must be a JSON object.")
    return body
