"""The phrase language of case files: case-insensitive regexes over report text, with shared `@concepts`.

A key fact or a wrong claim is written as regexes; `@name` stands for a concept of the shared vocabulary below, so
that every case says "the OS firewall" or "the destination VM" the same way, in all the words agents use for it.
Claims (`wrong_claims`, `contradicted_by`) are compiled so that `.` stays inside one clause and never crosses a
negation: `@nsg.{0,40}blocks` does not read "the NSG is not what blocks".
"""

from __future__ import annotations

import re

__all__ = ["CONCEPTS", "PHRASE_FLAGS", "compile_claim", "compile_phrase", "expand"]

PHRASE_FLAGS = re.IGNORECASE | re.MULTILINE

_NOT_A_HOST = r"(?!\W+(?:port|address|addr|ip|prefix|range|nat|cidr)\w*)"
"""After a role word: "source port", "destination address" name a packet's field, not a VM."""
_HOST_PART = r"(?=\W+(?:eth\d|nic|nsg|iptables|INPUT|OUTPUT|FORWARD|tc|qdisc)\b)"
"""A VM's own interface, NSG, firewall or qdisc after a role word ("dest INPUT", "src eth0")."""


def _role(words: str) -> str:
    """A VM named by its role alone, as terse reports do: "on dest", "from source", "src eth0", or a line's label
    ("dest: DROP tcp/5001 in INPUT"; not a rule's field, "source: *")."""
    return (
        rf"\b(?:on|at|from)\W+(?:the\W+)?(?:{words})\b{_NOT_A_HOST}|\b(?:{words}){_HOST_PART}"
        rf"|^[\s*_>-]*(?:{words})\s*:(?!\s*[*\d])"
    )


CONCEPTS: dict[str, str] = {
    # hosts
    "source_vm": r"tf-source-vm(?![\w-])|10\.0\.1\.4\b|(?<![\w-])(?:source|src)\W+(?:vm|host|machine|side|node)|\bsender\b"
    rf"|\bsending\W+(?:vm|host|side)|\bclient\W+(?:vm|host|side)|\bvm\W*1\b|{_role('source|src')}",
    "dest_vm": r"tf-dest-vm(?![\w-])|10\.0\.1\.5\b"
    r"|(?<![\w-])(?:destination|dest|target|receiving|server)\W+(?:vm|host|machine|side|node)"
    rf"|\breceiver\b|\bvm\W*2\b|{_role('destination|dest|dst')}",
    # Azure control plane
    "nsg": r"\bnsgs?\b|network\W+security\W+groups?|security\W+(?:group|rule)s?|tf-(?:dest|source)-vm-nsg|-nsg\b",
    "nsg_rule": r"\b(?:nsg|security|deny|inbound|outbound)\W+rules?\b|ghost-demo-[\w-]+|\brule\W+(?:named|called)\b",
    "deny": r"\bden(?:y|ies|ied|ying)\b|\bblock(?:s|ed|ing)?\b|\breject(?:s|ed|ing)?\b|\bdrop(?:s|ped|ping)?\b|\bdiscard\w*"
    r"|\bdisallow\w*|\bforbid\w*|\bprohibit\w*|\bfilter(?:s|ed|ing)?\W+out\b|\bstops?\b|\bshuts?\W+out\b",
    "route": r"\broutes?\b|\broute\W+tables?\b|\budrs?\b|user[-\s]defined\W+routes?|\brouting\b|\bnext[-\s]hops?\b|\bprefix\b",
    "blackhole": r"black[-\s]?hol\w*|\bnext[-\s]?hop\W+(?:type\W+)?(?:of\W+)?[`'\"]?none\b|\bnone\b\W+next[-\s]?hop"
    r"|\bdiscard\w*|\bsink\w*|\bnowhere\b|\bdead[-\s]end\w*|\bvanish\w*|\bswallow\w*|\bdropped\b|\bnon-?existent\b"
    r"|\bmissing\b|\babsent\b|\bdoes\W+not\W+exist\b|\bno\W+longer\W+exists?\b|\bnever\W+(?:provisioned|deployed|built)\b",
    "nva": r"\bnvas?\b|virtual\W*appliance|network\W+virtual\W+appliance|\bappliance\b|\bfirewall\W+appliance\b",
    "effective": r"\beffective\b",
    "service_endpoint": r"service[-\s]?endpoints?|\b(?:storage|sql|service)\W+eps?\b|\beps?\W+(?:on|for|list)\b"
    r"|\bvnet\W+service\W+endpoints?|\bendpoint\W+(?:list|policy)\b",
    "storage_firewall": r"nwlogs080613|storage\W+(?:account\W+)?(?:firewall|network\W+rules?|acls?)|default\W*action"
    r"|\bnetwork\W*rule\W*set\b|\bvnet\W+rule\b|virtual\W+network\W+rules?",
    # inside the VM
    "os_firewall": r"\biptables\b|\bip6tables\b|\bnftables\b|\bnft\b|\bnetfilter\b|\bxtables\b|host\W+(?:based\W+)?firewall"
    r"|\bos[-\s](?:level\W+)?firewall|\bguest\W+(?:os\W+)?firewall|\bkernel\W+firewall|\blocal\W+firewall"
    r"|packet\W+filter\w*\W+(?:on|in|inside)\W+(?:the\W+)?(?:tf-[\w-]+-vm|vm|guest|host)\b"
    r"|in-?guest\W+firewall|firewall\W+(?:inside|in|on)\W+(?:the\W+)?(?:vm|guest|os|host)|\b(?:input|output|forward)\W+chain"
    r"|\bchain\W+(?:input|output|forward)\b|\bfilter\W+table\b",
    "chain": r"\bchains?\b|\b(?:INPUT|OUTPUT|FORWARD)\b",
    "shaping": r"\btc\b|\bqdiscs?\b|\bnetem\b|traffic\W+(?:control|shaping|shaper)|\bshap(?:ing|er|ed)\b"
    r"|queu(?:e|ing)\W+disciplines?|\btbf\b|\bhtb\b|\bprio\b\W+qdisc|token\W+bucket|\bimpairment\w*|\bemulat\w+|\bthrottl\w+|\brate[-\s]limit\w*",
    "loss": r"\bloss\b|\blos(?:e|es|ing)\b|\blost\b|\bdrop(?:s|ped|ping)?\b|\bdiscard\w*|\bpacket\W+drops?\b",
    "delay": r"\bdelay\w*|\blatency\b|\blag\w*|\bslow\w*|\brtts?\b|round[-\s]trip|\bjitter\b|\bms\b|\bmillisecond\w*",
    "corruption": r"\bcorrupt\w*|\bbit[-\s]?flip\w*|\bmangl\w+|\bchecksum\W+(?:errors?|failures?)",
    "rate": r"\brate\b|\bbandwidth\b|\bthroughput\b|\bmbit\w*|\bmbps\b|\bcap(?:s|ped|ping)?\b|\bceiling\b|\bthrottl\w+",
    "fail2ban": r"fail2ban|\bf2b-sshd\b|\bf2b\b|\bsshd\W+jail\b|\bjail\b",
    "ban": r"\bban(?:s|ned|ning)?\b|\bjail(?:ed)?\b|\bblacklist\w*|\bblocklist\w*|\bblock-?list\w*",
    "docker": r"\bdocker\w*|\bcontainer\W+(?:engine|runtime|daemon)\b|\bmoby\b",
    "policy": r"\bpolic(?:y|ies)\b|\bdefault\W+(?:action|target|verdict)\b|\bchain\W+default\b|(?<![\w-])-P\b",
    "baseline": r"\bbaseline\b|\bsnapshot\b|\bpre-?(?:window|hardening|change|escalation)\b|\bbefore\W+the\W+(?:window|change)",
    # relations ("independant": a common misspelling in quick notes)
    "independent": r"\bindepend[ae]nt\w*|\bseparate\w*|\bunrelated\b|\bdistinct\b|\bnot\W+(?:related|connected|linked)\b"
    r"|\bdifferent\W+(?:root\W+)?(?:causes?|faults?|issues?|problems?)\b|\b(?:two|2)\W+(?:\w+\W+){0,2}?(?:faults|issues|problems"
    r"|causes|findings|misconfigurations|changes|defects|breakages)\b|\bsecond(?:ary)?\W+(?:\w+\W+)?(?:fault|issue|finding|problem"
    r"|cause|misconfiguration)\b|\bboth\W+(?:faults|issues|problems)\b|\bco-?incident\w*|\bcoincid\w+|\bon\W+its\W+own\b"
    r"|\bnothing\W+to\W+do\W+with\b|\bnothing\W+in\W+common\b|\b(?:its|their)\W+own\W+fix(?:es)?\b|\bdo(?:es)?(?:\W+not|n['\u2019]?t)\W+(?:explain|cause|touch|affect)\b|\bno\W+(?:causal\W+)?(?:link|relation|connection)\b|\brelation(?:ship)?\W+(?:none|no)\b"
    r"|\b(?:additionally|also|in\W+addition|as\W+well|besides)\b"
    r"|\b(?:remains?|persists?|stays?|still\W+(?:be\W+)?(?:there|present|active|in\W+place|hurts?)|(?:will\W+)?(?:show|hurt|wreck|surface"
    r"|appear)\w*|see\W+it)\W+(?:\w+\W+){0,3}?(?:after|once|the\W+moment|as\W+soon\W+as)\b"
    # one fault masked by the other survives the other's fix: two faults
    r"|\b(?:hidden|masked|hid(?:es|ing)|mask(?:s|ing))\W+(?:\w+\W+){0,3}?(?:until|once|behind|now)\b"
    # a single or shared cause denied
    r"|\bnot\W+(?:just\W+)?(?:one|1|a\W+single|single|a\W+shared|shared|a\W+common|common)\W+(?:\w+\W+)?(?:causes?|failures?"
    r"|outages?|faults?|problems?|issues?|things?)\b|\b(?:two|2)\W+(?:\w+\W+){0,2}?not\W+(?:one|1|a\W+single)\b"
    r"|\b(?:shared|common|single)\W+(?:root\W+)?cause\W*\?\W*no\b|\bno\W+(?:shared|common|single)\W+(?:root\W+)?cause\b"
    r"|\bnothing\W+to\W+do\W+w/|\bnot\W+(?:why|what\W+(?:breaks|causes|kills))\b|\bnot\W+the\W+(?:\w+\W+)?(?:failures?|outage)\b",
}
"""Shared vocabulary: a case writes `@os_firewall` instead of its own list of words for iptables."""

_CONCEPT_REF = re.compile(r"@([a-z_][a-z0-9_]*)")
_NEGATING = (
    r"(?:(?!\b(?:not|no|nothing|never|nor|neither|without|rather|instead|than|would|could|might)\b|n['\u2019]t\b"
    r"|[.;:!?](?:\s|$))[\s\S])"
)
"""What `.` means in a claim: a character of the same clause (line wraps included) that does not start a negation or a
counterfactual ("a single cause would have taken both down" asserts no single cause)."""
_REGEX_TOKEN = re.compile(r"\\.|\[\^?\]?(?:\\.|[^\]\\])*\]|.", re.DOTALL)


def expand(pattern: str) -> str:
    """Replace every `@concept` with its regex. Raises ValueError on an unknown concept."""

    def concept(m: re.Match[str]) -> str:
        name = m.group(1)
        if name not in CONCEPTS:
            raise ValueError(f"unknown concept @{name} (known: {', '.join(sorted(CONCEPTS))})")
        return f"(?:{CONCEPTS[name]})"

    return _CONCEPT_REF.sub(concept, "".join(pattern.splitlines()))


def compile_phrase(pattern: str, *, ascii_only: bool = False) -> re.Pattern[str]:
    """A phrase that may match anywhere in a sentence. Raises ValueError naming the bad regex.

    `ascii_only` compiles it for ASCII text (nearly every report), where it gives the same answers faster.
    """
    try:
        return re.compile(expand(pattern), PHRASE_FLAGS | (re.ASCII if ascii_only else 0))
    except re.error as exc:
        raise ValueError(f"invalid regex {pattern!r}: {exc}") from None


def compile_claim(pattern: str, *, ascii_only: bool = False) -> re.Pattern[str]:
    """A claim: like a phrase, but `.` never leaves its clause or crosses a negation (concepts keep their own `.`)."""
    try:
        clause = "".join(_NEGATING if token == "." else token for token in _REGEX_TOKEN.findall("".join(pattern.splitlines())))
        return re.compile(expand(clause), PHRASE_FLAGS | (re.ASCII if ascii_only else 0))
    except re.error as exc:
        raise ValueError(f"invalid regex {pattern!r}: {exc}") from None
