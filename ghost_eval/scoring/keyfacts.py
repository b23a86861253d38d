"""Diagnosis by key facts: each fact of the case found, missing or contradicted, with the sentence that decided it.

The report is read as Markdown (markdown-it): headings, paragraphs, list items, table cells and blockquotes are
blocks; code blocks are evidence, not claims, and are left out. Blocks are split into sentences by the one
sentence splitter of `ghost_eval.scoring.text`. A fact is found in a window of consecutive sentences that
together match all of its phrases; a wrong claim counts only where a sentence asserts it.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable
from functools import cache
from itertools import pairwise
from typing import TYPE_CHECKING

from ghost_eval.cases.case import Case, KeyFact, StatedValue, WrongClaim
from ghost_eval.cases.phrases import PHRASE_FLAGS, compile_claim, compile_phrase
from ghost_eval.scoring.domain_claims import domain_claims
from ghost_eval.scoring.model import ClaimHit, DiagnosisResult, FactResult
from ghost_eval.scoring.text import LAB_VM, split_sentences
from ghost_eval.shell.commands import looks_like_command

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

__all__ = ["check_key_facts", "key_facts_in", "report_sentences"]

_REFUTATION = r"\b(?:refuted|ruled\W+out|disproven|disproved|excluded|rejected|eliminated|not\W+the\W+(?:root\W+)?cause)\b"
_REFUTED = re.compile(
    r"\b(?:refuted|ruled\W+out|disproven|disproved|eliminated|not\W+the\W+(?:root\W+)?cause|nothing\W+(?:ties|links|connects)"
    r"|no\W+evidence\W+(?:that|for|of|ties|links)|not\W+supported\W+by|does\W*(?:not|n['\u2019]t)\W+hold)\b",
    PHRASE_FLAGS,
)
"""Words that refute whatever clause they stand in."""
_WEAK_REFUTED = re.compile(r"\b(?:rejected|excluded)\b", PHRASE_FLAGS)
"""Words that refute only as a bare verdict ("H2 - rejected"): "the request is rejected with 403" states a fact."""
_ANY_REFUTATION = re.compile(f"{_REFUTED.pattern}|{_WEAK_REFUTED.pattern}", PHRASE_FLAGS)
"""Either kind: a sentence without one has no refuted clause (most sentences, so they are spared the clause rules)."""
_HEDGE = re.compile(
    r"\b(?:hypothes\w*|suspect\w*|whether|if|could|might|may|possibl[ey]|perhaps|assum\w*|consider\w*|initially"
    r"|claim\w*|reported|said|stated|according|thought|believed|appear(?:s|ed)?\W+to|suggest\w*|would)\b",
    PHRASE_FLAGS,
)
_NEGATED_BEFORE = re.compile(
    r"(?:\b(?:not|no|never|nor|neither|rather\W+than|instead\W+of|(?:is|are|was|were|do|does|did|has|have|had)n['\u2019]?t"
    r"|nothing\W+(?:\w+\W+)?\w+|no\W+(?:sign|evidence|indication)\W+of)\W+(?:\w+(?:['\u2019]s)?\W+)?"
    r"(?:(?:an?|the)\W+(?:[\w-]+[ \t]+)?)?)$",
    PHRASE_FLAGS,
)
"""A negation just before a claim ("not a failing NIC", "rather than the NSG blocking it", "nothing points to failing
hardware", "neither VM's NSG has a rule that denies it", "wasnt added in the window", "not a stray manual rule": an
article may carry one word before the claim; messy output drops the apostrophe, and no English word ends that way)
denies it."""
_ANSWERED_NO = re.compile(r"[^.;?:\n]{0,20}?[?:]\s*(?:no|nope|none)\b", PHRASE_FLAGS)
"""A claim put as a question and answered no ("do they share a cause: no", "same root cause? no"): denied."""
_SUPPOSED = re.compile(r"\s+(?:would|could|might)\b", PHRASE_FLAGS)
"""A claim that is the subject of "would" ("an INPUT DROP policy would make the partner time out") is supposed, not
stated."""
_CLOSING_QUESTION = re.compile(r"\?(?=\W*$)")
"""The question mark that ends the sentence (not one inside a `--query "[?…]"`)."""
_REFUTED_LABEL = re.compile(rf"\W*(?:(?:hypothesis\W*\d*|h\d+|\d+[.)])\W*)?{_REFUTATION}", PHRASE_FLAGS)
"""A board label opening the sentence: "Refuted: …", "H2 (refuted): …", "Ruled out - …"."""
_CLAUSE = re.compile(r";|:\s|\s[\u2014\u2013]\s|\s--?\s|,\s*(?=(?i:but|whereas|while|however|instead)\b)|\n(?=[ \t]*[A-Z])")
"""Where a sentence's clauses part: a refutation in one clause does not take the others with it ("the claim is
disproved by the drift check: the rule was added" keeps what follows the colon). A line that opens on a capital parts
them too: a list item runs on into the unmarked lines after it ("- rule-b | prio 150 | Deny" then "H3 (routing)
REFUTED"), each a statement of its own; a line wrapped mid-sentence goes on in lower case ("not the cause\nof …")."""
_BLOCK_TOKENS = frozenset({"inline"})
_INLINE_CODE = re.compile(r"`([^`\n]+)`")
_ROW = re.compile(r"^\s*\|", re.MULTILINE)
_LIST_OPEN = frozenset({"bullet_list_open", "ordered_list_open"})
_LIST_CLOSE = frozenset({"bullet_list_close", "ordered_list_close"})
_REFUTING_LABEL = re.compile(
    r"(?i)\W*(?:hypothes\w+\s+)?(?:ruled\s+out|refuted|rejected|excluded|eliminated|dismissed|not\s+the\s+cause)"
    r"(?:\s+(?:hypothes\w+|causes?|alternatives))?\W*"
)
"""A label ("Ruled out", "## Rejected hypotheses") whose list holds what the report refutes."""


@cache
def _markdown() -> MarkdownIt:
    """Blocks only: the inline tokens keep their text, and parsing links and emphasis inside them would cost as much
    again. Built on first use: a process that scores nothing (an empty store, a stored score) never imports it."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table").disable(["inline", "text_join"])


def _blocks(text: str) -> list[str]:
    """Every inline block of the Markdown in order, code blocks left out; a table row is one block, its cells joined
    as clauses, so a fact spread over the cells of one row ("tf-dest-vm | iptables INPUT | DROP 5001") reads as the
    statement the row makes."""
    blocks: list[str] = []
    row: list[str] | None = None
    labelled = False
    refuting = 0  # depth inside a list under a "Ruled out" label: each item is a refuted hypothesis
    for token in _markdown().parse(text):
        if token.type in _LIST_OPEN:
            refuting += 1 if labelled or refuting else 0
        elif token.type in _LIST_CLOSE and refuting:
            refuting -= 1
        elif token.type == "tr_open":
            row = []
        elif token.type == "tr_close" and row is not None:
            blocks.append("; ".join(row))
            row = None
        elif token.type in _BLOCK_TOKENS and token.content.strip():
            labelled = _REFUTING_LABEL.fullmatch(token.content.strip()) is not None
            if row is not None:
                row.append(token.content.strip())
            else:
                blocks.append(f"Ruled out: {token.content}" if refuting else token.content)
    return blocks


def report_sentences(text: str) -> list[str]:
    """The report's prose as sentences, in order; a table row that Markdown did not read as a table (no header
    separator) is a sentence of its own."""
    blocks = _blocks(text)
    lines = [line for block in blocks for line in (block.splitlines() if _ROW.search(block) else [block])]
    return [sentence for line in lines for sentence in split_sentences(line)]


@cache
def _phrases(patterns: tuple[str, ...], ascii_only: bool) -> tuple[re.Pattern[str], ...]:
    return tuple(compile_phrase(p, ascii_only=ascii_only) for p in patterns)


@cache
def _claims(patterns: tuple[str, ...], ascii_only: bool) -> tuple[re.Pattern[str], ...]:
    return tuple(compile_claim(p, ascii_only=ascii_only) for p in patterns)


def _claim_asserted(claim: re.Pattern[str], sentence: str) -> bool:
    """Whether the sentence asserts the claim: unhedged before it, unrefuted after it, not opened by a refutation."""
    if _REFUTED_LABEL.match(sentence):
        return False
    pos = 0
    while (m := claim.search(sentence, pos)) is not None:
        if _HEDGE.search(sentence, 0, m.start()):
            return False
        negated = _NEGATED_BEFORE.search(sentence[max(0, m.start() - 24) : m.start()]) or _denied_verb(claim, m)
        answered_no = _ANSWERED_NO.match(sentence, m.end()) is not None or _SUPPOSED.match(sentence, m.end()) is not None
        if not (negated or answered_no or _CLOSING_QUESTION.search(sentence, m.end()) or _refutes(sentence[m.end() :])):
            return True
        pos = m.start() + 1
    return False


_LAST_WORD = re.compile(r"\w+\W*$")
_DENIED_WORD = re.compile(r"(?:\b(?:no|not|nothing|never)|n['\u2019]?t)\W+$", PHRASE_FLAGS)


def _denied_verb(claim: re.Pattern[str], m: re.Match[str]) -> bool:
    """Whether the claim's own last word is denied inside it ("NSG: nothing denies", "NIC nsg: no denies"): the
    subject is named, what it is said to do is not. A negation the claim itself needs ("no corruption configured")
    is what it asserts."""
    said = m.group(0)
    last = _LAST_WORD.search(said)
    denial = _DENIED_WORD.search(said, 0, last.start()) if last is not None and last.start() > 0 else None
    return denial is not None and claim.search(said[: denial.start()] + said[denial.end() :]) is not None


def _bare(clause: str) -> bool:
    """A clause that is only a verdict ("ruled out", "- rejected") once its refutation words are gone."""
    return len(_WEAK_REFUTED.sub(" ", _REFUTED.sub(" ", clause)).split()) <= 3


def _refutes(text: str) -> bool:
    """Whether a stretch of a sentence refutes: a strong refutation anywhere, or a weak one as a bare verdict."""
    return bool(_REFUTED.search(text)) or any(_WEAK_REFUTED.search(c) and _bare(c) for c in _CLAUSE.split(text))


class _ClaimText:
    """The report's sentences as claims read them, and as the report wrote them (for the evidence shown)."""

    def __init__(self, sentences: list[str]) -> None:
        self.written = sentences
        self.read = [_claim_view(s) for s in sentences]
        self.joined = "\n".join(self.read)
        self.ascii = self.joined.isascii()
        self.starts: list[int] = []
        """Where each sentence starts in `joined`."""
        at = 0
        for sentence in self.read:
            self.starts.append(at)
            at += len(sentence) + 1

    def _matched(self, claim: re.Pattern[str]) -> set[int]:
        """The sentences where a match of the claim starts, found by scanning the joined text once (patterns are
        multi-line, so a line boundary reads as a sentence's start and end): only these can assert it."""
        found: set[int] = set()
        pos = 0
        while self.starts and (m := claim.search(self.joined, pos)) is not None:
            index = bisect_right(self.starts, m.start()) - 1
            found.add(index)
            if index + 1 >= len(self.starts):
                break
            pos = self.starts[index + 1]
        return found

    def asserting(self, patterns: list[str]) -> str | None:
        """The first sentence asserting any of the patterns; only sentences where one matches are read closely."""
        compiled = _claims(tuple(patterns), self.ascii)
        candidates = sorted({i for c in compiled for i in self._matched(c)})
        hit = next((i for i in candidates if any(_claim_asserted(c, self.read[i]) for c in compiled)), None)
        return None if hit is None else self.written[hit]


def _refuting_fact(phrases: tuple[re.Pattern[str], ...], sentence: str) -> bool:
    """Whether one of a fact's phrases matches the refuting words themselves: a fact that says a claim is false ("the
    rollback claim does not hold") is asserted by the refutation, so the refuted clause is what the sentence says."""
    refutations = [m.span() for m in _REFUTED.finditer(sentence)]
    return any(a < m.end() and m.start() < b for p in phrases for m in p.finditer(sentence) for a, b in refutations)


def _found(fact: KeyFact, unrefuted: list[str], whole: list[str], ascii_only: bool) -> str | None:
    """The first window of sentences where every phrase of the fact matches: refuted clauses removed, except where the
    refutation is the fact's own."""
    phrases = _phrases(tuple(fact.all_of), ascii_only)
    sentences = [w if u != w and _refuting_fact(phrases, w) else u for u, w in zip(unrefuted, whole, strict=True)]
    known: list[list[bool | None]] = [[None] * len(sentences) for _ in phrases]

    def matches(k: int, j: int) -> bool:
        """Whether phrase k matches sentence j, searched once however many windows hold the sentence."""
        hit = known[k][j]
        if hit is None:
            hit = known[k][j] = phrases[k].search(sentences[j]) is not None
        return hit

    for start, first in enumerate(sentences):
        window = _window(sentences, start, fact.window)
        if first and all(any(matches(k, j) for j in window) for k in range(len(phrases))):
            return " ".join(sentences[j] for j in window)
    return None


_LABEL_LINE = re.compile(r"[^.!?]{0,80}:\W*$")
"""A line that only introduces what follows ("**Change against baseline fw_20260319_110936:**", "Effect:")."""


def _window(sentences: list[str], start: int, size: int) -> list[int]:
    """The `size` sentences from `start` on: a label line that introduces the next lines is read with them, not
    counted as a sentence of its own (also where the window opens on it: "found 2, both on tf-dest-vm:"), so a heading
    does not push its list out of the window."""
    window: list[int] = []
    used = 0
    for j in range(start, len(sentences)):
        if not _LABEL_LINE.fullmatch(sentences[j]):
            if used == size:
                break
            used += 1
        if sentences[j]:
            window.append(j)
    return window


def _unrefuted(sentence: str) -> str:
    """The sentence without its refuted clauses ("H2 is refuted too; the qdisc is re-applied" keeps the second).

    A bare verdict clause ("… - ruled out") refutes the clause before it; a sentence that opens with a refutation
    label loses its first clause.
    """
    if not _ANY_REFUTATION.search(sentence):
        return sentence  # as written: a line's label ("src: htb …") names its VM by its colon
    clauses = _CLAUSE.split(sentence)
    keep = [not _refutes(c) for c in clauses]
    if _REFUTED_LABEL.match(sentence):
        keep[0] = False
        if len(clauses) > 1 and _bare(clauses[0]):
            keep[1] = False  # "Refuted: the NSG blocks it": the label's clause is what it refutes
    for i, clause in enumerate(clauses):
        if i and not keep[i] and _bare(clause):
            keep[i - 1] = False
    return " ".join(c.strip() for c, k in zip(clauses, keep, strict=True) if k and c.strip())


_NOT_EQUAL = re.compile(r"(?<=\w)\s*(?:!=|\u2260)\s*(?=\w)")
"""Notes write "is not" as an inequality between words ("rollback != done", "rollback \u2260 done")."""


_SAVED_POLICY = re.compile(r"(?<![\w:-]):(INPUT|OUTPUT|FORWARD|PREROUTING|POSTROUTING)\s+(ACCEPT|DROP)\b")
"""A built-in chain's policy as iptables-save writes it (`:INPUT DROP [0:0]`)."""


def _as_words(sentence: str) -> str:
    """The sentence with its inequalities between words read as "is not", and iptables-save's policy lines
    (`:INPUT ACCEPT` -> `:INPUT DROP`) as the policies they are."""
    return _SAVED_POLICY.sub(r"\1 policy \2", _NOT_EQUAL.sub(" is not ", sentence))


def _claim_view(sentence: str) -> str:
    """A sentence as claims read it: a quoted command is evidence of what was run, not a statement, so it is blanked
    (a rule or chain name in backticks stays); an inequality between words says "is not"."""
    sentence = _as_words(sentence)
    if "`" not in sentence:
        return sentence
    return _INLINE_CODE.sub(lambda m: "`x`" if looks_like_command(m.group(1)) else m.group(0), sentence)


_GAP = r"(?:(?!\.\s)[^;]){0,60}?"
"""What may stand between a resource's name and the value a sentence gives it: the rest of the clause."""
_SENTENCE_GAP = r"(?:(?!\.\s)[^;]){0,200}?"
"""A route's next hop may come a long clause after its name ("<route> from route table <table>, which is associated
with the default subnet: 0.0.0.0/0 with next hop type VirtualAppliance and next hop 10.0.0.253"): a route has one."""
_NUMBER = r"\d+(?:\.\d+)?"
_PARAMETERS = r"(?:\W+[\w:./-]+){0,8}?\W+"
"""A qdisc's own parameters follow it at once ("netem 30: parent 1:3 loss 20%", "netem with 50% random loss"); a loss
further on, or a ping's "0% packet loss", is a measurement, not the qdisc's setting."""
_ADDRESS = r"\d{1,3}(?:\.\d{1,3}){3}"
_CLAUSE_GAP = (
    r"(?:(?!\.\s|\b(?:an?|another)\W+(?:(?:second|third|other|new|separate|different)\W+(?:(?:inbound|outbound)\W+)?)?"
    r"(?:deny|allow|rule)\b)[^;]){0,80}?"
)
"""A rule's port is said before another rule is: "<rule> at priority 110 and, separately, a Deny for TCP 6379 named
…", "… and a second deny for TCP 6379" or "… and a separate inbound Deny for TCP 6379" gives the next rule's port
("<rule>, priority 150, an inbound deny on TCP 8080" describes the rule itself). A clause may run 80 characters before
the value ("<rule> on <nsg>, priority 150, an inbound deny on TCP 8080 with source 10.0.1.4/32")."""
_NEXT_HOP = rf"(?:\b|virtual)(?:appliance|nva|next[-\s]?hop)(?:\W+(?:ip|address|at|of|is))*\W+(?P<value>{_ADDRESS})\b(?!/)"
"""A next hop given as an address ("virtual appliance at 10.0.0.253", "→ VirtualAppliance 10.0.0.253")."""
_NEXT_HOP_TYPE = (
    r"(?:→|->|to|via|next[-\s]?hop(?:\W+type)?(?:\W+(?:is|of))?)\W{0,3}(?:an?\W+)?"
    r"(?P<kind>virtual\s*appliance|nva|internet|virtual\s*network\s*gateway)\b"
    r"(?!(?:\W+(?:ip|address|at|of|is))*\W+\d{1,3}\.)"  # with its address, `_NEXT_HOP` reads it
)
"""A next hop given by its type ("→ VirtualAppliance", "next hop type Internet"): a route whose next hop is None has
no appliance, gateway or internet to send to, so any of these contradicts it, an address or not."""
_FRACTIONS = {"half": "50", r"a\W+quarter": "25", r"a\W+third": "33", r"a\W+fifth": "20", r"a\W+tenth": "10"}
"""A share said in words ("drops half of the packets") as its percentage."""
_VALUE_GRAMMAR: dict[str, str] = {
    "priority": rf"{_GAP}(?<![\w-])(?:priority|prio|p)\W*(?:of\W+|at\W+|=\W*)?(?P<value>\d{{3,5}})\b",
    "next_hop": rf"(?:{_SENTENCE_GAP}{_NEXT_HOP}|{_SENTENCE_GAP}{_NEXT_HOP_TYPE})",
    "loss": rf"(?:{_PARAMETERS}(?:\b(?:loss|drop(?:s|ping)?|discard(?:s|ing)?)\W+(?:of\W+)?(?P<value>{_NUMBER})\s*%"
    rf"|(?P<before>{_NUMBER})\s*%\W+(?!packet\b)(?:\w+\W+){{0,2}}loss\b"
    rf"|\b(?:for|injects?|injecting|adds?|adding|to|with)\W+(?P<setting>{_NUMBER})\s*%\W+packet\W+loss\b"
    rf"|\b(?:drop(?:s|ping)?|los(?:es|ing)|discard(?:s|ing)?)\W+(?P<fraction>{'|'.join(_FRACTIONS)})\W+(?:of\W+)?)"
    rf"|{_GAP}\b(?:loss|drop(?:s|ping)?|discard(?:s|ing)?)\W+(?:of\W+)?(?P<late>{_NUMBER})\s*%)",
    "port": rf"{_CLAUSE_GAP}\b(?:port|tcp|udp|den(?:y|ies|ying)|block(?:s|ing)?)s?(?:\W+(?:is|of))?\W{{0,3}}"
    rf"(?:(?:inbound|outbound)\W+)?(?P<value>\d{{1,5}})\b(?![./]\d)",
    "source": rf"{_CLAUSE_GAP}\b(?:from|src|source(?:\W+address)?(?:\W+prefix(?:es)?)?)\W+(?:the\W+)?(?:any\W+source\W+)?\(?\W*"
    rf"(?P<value>\*|any\b|internet\b|virtualnetwork\b|{_ADDRESS}/\d{{1,2}}\b)",
    "direction": r"\W+(?:\([^)]{0,40}\)\W+)?(?:(?:at\W+)?(?:priority|prio)\W*\d{3,5}\W+)?"
    r"(?:(?:to|on|in)\W+[\w-]+-nsg\W+(?:(?:at\W+priority\W+\d{3,5}\W+)?as\W+|(?=is\W)))?(?:is\W+)?"
    r"(?:an?\W+)?(?:\w+\W+){0,2}?"
    r"(?P<value>inbound|outbound)\b"
    rf"|{_GAP}\bit(?:['\u2019]s|\s+is)\s+(?:an?\s+)?(?:\w+\s+)?(?P<late>inbound|outbound)\b",
    "protocol": r"\W+(?:(?:is|an?|the|inbound|outbound|deny|denies|denying|allow|allows|rule|for|nsg|security|\d{3,4})\W+)"
    r"{0,6}?(?P<value>tcp|udp|icmp)\b",
}
"""How a sentence gives each property of `StatedValue` a value, after the resource's name: "<rule> at priority 110",
"<table> sends 0.0.0.0/0 to a virtual appliance at 10.0.0.253" (or "→ VirtualAppliance 10.0.0.253"), "netem with 50%
random loss" ("netem qdisc on tf-source-vm's primary NIC injecting 50% random packet loss", "netem 30: dropping 50% of
everything", "netem on tf-source-vm's eth0 (child of a prio root, SSH exempt) dropping 50% of outbound packets"),
"<rule> allows TCP 22", "<rule> (110) is actually denying 6379" (or "deny inbound 6380", "its port is 5433"), "<rule>
… from any source (*)" (a source given as a prefix or a service tag: an address without its mask is the traffic's, not
the rule's), "<rule> (150) is an outbound deny", "<rule> on <nsg> is an **outbound** Deny" or "<rule> prio 200 is an
OUTBOUND deny" or "<rule> prio 200 deny tcp 5432 — and it's an outbound rule" (a direction within a few words of the
name or its priority, or after the NSG it was put on: "<rule> to <nsg> (at priority 200) as an Outbound Deny"), "<rule>
is an Inbound Deny for UDP port 8080" (a protocol after words that describe a rule only)."""


_SAME = {"any": "*", "0.0.0.0/0": "*"}
"""Names of one value: an NSG source of `*` is also written "any"."""


def _numeric(value: str) -> float | str:
    """A value compared as a number where it is one (150 == 150.0), else as written."""
    try:
        return float(value)
    except ValueError:
        return _SAME.get(value.lower(), value.lower())


_NAMED_AFTER: dict[str, str] = {
    "next_hop": rf"{_NEXT_HOP}(?:\W{{0,3}}\(\s*|\s+(?:in|of)\s+(?:the\s+)?)(?:route\s+table\s+|table\s+|route\s+)?",
    "direction": r"\b(?P<value>inbound|outbound)\W+(?:(?:deny|allow|nsg|security)\W+)?(?:rules?\W+(?:\w+\W+){0,2}?"
    r"|(?:(?:tcp|udp|port|any|\d{1,5})\W+){1,3})",
    "port": r"\b(?:port|tcp|udp)\W{0,3}(?P<value>\d{1,5})\b(?:(?!\.\s)[^;,]){0,60}?\b(?:via|through|by)\W+"
    r"(?:the\W+)?(?:rule\W+)?",
}
"""A value given first, its resource named after it: in brackets ("0.0.0.0/0 → VirtualAppliance 10.0.0.253
(ghost-demo-t-rt)") or as what holds it ("→ VirtualAppliance 10.0.0.253 in ghost-demo-t-rt"), as the kind of rules
it is ("two OUTBOUND deny rules, ghost-demo-block-postgres …", "outbound deny tcp 5001 (<rule>, …)"), or a port the
rule is the means of ("allows SSH (TCP 22) from any source via ghost-demo-temp-rdp-access")."""


@cache
def _value_patterns(resource: str, prop: str) -> tuple[re.Pattern[str], ...]:
    name = re.escape(resource)
    after = _NAMED_AFTER.get(prop)
    return (
        re.compile(name + _VALUE_GRAMMAR[prop], PHRASE_FLAGS),
        *((re.compile(after + name + r"\b", PHRASE_FLAGS),) if after else ()),
    )


def _other_value(stated: StatedValue, sentence: str) -> bool:
    """Whether the sentence gives the resource's property a value other than the fact's."""
    for m in (m for pattern in _value_patterns(stated.resource, stated.property) for m in pattern.finditer(sentence)):
        found = m.groupdict()
        given = next((found[g] for g in ("value", "before", "setting", "late") if found.get(g)), None)
        if found.get("kind") and stated.value.lower() == "none":
            given = found["kind"]  # a type other than None; for an address-valued next hop a type is no value
        if found.get("fraction"):
            given = next(v for words, v in _FRACTIONS.items() if re.fullmatch(words, found["fraction"], PHRASE_FLAGS))
        if given is not None and _numeric(given) != _numeric(stated.value):
            return True
    return False


def _contradicting_value(fact: KeyFact, claims: _ClaimText) -> str | None:
    """The first sentence that states one of the fact's values as another value, read also with "Its" resolved to the
    resource the sentence before named."""
    for stated in fact.values:
        for text in (claims, _referred(claims, stated.resource)):
            if text is not None and (hit := _first_asserting(text, lambda s: _other_value(stated, s))) is not None:  # noqa: B023
                return hit
    return None


_ITS = re.compile(r"^\W*(?:its|their)\b", PHRASE_FLAGS)


def _referred(claims: _ClaimText, resource: str) -> _ClaimText | None:
    """The report with each sentence that opens with "Its" after one naming the resource given the name in its place
    ("The User route is `all-egress-to-nva` in `ghost-demo-t-rt`. Its next hop is VirtualAppliance 10.0.0.253"): the
    property is the named resource's. None where no sentence reads so."""
    name = resource.lower()
    return _its_resolved(claims, lambda before: resource if name in before.lower() else None)


def _vm_referred(claims: _ClaimText) -> _ClaimText | None:
    """The report with each sentence that opens with "Its" after one naming a single lab VM given that VM's name ("The
    extra latency is injected on tf-dest-vm. Its eth0 carries a prio root qdisc with a netem child"): what it has is
    that VM's. None where no sentence reads so."""

    def vm(before: str) -> str | None:
        named = {m.group(0).lower() for m in LAB_VM.finditer(before)}
        return f"{named.pop()}'s" if len(named) == 1 else None

    return _its_resolved(claims, vm)


def _first_of(readings: list[_ClaimText], asserting: Callable[[_ClaimText], str | None]) -> str | None:
    """The first reading of the report (as written, then with "Its" resolved) in which a claim is asserted."""
    for reading in readings:
        if (sentence := asserting(reading)) is not None:
            return sentence
    return None


def _its_resolved(claims: _ClaimText, name_in: Callable[[str], str | None]) -> _ClaimText | None:
    sentences = list(claims.written)
    for i in range(1, len(sentences)):
        if (m := _ITS.match(sentences[i])) is not None and (name := name_in(claims.written[i - 1])) is not None:
            sentences[i] = f"{name}{sentences[i][m.end() :]}"
    return _ClaimText(sentences) if sentences != claims.written else None


_CLAUSE_ENDS = re.compile(r";|,\s+(?:so|but|and\s+so|which)\b")
"""Where a clause of a sentence ends: a hedge after it ("…, so the allow at 65000 would normally admit it") weighs
what follows, not the clause already stated."""


def _first_asserting(claims: _ClaimText, says: Callable[[str], bool]) -> str | None:
    """The first sentence (as written) that says it and states rather than weighs: not hedged within the clause that
    says it (a hedge weighs its own clause: "X would normally admit it, but the last matching rule wins" states the
    second), not a question, not refuted."""
    for written, read in zip(claims.written, claims.read, strict=True):
        if not says(read) or _CLOSING_QUESTION.search(read) or _REFUTED_LABEL.match(read) or _refutes(read):
            continue
        ends = [0, *(m.start() for m in _CLAUSE_ENDS.finditer(read)), len(read)]
        if any(says(read[:end]) and not _HEDGE.search(read, start, end) for start, end in pairwise(ends)):
            return written
    return None


@cache
def _vm_phrases() -> tuple[tuple[str, re.Pattern[str]], ...]:
    return (("tf-source-vm", compile_phrase("@source_vm")), ("tf-dest-vm", compile_phrase("@dest_vm")))


def _implied_vm(case: Case, sentences: list[str]) -> str | None:
    """The VM a diagnosis that names none speaks of: the one the operator's prompt asks about, when it names one only
    ("tf-dest-vm is unreachable after the hardening…" answered by "INPUT policy ACCEPT -> DROP")."""
    if any(p.search(s) for _, p in _vm_phrases() for s in sentences):
        return None
    asked = [vm for vm, p in _vm_phrases() if p.search(case.symptom)]
    return asked[0] if len(asked) == 1 else None


def check_key_facts(case: Case, text: str) -> DiagnosisResult:
    """Score a diagnosis text against the case's key facts and wrong claims."""
    return key_facts_in(case, report_sentences(text))


def key_facts_in(case: Case, sentences: list[str]) -> DiagnosisResult:
    """Score a diagnosis, already split into sentences by `report_sentences`, against the case's key facts and wrong
    claims."""
    claims = _ClaimText(sentences)
    whole = [_as_words(s) for s in sentences]
    facts_text = [_unrefuted(s) for s in whole]
    if (vm := _implied_vm(case, sentences)) is not None:
        facts_text = [f"{s} ({vm})" if s else s for s in facts_text]
        whole = [f"{s} ({vm})" if s else s for s in whole]
    readings = [claims, *([its] if (its := _vm_referred(claims)) is not None else [])]
    hits = [
        ClaimHit(id=claim.id, claim=claim.claim, sentence=sentence)
        for claim in case.wrong_claims
        if (sentence := _first_of(readings, lambda r: r.asserting(claim.patterns))) is not None  # noqa: B023
    ]
    contradicting = {c.contradicts: h.sentence for c, h in _claim_hits(case.wrong_claims, hits) if c.contradicts}
    hits += [
        h
        for h in domain_claims(case, claims.written, lambda says: _first_of(readings, lambda r: _first_asserting(r, says)))
        if h.sentence not in {k.sentence for k in hits}
    ]
    facts: list[FactResult] = []
    for fact in case.key_facts:
        against = claims.asserting(fact.contradicted_by) or contradicting.get(fact.id) or _contradicting_value(fact, claims)
        if against is not None:
            facts.append(FactResult(id=fact.id, kind=fact.kind, fact=fact.fact, status="contradicted", sentence=against))
            continue
        found = _found(fact, facts_text, whole, claims.ascii)
        status = "found" if found is not None else "missing"
        facts.append(FactResult(id=fact.id, kind=fact.kind, fact=fact.fact, status=status, sentence=found))
    return DiagnosisResult(
        correct=all(f.status == "found" for f in facts) and not hits,
        facts=facts,
        wrong_claims=hits,
        matched=[f.id for f in facts if f.status == "found"],
        missing=[f.id for f in facts if f.status == "missing"],
        forbidden=[h.id for h in hits],
    )


def _claim_hits(claims: list[WrongClaim], hits: list[ClaimHit]) -> list[tuple[WrongClaim, ClaimHit]]:
    by_id = {c.id: c for c in claims}
    return [(by_id[hit.id], hit) for hit in hits]
