"""What a run read from the control plane, and how a list-valued Azure CLI argument's current values read back from
an output (`az … show` JSON, `-o table`, `-o tsv`, ARM JSON): the evidence criterion 1 weighs a replaced list against.

`RunReads` is built with the parsed run (`ghost_eval.scoring.parsed`) and looked up by the list-argument check.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from ghost_eval.run.artifacts import AuditEntry, ToolCall
from ghost_eval.shell.calls import AzCall, az_call
from ghost_eval.shell.commands import Command

__all__ = [
    "LIST_FLAGS",
    "NAME_OPTIONS",
    "VM_RESETS",
    "WILDCARDS",
    "RunReads",
    "resource_kind",
    "rest_request",
    "split_values",
    "values_in_output",
]


@dataclass(frozen=True, slots=True)
class _ListKeys:
    """How the current values of a list-valued flag read back from `az … show` or ARM JSON output."""

    items: re.Pattern[str]
    """`"serviceEndpoints": [ … ]` holding plain strings."""
    item: re.Pattern[str] | None
    """`"service": "Microsoft.Sql"`: one value per element (or a singular field)."""
    empty: re.Pattern[str]
    keys: tuple[str, ...]
    """The list's field names (plural, then singular): what a `--query` or a table column names it by."""

    @classmethod
    def of(cls, plural: str, singular: str | None) -> _ListKeys:
        return cls(
            items=re.compile(rf'"{plural}"\s*:\s*\[([^\[\]]*)\]'),
            item=re.compile(rf'"{singular}"\s*:\s*"([^"]*)"') if singular else None,
            empty=re.compile(rf'"{plural}"\s*:\s*(?:\[\s*\]|null)'),
            keys=(plural, singular) if singular else (plural,),
        )


LIST_FLAGS: dict[str, _ListKeys] = {
    "--service-endpoints": _ListKeys.of("serviceEndpoints", "service"),
    "--address-prefixes": _ListKeys.of("addressPrefixes", "addressPrefix"),
    "--source-address-prefixes": _ListKeys.of("sourceAddressPrefixes", "sourceAddressPrefix"),
    "--destination-address-prefixes": _ListKeys.of("destinationAddressPrefixes", "destinationAddressPrefix"),
    "--destination-port-ranges": _ListKeys.of("destinationPortRanges", "destinationPortRange"),
    "--source-port-ranges": _ListKeys.of("sourcePortRanges", "sourcePortRange"),
    "--source-asgs": _ListKeys.of("sourceApplicationSecurityGroups", None),
    "--destination-asgs": _ListKeys.of("destinationApplicationSecurityGroups", None),
    "--dns-servers": _ListKeys.of("dnsServers", None),
    "--ip-rules": _ListKeys.of("ipRules", "ipAddressOrRange"),
    "--delegations": _ListKeys.of("delegations", "serviceName"),
    "--service-endpoint-policy": _ListKeys.of("serviceEndpointPolicies", None),
    "--bypass": _ListKeys.of("bypass", "bypass"),
}
"""List-valued flags: set on an existing resource by an update, each replaces the whole list."""
_QUOTED_VALUE = re.compile(r'"([^"]*)"')
WILDCARDS = frozenset({"*", "any", "internet", "0.0.0.0/0", "::/0", "1-65535", "0-65535"})
"""Values that mean everything: never a value lost, never a narrow rule."""
NAME_OPTIONS = ("--name", "--subnet-name", "--rule-name")
"""The options an `az` call names its resource by."""
_SPLIT_VALUES = re.compile(r"[\s,;\[\]\"']+")
_SERVICE_NAME = re.compile(r"(?<![\w/.])Microsoft\.[A-Za-z]+(?:\.[A-Za-z]+)?(?![\w/.])")
_TRUNCATED_AT = 200
"""A v1 audit line keeps the first 200 characters of an output: one that long may have been cut."""


def resource_kind(call: AzCall) -> str:
    """What an `az` call acts on: `subnet`, `nsg_rule`, `route`, else its last command group."""
    groups = call.groups
    if groups[-2:] == ("vnet", "subnet"):
        return "subnet"
    if groups[-2:] == ("nsg", "rule"):
        return "nsg_rule"
    if groups[-2:] == ("route-table", "route"):
        return "route"
    return groups[-1] if groups else ""


def rest_request(call: AzCall | None) -> tuple[str, str] | None:
    """(METHOD, body) of an `az rest` call (`--body @file.json`, a typed JSON, or ""); None for any other command."""
    if call is None or call.verb != "rest":
        return None
    return (call.value("--method", "-m") or "").upper(), call.value("--body", "-b") or ""


_STDOUT = re.compile(r"\[stdout\](?:\\n|\n)(?P<out>.*?)(?:(?:\\n|\n)\[stderr\]|$)", re.DOTALL)


def _carried(cmd: Command) -> bool:
    """Whether `az vm run-command` ran the command in the guest: its output comes back wrapped in the call's JSON."""
    return any(w[:3] == ("az", "vm", "run-command") for w in cmd.wrappers)


def guest_output(output: str) -> str:
    """What a command run through `az vm run-command` printed: the `[stdout]` part of the message the call returns
    (`{"value": [{"message": "Enable succeeded: \\n[stdout]\\n-A INPUT …"}]}`), not the envelope's JSON lines; an
    output with no such part is returned as it is."""
    try:
        messages = [str(v.get("message", "")) for v in json.loads(output).get("value", [])]
    except (ValueError, AttributeError):
        messages = [output]
    found = [m["out"] for text in messages if (m := _STDOUT.search(text)) is not None]
    return "\n".join(out.replace("\\n", "\n") for out in found) if found else output


VM_RESETS = frozenset({"restart", "redeploy", "stop", "deallocate", "delete", "reimage", "resize"})
"""`az vm` verbs that stop or restart the guest (a resize restarts it on the new size): everything running inside the VM
(its qdiscs, rules, services) with it."""


_READ_KINDS: dict[str, frozenset[str]] = {
    "subnet": frozenset({"subnet"}),
    "vnet": frozenset({"vnet", "subnet"}),
    "nsg_rule": frozenset({"nsg_rule"}),
    "nsg": frozenset({"nsg", "nsg_rule"}),
}
_TOOL_KINDS: tuple[tuple[str, frozenset[str]], ...] = (
    ("subnet", frozenset({"subnet"})),
    ("vnet", frozenset({"vnet", "subnet"})),
    ("virtual_network", frozenset({"vnet", "subnet"})),
    ("nsg", frozenset({"nsg", "nsg_rule"})),
    ("security", frozenset({"nsg", "nsg_rule"})),
    ("storage", frozenset({"account"})),
)


@dataclass(frozen=True, slots=True)
class _Read:
    kinds: frozenset[str]
    what: str
    """The command or tool call, to say where values came from and to match resource names."""
    where: str
    """Which line of the evidence it is ("audit line 2", "tool call 5")."""
    output: str
    partial: bool
    """The output was cut (v1 kept the first 200 characters)."""
    call: AzCall | None = None
    """The parsed `az` read (None for an inspector tool call): its `--query` and `--output` decide what it shows."""

    def shows(self, flag: str) -> bool:
        """Whether this read can show the flag's list at all: a `--query` that projects other fields, or filters the
        list's own elements (`serviceEndpoints[?service=='Microsoft.Storage']`), leaves the list out."""
        queries = self.call.options.get("--query", ()) if self.call is not None else ()
        keys = LIST_FLAGS[flag].keys
        for query in queries:
            lowered = query.lower()
            if any(f"{k.lower()}[?" in lowered for k in keys):
                return False
            fields = {f.lower() for f in _QUERY_FIELD.findall(_QUERY_FILTER.sub("", query))}
            if fields and not fields & {k.lower() for k in keys}:
                return False
        fmt = self.call.value("--output", "-o") if self.call is not None else None
        columns = _table_columns(self.output) if fmt == "table" else None
        return columns is None or bool(columns & {k.lower() for k in (*keys, *self._aliases(flag))})

    def cut_inside_list(self, flag: str) -> bool:
        """A v1 output cut while it lists the elements one by one (`"service": "Microsoft.Sql"`, then the cut): the
        values seen are the first of the list, and what followed the cut is unknown."""
        keys = LIST_FLAGS[flag]
        return self.partial and not keys.items.search(self.output) and not keys.empty.search(self.output)

    def _projected(self) -> set[str]:
        """The fields the read's `--query` projects (none: the whole resource)."""
        queries = self.call.options.get("--query", ()) if self.call is not None else ()
        return {f.lower() for q in queries for f in _QUERY_FIELD.findall(_QUERY_FILTER.sub("", q))}

    def _aliases(self, flag: str) -> dict[str, str]:
        """The keys the read's `--query` shows the list's fields under (`{src:sourceAddressPrefix}` → `src`)."""
        queries = self.call.options.get("--query", ()) if self.call is not None else ()
        keys = {k.lower(): k for k in LIST_FLAGS[flag].keys}
        return {a: keys[f.lower()] for q in queries for a, f in _QUERY_ALIAS.findall(q) if f.lower() in keys}

    def values(self, flag: str, name: str) -> list[str] | None:
        """The values this read shows for the flag's list on the resource `name`; None when it does not show them."""
        if not self.shows(flag):
            return None
        fmt = self.call.value("--output", "-o") if self.call is not None else None
        aliases = self._aliases(flag)
        if fmt == "table":
            return _values_in_table(self.output, flag, name, self.partial, aliases)
        if fmt == "tsv" and (projected := self._projected()):
            return _values_in_tsv(self.output, self.partial, projected, LIST_FLAGS[flag].keys)
        output = self.output
        for alias, field in aliases.items():  # `"src": "*"` is the sourceAddressPrefix the query renamed
            output = re.sub(rf'"{re.escape(alias)}"(?=\s*:)', f'"{field}"', output)
        return values_in_output(output, flag)


_QUERY_FILTER = re.compile(r"\[\?[^\]]*\]")
_QUERY_FIELD = re.compile(r"(?<![\w'\"`])[A-Za-z_]\w*(?![\w'\"`(])")
"""A field a JMESPath query names (not a function, not a literal): what the query projects."""
_QUERY_ALIAS = re.compile(r"(?<![\w.'\"`])([A-Za-z_]\w*)\s*:\s*([A-Za-z_]\w*)(?![\w'\"`(])")
"""`{src:sourceAddressPrefix}`: a JMESPath multiselect hash shows a field under a key of its own."""


class RunReads:
    """Control-plane reads the run made (audit lines and trace calls), kept with their outputs.

    Built on the first lookup: only runs that replace a list argument need them.
    """

    def __init__(
        self,
        audit: Sequence[AuditEntry],
        audit_commands: Sequence[tuple[Command, ...] | None],
        trace: Sequence[ToolCall],
        trace_commands: Sequence[tuple[Command, ...] | None],
        audit_complete: bool,
    ) -> None:
        """`audit_commands` and `trace_commands` are the audit's and the trace's commands as `ParsedRun` holds them."""
        self._audit = audit
        self._audit_commands = audit_commands
        self._trace = trace
        self._trace_commands = trace_commands
        self._audit_complete = audit_complete

    @property
    def complete(self) -> bool:
        """False for v1 runs, whose inspector reads never reached the audit."""
        return self._audit_complete

    def _cut(self, output: str) -> bool:
        """Whether an audit line's output may end where v1 cut it."""
        return not self._audit_complete and len(output) >= _TRUNCATED_AT

    def checks(self) -> list[tuple[Command, str, bool]]:
        """Every read-only command the run executed, with its output and whether that output may be cut (a v1 audit
        line); the trace's outputs are whole."""
        found = [
            (c, call.output, False) for call, cmds in zip(self._trace, self._trace_commands, strict=True) for c in cmds or ()
        ]
        found += [
            (c, entry.output or "", self._cut(entry.output or ""))
            for entry, cmds in zip(self._audit, self._audit_commands, strict=True)
            for c in cmds or ()
        ]
        return [(c, guest_output(output) if _carried(c) else output, cut) for c, output, cut in found if not c.mutating]

    @cached_property
    def _reads(self) -> list[_Read]:
        """Full outputs first (the trace, our audit lines), then outputs cut to 200 characters (v1 audit lines)."""
        reads: list[_Read] = []
        for i, (call, commands) in enumerate(zip(self._trace, self._trace_commands, strict=True), start=1):
            if commands is not None:
                reads += self._command_reads(commands, call.output, False, f"tool call {i}")
                continue
            name = call.tool.lower()
            kinds: set[str] = set()
            for key, tool_kinds in _TOOL_KINDS:
                if key in name:
                    kinds |= tool_kinds
            if kinds:
                what = f"{call.tool}({json.dumps(call.arguments, sort_keys=True)})"
                reads.append(_Read(frozenset(kinds), what, f"tool call {i}", call.output, False))
        cut: list[_Read] = []
        for i, (entry, commands) in enumerate(zip(self._audit, self._audit_commands, strict=True), start=1):
            if commands is not None and entry.output is not None:
                partial = self._cut(entry.output)
                (cut if partial else reads).extend(self._command_reads(commands, entry.output, partial, f"audit line {i}"))
        return reads + cut

    @staticmethod
    def _command_reads(commands: tuple[Command, ...], output: str, partial: bool, where: str) -> list[_Read]:
        reads: list[_Read] = []
        for cmd in commands:
            call = az_call(cmd.argv)
            if call is not None and not cmd.mutating:
                kinds = _READ_KINDS.get(resource_kind(call), frozenset({resource_kind(call)}))
                reads.append(_Read(kinds, cmd.text, where, output, partial, call))
        return reads

    def lookup(self, kind: str, resource: str, parent: str | None, flag: str) -> tuple[list[str] | None, _Read | None]:
        """Current values of a list as the run read them from that very resource; (None, read) when it read the
        list but its output does not show the values; (None, None) when it never read that resource's list (a read
        whose `--query` leaves the list out is no read of it)."""
        reads = [r for r in self._reads if kind in r.kinds and _reads_resource(r, resource, parent) and r.shows(flag)]
        for read in reads:
            values = read.values(flag, resource)
            if values is not None:
                return values, read
        return None, reads[0] if reads else None


def _reads_resource(read: _Read, resource: str, parent: str | None) -> bool:
    """A read names the parent (VNet, NSG) it reads, and names or shows the resource itself."""
    if parent is not None and parent not in read.what:
        return False
    return resource in read.what or resource in read.output


def values_in_output(output: str, flag: str, *, loose: bool = True) -> list[str] | None:
    """The values an output shows for a flag's list; [] when it shows the list empty, None when it does not show it.

    `loose` also takes bare service names (a `-o tsv` listing); prose is read strictly, since "the subnet has no
    Microsoft.Storage endpoint" names a service it does not have.
    """
    keys = LIST_FLAGS[flag]
    values: list[str] = keys.item.findall(output) if keys.item else []
    for m in keys.items.finditer(output):
        # A list of plain strings; a list of objects shows its values in their singular field (`"service": …`), not
        # in every quoted key and value it holds (`"state": "Succeeded"` under a `--query` projection).
        values += _QUOTED_VALUE.findall(m.group(1)) if "{" not in m.group(1) else []
    if loose and not values and flag == "--service-endpoints":
        values = _SERVICE_NAME.findall(output)
    if values:
        return sorted({v for raw in values for v in split_values(raw)})
    return [] if keys.empty.search(output) else None


_TABLE_RULE = re.compile(r"^[\s-]*-{3,}[\s-]*$")


def _table_rule(lines: list[str]) -> int | None:
    """The line of a `-o table` output's dashed rule, under its header; None when it shows no table."""
    return next((i for i, line in enumerate(lines) if i and _TABLE_RULE.match(line)), None)


def _table_columns(output: str) -> set[str] | None:
    """The column names of a `-o table` output (lowercased), when its header line is whole (the dashed rule follows
    it); None when the output shows no header. `az … show -o table` leaves list columns such as service endpoints
    out: such a read never showed the list."""
    lines = output.splitlines()
    rule = _table_rule(lines)
    return None if rule is None else {c.lower() for c in lines[rule - 1].split()}


def _values_in_table(output: str, flag: str, name: str, partial: bool, aliases: dict[str, str]) -> list[str] | None:
    """`-o table` read as rows: the list's column (plural or singular name, or the key a query shows it under) in the
    row of the resource `name` (or the only row). A row the cut may have shortened (the last line of a v1 summary)
    shows nothing for certain."""
    lines = output.splitlines()
    rule = _table_rule(lines)
    if rule is None:
        return None
    spans = [(m.start(), m.end()) for m in re.finditer(r"-+", lines[rule])]
    header = [lines[rule - 1][a:b].strip().lower() for a, b in spans]
    wanted = {k.lower() for k in (*LIST_FLAGS[flag].keys, *aliases)}
    column = next((i for i, h in enumerate(header) if h in wanted), None)
    if column is None:
        return None
    rows = [line for line in lines[rule + 1 :] if line.strip()]
    cells = [[row[a : (b if j < len(spans) - 1 else None)].strip() for j, (a, b) in enumerate(spans)] for row in rows]
    named = [c for c in cells if "name" in header and c[header.index("name")] == name]
    chosen = named or (cells if len(cells) == 1 else [])
    if len(chosen) != 1 or (partial and rows[cells.index(chosen[0])] == rows[-1]):
        return None
    return sorted(set(split_values(chosen[0][column])))


def _values_in_tsv(output: str, partial: bool, projected: set[str], keys: tuple[str, ...]) -> list[str] | None:
    """`-o tsv` has no headers: a projection shows the list only when it projects nothing but the list (its values
    one per field); an uncut empty output is an empty list."""
    if partial or not projected <= {k.lower() for k in keys}:
        return None
    return sorted(set(split_values(output)))


def split_values(raw: str) -> list[str]:
    return [v for v in _SPLIT_VALUES.split(raw) if v]
