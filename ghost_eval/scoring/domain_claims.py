"""Claims the domain contradicts whatever a case's answer key says: facts of NSGs, routes and Linux traffic control
that a diagnosis can get wrong in any case (NSG priority order inverted, the NIC's NSG put before the subnet's for
inbound traffic, a system route said to beat the user route at fault, an OS fault or an NSG rule put where the case
has none, a DROP said to answer or a REJECT said to be silent), and a report that does not commit to a cause.

`keyfacts` reads the report's sentences and passes in how a sentence is asserted (not hedged, not refuted), so the
rules here say only what is wrong, not how prose weighs it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import cache

from ghost_eval.cases.case import Case, Layer
from ghost_eval.cases.phrases import PHRASE_FLAGS
from ghost_eval.scoring.model import ClaimHit
from ghost_eval.scoring.owner_claims import owner_claims
from ghost_eval.scoring.reach_claims import reach_claims
from ghost_eval.scoring.text import LAB_VM, LAB_VM_NAME, denied_before

__all__ = ["Asserting", "domain_claims"]

Asserting = Callable[[Callable[[str], bool]], "str | None"]
"""The first sentence, as the report wrote it, that says what the predicate tests and asserts it."""

_PRIORITY = r"(?<![\d./:-])(\d{3,5})(?!\.?\d|[/:-])"
_WINS = (
    r"(?:overrides?|overriding|wins?\W+over|takes?\W+precedence\W+over|beats|supersedes?|shadows?|trumps?"
    r"|is\W+(?:evaluated|processed|matched|applied)\W+(?:before|ahead\W+of)|is\W+(?:the\W+)?higher\W+priority"
    r"|puts?\W+(?:it|them)\W+(?:ahead\W+of|before|above)|(?:comes?|goes?|sits?|ranks?)\W+(?:ahead\W+of|before|above))"
)
_LOSES = r"(?:is\W+overridden\W+by|loses\W+to|is\W+shadowed\W+by|is\W+(?:evaluated|processed|matched|applied)\W+after)"
_PRIORITY_ORDER = re.compile(
    rf"{_PRIORITY}\b(?:(?!\d)[^.;]){{0,40}}?\b(?P<verb>{_WINS}|{_LOSES})\b(?:(?!\d)[^.;]){{0,50}}?{_PRIORITY}", PHRASE_FLAGS
)
"""Two NSG priorities in an order relation ("DenyAllInBound at 65500 overrides the allow at 500")."""


_HIGHER_WINS = re.compile(
    r"\b(?:high|larg|bigg)(?:er|est)\W+(?:priority\W+)?(?:numbers?|values?)\W+(?:\w+\W+){0,2}?(?:takes?\W+precedence|wins?|goes?\W+first|overrides?"
    r"|(?:is|are)\W+(?:evaluated|processed|applied|matched)\W+first)\b"
    r"|\blower\W+(?:priority\W+)?(?:numbers?|values?)\W+(?:\w+\W+){0,2}?(?:loses?|(?:is|are)\W+(?:evaluated|processed|applied|"
    r"matched)\W+(?:last|later|after))\b"
    r"|\b(?:from|starting\W+(?:from|with|at))\W+the\W+highest\W+(?:priority\W+)?(?:number|value)"
    r"|\b(?:evaluates?|processes?|applies|matches|checks?)\W+(?:the\W+)?(?:high|larg|bigg)(?:er|est)\W+(?:priority\W+)?"
    r"(?:numbers?|values?)\W+first\b"
    r"|\b(?:regardless\W+of|irrespective\W+of|whatever|no\W+matter(?:\W+what)?)\W+(?:the\W+|its\W+|their\W+)?"
    r"(?:priorit(?:y|ies)|(?:priority\W+)?numbers?)\b"
    r"|\bden(?:y|ies)\W+(?:rules?\W+)?always\W+(?:wins?|overrides?|beats?|takes?\W+precedence|(?:goes?|comes?)\W+first)\b"
    r"|\bhigher\W+(?:numbers?|values?)\W+(?:\w+\W+){0,3}?higher\W+priority\b"
    r"|\b(?:the\W+)?last\W+(?:match(?:ing)?|matched)(?:\W+rule)?\W+(?:wins|takes?\W+precedence|applies|is\W+applied)\b",
    PHRASE_FLAGS,
)
"""The order stated as a rule ("since the higher number takes precedence, the allow should win", "Azure evaluates
rules from the highest number down", "a deny overrides an allow regardless of priority" (or "whatever their
priority"), "it is the higher number and
therefore the higher priority", "Azure applies Deny rules ahead of Allow rules regardless of their numbers", "a deny
always wins", "rules are processed in ascending order and the last match wins": an NSG stops at the first match)."""
_DEFAULT_RULE = (
    r"(?:\b(?:AllowVnetInBound|AllowAzureLoadBalancerInBound|DenyAllInBound|AllowVnetOutBound|AllowInternetOutBound"
    r"|DenyAllOutBound)\b|(?<![\d.])(?:65000|65001|65500)\b)"
)
_DEFAULT_FIRST = re.compile(
    rf"\b(?:evaluates?|processes|applies|matches|checks|consults)\W+(?:the\W+)?(?:default\W+)?{_DEFAULT_RULE}"
    r"(?:\W+(?:rule|at|priority|prio|\d+))*\W+first\b|"
    rf"{_DEFAULT_RULE}"
    r"(?:\W+(?:the|default|rule|at|priority|prio|\d+|is|are|also))*\W+"
    r"(?:(?:evaluated|processed|applied|matched|checked|consulted)\W+first|(?:takes?|has|with)\W+(?:(?:a|the)\W+)?(?:higher\W+)?"
    r"precedence|higher\W+priority|more\W+authoritative|should\W+win|wins)\b",
    PHRASE_FLAGS,
)
"""A default rule (65000 and up: evaluated after every custom rule) said to go first or win ("AllowVnetInBound at 65000
is matched first", "Azure evaluates the default AllowVnetInBound rule (65000) first", "since 65000 is the higher
priority"): only what is said of the rule itself, so "… lower than AllowVnetInBound 65000, so it wins" (the custom rule
wins) is not read as the default rule winning."""


def _inverted_priority(sentence: str) -> bool:
    """Whether the sentence says a rule with a higher priority number wins over one with a lower number: an NSG
    evaluates its rules from the lowest number up, and the first match decides."""
    if _HIGHER_WINS.search(sentence) or _DEFAULT_FIRST.search(sentence):
        return True
    for m in _PRIORITY_ORDER.finditer(sentence):
        first, second = int(m.group(1)), int(m.group(3))
        priorities = all(100 <= n <= 4096 or 65000 <= n <= 65500 for n in (first, second))
        if priorities and first != second and (first > second) == bool(re.fullmatch(_WINS, m.group("verb"), PHRASE_FLAGS)):
            return True
    return False


_HOME = r"(?:on|in|of|inside|within|belongs\W+to|(?:attached|added|applied)\W+(?:to|at)|sits\W+on|lives\W+in)"
"""What puts a rule on an NSG ("<rule> on <nsg>", "<rule> in the subnet NSG", "<rule> was added to <nsg>", "<rule>,
added at the subnet level")."""


@cache
def _placement(rule: str, nsg: str) -> re.Pattern[str]:
    """A sentence that puts `rule` on an NSG other than `nsg`: another NSG's name, another VM's NSG (either way round:
    "<vm>'s NSG", "the NSG of <vm>'s NIC", or just "on <vm>'s nic: <rule>"), or a subnet NSG (named or not: "the NSG
    on the default subnet", "the NSG associated with forensics-vnet/default") for a NIC's (`<vm>-nsg`) and a NIC's for
    a subnet's, as the rule's home, or as what a colon after that NSG introduces ("a subnet-level NSG that is evaluated
    first: rule <rule>, priority 100")."""
    owner = nsg.lower().removesuffix("-nsg") if nsg.lower().endswith("-vm-nsg") else None
    others = [
        rf"(?<![\w.-])(?!{re.escape(nsg)}\b)[\w.-]+-nsg\b",
        rf"(?<![\w-])(?!{re.escape(owner or '-')}\b)[\w-]+-vm(?:['\u2019]s)?\W+(?:(?:nic|own)\W+)?nsg\b",
        rf"(?<![\w-])(?!{re.escape(owner or '-')}\b)[\w-]+-vm['\u2019]s\W+(?:nic|network\W+interface)\b",
        rf"\bnsg\W+(?:of|on|(?:attached|applied)\W+to)\W+(?:the\W+)?\W*(?!{re.escape(owner or '-')}\b)[\w-]+-vm"
        r"(?:['\u2019]s\W+(?:nic|network\W+interface))?\b",
    ]
    if owner:
        others.append(
            r"subnet(?:-level|['\u2019]s)?\W+(?:level\W+)?nsg\b|nsg\W+(?:on|of|(?:attached|associated)\W+(?:to|with))\W+(?:the\W+)?"
            r"(?:(?:[\w-]+\W+)?subnet\b|[\w-]+-vnet/[\w-]+\b)"
            r"|subnet[-\s]level\b"
        )
    else:
        others.append(r"(?:nic|network\W+interface)(?:-level|['\u2019]s)?\W+(?:level\W+)?nsg\b")
    other, name = f"(?:{'|'.join(others)})", re.escape(rule)
    return re.compile(
        rf"{name}(?:(?!\.\s)[^;]){{0,80}}?\b{_HOME}\W+(?:the\W+)?{other}"
        rf"|\b(?:on|in)\W+(?:the\W+)?{other}\W+(?:\w+\W+){{0,4}}?{name}"
        rf"|\b{other}(?:['\u2019]s)?\W+(?:(?:has|holds|carries|contains)\b(?:(?!\.\s)[^;]){{0,80}}?|(?:\w+\W+){{0,3}}?){name}"
        rf"|\b{other}(?:(?!\.\s)[^;:]){{0,80}}:\s*(?:the\W+)?(?:rule\W+)?{name}",
        PHRASE_FLAGS,
    )


def _misplaced(rule: str, nsg: str, sentence: str) -> bool:
    """Whether the sentence puts the case's rule on another NSG than the one it sits on (and never names that one)."""
    lowered = sentence.lower()
    return rule.lower() in lowered and nsg.lower() not in lowered and _placement(rule, nsg).search(sentence) is not None


_ROUTE_FAULT = re.compile(r"(?i)\broute\b")
_SYSTEM_ROUTE_WINS = re.compile(
    r"(?<!\bthan\s)\b(?:vnet\W?local|system\s+routes?)\s+(?:\(?system\)?\s+)?(?:route\s+)?(?:always\s+)?(?:wins|takes?\s+(?:precedence|priority)|"
    r"overrides?|is\W+preferred|beats)\b|\b(?:udr|user\W+(?:defined\W+)?route|this\W+route)\W+(?:is\W+|are\W+)?"
    r"(?:ignored|(?:does\W+not|doesn['\u2019]?t)\W+apply|(?:can['\u2019]?t|cannot|can\W+not)\W+override)\b"
    r"|\b(?:always\W+)?prefers?\W+(?:the\W+)?(?:system\W+)?(?:vnet\W?local|system\W+route)"
    r"|\b(?:udrs?|user\W+(?:defined\W+)?routes?)\W+only\W+(?:take\W+effect|appl(?:y|ies)|matters?)\W+(?:for|to)\W+traffic\W+"
    r"(?:leaving|outside|bound\W+outside)\b",
    PHRASE_FLAGS,
)
"""A system route said to win over the case's user route ("Azure always prefers the system VnetLocal route", "user
routes only take effect for traffic leaving the address space"): Azure picks the longest prefix, and between equal
prefixes a user route over the system one, so the case's /32 (or the 0.0.0.0/0 it overrides) is the route in force."""
_ROUTE_ORDER_CLAIM = "A system route (VnetLocal) wins over the user route at fault, so that route is ignored."
_TYPE_OVER_PREFIX = re.compile(
    r"\b(?:udrs?|user\W+(?:defined\W+)?routes?|custom\W+routes?)\b[^.;]{0,80}?\b(?:regardless|irrespective)\W+of\W+"
    r"(?:\w+\W+){0,2}?(?:prefix\w*|length|specific\w*)\b",
    PHRASE_FLAGS,
)
"""A user route said to win whatever the prefixes ("Azure lets a user-defined route override a system route regardless
of prefix length"): Azure picks the longest prefix first; a route's type decides only between equal prefixes."""
_TYPE_OVER_PREFIX_CLAIM = "A user route wins over a system route whatever their prefixes (the longest prefix is chosen first)."
_ROUTE_PRIORITY = re.compile(
    r"(?i)\broutes?\b[^.;]{0,80}?\b(?:priority|precedence\s+value)\s*(?:of\s+|=\s*|:\s*)?\d+"
    r"|\b(?:lower|raise|change|set)\w*\s+(?:its|the\s+route['\u2019]?s?)\s+priority\b"
)
"""A route given a priority number ("this user route was created with priority 100"): Azure routes have none; a route
is chosen by the longest prefix, then by its source (user, BGP, system)."""
_ROUTE_PRIORITY_CLAIM = "A route has a priority number (Azure routes have none; the longest prefix is chosen)."


_NSG_WORD = re.compile(r"(?i)\bnsgs?\b|security\s+(?:group|rule)|\bAllowVnet|\bDenyAll")
_TABLE_ON_NIC = re.compile(
    r"(?:\b(?:route\W+)?table\b|[\w-]+-rt\b)[^.;]{0,60}?\b(?:attached|associated|applied|bound|linked)\W+(?:\w+\W+){0,3}?"
    r"(?:to|with)\W+(?:the\W+)?"
    rf"(?:{LAB_VM_NAME}['\u2019]?s?\W+)?(?:nic|network\W+interface)\b"
    r"|\b(?:attached|associated|applied|bound|linked)\W+(?:the\W+)?(?:route\W+table\W+(?:[\w-]+\W+)?|[\w-]+-rt\W+)"
    rf"(?:\w+\W+){{0,2}}?(?:to|with)\W+(?:the\W+)?(?:{LAB_VM_NAME}['\u2019]?s?\W+)?(?:nic|network\W+interface)\b",
    PHRASE_FLAGS,
)
"""A route table said to sit on a NIC ("the table was attached this morning directly to tf-source-vm's network
interface", "ghost-demo-s-rt, which networking associated with tf-source-vm's NIC", "attached route table
ghost-demo-s-rt directly to tf-source-vm's network interface"): Azure associates route tables with subnets only."""
_TABLE_ON_NIC_CLAIM = "A route table is associated with a NIC (Azure associates route tables with subnets only)."
_POLICY_FIRST = re.compile(
    r"\b(?:checks?|evaluates?|applies|consults?|reads?)\W+(?:the\W+)?(?:chain(?:['\u2019]s)?\W+)?(?:default\W+)?policy\W+"
    r"(?:first|before)\b"
    r"|\bpolicy\W+(?:is\W+|gets\W+)?(?:checked|evaluated|applied|consulted|matched)\W+(?:first|before\W+(?:the\W+|any\W+)?rules)\b"
    r"|\bpolicy\W+(?:\w+\W+){0,2}?(?:overrides?|wins?\W+over|takes?\W+precedence\W+over|beats)\W+(?:the\W+|any\W+|its\W+)?"
    r"(?:\w+\W+)?rules\b",
    PHRASE_FLAGS,
)
"""A chain's policy said to come before its rules ("netfilter checks the chain policy first and only walks the rules when
the policy allows the packet", "the DROP policy overrides the ACCEPT rules"): netfilter applies a built-in chain's
policy only to a packet that no rule of the chain decided."""
_POLICY_FIRST_CLAIM = "A chain's policy is applied before its rules (netfilter applies it only where no rule decided)."
_NSG_ORDER_CLAIM = "A rule with a higher priority number wins over one with a lower number (NSGs evaluate the lowest first)."
_NIC = r"(?:nic|interface|network\W+interface)(?:\W+level)?\W+(?:nsg|network\W+security\W+group)"
_NIC_FIRST = re.compile(
    rf"\b(?:check\w*|evaluat\w+|process\w*|consult\w*|appl\w+)\W+(?:(?:by|against|with|at)\W+)?(?:the\W+)?{_NIC}\W+first\b"
    rf"|\b{_NIC}\W+(?:\w+\W+){{0,2}}?first\b[^.;]{{0,50}}\bthen\b[^.;]{{0,40}}\bsubnet\b"
    rf"|\bgate\W*(?:1|one)\s*(?:[(:=\u2014-]|is\b)\s*\W*{_NIC}|\b{_NIC}\W+(?:is\W+)?(?:evaluated|checked|processed|applied)\W+before\W+(?:the\W+)?subnet",
    PHRASE_FLAGS,
)
"""For inbound traffic the subnet's NSG is evaluated before the NIC's (outbound the other way round): a sentence that
puts the NIC's first for inbound ("azure checks the NIC NSG first and then the subnet NSG", "inbound traffic is checked at
the NIC NSG first", "Gate 1 (NIC NSG …)"); "deny
at gate 1, nic nsg never evaluated" names no gate."""
_NIC_FIRST_CLAIM = "For inbound traffic the NIC's NSG is evaluated before the subnet's (the subnet's comes first)."
_OUTBOUND = re.compile(r"\b(?:outbound|egress|leaving|outgoing)\b", re.IGNORECASE)


_DEVICE = r"(?:nva|appliance|vm|router|firewall|box|instance)"
_DEVICE_STATE = (
    r"(?:(?:is|was|are|looks|seems)\W+(?:\w+\W+)?(?:up|running|stopped|deallocated|powered\W+off|shut\W+down|overloaded|"
    r"misconfigured|healthy)\b|ip\W+forwarding\b|(?:its|the|whose)\W+(?:own\W+)?(?:firewall|polic(?:y|ies)|routing\W+table)\b)"
)
_NOTHING_THERE = re.compile(
    r"(?i)\b(?:no|not\W+an?|not\W+any)\W+(?:\w+\W+)?(?:vm|nic|device|appliance|nva|machine|host|interface|one)\b"
    r"|\b(?:nothing|nobody|non-?existent|phantom|missing|absent|no\W+such)\b"
    r"|\b(?:does|do)\W*(?:not|n['\u2019]t)\W+exist|\b(?:is|are)\W*(?:not|n['\u2019]t)\W+there\b"
)
"""A sentence that says the address is empty ("no VM holds 10.0.1.253", "a phantom next hop") invents nothing."""


@cache
def _device_at(address: str) -> re.Pattern[str]:
    """A device at the address (or its last octet, ".253") given a state or a setting: "nva vm at .253 is up but ip
    forwarding is off", "the appliance at 10.0.1.100 is stopped", "10.0.1.253 (the NVA) has its firewall dropping"."""
    last = re.escape("." + address.rsplit(".", 1)[-1])
    at = rf"(?:{re.escape(address)}|(?<![\d.]){last})(?![\d.])"
    return re.compile(
        rf"(?i)\b{_DEVICE}\b[^.;]{{0,40}}?{at}[^.;]{{0,60}}?{_DEVICE_STATE}"
        rf"|{at}[^.;]{{0,40}}?\b{_DEVICE}\b[^.;]{{0,60}}?{_DEVICE_STATE}"
    )


def _invented_device(case: Case, sentence: str) -> bool:
    """Whether the sentence gives a device at a next hop nothing holds a state or a setting, without saying it is not
    there."""
    addresses = [f.next_hop_absent for f in case.ground_truth if f.next_hop_absent]
    return any(_device_at(a).search(sentence) for a in addresses) and not _NOTHING_THERE.search(sentence)


_INVENTED_CLAIM = "A device at the route's next hop is up, stopped or misconfigured (nothing holds that address)."


_SHAPING = re.compile(r"(?i)\b(?:qdisc|netem|tbf|htb|tc|shap\w*|traffic\s+control)\b")
_SHAPING_FAULT = re.compile(
    r"(?i)\b(?:netem|tbf|htb|prio|loss|delay|latency|rate|corrupt\w*|shap\w*|issue|problem|culprit|cause)\b"
)
"""What says the shaping at fault is there: its kind or effect, or a name for the fault ("throughput issue = tc on
tf-dest-vm")."""
_PLACED_ON = re.compile(
    rf"(?i)(?:\b(?:on|in|(?:comes?|coming|originates?|originating)\s+from)\W+(?:the\W+)?\**{LAB_VM_NAME}|^\W*{LAB_VM_NAME}\W*:)"
    rf"|{LAB_VM_NAME}\**(?:\s*\([^()]{{0,40}}\))?(?:['\u2019]s\W+(?:[\w-]+\s+)?(?:eth\d|nic|(?:network\s+)?interface|egress|primary"
    r"|firewall|iptables|qdisc|[\w-]+\s+chain)|\s+eth\d|\s+(?:outbound|inbound|egress|ingress|primary|main)\s+(?:nic|interface)\b"
    r"|\s+(?:has|carries|holds|runs)\s+(?:an?\s+|the\s+)?(?:[\w-]+[\s/]+){0,2}?(?:iptables|nft|firewall|netem|tbf|htb|qdisc|"
    r"INPUT|OUTPUT|rule|chain))"
)
"""Where a sentence places a thing on a VM: "on tf-dest-vm", "tf-dest-vm's eth0" (or "tf-dest-vm's default-route
interface", "tf-source-vm outbound nic"), "tf-dest-vm's f2b-sshd chain",
"tf-dest-vm eth0:", "tf-source-vm has an iptables OUTPUT rule" or "has a f2b-sshd chain" (its address in brackets between:
"tf-dest-vm (10.0.1.5) has a tbf qdisc"), "the latency comes from tf-dest-vm"."""
_ITS = re.compile(
    r"(?i)(?:\s*\([^()]{0,40}\))?(?:[^.;:]{0,30}?[:,])?[^.;:]{0,60}?\s+its\s+(?:eth\d|nic|interface|egress|qdisc|firewall|"
    r"iptables|INPUT|OUTPUT|[\w-]+\s+chain)\b"
)
"""A VM as the subject, its part named by "its" ("tf-dest-vm delays its replies: its eth0 has a netem qdisc", "comes
from tf-dest-vm (10.0.1.5): a netem qdisc on its interface", "tf-dest-vm drops a fifth of the packets arriving on its
eth0"): what stands by that part is placed on the VM too."""
_CLEAN = re.compile(
    r"(?i)\b(?:default(?![-\s]+(?:route|class|band|gw|gateway)\b)|clean|fq_codel|mq|pfifo\w*|nothing|none|no|not|without|"
    r"only\s+the|unaffected|untouched)\b|\b(?:is|has|does|was|are|have|do|did)n['\u2019]?t\b"
)
"""What a sentence about a VM's qdisc says when it calls that VM clean ("tf-dest-vm has the default mq/fq_codel", "it
isn't shaped"); the default route's interface and htb's default class are parts of a shaping, not a clean VM, and traffic
that "can't" pass is the fault's effect."""


_FIREWALL = re.compile(
    r"(?i)\b(?:iptables|nft|INPUT|OUTPUT|FORWARD|firewall|rules\.v4|chain|fail2ban|f2b-sshd|DOCKER(?:-[A-Z\d-]+)?)\b"
)
_FIREWALL_FAULT = re.compile(r"(?i)\b(?:DROP|REJECT|drop(?:s|ped|ping)?|reject(?:s|ed|ing)?|block(?:s|ed|ing)?|ban(?:s|ned)?)\b")
"""fail2ban is a firewall's owner: its ban is a REJECT in the VM's own chain."""
_FAULT_KINDS = {
    "shaping": (_SHAPING, _SHAPING_FAULT, "The traffic shaping sits on a VM where the case has none."),
    "firewall": (_FIREWALL, _FIREWALL_FAULT, "The firewall rule at fault sits on a VM where the case has none."),
}
"""An OS fault's kind: what names it, what says it is there, and the claim a sentence putting it elsewhere makes."""


def _near(place: tuple[int, int], words: tuple[int, int]) -> bool:
    """Whether a fault's words stand by a place: at most 60 characters from the place to the words' far end."""
    return max(place[0], words[1]) - min(place[1], words[0]) <= 60


def _fault_elsewhere(case: Case, kind: str, sentence: str) -> bool:
    """Whether the sentence puts the case's OS fault of this kind (a qdisc, a firewall rule) on a VM that has none: it
    places it on one VM ("on tf-source-vm", "tf-source-vm's eth0"), not a faulty one of that kind, and says the fault is
    there (a netem or a loss; a DROP or a block), not that the VM is clean. Naming where traffic goes ("cannot reach
    tf-dest-vm") places nothing."""
    names, says, _ = _FAULT_KINDS[kind]
    hosts = {f.host for f in case.ground_truth if f.layer is Layer.OS and f.host and names.search(f.resource or "")}
    if not hosts:
        return False
    for clause in sentence.split(";"):  # "… in tf-source-vm's OUTPUT chain …; tf-dest-vm is clean": each clause apart
        placed = set()
        for m in LAB_VM.finditer(clause):
            its = _ITS.match(clause, m.end())
            if not _PLACED_ON.search(clause[max(0, m.start() - 12) : m.end() + 40]) and its is None:
                continue
            after = its.end() if its is not None else m.end()  # "… arriving on its eth0 through a netem rule"
            if any(
                _near(m.span(), n.span())
                or (n.start() >= after and _near((after, after), n.span()) and not LAB_VM.search(clause, after, n.start()))
                for n in names.finditer(clause)
            ):
                placed.add(m.group(0))  # the fault's words stand by the VM, or follow the part of it "its" names
        if len(placed) == 1 and not placed <= hosts and says.search(clause) is not None and _CLEAN.search(clause) is None:
            return True
    return False


_JUMP = re.compile(r"-j\s+(DROP|REJECT)\b")
_SAID_TARGET = {
    "DROP": re.compile(
        r"(?i)(?:\b(?:an?|the)\s+|(?<!\S)-j\s+)REJECT\b|\bREJECT\s+(?:rule|target|entry)\b|\breject-with\b"
        r"|\b(?:sends?|returns?|answers?|replies|respond\w*)\s+(?:back\s+)?(?:with\s+)?(?:an?\s+)?(?:tcp\s+)?"
        r"(?:RST|resets?|icmp[- ]port[- ]unreachable|port[- ]unreachable)\b|\bwith\s+(?:a\s+)?tcp[- ]reset\b"
    ),
    "REJECT": re.compile(
        r"(?i)(?:\b(?:an?|the)\s+|(?<!\S)-j\s+)DROP\b(?!\s+policy)|\bDROP\s+(?:rule|target|entry)\b"
        r"|\bsilently\s+(?:drop\w*|discard\w*)\b|\b(?:drop\w*|discard\w*)\b(?:(?!\.\s)[^;]){0,60}\bsilently\b"
    ),
}
"""What a sentence says when it gives the rule the other target: a REJECT, or an answer (a reset, port-unreachable),
where the case's rule is a DROP; a DROP, or a silent discard, where it is a REJECT."""
_TARGET_CLAIM = {
    "DROP": "The firewall rule at fault rejects (answers with a reset or port-unreachable); it is a DROP, which answers nothing.",
    "REJECT": "The firewall rule at fault drops silently; it is a REJECT, which answers every packet it matches.",
}


def _firewall_target(case: Case) -> str | None:
    """The one target (`-j DROP` or `-j REJECT`) the case's OS faults write, as their ground truth states it."""
    targets = {m[1] for f in case.ground_truth if f.layer is Layer.OS for m in _JUMP.finditer(f"{f.resource} {f.description}")}
    return targets.pop() if len(targets) == 1 else None


def _other_target(target: str, sentence: str) -> bool:
    """Whether the sentence gives the rule the other target, not denied just before ("not a REJECT")."""
    return any(not denied_before(sentence, m.start(), words=3) for m in _SAID_TARGET[target].finditer(sentence))


_DROP_WORD = r"(?:(?:-j\W+)?(?:DROP|REJECT)\b|drop-?all\b|drops\b|dropping\b|discards\b|blocks\b|kills\b|rejects\b)"
_NOT_THERE = r"(?:(?!->|\u2192|=>|\breturn|\bRETURN|\bno\b|\bnot\b|\bnever\b|\bnothing\b|\bSTAGE|\bchains\b|[;:(]).)"


def _no_drop_chains(case: Case) -> list[str]:
    """The chains the case's firewall faults write that hold no DROP or REJECT (Docker's DOCKER-USER, which only
    RETURNs), as the ground truth lists their targets."""
    return [chain for f in case.ground_truth for chain, targets in f.chains.items() if not {"DROP", "REJECT"} & set(targets)]


@cache
def _drop_in(chain: str) -> re.Pattern[str]:
    """A sentence that gives this chain the drop: "DOCKER-USER ends in a DROP", "the DROP is in DOCKER-USER", "the
    chain doing the damage is DOCKER-USER"; not a path that passes it on ("FORWARD -> DOCKER-USER -> STAGE-2 = DROP"),
    nor one that says it returns or holds no drop. A chain named with its owner's prefix may be named without it."""
    head, dash, rest = chain.partition("-")
    name = rf"(?:{re.escape(head)}-)?{re.escape(rest)}" if dash and "-" in rest else re.escape(chain)
    return re.compile(
        rf"\b{name}\b{_NOT_THERE}{{0,60}}?{_DROP_WORD}"
        rf"|\b(?:DROP|drop)\W+(?:\w+\W+){{0,2}}?(?:is|happens|sits|lives)\W+in\W+(?:the\W+)?{name}\b"
        rf"|\b(?:dropping|drops|damage|culprit)\W+(?:[\w']+\W+){{0,3}}?is\W+(?:the\W+)?{name}\b",
        PHRASE_FLAGS,
    )


_BUILTIN = ("INPUT", "OUTPUT", "FORWARD")


def _fault_chain(case: Case) -> str | None:
    """The one built-in chain every firewall fault of the case sits in (`iptables filter INPUT rule 1: …`), as its
    resource names it; None where there is none or several."""
    named = {
        chain
        for f in case.ground_truth
        if f.layer is Layer.OS and not _SHAPING.search(f.resource or "")
        for chain in _BUILTIN
        if re.search(rf"(?<![\w-]){chain}(?![\w-])", f.resource or "")
    }
    return named.pop() if len(named) == 1 else None


@cache
def _drop_in_builtin(chain: str, own: str) -> re.Pattern[str]:
    """A sentence that puts the drop in a built-in chain, written in capitals as iptables names it ("a rule in OUTPUT
        dropping tcp 9090", "an OUTPUT-chain rule drops ICMP", "the DROP sits in OUTPUT", "tf-dest-vm's OUTPUT chain: a DROP
    on …"), where the words between do
        not name the fault's own chain."""
    return re.compile(
        rf"(?<![\w-]){chain}(?:-chain\b|(?![\w-]))(?:(?!{own}){_NOT_THERE}){{0,60}}?{_DROP_WORD}"
        rf"|\b(?:DROP|drop)\W+(?:\w+\W+){{0,2}}?(?:is|happens|sits|lives)\W+in\W+(?:the\W+)?{chain}(?![\w-])"
        rf"|(?<![\w-]){chain}\W+chain\s*:\s*(?:an?\s+|the\s+)?{_DROP_WORD}"
    )


def _drop_in_other_chain(own: str, sentence: str) -> bool:
    """Whether the sentence puts the case's drop in another built-in chain (the other direction), not denied."""
    return any(
        not denied_before(sentence, m.start(), words=3)
        for chain in _BUILTIN
        if chain != own
        for m in _drop_in_builtin(chain, own).finditer(sentence)
    )


@cache
def _priority_said(rule: str) -> re.Pattern[str]:
    """A priority a sentence gives the rule: "ghost-demo-block-redis is 110", "…-redis (prio 110", "…-redis at 110"."""
    return re.compile(
        rf"(?i)(?<![\w-]){re.escape(rule)}(?![\w-])(?:\W+(?:\w+\W+){{0,3}}?(?:priority|prio|is|at|=)\W*|\W*\(\s*"
        rf"(?:priority\s*|prio\s*)?)(\d{{3,4}})(?!\d|\s*/|\s*(?:ms|s|tcp|udp)\b)"
    )


def _wrong_priority(priorities: dict[str, str], sentence: str) -> bool:
    """Whether the sentence gives one of the case's NSG rules a priority other than its own ("redis is 110" where
    redis is 150 and postgres 110)."""
    return any(m[1] != own for rule, own in priorities.items() for m in _priority_said(rule).finditer(sentence))


def _chain_listing(case: Case) -> str:
    return "; ".join(f"{c}: {', '.join(t) or 'empty'}" for f in case.ground_truth for c, t in f.chains.items())


def _drop_misplaced(chains: Sequence[str], sentence: str) -> bool:
    """Whether the sentence puts the drop in a chain that holds none, not denied just before ("not in DOCKER-USER")."""
    return any(not denied_before(sentence, m.start(), words=3) for chain in chains for m in _drop_in(chain).finditer(sentence))


_INGRESS = re.compile(r"(?i)\b(?:ingress|ifb\d*)\b")
_SHAPER = re.compile(r"(?i)\b(?:qdisc|netem|tbf|htb|ifb\d*|mirred|redirect\w*|polic\w+|shap\w*|rate\W+limit\w*)\b")
_INGRESS_CLAIM = (
    "The shaping sits on the receive side (an ingress qdisc or redirect); the case's qdisc is the interface's root, "
    "which shapes only what the VM sends."
)


def _root_shaping_only(case: Case) -> bool:
    """Whether the case shapes traffic, always with a root qdisc (`resource` says `root`): every one the original
    injects is `tc qdisc add dev … root`, which holds what the interface sends and nothing it receives."""
    shaping = [f.resource or "" for f in case.ground_truth if f.layer is Layer.OS and _SHAPING.search(f.resource or "")]
    return bool(shaping) and all(re.search(r"(?i)\broot\b", r) for r in shaping)


def _shaped_on_ingress(sentence: str) -> bool:
    """Whether the sentence puts shaping on a receive path: "ingress" or an ifb device within a few words of a qdisc's
    name ("netem … on the ingress side", "an ingress qdisc", "ifb redirect"), not denied ("no ingress qdisc")."""
    return any(
        not denied_before(sentence, m.start(), words=2)
        and _SHAPER.search(sentence[max(0, m.start() - 60) : m.end() + 40]) is not None
        for m in _INGRESS.finditer(sentence)
    )


_FABRIC = re.compile(
    r"\b(?:points?\W+to|(?:is|lies|sits)\W+(?:in|with|at)|comes?\W+from|caused\W+by|due\W+to)\W+(?:the\W+)?(?:azure\W+)?"
    r"(?:fabric|platform(?![\W_]+team)|hypervisor|host\W+hardware|physical\W+host|underlying\W+host)\b",
    PHRASE_FLAGS,
)
_FABRIC_CLAIM = "The fault lies in the Azure fabric or platform; every fault of the case is a configuration on a VM or in Azure."


def _blames_fabric(sentence: str) -> bool:
    """Whether the sentence puts the cause in the Azure fabric, platform or host hardware ("the loss is in the Azure
    fabric between them", "points to the platform"), not denied: a fault a run can find is a configuration it can read,
    in the guest or in the control plane, never the platform under them; "the platform team's work" is people."""
    return any(not denied_before(sentence, m.start(), words=2) for m in _FABRIC.finditer(sentence))


_UNDECIDED = re.compile(
    r"\b(?:cannot|can['\u2019]?t|could\s+not|couldn['\u2019]?t)\s+(?:confirm|tell|say|determine)\s+which\s+"
    r"(?:one|is\s+responsible|(?:of\s+(?:these|them|the\s+\w+))|cause)\b"
    r"|\b(?:cannot|can['\u2019]?t|could\s+not|couldn['\u2019]?t)\s+(?:confirm|tell|say|determine)\s+which\s*[,.;:)]"
    r"|\bbefore\s+(?:concluding|deciding|determining|knowing|saying)\s+(?:which|between|if|whether)\b"
    r"|\b(?:not\s+possible|impossible|no\s+way)\s+to\s+(?:say|tell|determine|know)\s+(?:\w+\s+){0,2}?which\b"
    r"|\b(?:before|without)\s+drawing\s+(?:a\s+|any\s+)?conclusions?\b"
    r"|\bneed\s+to\s+(?:look|dig|check|investigate)\s+(?:more|further)\b"
    r"|\bany\s+of\s+these\s+(?:could|might|may)\b|=\s*any\s+of\s+the\s+(?:\d|two|three|four)\b"
    r"|\bbefore\s+(?:i['\u2019]d|i\s+would|i\s+can|we\s+can|anyone\s+can)\s+(?:call|pin|blame)\s+(?:it|this)\b"
    r"|\beither\s+(?:\w+\s+){1,3}or\s+(?:\w+\s+){1,3}or\s+both\b"
    r"|\b(?:either|any)\s+(?:one\s+)?(?:of\s+(?:these|those|them|the\s+\w+)\s*(?:(?:two|three|four|\d)\s+)?)?(?:\([^)]{0,40}\)\s*|,[^,.;]{0,40},\s*)?"
    r"(?:could|might|may|would)\s+(?:(?:well|also|equally)\s+)?(?:be\b|explain|account|cause)"
    r"|\bany\s+of\s+(?:these|those|them)\s*="
    r"|\b(?:determine|say|tell|know|decide|confirm|separate|isolate)\s+which\s+(?:of\s+(?:these|them|the\s+\w+)\s+)?(?:one\s+)?"
    r"(?:dominates|matters\s+most|is\s+(?:the\s+)?(?:primary|dominant|main|real|actual))\b"
    r"|\b(?:treat|keep|consider)\s+(?:all|both)\s+(?:\w+\s+)?as\s+(?:candidate|possible|potential|open)\b"
    r"|\b(?:(?:does|do|can)\s*not|(?:does|do|ca)n['\u2019]?t)\s+(?:yet\s+|\w+ly\s+)?(?:separate|distinguish|tell\s+apart)\s+"
    r"(?:them|the\s+(?:two|three))\b"
    r"|\b(?:could|might|may)\s+be\b[^.;]{1,80},\s*(?:or\s+)?(?:it\s+)?(?:could|might|may)\s+(?:also\s+)?be\b"
    r"|\b(?:several|multiple|two|three|four)\s+(?:\w+\s+)?(?:explanations|causes|candidates|possibilities|hypotheses)\s+"
    r"(?:remain|are\s+still|still\s+stand)\s+open\b"
    r"|\bbefore\s+(?:a|the|any)\s+root\s+cause\s+can\s+be\s+(?:assigned|named|determined|confirmed|identified)\b"
    r"|\bequally\s+(?:possible|likely|plausible)\b"
    r"|\b(?:a\s+few|several|multiple|two|three|four)\s+(?:plausible|possible|candidate|competing)\s+(?:explanations|causes|"
    r"candidates|hypotheses)\b|\bcan['\u2019]?t\s+(?:yet\s+)?rank\b"
    r"|\bcan['\u2019]?t\s+(?:yet\s+)?say\s+(?:yet\s+)?(?:if|whether)\b"
    r"|\bnot\s+sure\s+(?:that|if|whether|it)(?:['\u2019]s|\s+is)?\s+(?:really\s+)?(?:a|the)\s+(?:fault|cause|problem|issue)\b"
    r"|[;,]\s*(?:but\s+)?(?:equally|alternatively)\s*,?\s+[^.;]{0,120}?\b(?:could|might|may)\b"
    r"|\b(?:to|i\s+(?:can['\u2019]?t|cannot)|we\s+(?:can['\u2019]?t|cannot))\s+(?:yet\s+)?tell\s+(?:these|them|the\s+(?:two|three))\s+apart\b"
    r"|\b(?:does\s+not|doesn['\u2019]?t)\s+settle\s+(?:it|the\s+question|which)\b"
    r"|\b(?:several|multiple|two|three)\s+(?:things|explanations|possibilities)\s+(?:could\s+explain|remain\b)",
    PHRASE_FLAGS,
)
"""A report that says it has not settled on a cause ("I cannot confirm which is responsible", "it is not possible to
say which of the two is responsible", "any of these could
explain it", "either the ban or the policy or both, need to look more", "… = any of the 3. need a longer baseline before
I'd call it", "several explanations remain open", "… before a root cause can be assigned", "it is equally possible
that …", "…; alternatively the NSG could be dropping it", "there are two plausible explanations", "a longer capture
would be needed to tell these apart", "it does not settle the question", "several things could explain"): it names
candidates, not the root cause."""
_UNDECIDED_CLAIM = "The report does not commit to a cause: it leaves several candidates open."


def domain_claims(case: Case, sentences: Sequence[str], asserting: Asserting) -> list[ClaimHit]:
    """Claims the domain contradicts whatever the case: NSG priority order inverted, the case's NSG rule put on an NSG
    it does not sit on (its ground truth names the rule as `<nsg>/<rule>`), the firewall rule given the other target
    (a DROP answers nothing, a REJECT answers); and a report that says it has not decided."""
    hits: list[ClaimHit] = []
    undecided = next((s for s in sentences if _UNDECIDED.search(s)), None)
    if undecided is not None:
        hits.append(ClaimHit(id="undecided", claim=_UNDECIDED_CLAIM, sentence=undecided))
    hits += owner_claims(case, asserting)
    if case.ground_truth and (fabric := asserting(_blames_fabric)) is not None:
        hits.append(ClaimHit(id="fabric", claim=_FABRIC_CLAIM, sentence=fabric))
    inverted = asserting(_inverted_priority)
    if inverted is not None:
        hits.append(ClaimHit(id="nsg_priority_order", claim=_NSG_ORDER_CLAIM, sentence=inverted))
    if (policy_first := asserting(lambda s: _POLICY_FIRST.search(s) is not None)) is not None:
        hits.append(ClaimHit(id="chain_policy_order", claim=_POLICY_FIRST_CLAIM, sentence=policy_first))
    nic_first = asserting(lambda s: _NIC_FIRST.search(s) is not None and not _OUTBOUND.search(s))
    if nic_first is not None:
        hits.append(ClaimHit(id="nsg_level_order", claim=_NIC_FIRST_CLAIM, sentence=nic_first))
    if any(_ROUTE_FAULT.search(f"{f.resource} {f.description}") for f in case.ground_truth):
        ignored = asserting(lambda sentence: _SYSTEM_ROUTE_WINS.search(sentence) is not None)
        if ignored is not None:
            hits.append(ClaimHit(id="route_precedence", claim=_ROUTE_ORDER_CLAIM, sentence=ignored))
        by_type = asserting(lambda sentence: _TYPE_OVER_PREFIX.search(sentence) is not None)
        if by_type is not None:
            hits.append(ClaimHit(id="route_type_over_prefix", claim=_TYPE_OVER_PREFIX_CLAIM, sentence=by_type))
        numbered = asserting(lambda s: _ROUTE_PRIORITY.search(s) is not None and not _NSG_WORD.search(s))
        if numbered is not None:
            hits.append(ClaimHit(id="route_priority", claim=_ROUTE_PRIORITY_CLAIM, sentence=numbered))
        on_nic = asserting(lambda sentence: _TABLE_ON_NIC.search(sentence) is not None)
        if on_nic is not None:
            hits.append(ClaimHit(id="route_table_on_nic", claim=_TABLE_ON_NIC_CLAIM, sentence=on_nic))
    for kind, (_, _, claim) in _FAULT_KINDS.items():
        elsewhere = asserting(lambda sentence: _fault_elsewhere(case, kind, sentence))  # noqa: B023
        if elsewhere is not None:
            hits.append(ClaimHit(id=f"{kind}_placement", claim=claim, sentence=elsewhere))
    if (invented := asserting(lambda s: _invented_device(case, s))) is not None:
        hits.append(ClaimHit(id="next_hop_device", claim=_INVENTED_CLAIM, sentence=invented))
    hits += reach_claims(case, asserting)
    target = _firewall_target(case)
    if target is not None and (other := asserting(lambda sentence: _other_target(target, sentence))) is not None:
        hits.append(ClaimHit(id="firewall_target", claim=_TARGET_CLAIM[target], sentence=other))
    if (chains := _no_drop_chains(case)) and (placed := asserting(lambda s: _drop_misplaced(chains, s))) is not None:
        claim = f"The drop sits in {' / '.join(chains)}, which holds none (the case's chains: {_chain_listing(case)})."
        hits.append(ClaimHit(id="drop_chain", claim=claim, sentence=placed))
    priorities = {rule: value for rule, value in case.stated("priority").items() if value.isdigit()}
    if priorities and (wrong := asserting(lambda s: _wrong_priority(priorities, s))) is not None:
        listed = ", ".join(f"{rule} {value}" for rule, value in priorities.items())
        hits.append(ClaimHit(id="nsg_rule_priority", claim=f"An NSG rule is given another priority ({listed}).", sentence=wrong))
    own = _fault_chain(case)
    if own is not None and (elsewhere := asserting(lambda s: _drop_in_other_chain(own, s))) is not None:
        claim = f"The case's firewall rule sits in {own}; the drop is put in another built-in chain, the other direction."
        hits.append(ClaimHit(id="drop_builtin_chain", claim=claim, sentence=elsewhere))
    if _root_shaping_only(case) and (ingress := asserting(_shaped_on_ingress)) is not None:
        hits.append(ClaimHit(id="shaping_direction", claim=_INGRESS_CLAIM, sentence=ingress))
    for nsg, rule in [pair for f in case.ground_truth if (pair := f.nsg_rule)]:
        hit = asserting(lambda sentence: _misplaced(rule, nsg, sentence))  # noqa: B023 (used at once)
        if hit is not None:
            hits.append(ClaimHit(id="nsg_placement", claim=f"{rule} sits on another NSG than {nsg}.", sentence=hit))
    return hits
