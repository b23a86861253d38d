"""Reading a report's markdown: sections, fenced blocks, inline code and expected results (warning context and change
words: `ghost_eval.scoring.cautions`; commands written without code marks: `ghost_eval.scoring.bare_commands`).

Actions, claims, ownership findings and the verification criterion all read the same report, so the
rules for "what is a section", "what is a command" and "is this sentence a warning" live here once.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import cache

from ghost_eval.shell.commands import has_prompt, looks_like_command, split_commands, strip_prompt, unroll_loops

__all__ = [
    "CODE_SPAN",
    "CONDITIONAL",
    "Fence",
    "LABEL_ENDINGS",
    "LAB_VM",
    "LAB_VM_NAME",
    "LIST_PREFIX",
    "MEASURE",
    "Section",
    "SectionKind",
    "Segment",
    "ascii_lower",
    "denied_before",
    "has_expectation",
    "inline_code",
    "lines_alone",
    "mask_code",
    "relative_only",
    "segments",
    "sentence_spans",
    "split_sections",
    "split_sentences",
    "stands_alone",
    "terse_result",
]


class SectionKind(StrEnum):
    """What a report section is for, decided from its heading."""

    ACTIONS = "actions"
    VERIFICATION = "verification"
    EVIDENCE = "evidence"
    ROOT_CAUSE = "root_cause"
    OTHER = "other"


@dataclass(frozen=True, slots=True)
class Fence:
    """A fenced code block."""

    lang: str
    lines: tuple[str, ...]

    def content(self) -> tuple[list[str], list[str], list[str]]:
        """(commands, output lines, comment lines): prompts mark commands when present, else every line is one."""
        if self.lang.lower() in _OUTPUT_LANGS:
            return [], [ln.strip() for ln in self.lines if ln.strip()], []
        comments = [ln.strip().lstrip("#").strip() for ln in self.lines if ln.strip().startswith("#") and not has_prompt(ln)]
        comments += [m.group(1).strip() for ln in self.lines if (m := _TRAILING_COMMENT.search(ln)) and ln.count("'") % 2 == 0]
        if not any(has_prompt(ln) for ln in self.lines):
            comments += [m.group(1) for ln in self.lines if (m := _TRAILING_ASIDE.search(ln))]
            unnoted = [_TRAILING_ASIDE.sub("", ln) for ln in self.lines]
            arrows = [_RESULT_ARROW.search(ln) if ln.count("'") % 2 == 0 else None for ln in unnoted]
            results = [m.group(1).strip() for m in arrows if m]
            bare = [ln[: m.start()] if m else ln for ln, m in zip(unnoted, arrows, strict=True)]
            lines = split_commands(unroll_loops("\n".join(bare)))  # a loop over listed words, one line per word
            if not self.lang and lines and not any(looks_like_command(c) for c in lines):
                return [], lines, []  # a block of output alone ("[stdout] … 0% packet loss")
            return lines, [*results, *(c for c in comments if _BARE_VALUE.fullmatch(c))], comments
        commands: list[str] = []
        output: list[str] = []
        continuing = False
        for ln in self.lines:
            if has_prompt(ln) or continuing:
                text = strip_prompt(ln).strip()
                if continuing and commands:
                    commands[-1] = commands[-1] + " " + text.rstrip("\\").strip()
                else:
                    commands.append(text.rstrip("\\").strip())
                continuing = text.endswith("\\")
            elif ln.strip() and not ln.strip().startswith("#"):
                output.append(ln.strip())
        return [c for c in commands if c], output, comments


Segment = str | Fence
"""A report body is text lines and fenced blocks, in order."""


@dataclass(frozen=True, slots=True)
class Section:
    """A heading and what follows it up to the next heading."""

    title: str
    level: int
    """1-6 for `#` headings, 7 for bold or `Title:` pseudo-headings, 0 for the text before any heading."""
    kind: SectionKind
    body: tuple[Segment, ...]
    subsection: bool = False
    """True when the kind was inherited from an enclosing heading (e.g. `### 1. Unban` under Remediation)."""

    def text(self) -> str:
        """The section's prose and code as one string (code blocks verbatim), for key and cue matching."""
        parts: list[str] = [self.title]
        for seg in self.body:
            parts.extend(seg.lines if isinstance(seg, Fence) else (seg,))
        return "\n".join(parts)


_TRAILING_COMMENT = re.compile(r"\S\s+#\s*(\S.*)$")
"""A shell comment after a command (`grep -c netem   # expect 0`), where the writer often states the result."""
_TRAILING_ASIDE = re.compile(r"(?<=[\w\"'])\s{2,}\(([^()]*)\)\s*$")
"""A note in brackets after a command and a gap (`iptables -X LAB-NETEM-LOSS   (after -F …, chain only has …)`): no
shell opens a subshell after a command's arguments, so it is the writer's aside, not more arguments."""
_RESULT_ARROW = re.compile(r"\s(?:->|\u2192|=>)\s+(\S.*)$")
"""A result written after its command on the same line (`nc -zv 10.0.1.5 5432  -> … succeeded!`): notation, not a
shell redirect of `-` into a file."""
_BARE_VALUE = re.compile(r"(?:=>?|->|→)?\s*(?:-?\d+(?:\.\d+)?|`[^`]+`|\"[^\"]+\"|'[^']+')")
"""A comment that is only a value (`grep -c netem   # 0`): what the command prints."""
LIST_PREFIX = re.compile(r"^\s*(?:\d{1,3}[.)]|[-*+])\s+")
"""A list item's marker and the space after it."""
LAB_VM_NAME = r"tf-(?:source|dest)-vm"
"""The lab's two VMs' names, as a pattern for the rules that read where a sentence or a command puts something."""
LAB_VM = re.compile(rf"(?<![\w-]){LAB_VM_NAME}(?![\w-])")
"""The lab's two VMs, by name."""
_OUTPUT_LANGS = frozenset({"text", "txt", "output", "plaintext", "log", "json", "yaml", "yml", "csv", "diff", "console-output"})
_FENCE_OPEN = re.compile(r"^(\s*(?:(?:\d{1,3}[.)]|[-*+])\s+)?)(`{3,}|~{3,})\s*([^\s`]*)")
"""A fence opening, possibly as the first block of a list item (`1. ```bash`): the marker stays a text line."""
_ATX = re.compile(r"^\s{0,3}(#{1,6})\s+(.+?)\s*#*\s*$")
_PSEUDO = re.compile(
    r"^\s*(?:(?:\*\*|__)\s*([^*_].*?)\s*:?\s*(?:\*\*|__)(?:\s*\([^)]*\))?\s*:?|([A-Za-z][A-Za-z][\w /&\x27\u2019-]{0,48}?)\s*"
    r"(?:\([^)]*\))?\s*(?::|\u2192|->))\s*$"
)
"""`**Fix**`, `Verification:`, `Remediation (both VMs, to be sure):`, `**Fix** (tf-source-vm only):`, `verify →`, `Do:` —
a label alone on its line; the aside is not the title."""
_STEP_LABEL = re.compile(
    r"(?i)^\s*(?:\*\*|__)?\s*(?:step|fix|action|change)\s*#?\d{1,2}\b|^\s*(?:\*\*|__)\s*(?:[A-H]|\d{1,2})[.)]\s+\w"
)
"""A numbered step's label ("**Step 2: remove the qdisc.**", "**Fix 2 (removes the latency)**", "Step 3 -"), or a bold
lettered or numbered one ("**B. Latency (tf-source-vm)**", "**2) …**"): the fix's next step."""
_STATEMENT = re.compile(r"[.;!?]\s+\S")
"""A bold line of two sentences ("**Verdict: no fault. No change recommended.**") is a statement, not a title."""
_BARE_TITLE = re.compile(
    r"^\s{0,3}([A-Za-z][a-z]+(?:[ /&-][A-Za-z]+|[\x27\u2019][a-z]+){0,4}|[A-Z]{3,}(?:[ /&-][A-Z]{2,}){0,4})"
    r"(?:\s*\([^()\n]*\))?\s*$"
)
"""A plain-text report's heading: a few words alone on a line after a blank one ("Fix", "Root cause", "Remediation
(tf-source-vm)": the aside is not the title), or in capitals ("REMEDIATION", "ROOT CAUSE")."""
_DASHED_TITLE = re.compile(r"^\s{0,3}([A-Za-z][a-z]+(?: [A-Za-z][a-z]+)?)\s+[\u2014\u2013]\s+([^\n:`]{1,60})$")
"""The same heading with a subtitle after a dash ("Remediation — change A (urgent, restores iperf)"), kept as the
section's first line."""
_ITEM_MARKER = re.compile(r"\s*[-*+]\s+")
_INLINE_LABEL = re.compile(
    r"(?:^\s*(?:[-*+]\s+)?|(?<=[.!?])\s+)(?P<bold>\*\*|__)?(?P<title>fix|remediation|recommended\s+(?:actions?|fix(?:es)?|changes?)|"
    r"recommendations?|next\s+steps|(?:proposed|suggested)\s+(?:fix|change)|what\s+(?:i['\u2019]d|i\s+would|we\s+should)\s+do)"
    r"(?:(?:\*\*|__)?\s*:(?:\*\*|__)?"
    r"|(?(bold)(?:[.:](?:\*\*|__)|(?:\*\*|__)\s+[\u2014\u2013-])|\s+[\u2014\u2013]))"
    r"\s*(?P<body>\S.*)$",
    re.IGNORECASE,
)
"""A fix labelled inline, at a line's start or after a sentence ("… on tf-source-vm. Fix: run `tc qdisc del …`",
"**Remediation** — reset …", "Fix — go through fail2ban")."""
_TITLE_KINDS: tuple[tuple[re.Pattern[str], SectionKind], ...] = (
    (re.compile(r"\breport\b", re.I), SectionKind.OTHER),
    (
        re.compile(
            r"^(?:\d+[.)]\s*)?(?:verification|verify(?:ing)?|validation|validate|how\s+to\s+(?:verify|confirm)|"
            r"confirm(?:ing|ation)?|post-(?:fix|remediation)\s+checks?|testing\s+the\s+fix|checks?\s*$|"
            r"checks?\s+(?:after|afterwards|once)\b)\b",
            re.I,
        ),
        SectionKind.VERIFICATION,
    ),
    (
        re.compile(r"\b(?:taken|performed|executed|commands?\s+run|tool\s+calls?)\b(?!.*\b(?:recommend|remediat|fix))", re.I),
        SectionKind.EVIDENCE,
    ),
    (
        re.compile(
            r"^(?:evidence|findings?|found|observations?|ran|what\s+i\s+(?:ran|did|checked))\b"
            r"(?!.*\b(?:and|&)\s+(?:recommend|remediat|fix|action|next))",
            re.I,
        ),
        SectionKind.EVIDENCE,
    ),
    (
        re.compile(
            r"recomm?end|remediat|\bfix(?:es|ing)?\b|next\s+steps|resolution|mitigation|\bactions?\b|corrective|"
            r"how\s+to\s+resolve|suggested\s+changes|^(?:(?:proposed|recommended|required)\s+)?changes?$"
            r"|^what\s+(?:i[\x27\u2019]d|i\s+would|we\s+should|you\s+should|to)\s+(?:do|change|run|apply)\b"
            r"|^(?:do|to\s*do|plan|steps|cmds|commands)$",
            re.I,
        ),
        SectionKind.ACTIONS,
    ),
    (re.compile(r"root[\s-]*cause|\bcause\b", re.I), SectionKind.ROOT_CAUSE),
    (
        re.compile(r"evidence|finding|observation|analysis|investigation|diagnos|timeline|data\s+collected", re.I),
        SectionKind.EVIDENCE,
    ),
)


_ARROWS = ("\u2192", "->")
"""How a label points at what follows ("remove just that route ->"), besides a colon."""
LABEL_ENDINGS = (":", *_ARROWS)


_CHANGE_LABEL = re.compile(r"(?i)^(?:remove|delete|revert|undo|roll\s*back|drop)\b")
"""An instruction that points at what follows with an arrow ("remove just that route →"): the fix's label."""


def _label_kind(title: str, line: str) -> SectionKind:
    own = _title_kind(title)
    if own is SectionKind.OTHER and line.rstrip().endswith(_ARROWS) and _CHANGE_LABEL.match(title.strip()):
        return SectionKind.ACTIONS
    return own


def _title_kind(title: str) -> SectionKind:
    clean = title.strip().strip("*_").strip()
    return next((kind for pattern, kind in _TITLE_KINDS if pattern.search(clean)), SectionKind.OTHER)


_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def ascii_lower(text: str) -> str:
    """Lower-cased text with the same offsets, so a fast case-sensitive scan of it can point into the original."""
    lower = text.lower()
    return lower if len(lower) == len(text) else text.translate(_ASCII_LOWER)


def _indented_command(line: str, opens: bool, introduced: bool) -> bool:
    """A command indented as code (four spaces) where a block may open: Markdown's indented code block, or what a
    reader takes for one ("Fix:" and on the next line "    sudo tc qdisc del dev eth0 root"); unindented, a command
    with options that a line ending in a colon introduces ("I created the following:" then "az network … --priority 100")."""
    if not opens or LIST_PREFIX.match(line) is not None or _WHOLE_SPAN.fullmatch(line.strip()):
        return False  # a line that is one code span is read as one, without its backticks
    indent = len(line) - len(line.lstrip(" "))
    if indent < 4 and not (introduced and (indent >= 2 or _OPTION.search(line)) and not _PROSE.search(line)):
        return False
    return looks_like_command(line.strip())


_OPTION = re.compile(r"\s--?[A-Za-z]")
_WHOLE_SPAN = re.compile(r"`[^`]+`")
_PROSE = re.compile(
    r"^\s*[A-Za-z][\w -]{0,40}(?::|\s(?:->|\u2192|=>))\s|[.!?]\s+[a-z]|\s(?:should|would|will|must|shows|is|are)\s"
    r"|\s(?:->|\u2192|=>)\s|`[^`]+`"
)
"""An unindented line that opens with a label ("verify: az … -> VnetLocal", "verify → tc …", "Verify from
tf-source-vm: nc …"), goes on as a sentence ("iperf3 -c … from source should connect afterwards. delay on …"), points
at a result ("… test-ip-flow -> access Allow; nc -zv … -> succeeded!", an arrow no shell line has) or quotes a command
in backticks ("ssh to tf-source-vm, `sudo iptables -D …`") is prose naming a command, not a line of code."""


_UNDERLINE = re.compile(r"\s{0,3}(?:-{3,}|={3,})\s*")
"""A setext heading's underline: the line above it is the heading, and the underline says nothing itself."""


def segments(lines: Iterable[str]) -> list[Segment]:
    """Group lines into text lines and fenced blocks (an unclosed fence runs to the end); commands indented as code,
    after a blank line or a line ending in a colon, are a block too."""
    out: list[Segment] = []
    fence: tuple[str, str, list[str]] | None = None
    indented: list[str] = []
    previous = said = ""  # the line before, and the last line with text
    for line in lines:
        if fence is None and not indented and _UNDERLINE.fullmatch(line) and previous.strip():
            previous = ""  # "Verification\n------------": the line above is a heading; a block may open below it
            continue
        if fence is None:
            opens = bool(indented) or not previous.strip() or previous.rstrip().endswith(":")
            continued = bool(indented) and indented[-1].endswith("\\") and bool(line.strip())  # a shell continuation
            if continued or _indented_command(line, opens, bool(indented) or said.rstrip().endswith(":")):
                indented.append(line.strip())
                previous = said = line
                continue
            if indented:
                out.append(Fence("", tuple(indented)))
                indented = []
        previous = line
        said = line if line.strip() else said
        if fence is not None:
            marker, lang, body = fence
            stripped = line.strip()
            if stripped.startswith(marker) and not stripped.lstrip(marker[0]):
                out.append(Fence(lang, tuple(body)))
                fence = None
            else:
                body.append(line)
            continue
        m = _FENCE_OPEN.match(line) if "```" in line or "~~~" in line else None
        if m:
            if m.group(1).strip():
                out.append(m.group(1))
            fence = (m.group(2), m.group(3), [])
        else:
            out.append(line)
    if indented:
        out.append(Fence("", tuple(indented)))
    if fence is not None:
        out.append(Fence(fence[1], tuple(fence[2])))
    return out


def split_sections(report: str) -> list[Section]:
    """Split a report at its headings; a sub-heading with no recognised title inherits its parent's kind."""
    sections: list[Section] = []
    title, level, kind, subsection = "", 0, SectionKind.OTHER, False
    body: list[Segment] = []
    parents: list[tuple[int, SectionKind]] = []

    def close() -> None:
        if title or body:
            sections.append(Section(title, level, kind, tuple(body), subsection))

    after_blank = True
    in_steps = False  # a verification label that interrupts numbered steps of the fix
    for seg in segments(report.splitlines()):
        if isinstance(seg, Fence):
            body.append(seg)
            after_blank = False
            continue
        first = seg.lstrip()[:1]
        bare = (_BARE_TITLE.match(seg) or _DASHED_TITLE.match(seg)) if after_blank and first.isalpha() else None
        after_blank = not seg.strip()
        if bare is not None and _title_kind(bare.group(1)) is not SectionKind.OTHER:
            close()
            title, level, kind, subsection, body = bare.group(1), 7, _title_kind(bare.group(1)), False, []
            if bare.lastindex and bare.lastindex > 1:
                body.append(bare.group(2))  # "Remediation — change A (urgent)": the subtitle says what follows
            in_steps = False  # a heading of its own: no step goes on under it
            continue
        atx = _ATX.match(seg) if first == "#" else None
        if atx:
            close()
            in_steps = False
            title, level = atx.group(2).strip(), len(atx.group(1))
            while parents and parents[-1][0] >= level:
                parents.pop()
            own = _title_kind(title)
            subsection = own is SectionKind.OTHER and bool(parents) and parents[-1][1] is not SectionKind.OTHER
            kind = parents[-1][1] if subsection else own
            parents.append((level, kind))
            body = []
            continue
        if kind is SectionKind.VERIFICATION and in_steps and _STEP_LABEL.match(seg):
            close()  # "**Step 2: …**" after a step's "Verify …:" label: the fix goes on
            title, level, kind, subsection, body = seg.strip(" *_"), 7, SectionKind.ACTIONS, False, [seg]
            continue
        nested = kind is SectionKind.ACTIONS and seg[:1] in {" ", "\t"}  # "   Verify:" under a list item is the item's
        labelled = first in {"*", "_"} or seg.rstrip().endswith(LABEL_ENDINGS)
        pseudo = _PSEUDO.match(seg) if labelled and not nested else None
        pseudo_title = (pseudo.group(1) or pseudo.group(2)) if pseudo else None
        if pseudo_title is not None and _STATEMENT.search(pseudo_title):
            pseudo_title = None
        if pseudo_title is not None and (own := _label_kind(pseudo_title, seg)) is not SectionKind.OTHER:
            in_steps = kind is SectionKind.ACTIONS and own is SectionKind.VERIFICATION
            close()
            title, level, kind, subsection, body = pseudo_title, 7, own, False, []
            continue
        label = _INLINE_LABEL.search(seg) if ":" in seg or first in {"*", "_"} else None
        if label and kind is not SectionKind.ACTIONS:
            if seg[: label.start()].strip():
                body.append(seg[: label.start()])
            close()
            item = _ITEM_MARKER.match(seg) if not seg[: label.start()].strip() else None  # "- fix: …" stays a list item
            title, level, kind, subsection = label["title"], 7, SectionKind.ACTIONS, False
            body = [(item.group(0) if item else "") + label["body"]]
            continue
        body.append(seg)
    close()
    return sections


CODE_SPAN = r"(?:[^`\n]|\n(?![ \t]*(?:\n|[-*+][ \t]|[>#|]|\d+[.)][ \t])))+?"
"""What a backticked span holds: it may run on over a hard-wrapped line, as Markdown allows, but not into a new
paragraph, list item, quote, heading or table row."""
_INLINE_CODE = re.compile(rf"(`+)({CODE_SPAN})\1(?!`)")
_NOT_NEWLINE = re.compile(r"[^\n]")


def inline_code(text: str) -> list[str]:
    """Backticked spans in order of appearance (a span wrapped over two lines is read as one line)."""
    return [_one_line(m.group(2)) for m in _INLINE_CODE.finditer(text)]


_WRAP = re.compile(r"[ \t]*\n[ \t]*")


def _one_line(span: str) -> str:
    return _WRAP.sub(" ", span).strip() if "\n" in span else span.strip()


MEASURE = r"[<>]=?\s*\d+(?:\.\d+)?\s*(?:ms|s|%|[kmg]bits?(?:/s)?|[kmg]bps|[kmg]b/s)\b"
"""A measure compared in words ("> 5mbit", "< 10 ms"): an expected result, never a shell redirect into a file."""


def mask_code(text: str) -> str:
    """Inline code contents replaced by `x`s (same length), so prose rules never match inside a command."""
    if "`" not in text:
        return text
    return _INLINE_CODE.sub(lambda m: m.group(1) + _NOT_NEWLINE.sub("x", m.group(2)) + m.group(1), text)


# --- expected results ---------------------------------------------------------------------------------

_EXPECTATION = re.compile(
    r"expect(?:ed|ing|s)?\b"
    r"|(?:should|must|will)\s+(?:now\s+|still\s+|only\s+|then\s+)?(?:show|see|return|list|contain|display|report|succeed|"
    r"include|appear|print|output|reach|connect|respond|answer|receive|match|complete|finish|read|say|get|give|"
    r"come\s+back\s+(?:with|as|empty|clean|blank))\b"
    r"(?!\s+(?:normally|fine|again|correctly|properly|successfully|as\s+(?:expected|before|usual)|that)\b)"
    r"|(?:should|must|will)\s+(?:now\s+|still\s+)?(?:no\s+longer|not)\s+(?:be|show|appear|list|contain|include|report)\b"
    r"|(?:should|must|will)\s+(?:now\s+)?be\s+(?:just|only|exactly|[`\"'])"
    r"|(?:winner|winning\s+route|next[\s-]+hop(?:\s+type)?|policy|target|(?:default\s+)?action|access)\s+(?:should|must|will)\s+"
    r"(?:now\s+)?(?:be|read|say)\b"
    r"|(?:should|must|will)\s+(?:now\s+|still\s+|only\s+)?(?:have|has|hold)\s+(?:no|only|just|exactly|one|two|\d|[`\"'])"
    r"|(?:should\s*n['\u2019]?t|should\s+not|must\s*n['\u2019]?t|must\s+not)\s+(?:have|show|list|contain|include|print)\b"
    r"|(?:should|must|will)\s+(?:now\s+)?(?:be\s+)?left\b|(?:should|must|will)\s+(?:now\s+)?(?:run|go)\s+through\b"
    r"|(?:should|must|will)\s+(?:now\s+)?be\s+(?:absent|present|gone|empty|listed|reachable|removed|allowed|open|"
    r"established|zero|0|back|restored|successful)\b"
    r"|you(?:['\u2019]ll|\s+will|\s+should)\s+(?:now\s+)?see\b"
    r"|(?:should\s*n['\u2019]?t|should\s+not|won['\u2019]t|will\s+not|must\s+not)\s+(?:\w+\s+)?(?:hang|time\s*out|fail|drop|stall)"
    r"|no\s+longer\b|absent\b|exit\s+(?:code|status)\b|non-?zero\b|unchanged\b|(?:→|->|=>)\s*\S"
    r"|exits?\s+(?:with\s+)?(?:(?:code|status)\s+)?\d|fails?\s+with\b|errors?(?:\s+out)?\s+with\b|[1-5]xx\b"
    r"|stop(?:s|ped)?\s+(?:timing\s*out|hanging|failing|stalling)\b"
    r"|return(?:s|ed)?\s+(?:\d|an?\s|the\s|`|\"|'|\[|\{|true|false|ok|success|nothing|no\s|empty|only|data\b|metrics\b)"
    r"|gives?\s+(?:\d|`|\"|\[)|[\u2014\u2013]\s+(?:no|only|exactly)\s+[`\"'\w]|near\s+(?:0|zero)\b"
    r"|\b(?:rtt|latency|avg|average)\b[^.\n]{0,20}?\d+(?:\.\d+)?\s*ms\b"
    r"|\d+(?:\.\d+)?\s*%\s+(?:packet\s+)?loss\b|\d+\s*/\s*\d+\s+(?:packets|replies|received)\b|\d+\s+received\b"
    r"|http(?:/\d(?:\.\d)?)?\s+\d{3}\b|200\s+ok\b|succeed(?:s|ed)?\b|connect(?:s|ed)\b"
    r"|(?:below|under|above|over|less\s+than|more\s+than|fewer\s+than|at\s+least|at\s+most|within)\s+"
    r"(?:~\s*|\u2248\s*|about\s+|around\s+|roughly\s+|approx(?:\.|imately)?\s+)?\d"
    rf"|(?<!\S){MEASURE}"
    r"|(?:is|are)\s+(?:now\s+)?(?:absent|gone|empty|no\s+longer|not\s+listed|listed|present|reachable|open|back)\b"
    r"|gets?\s+\d+\s+(?:replies|responses|packets|answers)\b|(?:completes?|finish(?:es)?|ends?)\s+with\b|instead\s+of\b"
    r"|completes?\s+and\s+(?:reports|shows|prints|returns|lists)\b"
    r"|stays?\s+(?:at|flat|the\s+same|unchanged|below|under|zero|0)\b"
    r"|(?:result|output|outcome)s?(?:\s+[a-z]+){0,3}\s*:\s*(?:(?:only|just|exactly)\s+)?[`\"'\d\[{]"
    r"|ends?\s+in\s+[`\"'\d]|(?:observed|actual(?:ly)?|got)\s*:\s*\S|(?<=`)(?:\s+(?:on|from|at|in)\s+[\w.-]+)?\s*:\s*(?:no|only|just|exactly|none|nothing|empty)\b"
    r"|only\s+(?:has|have|holds?|shows?|lists?|contains?)\s+\S|only\s+\S[^.\n;]{0,60}?\sleft\b(?!\s+(?:alone|untouched))"
    r"|(?:want|need|expect)\s+to\s+see\b"
    r"|\b(?:counters?|counts?|pkts|packets?|bytes|hits)\b[^.\n;]{0,40}?\b(?:increas|increment|ris(?:e|es|ing)\b|climb|go(?:es|ing)?\s+up\b|"
    r"grow|tick)"
)
"""Phrases that state a result, matched on lower-cased text at a word start (see `_CUES` for why); what a field a read
shows should be ("the winner should be the default VnetLocal route", "the next hop type should now be VnetLocal") is
one; a command's result given after a colon ("`tc -s qdisc show dev eth0`: no tbf", "`tc qdisc show` on tf-source-vm: no
tbf") is one. A rule's packet counter rising while the traffic is retried is one: `iptables -v` counts what the rule
matched; a bound stays one when it is approximate ("under ~0.01 s")."""
_SHOWS_NAMED = re.compile(
    r"\b(?:shows?|showed|lists?|listed|reports?|reported|displays?|displayed|prints?|printed|contains?|contained|"
    r"includes?|included|reads?)\s+"
    r"(?:(?:only|no|exactly|all|both|each|every|one|two|three|four|none|nothing|empty|an?\s+empty|rule|a\s+single)\b|\d"
    r"|(?:the\s+)?[`\"'A-Z]|[a-z]\w*[-_.:/]\w)"
    r"|\b(?:shows|showed|lists|listed|reports|reported|displays|displayed|prints|printed|contains|returns|returned)\s+"
    r"(?:the\s+|a\s+|an\s+)?(?:[a-z][\w-]*\s+){1,2}`"
)
"""A read that names what it shows ("lists Microsoft.Storage", "shows `0 banned`", "shows the default `qdisc mq 0:`",
"shows allow-pg-override first": a name with a hyphen, dot or colon is a value, not a word),
not "shows the config" (nor "the rule list with `…`", where list is a noun)."""


def has_expectation(text: str) -> bool:
    """Whether a text states a result to look for (an output, a count, an exit status), not just "check it"."""
    lower = ascii_lower(text)
    found = any(m.start() == 0 or not lower[m.start() - 1].isalnum() for m in _EXPECTATION.finditer(lower))
    return found or _SHOWS_NAMED.search(text) is not None


_TERSE_RESULT = re.compile(r"\s(?:=|->|\u2192|=>)\s*[\w`'\"\[]")


def terse_result(text: str) -> bool:
    """A check's result in the notation of terse notes ("curl 10.0.1.5:8080 = 200", "tc qdisc show -> only mq"): in a
    verification, an equals sign or an arrow between a check and a value states what it should give."""
    return _TERSE_RESULT.search(text) is not None


_RELATIVE = re.compile(
    r"(?i)\b(?:normal(?:ly)?|better|improv\w*|comparable|baseline|substantial(?:ly)?|significant(?:ly)?|something|"
    r"happ(?:y|ier)|health(?:y|ier)|as\s+(?:before|usual)|faster|slower|lower|higher|recover\w*|in\s+line\s+with"
    r"|pre-?(?:change|window|incident)|works?\s+again|working\s+again)\b"
)
_VALUE = re.compile(
    r"(?i)\d|[\"\[{]|(?<!\w)'|\b(?:succeed\w*|success\w*|connected|refused|timed?\s*out|timeouts?|empty|nothing|no\s+output|"
    r"gone|absent|not\s*found|no\s+longer|listed|none|zero|true|false|only|exactly|counts?|counters?|"
    r"no\s+(?:drops?|loss|rules?|entry|entries)|stop(?:s|ped)?\s+(?:climbing|increasing|growing|rising|incrementing))\b"
)


def relative_only(text: str, command: str = "") -> bool:
    """ "Latency should look much better / back to normal", "comparable to the baseline", "in line with pre-change
    performance", "ping works again": a result stated only against
    a state nobody measured, with no output, count or value to compare; such a check may prove the fix or not. The
    check's own `command` and inline code are not the result (a port or an address in them is no value)."""
    prose = mask_code(text.replace(command, " ") if command else text).replace("`", " ")
    return _RELATIVE.search(prose) is not None and _VALUE.search(prose) is None


_SENTENCE_SPLIT = re.compile(
    r"[.!?]\s+(?=[A-Z`(\[*#=\u2192])|(?<!\be\.g)(?<!\bi\.e)(?<!\betc)(?<!\bvs)(?<!\bcf)(?<![\d.])[.!?]\s+(?=[a-z])"
    rf"|(?<!\be\.g)(?<!\bi\.e)[.!?]\s+(?={LAB_VM_NAME}\b)"
    r"|\n\s*\n|\n(?=\s*(?:[-*+]|\d+[.)])\s|\s*#|\s*\|)"
)
"""Where a sentence ends: a full stop before a capital or a conclusion's sign ("… on dest. = two independent …"), or
before a lower-case word (messy output writes lower case) unless it closes an abbreviation or a number; before a VM's
name, which is lower case even after an address ("rejects 203.0.113.47. tf-dest-vm's firewall is clean"); a blank
line; a list item, a heading or a table row."""


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence, paragraph or list item, so a match can be placed in its sentence."""
    spans: list[tuple[int, int]] = []
    start = 0
    for m in _SENTENCE_SPLIT.finditer(text):
        end = m.start() + (text[m.start()] in ".!?")
        spans.append((start, end))
        start = m.end()
    spans.append((start, len(text)))
    return spans


def split_sentences(text: str) -> list[str]:
    return [sentence for a, b in sentence_spans(text) if (sentence := text[a:b].strip())]


CONDITIONAL = re.compile(
    r"(?i)^[\W\d]*(?:(?:only\s+)?if\b|otherwise\b|else\b|failing\s+that\b|(?:as\s+a\s+)?(?:fallback|last\s+resort)\b|"
    r"should\s+(?:it|that|this|the\s+\w+)\s+(?:fail|remain|persist)|in\s+case\b)"
)
"""An action written as a condition or a fallback: it is still an action, taken when what came before did not work."""


_NEGATION = r"(?:\b(?:not|no|never|nor|without|rather\s+than|instead\s+of|nothing)|n['\u2019]t)"


@cache
def _negated_within(words: int) -> re.Pattern[str]:
    return re.compile(rf"(?i){_NEGATION}\W+(?:\w+\W+){{0,{words}}}$")


def denied_before(sentence: str, at: int, *, words: int) -> bool:
    """Whether a negation stands at most `words` words before `at` ("not a REJECT", "isn't hand-made", "nothing in
    OUTPUT drops", "no ingress qdisc"): a claim's words denied just before them are no claim. "n't" ends a word, so no
    word boundary precedes it."""
    return _negated_within(words).search(sentence[max(0, at - 40) : at]) is not None


_LIST_SEPARATOR = re.compile(r"\s(?:;|&&|\|\|)\s")
"""Where one command of a shell list ends and the next begins (`cp f{,.bak} ; … ; systemctl reload harden-net`)."""


def lines_alone(sections: Sequence[Section]) -> list[str]:
    """Every line of the report as it stands, and each command of a shell list on it: list marker, prompt, indent and
    backticks taken off."""
    lines = (line for s in sections for seg in s.body for line in (seg.lines if isinstance(seg, Fence) else (seg,)))
    bare = [strip_prompt(LIST_PREFIX.sub("", line).strip().strip("`").strip()) for line in lines]
    return [part.strip() for line in bare for part in (line, *_LIST_SEPARATOR.split(line)[1:])]


def stands_alone(command: str, lines: Sequence[str]) -> bool:
    """A command written on a line of its own (a block, an indented line, a bare list item) is handed over to be run;
    one quoted inside a sentence ("the hardening run had executed `iptables -I …` at 02:00") is told about."""
    head = command.splitlines()[0].strip() if command.strip() else ""
    return bool(head) and any(
        line.startswith(head) or (line.endswith("\\") and head.startswith(line[:-1].strip())) for line in lines if line
    )
