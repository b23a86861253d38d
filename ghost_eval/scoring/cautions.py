"""What a report's prose warns against and what it asks to change: the warning cues whose clause or sentence is
blanked ("do not flush INPUT", "… would be reverted"), the block a warning line introduces, and the change words that
make an action a fix (a state described or a finding handed on is none).

Read on lower-cased text with inline code masked (`ghost_eval.scoring.text`), so a rule never matches inside a command.
"""

from __future__ import annotations

import re
from bisect import bisect_right

from ghost_eval.scoring.text import ascii_lower, mask_code, split_sentences

__all__ = ["asks_for_change", "blank_warnings", "leads_warning"]


_NOT = r"\s+(?:\*\*|__|\*|_)?not(?:__|_)?"
"""The "not" of a modal ("must not"), also written with emphasis ("do **not**")."""
_LASTS = r"\s+(?:persist|survive|stick|last|hold)\b"
"""What a change "won't" do (stick, persist): a consequence that warns against the sentence before it."""
_NEVER_ACT = (
    r"(?=\s+(?:\w+ly\s+)?(?:run|use|touch|edit|hand-edit|write|call|execute|do|delete|remove|flush|add|insert|set|change|"
    r"modify|replace|apply|restart|reload|stop|disable|open|allow|reset|drop|kill|reboot|rely)\b)"
)
""""never" forbids an action ("never flush INPUT"); before any other word it states a fact ("bursts of connections
never queue:"), which warns against nothing."""
_NOT_A_BAN = r"\s+(?:forget|know|think|believe|see|understand|remember|care|mind|bother|worry|hesitate|wait|want(?!\s+to\b))\b"
"""After "don't" or "never", verbs that state what the writer knows or holds ("don't know who owns it so override
rather than delete:") or wave a step through ("don't bother, just run `tc qdisc del …`"), not an action forbidden."""
_CUES = re.compile(
    r"(?P<back>(?:do\s+not|don['\u2019]?t|never)(?:\s+(?:run|do|use|try|apply)\s+(?:that|this|it)(?:\s+(?:that|this)\s+way)?)?"
    r"(?=\s*(?:[.!]|,\s*(?:that|this|it|which)\b)))|"
    r"(?P<option>could[*_]*\s+`[^`\n]*`[^.;!?\n`]{0,20}?\bbut)\b|"
    rf"(?P<long>(?:do{_NOT}|don['\u2019]?t)(?!{_NOT_A_BAN})|never{_NEVER_ACT}|avoid(?:ing)?|must{_NOT}|mustn['\u2019]?t|should{_NOT}|"
    r"shouldn['\u2019]?t|refrain\s+from|no\s+need\s+to|resist\s+the\s+(?:urge|temptation)|tempt(?:ing|ed|ation)\s+to|warning|"
    r"caution|did\s+not(?!\s+have\b)|(?:i|we)(?:\s+have|['\u2019]ve)?\s+(?:already\s+|just\s+)?tried|"
    rf"didn['\u2019]?t(?!\s+have\b)|chose\s+not\s+to|(?:will|would|(?:i|we|you)['\u2019]d){_NOT}|(?:won|wouldn)['\u2019]?t(?!{_LASTS})"
    r"|(?:i\s+am|i['\u2019]m)\s+(?:\w+ly\s+)?not|(?:rejected|ruled\s+out|discarded|what(?:\*\*|__|\*|_|\s)+not(?:\*\*|__|\*|_)?\s+"
    r"to\s+do)(?=[*_]*\s*:)"
    r"|(?:nobody|no[\s-]one)(?:\s+(?:should|must|may))?(?=\s+(?:flush|delete|remove|touch|edit|change|modify|restart|stop|disable"
    r"|drop|clear|run)\b))\b|(?P<sign>\u26a0)"
    r"|(?P<short>rather\s+than|instead\s+of|without|not(?=\s+`))\b"
    r"|(?P<consequence>`[^`\n]*`\s+would\s+(?:only\s+)?(?:[\"'\u201c\u2018]\w+[\"'\u201d\u2019]|(?:work|help|last|hold)\s+(?:for|until)\b)"
    r"|(?:would|will|could|might|can|may)\s+(?:also\s+|just\s+|simply\s+|immediately\s+|silently\s+|only\s+)?"
    r"(?:wipe|lose|break|destroy|erase|lock|revert|overwrite|undo|re-?add|re-?create|re-?apply|re-?insert|reintroduce)\b"
    r"|(?:would|will|could|might)\s+(?:\w+\s+)?(?:drop|remove|delete|flush|wipe|clear|open)\s+(?:all|every|the\s+other|"
    r"other|existing|any|everything)\b"
    r"|(?:would|will|could|might)\s+(?:just\s+|simply\s+)?(?:be|get)\s+(?:reverted|overwritten|undone|lost|wiped|"
    r"re-?added|re-?applied|re-?created)\b"
    r"|(?:is|are|would\s+be|was)\s+(?:not\s+(?:recommended|advisable|advised|needed|necessary|required|safe)|"
    r"a\s+bad\s+idea|dangerous|unsafe|destructive|risky|unnecessary|overkill|too\s+broad|a\s+mistake|wrong|pointless|"
    r"futile|useless)\b"
    rf"|(?:not|won['\u2019]?t|doesn['\u2019]?t|wouldn['\u2019]?t){_LASTS})"
)
"""Warning cues, in one pattern so a text is scanned once ("tempting to" raises an option only to turn it down; a
command that would "work" or would work for a while is one whose effect does not last): a ban that points back
("Don't run that.", or a bare "please don't, that opens …" after a dash) covers the sentence before it, a label that
turns options down ("Rejected:", "What **not** to do:") its clause, an option raised to be turned down ("you could
`iptables -F INPUT` but that …") its clause, forward cues ("do not", "avoid") cover the rest of their clause, short
ones ("instead of", "not" before a command: "so NOT `tc qdisc del …` on its own") up to the next comma, and a command
the writer says they tried ("I tried `tc qdisc del …` as a test") is the investigation's experiment, not the fix (to
the end of its clause; "I ran `…`, which now reports …" tells a check's result and stays); consequences ("would be
reverted") the sentence before them. Matched on lower-cased text with the word start checked by hand: a
case-insensitive scan with a leading word boundary is several times slower, and every action is scanned."""
_COMMAND_LINE = re.compile(
    r"\n(?=[ \t]*(?:\$\s*)?(?:sudo\s+)?(?:az|iptables|ip6tables|nft|tc|ip|systemctl|service|fail2ban-client|docker|sysctl|"
    r"ufw|sed|ethtool)\s+[\w-])"
)
"""A line that opens with a command: a ban whose own line already says what it forbids ends before it, so the
command that follows is the report's own step, not the thing warned against."""
_PURPOSE = re.compile(r"\b(?:so|so\s+that|in\s+order\s+that)\s+(?:they|it|he|she|we|you|this|that|the\s+[\w-]+)\s+$")
"""A negation after "so <subject>" ("so they don't get banned again", "so that it doesn't come back") states what a
step is for, not a step to avoid."""
_SO_BACK = re.compile(r"(?:\bso|\s[\u2014\u2013-])\s*(?:please\s+)?$")
"""A ban that closes its own sentence after "so" or a dash points back at what the sentence just said."""
_ABBREVIATION = r"(?<!\be\.g)(?<!\bi\.e)(?<!\bvs)"
"""The period of "e.g.", "i.e." or "vs." ends no sentence: the example after it belongs to the clause before."""
_LONG_END = re.compile(
    _ABBREVIATION
    + r"[.;!?](?=\s|$)|\)|\n\s*\n|\n(?=\s*(?:[-*+]|\d+[.)])\s)|,\s*(?:but|instead|rather|then)\b|\s[\u2014\u2013]\s|\x00"
    r"|,(?=[^,\n]*:[ \t]*\n)|\n(?=[ \t]*[a-z][\w #/()-]{0,30}:\s)|\s\|(?=\s|$)"
)
"""Where a forward cue's clause ends; also at a comma whose clause introduces the next line ("don't touch the chain
with iptables, fail2ban owns it:" and the owner's command below: the ban is the first clause's only), and before a line
that opens with a label of its own ("fix for #1 only: az network …"); a table cell ends at its bar. Matched on
lower-cased text."""
_DASHES = frozenset({"\u2014", "\u2013"})
_LINE_COLON = re.compile(r":[ \t]*\n")
_POINTS_ON = re.compile(r"\b(?:following|below|these|this\s+command|next|them)\b")
"""A ban that ends its line with a colon covers what follows only when it points there ("do not run the following:");
otherwise the block below is what the line's other clause asks for."""
_SHORT_END = re.compile(
    _ABBREVIATION + r"[.;!?,:](?=\s|$)|\)|\n\s*\n|\n(?=\s*(?:[-*+]|\d+[.)])\s)|\s[\u2014\u2013]\s|\x00|\s\|(?=\s|$)"
)
_SENTENCE_START = re.compile(_ABBREVIATION + r"[.;!?](?=\s)|\n\s*\n|\n(?=\s*(?:[-*+]|\d+[.)])\s)|\x00\d*\x00|\(")
_IMPERATIVE = re.compile(
    r"[\s*_>(\-+\d.)]*(?:(?:then|first|next|now|finally|also)[,\s]+)?(?:run|execute|apply|use|issue|delete|remove|flush|"
    r"add|insert|set|update|edit|restart|reload|stop|disable|replace|change|create)\b"
)
_WARN_LEAD = re.compile(
    rf"(?i)^[\s*_>\-+\d.)]*(?:\u26a0\S*\s*)?(?:warning|caution|(?:do\s+not|don['\u2019]t|never)(?!{_NOT_A_BAN})|avoid)\b"
    rf"|(?:(?:do\s+not|don['\u2019]t|never)(?!{_NOT_A_BAN})|avoid)\b[^.;!?]*\b(?:following|below|these|this\s+command)\b"
)


def blank_warnings(text: str) -> str:
    """Replace what a report says only to warn against ("do not flush the chain") with spaces, keeping offsets.

    A consequence ("…would be reverted", "…is dangerous") is not a warning when its sentence opens as an
    instruction ("Run `x`, which will re-add …" still recommends `x`).
    """
    masked = mask_code(ascii_lower(text))
    spans: list[tuple[int, int]] = []
    starts: list[int] | None = None
    for m in _CUES.finditer(masked):
        if m.start() and masked[m.start() - 1].isalnum() and not m["sign"]:
            continue
        if m["long"] and _PURPOSE.search(masked, max(0, m.start() - 30), m.start()):
            continue  # "make it stick so they don't get banned again: set …" says what the step is for
        if m["consequence"] or m["back"]:
            if starts is None:
                starts = [b.end() for b in _SENTENCE_START.finditer(masked)]
            at = bisect_right(starts, m.start()) - 1 if starts and starts[0] <= m.start() else -1
            start = starts[at] if at >= 0 else 0
            if m["back"]:  # only a ban that opens its sentence points back at the one before
                if not masked[start : m.start()].strip(" \t\n*_-\u2014"):
                    spans.append((starts[at - 1] if at > 0 else 0, m.end()))
                elif _SO_BACK.search(masked, start, m.start()):  # "… puts it back \u2014 so don't do it that way."
                    spans.append((start, m.end()))
            elif not _IMPERATIVE.match(masked, start, m.start()):
                spans.append((start, m.end()))
            continue
        stop = (_SHORT_END if m["short"] else _LONG_END).search(masked, m.end())
        if stop is not None and stop.group(0).strip() in _DASHES and not masked[m.end() : stop.start()].strip(" *_"):
            stop = _LONG_END.search(masked, stop.end())  # "**don't** — `iptables -F …`": what follows the dash is banned
        end = stop.start() if stop else len(masked)
        line = _COMMAND_LINE.search(masked, m.end(), end)
        if line is not None and len(masked[m.end() : line.start()].split()) >= 2:
            end = line.start()  # "don't detach the whole table, they may add more\n  az network route-table route delete …"
        colon = _LINE_COLON.search(masked, m.end(), end) if m["long"] else None
        if colon is not None and not _POINTS_ON.search(masked, m.end(), colon.start()):
            end = colon.start()  # "unban through fail2ban, don't iptables -D the chain:" and the owner's command below
        spans.append((m.start(), end))
    if not spans:
        return text
    out: list[str] = []
    pos = 0
    for start, end in sorted(spans):
        start = max(start, pos)
        if end > start:
            out += [text[pos:start], "\n".join(" " * len(line) for line in text[start:end].split("\n"))]
            pos = end
    out.append(text[pos:])
    return "".join(out)


def leads_warning(line: str) -> bool:
    """A line that introduces what follows as something not to do ("Do not run the following:"). Its last sentence
    is what introduces the block: "Do not edit Docker's chains. Put the exception in DOCKER-USER:" recommends it, and
    "Delete the rule. Do not flush INPUT with `iptables -F`: that removes every rule." ends before the block."""
    sentences = split_sentences(line)
    last = sentences[-1] if sentences else line
    if re.search(r"[.!?][*_`)\s]*$", last) and not _POINTS_ON.search(last.lower()):
        return False  # a finished sentence warns against what it names; the block below is the item's own
    *before, after = _CLAUSE_TURN.split(last)
    if before and not _WARN_LEAD.search(after) and not _POINTS_ON.search(" ".join(before).lower()):
        return False  # "don't touch the NIC NSG — just the rule:", "Don't repeat that mistake — pass both:"
    return _WARN_LEAD.search(last) is not None


_CLAUSE_TURN = re.compile(r"\s[\u2014\u2013]\s|[;,]\s|\s--?\s")
"""Where a line turns from what not to do to what to do: its last clause, if it bans nothing, introduces the block
below (unless the ban before it points there: "do not run the following — they flush INPUT:"); a comma turns it too
("don't rebuild/clear the NSG for this, two deletes:"), as it ends a ban's clause inside a line."""


_CHANGE_VERBS = (  # noqa: SIM905 (a list of words reads best as words)
    "delete remove add insert create update set change modify edit replace apply restart reload stop start disable enable "
    "flush unban allow deny block open close attach detach associate dissociate disassociate revert restore reset "
    "rewrite drop increase decrease raise lower move redeploy reboot install uninstall switch migrate convert upgrade "
    "downgrade append prepend"
).split()


def _inflected(verb: str) -> str:
    """A verb and the inflections that keep it whole ("deletes", "replacement", "stopped", "unbanning"), not the longer
    words it begins ("address", "settings", "additional", "application")."""
    if verb.endswith("e"):
        return f"{verb}(?:s|d|ments?)?"
    if verb.endswith("y"):
        return f"{verb}(?:s|ing)?"
    double = f"|{verb[-1]}(?:ed|ing)" if len(verb) <= 5 and verb[-1] in "ptn" and verb[-2] in "aeiou" else ""
    return f"{verb}(?:s|es|ed|ing|ions?|ments?|als?{double})?"


_CHANGES = re.compile(
    r"(?i)(?:(?<![-./])|(?<=\bre-))\b(?:roll(?:s|ed|ing)?\W*back|"
    + "|".join(_inflected(v) for v in _CHANGE_VERBS)
    + r")\b(?![-./]\w)"
)
"""Words of an action that changes state; advice without any (hand the finding to its owner) has nothing to verify. A
word inside a name (`ghost-demo-block-redis`, `allow-pg-override`) is part of the name."""
_NOT_A_CHANGE = re.compile(
    r"(?i)\b(?:do\s+not|don['\u2019]t|never|no\s+need\s+to|nothing\s+to|without|not|no|neither|nor"
    r"|nothing\s+(?:here\s+|else\s+)?(?:needs|requires|calls\s+for)(?:\s+an?)?|nothing(?=\s+\w+ed\b))\W*\s+"
    r"(?:\w+(?:,\s*\w+)*,?\s+(?:or|and|nor)\s+(?:\w+\s+){1,2}|\w+(?:\s*/\s*\w+)+\s+(?:\w+\s+){0,2}|(?:\w+\s+){0,2})"
    r"|\b(?:raise|escalate|report|flag)\s+(?:it|this|that|the\s+\w+(?:\s+\w+)?)\s+(?:with|to|as)\b"
    r"|\b(?:raise|open|file|log|create|submit|close|update|resolve)\w*\s+(?:a|an|the|this|that|their|its|our|your|my)\s+"
    r"(?:[\w-]+\s+){0,2}"
    r"(?:ticket|incident|change\s+request|issue|investigation|hypothes[ie]s|theory|case|finding|loop)\b"
    r"|\bclose\w*\s+(?:(?:it|this|that|the\s+ticket)\s+)?as\b"
    r"|\b(?:keep|leave|left|kept|hold)\w*\s+(?:it|this|that|the\s+(?:case|ticket|incident|investigation|issue|question))\s+"
    r"(?=open\b)"
    r"|\b(?:the|a|an|this|that|these|those|their|its|our|your)\s+(?=(?:drops?|blocks?|deny|denials?|rejects?|closed|open|blocked"
    r"|dropped|denied|resets?|restarts?|changes?)\b)"
    r"|\b(?=(?:drop|block|deny|reject|allow|accept)\s+(?:rules?|entr(?:y|ies)|verdicts?)\b)"
    r"|\b(?=drop(?:s|ped|ping)?\s+(?:back\s+)?(?:to|below|under|by)\s+(?:~|about\b|around\b|a\s+few\b|near\b|\d))"
    r"|(?-i:\b(?=(?:DROP|REJECT|DENY|ALLOW|BLOCK)\b))"
    r"|\b(?:every|each|next|last)\s+"
    r"|\b(?:a|an|the|for|with|wants?|needs?|gets?|much|even|any)\s+(?=lower\b)"
    r"|\b(?:a|an|the)\s+(?:code|application|app|software)\s+(?=change\b)|\bany\s+(?=changes?\b)"
    r"|\b(?=(?:closed|blocked|dropped|denied|filtered)\s+(?:ports?|connections?|sockets?)\b)"
    r"|\b(?:is|are|was|were|been|being|gets?|got)\s+(?:(?:not|already|now|still|being)\s+)?(?:\w+\s+(?:or|and|nor)\s+)?"
)
"""Where a change word is not a change: after a negation ("do not change the NSG", "no NSG / route / VM network change",
"no NSG, route, NIC or OS network change", "nothing here needs an NSG, route or VM change", "neither drops nor alters",
"nothing dropped or altered"),
handing the finding on or keeping records ("raise it with the owners", "raise that as a separate question", "open a
separate ticket", "opens their own ticket", "close the ticket", "close the suspected packet-drop investigation",
"close as not-a-network-issue", "close the drop hypothesis", "keep the case open": a ticket or a hypothesis is no
system's state; "a code
change on their side": an application's code is its team's, not the network's; "any change": what is said of no change
or of every change, "is not fixed by any change to the 8080 path"), a noun or an adjective ("whether the DROP is
intentional", "the resets are probes", "two deny rules", "a closed port", "wants lower latency", "after their change",
an all-caps target: "STAGE-2 = DROP", "on every start"), a measure that falls ("should drop to a few milliseconds"),
or a state described ("as long as no RDP service is installed", "they get rewritten", "nothing is being dropped or
changed"; "should be removed" still asks for one)."""


def asks_for_change(prose: str) -> bool:
    """Whether the prose asks for a change: a change word that is not negated and does not hand the finding on."""
    spans = [(m.start(), m.end()) for m in _NOT_A_CHANGE.finditer(prose)]
    return any(not any(a <= m.start() <= b for a, b in spans) for m in _CHANGES.finditer(prose))
