"""Recommended actions read out of a v1 markdown report, for runs that have no structured result.

Reports vary: numbered or bulleted lists, sub-headings per step, prose paragraphs; commands in fenced
blocks or inline code; a verification part inside a step or in a section of its own. Commands that a
report names only to warn against them are not part of an action.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from ghost_eval.run.artifacts import RecommendedAction, Verification
from ghost_eval.scoring.bare_commands import bare_commands
from ghost_eval.scoring.cautions import asks_for_change, blank_warnings, leads_warning
from ghost_eval.scoring.text import (
    CODE_SPAN,
    CONDITIONAL,
    LABEL_ENDINGS,
    LIST_PREFIX,
    Fence,
    Section,
    SectionKind,
    Segment,
    has_expectation,
    inline_code,
    lines_alone,
    mask_code,
    relative_only,
    sentence_spans,
    split_sections,
    split_sentences,
    stands_alone,
    terse_result,
)
from ghost_eval.shell.checks import inspector_call, is_check, tool_check, watcher_check
from ghost_eval.shell.commands import looks_like_command, parse_command_block, strip_prompt

__all__ = ["actions_from_sections", "extract_actions", "report_verifications", "written_changes"]

_MARKER = re.compile(r"^(\s*)(\d{1,3}[.)]|[-*+])\s+(.*)$")
_VERIFY_LABEL = re.compile(
    r"(?:^|(?<=\n)|(?<=[.!?;])\s+)[\s>*_\-+]*(?:\d+[.)]\s*)?(?:\*\*|__)?\s*(?:(?:then|and|finally|afterwards|after\s+that)[,\s]+)?"
    r"(?:(?:verification|validation|expected(?:\s+(?:output|result))?|check|test|post-check)\s*(?:\*\*|__)?\s*:"
    r"|(?:verify|to\s+verify|to\s+confirm|confirm|validate)\b)",
    re.IGNORECASE,
)
_PLACEHOLDER = re.compile(r"\x00(\d+)\x00")
_INTO_FILE = re.compile(
    r"/[\w.-]+(?:/[\w.-]+)*`?\)?(?:\s+(?:with|containing)(?:\s+(?:the\s+)?(?:following\s+)?(?:contents?|lines?|settings?)"
    r"|\s+(?:the\s+)?following)?)?\s*:\s*$"
)
"""Text that ends by naming a file and a colon ("In `/etc/fail2ban/jail.local`:", "write `/etc/sysctl.d/90-x.conf`
with:"): a block after it that runs nothing is what goes into that file (`ignoreip = …`, a daemon.json), a setting the
action writes, kept in its text."""
_CODE_OR_PLACEHOLDER = re.compile(rf"\x00(\d+)\x00|(`+)({CODE_SPAN})\2(?!`)")
_SPACES = re.compile(r"\s+")
_EXCERPT = 300


@dataclass
class _Item:
    """One action as it is being read: its description part and its verification part."""

    desc: list[Segment] = field(default_factory=list)
    verify: list[Segment] = field(default_factory=list)
    in_verify: bool = False
    """Set at the first verification label; everything after it belongs to the verification part."""

    def add(self, seg: Segment) -> None:
        if isinstance(seg, str) and not self.in_verify:
            m = _VERIFY_LABEL.search(seg)
            if m is None:
                self.desc.append(seg)
                return
            if seg[: m.start()].strip():
                self.desc.append(seg[: m.start()])
            self.in_verify = True
            seg = seg[m.start() :]
        (self.verify if self.in_verify else self.desc).append(seg)

    def _written(self) -> list[Segment]:
        return [s for s in (*self.desc, *self.verify) if isinstance(s, Fence) or s.strip()]

    def empty(self) -> bool:
        return not self._written()

    def is_bare_check(self) -> bool:
        """A paragraph that is one read-only command on a line of its own, written without code marks."""
        written = self._written()
        line = written[0].strip() if len(written) == 1 and isinstance(written[0], str) else ""
        return bool(line) and looks_like_command(line) and is_check(line)

    def ends_in_code(self) -> bool:
        written = self._written()
        return bool(written) and isinstance(written[-1], Fence)


@dataclass
class _Part:
    """A description or verification part, read: its prose, commands and any output it quotes."""

    text: str
    commands: list[str]
    output: list[str]
    first_change: int = -1
    """Where in `text` the first state-changing command stands (-1: none): a read told before it, unless told as run
    after a fix ("… should then say Allow"), is the evidence that found the fault, not the proof of the fix."""


def _read_part(segments: Sequence[Segment]) -> _Part:
    fences: list[Fence] = []
    warned: set[int] = set()
    lines: list[str] = []
    last_text = ""
    contents: set[int] = set()
    for seg in segments:
        if isinstance(seg, Fence):
            if leads_warning(last_text):
                warned.add(len(fences))
            if _INTO_FILE.search(last_text) and not seg.content()[0]:
                contents.add(len(fences))
            lines.append(f"\x00{len(fences)}\x00")
            fences.append(seg)
        else:
            lines.append(seg)
            if seg.strip():
                last_text = seg
    text = "\n".join(lines)
    blanked = blank_warnings(text)
    placed: list[tuple[int, str]] = bare_commands(mask_code(blanked))
    output: list[str] = []
    for m in _CODE_OR_PLACEHOLDER.finditer(blanked):
        if m.group(1) is not None:
            index = int(m.group(1))
            if index in warned:
                continue
            fence_commands, fence_output, comments = fences[index].content()
            placed.extend((m.start(), c) for c in fence_commands)
            output.extend(fence_output)
            output.extend(c for c in comments if has_expectation(c))
        elif looks_like_command(span := inline_code(m.group(0))[0]) or inspector_call(span):
            placed.append((m.start(), strip_prompt(span)))
    commands = [c for _, c in sorted(placed, key=lambda p: p[0])]
    changes = [at for at, c in placed if any(cmd.mutating for cmd in parse_command_block(c))]
    kept = _PLACEHOLDER.sub(lambda m: " " * len(m.group(0)), text)  # same offsets as `placed`
    written = [ln for index in sorted(contents) if index not in warned for ln in fences[index].lines if ln.strip()]
    kept += "\n" + "\n".join(written) if written else ""  # after the text: `placed`'s offsets stay
    return _Part(kept, commands, output, min(changes, default=-1))


def _trailing_checks(commands: Sequence[str]) -> list[str]:
    """The checks a block runs after its last change: a fix and its check are often written in one block, or even in
    one command (`--scripts "tc qdisc del … && tc qdisc show …"`), where the reads after its last change are the check."""
    last_change = max((i for i, c in enumerate(commands) if not _read_only(c)), default=-1)
    checks = [c for c in commands[last_change + 1 :] if is_check(c)]
    if checks or last_change < 0:
        return checks
    parsed = parse_command_block(commands[last_change])
    after = max((i for i, c in enumerate(parsed) if c.mutating), default=len(parsed))
    inner = "; ".join(c.text for c in parsed[after + 1 :])
    return [inner] if inner and is_check(inner) else []


def _read_only(command: str) -> bool:
    parsed = parse_command_block(command)
    return bool(parsed) and not any(c.mutating for c in parsed)


def _clean(text: str) -> str:
    lines = (LIST_PREFIX.sub("", ln) for ln in text.splitlines())
    return _SPACES.sub(" ", " ".join(lines)).strip()


def _verification(part: _Part) -> Verification | None:
    """A verification is a read-only command together with the result that proves the fix."""
    command = next((c for c in part.commands if is_check(c)), None)
    if command is None:
        return _named_verification(part.text, labelled=True)
    if has_expectation(mask_code(part.text)) or relative_only(part.text) or terse_result(part.text):
        expected = _clean(part.text)
    elif part.output:
        expected = "\n".join(part.output)
    else:
        return None
    return Verification(command=command, expected=expected[:_EXCERPT])


def _verification_in_table(text: str) -> Verification | None:
    """A table row holding a read-only command and, in a later cell, what it printed (| 5432 | `nc -zv …` | `succeeded` |)."""
    for line in text.splitlines():
        if not line.lstrip().startswith("|"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        for at, cell in enumerate(cells):
            command = next((cmd for c in inline_code(cell) if is_check(cmd := strip_prompt(c))), None)
            if command is not None and any(c.strip("`* ") for c in cells[at + 1 :]):
                # the result is in the cells after the command; the row's label ("Check next hop") says no result
                return Verification(command=command, expected=_clean(" | ".join(cells[at + 1 :]))[:_EXCERPT])
    return None


_RERAN_PROBE = re.compile(
    r"(?i)\b(?:re-?ran|ran|re-?tested\s+with)\s+(?P<probe>(?:ping|iperf3?|curl|nc|traceroute|mtr|dig|nslookup|psql|redis-cli)"
    r"\b[^:.;`]*?)\s*:\s*[~\d`\"']"
)
"""A probe reported in words with what it gave ("Re-ran iperf3 from tf-source-vm to tf-dest-vm: ~950 Mbit/s")."""
_SUBJECT_OF_RESULT = re.compile(
    r"(?i)(\s(?:should|must|will)\s+(?:now\s+|then\s+|still\s+)?(?:show|return|say|print|list|complete|succeed|report|give|"
    r"output)\b)"
)
""""`sudo apt-get update` should complete", written bare: the check ends where the result it should give begins."""
_PROBE_AT = re.compile(
    r"(?i)\b(?P<probe>curl|wget|ping|nc|telnet|iperf3?|psql|redis-cli|dig|traceroute)\b[^.;\n]{0,60}?"
    r"(?P<target>https?://[^\s`'\"),]+|(?<![\d.])\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?(?![\d.]))"
)
"""A probe told in words with its target ("curl from tf-source-vm to https://…blob… should get an HTTP status"): the
program and what it tries are named, so with the result it should give it is a check a reader can run."""
_AGAIN = re.compile(r"(?i)\b(?:again|re-?run|re-?ran|then|after(?:wards)?|once|check|verify|confirm|validate)\b")
_TAKES_TIME = re.compile(r"(?i)\s+(?:can\s+|may\s+|might\s+|will\s+)?(?:take|takes|need|needs)\b")
"""A check's data said to take time ("effective routes take a minute to update"): a note on propagation, no check."""


def _named_verification(text: str, *, labelled: bool) -> Verification | None:
    """A check named in words (a Network Watcher check, one of the agent's tools) with the result it should give,
    stated after its name in the same sentence ("re-run the drift check against eni_pre_window_P →
    `drift_detected: false`"; not "connectivity should be back, effective routes take a minute to update"). Outside a
    verification part the sentence must run it after the fix: before, the same check is the evidence of the fault."""
    for sentence in split_sentences(text):
        masked = mask_code(sentence)
        named = watcher_check(masked) or tool_check(masked)
        if named is None or not (labelled or _AGAIN.search(masked.replace(named, " "))):  # "drift check" is no cue
            continue
        if _TAKES_TIME.match(after := masked[masked.find(named) + len(named) :]) is None and has_expectation(after):
            return Verification(command=named, expected=_clean(sentence)[:_EXCERPT])
    return None


_PRECONDITION = re.compile(
    r"(?i)\b(?:after|once)\s+(?:first\s+)?(?:confirming|checking|verifying|making\s+sure)\b"
    r"[^)]*?(?=\)|->|\u2192|=>|[:;]|\bthen\b|$)"
)
"""A check made before the change ("(after confirming with `iptables -L` that line 1 is the DROP)", "after checking
nobody claims it -> az … delete …"): not its proof. It ends with its bracket, or where the step it conditions starts."""


def _verification_in_prose(part: _Part, segments: Sequence[Segment]) -> Verification | None:
    """Without a labelled part: a sentence naming a read-only command and its result, a table row of a command and
    its result, or a quoted session."""
    if "|" in part.text and (in_table := _verification_in_table(part.text)) is not None:
        return in_table
    for a, b in sentence_spans(part.text):
        if not (said := part.text[a:b].strip()) or (b <= part.first_change and not _AGAIN.search(said)):
            continue  # "tc qdisc show on tf-source-vm eth0 -> netem …" before the fix is what found the fault
        sentence = _PRECONDITION.sub("", said)
        spans = [strip_prompt(s) for s in inline_code(sentence) if looks_like_command(s) or inspector_call(s)]
        prose = mask_code(sentence)
        spans += [command for _, command in bare_commands(_SUBJECT_OF_RESULT.sub("\x00\\1", prose))]
        command = next((c for c in spans if is_check(c)), None) or next(iter(_trailing_checks(spans)), None)
        if command is None and (by_name := _named_verification(sentence, labelled=False)) is not None:
            return by_name
        if command is not None and has_expectation(prose):
            return Verification(command=command, expected=_clean(sentence)[:_EXCERPT])
        if not spans and (probe := _RERAN_PROBE.search(prose)) is not None:
            return Verification(command=" ".join(probe["probe"].split()), expected=_clean(sentence)[:_EXCERPT])
        if (named := _PROBE_AT.search(prose)) is not None and has_expectation(prose[named.end() :]):
            return Verification(command=f"{named['probe']} {named['target']}", expected=_clean(sentence)[:_EXCERPT])
    checks: list[str] = []
    after: list[str] = []
    for seg in segments:
        if isinstance(seg, Fence):
            commands, output, comments = seg.content()
            output = output or [c for c in comments if has_expectation(c)]
            if commands:  # a block of output alone answers the block before it
                checks, after = _trailing_checks(commands), []
            if output and checks:
                return Verification(command=checks[0], expected="\n".join(output)[:_EXCERPT])
        elif checks:
            after.append(seg)
    said = " ".join(after)  # "Output: `qdisc mq 0: root`" after a block that fixes and then reads
    if checks and has_expectation(mask_code(said)):
        return Verification(command=checks[0], expected=_clean(said)[:_EXCERPT])
    return None


_NO_ACTION = re.compile(
    r"(?i)^\W*(?:none(?:\s+(?:for|on|in|at)\s+(?:the\s+)?[\w/-]+(?:\s+(?:side|layer|level|path))?)?(?:\s*\([^)]*\))?"
    r"|n/a|nothing(?:\s+to\s+(?:do|change|fix)\b[^.]*)?"
    r"|no\s+(?:[\w/,-]+\s+){0,5}?(?:action|change|remediation|fix)s?\b[^.]*?(?:needed|required|necessary|recommended|to\s+take)?)"
    r"\W*(?:$|[.:;]\s)"
)
"""An item that says no change is needed ("none for the network.", "None on the network (NSG, routes … unchanged).")
is not an action (a no-fault case's correct answer)."""


def _to_action(item: _Item) -> RecommendedAction | None:
    if item.empty():
        return None
    desc = _read_part(item.desc)
    verification: Verification | None = None
    commands = list(desc.commands)
    verify_text = ""
    if item.verify:
        verify = _read_part(item.verify)
        # "Expected output: …" after a block that makes the fix and then checks it: the block's check is the command
        verification = (
            _verification(verify)
            or _verification(_Part(verify.text, _trailing_checks(desc.commands), verify.output))
            or _verification_in_table(verify.text)
        )
        commands.extend(verify.commands)
        verify_text = _clean(verify.text)
    if verification is None:
        verification = _verification_in_prose(desc, item.desc)
    if verification is not None and verification.command in commands:
        commands.remove(verification.command)
    description = _clean(desc.text) or verify_text or (commands[0] if commands else "")
    if not description and verification is not None:
        description = verification.command  # a block that only verifies: its command is all it says
    if not description or (not commands and _NO_ACTION.match(description)):
        return None
    return RecommendedAction(description=description, commands=commands, verification=verification)


def _indent(text: str) -> int:
    return len(text.expandtabs(4))


_SHOWN = re.compile(r"\s(?:->|\u2192|=>)\s")


def _list_items(section: Section) -> list[_Item]:
    """Items of a section written as a list; nested markers and unindented sub-bullets stay in their item."""
    first = next(m for seg in section.body if isinstance(seg, str) and (m := _MARKER.match(seg)))
    top_indent = _indent(first.group(1))
    top_numbered = first.group(2)[0].isdigit()
    intro = _Item()
    if section.subsection:
        intro.add(section.title)
    items: list[_Item] = []
    current = intro
    for seg in section.body:
        m = _MARKER.match(seg) if isinstance(seg, str) else None
        if m is not None and _indent(m.group(1)) <= top_indent + 1 and (m.group(2)[0].isdigit() or not top_numbered):
            current = _Item()
            items.append(current)
            current.add(m.group(3))
        else:
            current.add(seg)
    intro_has_code = (
        any(isinstance(s, Fence) for s in (*intro.desc, *intro.verify))
        or any(looks_like_command(span) for s in intro.desc if isinstance(s, str) for span in inline_code(s))
        or any(_changes_state(_STEP_WORD.sub("", s.strip())) and not _SHOWN.search(s) for s in intro.desc if isinstance(s, str))
    )  # a command on its own line before the list ("az … create …", then "+ on the VM: iptables -D …"), not a read
    # with what it showed ("tc -s qdisc show dev eth0 -> tbf rate 8Mbit")
    return [intro, *items] if intro_has_code else items


def _introduces_code(item: _Item) -> bool:
    """A paragraph ending in ':' ("Delete the blocking rule:") owns the code block after the blank line."""
    last = (item.verify or item.desc)[-1:]
    return bool(last) and isinstance(last[0], str) and last[0].rstrip().endswith(":")


_BLOCKS_RESULT = re.compile(
    r"(?i)^\W*(?:(?:you|it|(?:the|this|that)(?:\s+(?:output|command|query|listing|check|call))?|output)\s+)?"
    r"(?:should|must|will)\s+(?:now\s+)?\w|^\W*expect"
    r"|^\W*you\s+(?:want|need|ought)\s+to\s+see\b"
)
"""A paragraph that opens on a result ("you should see two lines, …", "expect `Allow`", "the command should return no
rows"): the result of the code block just before it."""


def _paragraph_items(section: Section) -> list[_Item]:
    """Items of a section written as prose: one per paragraph; a paragraph that verifies joins the one before, and so
    does one that states the result of the block the one before ends with."""
    if section.subsection:
        item = _Item()
        for seg in (section.title, *section.body):
            item.add(seg)
        return [item]
    items: list[_Item] = []
    current: _Item | None = None
    for seg in section.body:
        if isinstance(seg, Fence):
            if current is None and items and _introduces_code(items[-1]):
                current = items[-1]
            if current is None:
                current = _Item()
                items.append(current)
            current.add(seg)
        elif not seg.strip():
            if current is not None and not current.empty():
                current = None
        else:
            if current is None:
                if (
                    items
                    and not items[-1].in_verify
                    and (
                        _VERIFY_LABEL.match(seg)
                        or (_BLOCKS_RESULT.match(seg) and (items[-1].ends_in_code() or items[-1].is_bare_check()))
                    )
                ):
                    current = items[-1]
                else:
                    current = _Item()
                    items.append(current)
            current.add(seg)
    return items


def _section_items(section: Section, verifying: bool) -> list[_Item]:
    has_list = any(isinstance(seg, str) and _MARKER.match(seg) for seg in section.body)
    items = _list_items(section) if has_list else _paragraph_items(section)
    if verifying:
        for item in items:
            item.verify, item.desc, item.in_verify = [*item.desc, *item.verify], [], True
    return items


def actions_from_sections(sections: Sequence[Section]) -> list[RecommendedAction]:
    """Actions of every remediation section, and a verification section's fallback changes, in report order.

    A report with no remediation section at all (a few lines of prose, a bare list) still recommends something: the
    items of a section outside root cause, evidence and verification that holds a state-changing command are its
    actions, so an unsafe fix cannot escape the criteria by leaving out a heading. Where no section yields one (the
    fix written under the report's only heading, "Root cause" or "Found 2 things", in no words the reader takes for a
    recommendation), the state-changing commands it writes on lines of their own, or in a paragraph that turns to what
    to do, are what it recommends: judged, not passed over."""
    if any(s.kind is SectionKind.ACTIONS for s in sections):
        kinds = [(s.kind, a) for s in sections for item in _section_items(s, verifying=False) if (a := _to_action(item))]
        recommended: list[RecommendedAction] = []
        for kind, a in kinds:  # how to undo the fix, written after it, is no recommendation of its own
            if _recommended_in(kind, a) and not (recommended and _ROLLBACK.search(a.description)):
                recommended.append(a)
        return recommended
    actions: list[RecommendedAction] = []
    for section in sections:
        if section.kind is SectionKind.OTHER:
            items = [
                a
                for item in _section_items(section, verifying=False)
                if (a := _to_action(item)) and not _ROLLBACK.search(a.description)
            ]
            if any(not _read_only(c) for a in items for c in a.commands):
                actions.extend(items)
            else:  # a story with no headings, its fix told in words
                actions.extend(_recommended_in_narrative(section, after_fix=bool(actions)))
        elif section.kind is SectionKind.EVIDENCE:
            actions.extend(_recommended_in_narrative(section, after_fix=bool(actions)))
    return actions or _changes_handed_over(sections)


def _recommended_in(kind: SectionKind, action: RecommendedAction) -> bool:
    """Every item of a remediation section; in a verification section, a fallback that changes something ("if it still
    times out, flip the account to `--default-action Allow`"), not a check's own setup (a restart to see a rule stay)."""
    fallback = kind is SectionKind.VERIFICATION and CONDITIONAL.match(action.description) is not None
    return kind is SectionKind.ACTIONS or (fallback and any(_changes_state(c) for c in action.commands))


def _changes_handed_over(sections: Sequence[Section]) -> list[RecommendedAction]:
    """The items, in any section but verification, whose state-changing commands stand on lines of their own or sit in
    a paragraph that turns to what to do: a report's fix where no section reads as its remediation."""
    alone = lines_alone(sections)
    found: list[RecommendedAction] = []
    for section in sections:
        if section.kind is SectionKind.VERIFICATION:
            continue
        for action in filter(None, map(_to_action, _section_items(section, verifying=False))):
            changes = [c for c in action.commands if _changes_state(c)]
            if not changes or (found and _ROLLBACK.search(action.description)):  # before any fix, it undoes the fault
                continue
            if _RECOMMENDS.search(action.description) or any(stands_alone(c, alone) for c in changes):
                found.append(action)
    return found


def _changes_state(command: str) -> bool:
    """A command, not prose or output, that parses and changes something."""
    return looks_like_command(command) and not _read_only(command) and bool(parse_command_block(command))


_STEP_WORD = re.compile(r"(?i)^(?:remove|delete|revert|undo|roll\s*back|fix|apply|run|do)\s*:\s+(?=\S)")
"""A one-word instruction that labels the command after it on its line ("remove:  sudo iptables -D …")."""


def _recommended_in_narrative(section: Section, *, after_fix: bool) -> list[RecommendedAction]:
    """A narrative under "# Investigation notes" that ends in its fix: the paragraphs that recommend a change, and the
    checks it reports after the first of them (or after a fix recommended in an earlier section)."""
    found: list[RecommendedAction] = []
    introduced = False  # "… so I removed it from the live chain:" with the command on the next line
    for action in filter(None, map(_to_action, _section_items(section, verifying=False))):
        if action.commands:
            changes = not all(map(_read_only, action.commands))
        else:  # a fix told in words ("… to make the server multi-threaded and restart it")
            changes = asks_for_change(mask_code(blank_warnings(action.description)))
        recommends = _RECOMMENDS.search(action.description) is not None or _asks_with_command(action)
        if (changes and (recommends or introduced)) or ((found or after_fix) and action.verification is not None):
            found.append(action)
        introduced = action.description.rstrip().endswith(":") and (recommends or _asks_in_last_sentence(action.description))
    return found


def _asks_in_last_sentence(said: str) -> bool:
    """Whether the last sentence of what was said asks for a change ("… Remove the shaping on the destination NIC:")."""
    last = _SENTENCE_END.split((split_sentences(said) or [said])[-1])[-1]
    return asks_for_change(mask_code(blank_warnings(last)))


def _asks_with_command(action: RecommendedAction) -> bool:
    """A sentence that asks for a change and hands over to its command ("Remove it (separate ticket):" above an
    `iptables -D`, "remove it w/ iptables -D …"): an instruction, wherever in a narrative it stands."""
    if not action.commands:
        return False
    at = action.description.find(action.commands[0])
    said = (action.description[:at] if at >= 0 else action.description).rstrip(" `\n")
    return (said.endswith(LABEL_ENDINGS) or _DONE_WITH.search(said) is not None) and _asks_in_last_sentence(said)


_SENTENCE_END = re.compile(r"(?<=[a-z0-9)][.!?])\s+(?=[a-z])")
"""A sentence end that messy notes follow in lower case ("… lose Microsoft.Sql. append instead:"), which the
sentence splitter keeps as one sentence: what hands over to the command is the last of them."""
_DONE_WITH = re.compile(r"(?i)\b(?:it|this|that|them|rule|entry|route|qdisc)\s+(?:with|w/|using|via|by\s+running)$")
"""A change handed to its command inside the sentence ("remove it w/ iptables -D …", "delete the rule with `…`")."""


_ROLLBACK = re.compile(r"(?i)^\W*(?:to\s+roll\s*back\b|roll-?back\s*:|to\s+undo\b|to\s+revert\b)")
"""How to undo the fix, which a report without headings writes beside it: not a recommendation."""
_RECOMMENDS = re.compile(
    r"(?i)\b(?:recommend\w*|(?:my|the)\s+(?:\w+\s+)?(?:fix|recommendation|remediation)\b|fix\s+(?:is|would\s+be)\s+to"
    r"|i(?:['\u2019]d|\s+would)?\s+(?:suggest|propose)|to\s+fix\s+(?:it|this)|next\s+step|what\s+to\s+do\b"
    r"|i\s+(?:\w+\s+)?(?:removed|deleted|flushed|changed|applied|ran|cleared|disabled|stopped|restarted|added|inserted|set|"
    r"created|replaced|updated|modified|edited|reverted|restored|reset)\b|(?:^|\n)\W*(?:fix(?:es)?|remediation)\s*(?::|->|\u2192|=>))"
)
"""Where a narrative turns from what was found to what to do ("Fix → change …"), or says what it changed itself."""


def report_verifications(sections: Sequence[Section], actions: Sequence[RecommendedAction] = ()) -> list[Verification]:
    """Verification steps a report gives in a section of their own rather than inside an action. A section that only
    shows what the fix's own reads printed ("Output of the run-command above:") verifies with those reads."""
    found: list[Verification] = []
    fix_checks = next((c for a in reversed(actions) if a.commands and (c := _trailing_checks(a.commands))), [])
    after_fix = False
    for section in sections:
        if section.kind is SectionKind.VERIFICATION:
            for item in _section_items(section, verifying=True):
                action = _to_action(item)
                if action is not None and action.verification is not None:
                    found.append(action.verification)
                elif fix_checks and (shown := _shown_result(item)):
                    found.append(Verification(command=fix_checks[0], expected=shown[:_EXCERPT]))
        elif section.kind is SectionKind.ACTIONS and fix_checks:  # "Output after the change: `…`" below the fix's block
            found.extend(
                Verification(command=fix_checks[0], expected=shown[:_EXCERPT])
                for item in _section_items(section, verifying=False)
                if _AFTER.search(_read_part(item.desc).text) and (shown := _shown_result(item))
            )
        elif after_fix and section.kind is not SectionKind.ACTIONS:  # "After that, `ping …` reports 0% loss" further on
            found.extend(
                a.verification
                for item in _section_items(section, verifying=False)
                if (a := _to_action(item)) and a.verification and _AFTER.search(a.description)
            )
        after_fix = after_fix or section.kind is SectionKind.ACTIONS
    return found


_AFTER = re.compile(r"(?i)\b(?:after(?:wards)?|once\s+(?:it|that|this|done)|re-?ran|re-?run|now)\b")
"""A check reported as made after the fix, not the evidence that found the fault."""


def _shown_result(item: _Item) -> str:
    """What an item shows as a result without a command of its own: output lines, or a sentence stating one."""
    part = _read_part([*item.desc, *item.verify])
    if part.commands:
        return ""
    if part.output:
        return "\n".join(part.output)
    return _clean(part.text) if has_expectation(mask_code(part.text)) else ""


def written_changes(sections: Sequence[Section]) -> list[str]:
    """Every state-changing command the report writes anywhere, warnings left out: where the actions found change
    nothing, a change written elsewhere means the reader missed part of the fix, not that there is none."""
    return [
        command
        for section in sections
        for command in _read_part([section.title, *section.body]).commands
        if _changes_state(command)
    ]


def extract_actions(report: str) -> list[RecommendedAction]:
    """The recommended actions of a markdown report; never raises, [] when the report has none."""
    return actions_from_sections(split_sections(report))
