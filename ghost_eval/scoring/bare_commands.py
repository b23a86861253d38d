"""Commands a report writes in prose without code marks, as messy model output does ("take it out with iptables -D
INPUT …", "fixes: on dest iptables -D … ; on source tc qdisc del …"): where such a command starts and ends, and when
a program named in a sentence is a command at all."""

from __future__ import annotations

import re

from ghost_eval.scoring.text import LAB_VM_NAME, MEASURE
from ghost_eval.shell.calls import iptables_call
from ghost_eval.shell.checks import is_check
from ghost_eval.shell.commands import heredoc_terminator, looks_like_command, parse_command_block

__all__ = ["bare_commands"]

_BARE_START = re.compile(
    r"(?m)^[ \t>]*(?:(?:\d{1,3}[.)]|[-*+]|->|=>|\u2192)[ \t]+)?|:[ \t]+"
    r"|(?P<mid>,[ \t]+|;[ \t]+|(?<=\S)[.!?][ \t]+|(?:->|=>|\u2192|\u2014|\u2013)[ \t]+|\([ \t]*)"
    r"|\b(?:with|w/|using|via|run|execute|then|after\s+that|afterwards)[ \t]+|\b(?:verify|check|confirm)[ \t]+(?=\w)"
    r"|(?<![\w/.-])(?=[a-z][\w.-]*[ \t]+--?[A-Za-z])|(?<![\w/.-])(?=sudo[ \t]+[a-z])"
    r"|(?<![\w/.-])(?P<change>(?=(?:az[ \t]+(?:network|vm)|tc[ \t]+(?:qdisc|class|filter))[ \t]))"
    r"|\band[ \t]+(?P<joined>(?=(?:sudo[ \t]+)?[a-z][\w.-]*[ \t]+[\w-]))",
    re.IGNORECASE,
)
"""Where a command written without backticks can begin: a line (or list item), after a colon, and in the middle of
prose (`mid`: after a comma, a semicolon (as in a shell: "edit shaper.conf -> drop the entry ; systemctl reload
ghost-shaper"), a full stop, an arrow, a dash or an opening parenthesis: "resize it (az vm resize …)", where it needs
an option or arguments that are no pronoun), after the words that introduce one ("take it out with
iptables -D …", "after that tc qdisc show …"), anywhere a word is followed at once by an option (`nc -zv …`), and
(`change`) anywhere az or tc is followed by its command group or object ("fix az network nsg rule delete …"): found that
way only a change counts, since a read named in the middle of a finding ("the tc qdisc on eth0 shows netem") is no
check; so too after "and" (`joined`: "put … in daemon.json and systemctl restart docker"), where "ping and curl both
time out" names programs, not a command."""
_BARE_END = re.compile(
    r"\n|\.\.\.(?=\s|$)(?!\s+--?[A-Za-z])|(?<!\.\.)[.!?](?=\s|$)|,\s|\s(?:[\u2014\u2013]|->|\u2192|=>|<-|\u2190)\s|\s\(|`|\x00"
    r"|\s\d{1,2}\)\s|\s[|;]\s*(?=[A-Za-z][\w-]*:\s)|\s=\s"
)
"""Where a bare command ends: a sentence's end (an ellipsis too, unless an option follows: `az network vnet subnet
update ... --remove networkSecurityGroup` leaves arguments out and goes on), a clause, an arrow to its result ("nc -zv
… -> open") or from a note on it ("iptables -F INPUT  \u2190 clears whatever was added"), an aside, a code span, a pipe
or semicolon before a label ("source: sudo tc qdisc del dev eth0 root | dest: sudo iptables -D …": no program's name
ends in a colon), an equals sign between spaces, which a shell never writes ("curl 10.0.1.5:8080 = 200": its result)."""
_BARE_OPTION = re.compile(r"(?:^|\s)--?[A-Za-z]")
_PREDICATE = re.compile(
    r"\s(?:(?:only|now|still|then|again)\s+)?(?:is|are|was|were|has|had|have|been|should|would|will|must|shows|lists|"
    r"(?:should|must|won|doesn)n?['\u2019]?t|"
    r"returns|prints|reports|gives|rewrote|wrote|added|created|inserted|changed|broke|wiped|replaced|deleted|removed|"
    r"flushed|installed)\s"
)
"""A command followed by a verb is the subject of a sentence about it: a change ("`iptables -A …` was run last night")
is then no recommendation, a read ("then iptables -S f2b-sshd should only show the RETURN") is a check whose result the
rest of the sentence states."""
_PRONOUNS = frozenset({"it", "them", "this", "that", "these", "those", "everything", "something"})
_PREPOSITIONS = frozenset({"from", "to", "on", "against", "at", "in", "for", "of", "with", "between", "across", "through"})
_SHELL_COMMENT = re.compile(r"\s#(?:\s.*)?$")
"""A shell comment ends the command (`iptables -F INPUT   # clears whatever else is there`): its words are not arguments."""
_PURPOSE = re.compile(
    r"\s+(?:to\s+(?:get|make|keep|avoid|ensure|be|clear|fix|stop|let|force|see|rule|move)|in\s+case|so\s+that|so\s+(?:we|they|you|i|it)\s|because"
    r"|since)\b.*$"
)
"""A purpose or condition after a command ("az vm redeploy … to get it off the current host in case the hw is bad",
"iptables-restore < rules.v4 so we dont have to wait"): prose that ends the command."""
_PLACE = rf"on\s+(?:{LAB_VM_NAME}|(?:the\s+)?(?:source|dest|destination|sender|receiver|client|server)(?:\s+vm)?)\s*:?\s+"
_PLACED_STEP = re.compile(rf"\s*;\s*{_PLACE}")
"""A step of a command list told where it runs ("… ; on tf-dest-vm sudo tc qdisc del …", "… ; on source tc …"): the
place is no program."""
_PROGRAM = r"(?:sudo\s+)?(?:az|iptables|ip6tables|nft|tc|ip|systemctl|service|fail2ban-client|docker|sysctl)\s+[\w-]"
"""A network program with its first argument: where a step of a list written in prose starts."""
_SLASHED_STEP = re.compile(rf"\s+/\s+(?={_PROGRAM})")
"""Steps listed with a spaced slash ("az vm deallocate / az vm resize --size … / az vm start"): no path has a space
before its slash, so each program after one starts a command of its own."""
_THEN_STEP = re.compile(rf"(?<=[^;\s])\s+then\s+(?={_PROGRAM})")
"""Steps joined by "then" ("iptables -D INPUT -p icmp -j DROP then iptables -C INPUT … should fail"): a sequence, as a
semicolon is; a shell's own `; then` follows a semicolon."""
_PLACED_FIRST = re.compile(rf"^{_PLACE}(?=\S+\s+\S)")
"""The list's first step told where it runs ("fixes: on dest iptables -D … ; on source tc …")."""
_NEW_SUBJECT = re.compile(r"\s+and\s+(?:the\s+)?[a-z][\w-]*(?:\s+(?:between|to|from|of|on|for|in|across)(?:\s+[\w.-]+){1,4})?$")
"""A clause after a command ("… -j DROP and prometheus", "… -n x and connectivity between the two VMs"): the words
before the verb are its subject, not the command."""
_THEN_STATE = re.compile(r"\s+and$")
_STATE_VERBS = frozenset({"is", "are", "were", "have", "should", "would", "will", "must"})
"""A command joined by "and" to a state or an intent with no subject of its own ("… -n blackhole-dest-vm and were good",
"… and have a look in the portal after"): the reader's own next step, so the command ends at the "and". Joined to a
change told in the past ("docker restart set FORWARD policy to DROP and added …") the command is the subject of a
narration instead."""
_COMPARISON = re.compile(rf"\s{MEASURE}.*$", re.IGNORECASE)
"""A result compared in words after a command ("iperf3 -c 10.0.1.5 > 5mbit", "curl … < 10 ms"): a measure, not a
redirect into a file named `5mbit`."""
_SUBCOMMANDS = {"ip": frozenset({"link", "addr", "address", "route", "rule", "neigh", "netns", "tunnel", "tuntap", "maddr"})}
"""Programs named like English words whose object names them as a command without an option (`ip link set dev eth0
mtu 1400`, where "ip address" alone stays prose)."""
_TC_OBJECTS = frozenset({"qdisc", "class", "filter", "action", "actions", "monitor", "exec", "chain"})


def _changes(candidate: str) -> bool:
    """A whole change: one that changes state and is written out with its arguments (`az vm run-command` named in
    passing is no command)."""
    return (_BARE_OPTION.search(candidate) is not None or " dev " in candidate) and any(
        c.mutating for c in parse_command_block(candidate)
    )


def _names_no_action(words: list[str]) -> bool:
    """A program written with what it acts on but no action is a rule or qdisc named in prose: "tc tbf 5mbit on the
    source vm" (tc takes no `tbf` object), "iptables -p icmp -j DROP rule 1 on dest vm" (iptables refuses a rule given
    without -A, -I, -D, -S or another command)."""
    if words[0].rsplit("/", 1)[-1] == "tc":
        return not words[1].startswith("-") and words[1] not in _TC_OBJECTS
    call = iptables_call(tuple(words))
    return call is not None and not call.op


_WORDS_TOO = frozenset(
    {"ip", "host", "watch", "time", "ping", "install", "cat", "head", "tail", "less", "kill", "touch", "echo", "find"}
    | {"sort", "env", "nice", "timeout", "dig", "more", "ssh", "sh", "apt", "ln", "cp", "mv", "rm", "tee", "printf"}
)
"""Programs named like English words: written bare, they are a command only with an option ("ping the host" is prose)."""


_SIGNALS_PIDS = re.compile(r"kill(?:\s+-\w+)*(?:\s+\d+)+$")
"""`kill 2314`, `kill -9 2314`: process ids, which no English sentence gives a verb."""


def _closing_paren(prose: str, start: int, end: int) -> int | None:
    """Where the parenthesis a command opened after closes, before `end`; None when it stays open."""
    depth = 0
    for at in range(start, end):
        depth += {"(": 1, ")": -1}.get(prose[at], 0)
        if depth < 0:
            return at
    return None


def _writes_by_path(candidate: str) -> bool:
    """Output sent into a file by its path (`echo '…' > /etc/cron.d/x`, `… | sudo tee -a /etc/…`): a command even when
    its program is an English word written without an option, as is one whose first argument is a path (`cp /etc/…`);
    "… > everyone" names no file."""
    return any(path.startswith("/") for c in parse_command_block(candidate) for path in c.writes)


_SHELL_WORDS = re.compile(r"^(?:then|do|done|fi|else|elif|esac|\})\b")


def _before_prose_step(candidate: str) -> str:
    """ "az network nic update … --remove networkSecurityGroup ; re-attach once the rule is cleaned up": a step after a
    semicolon that is no command (nor a shell keyword: `; then`) is the writer's prose again, so the command ends
    before it."""
    steps = candidate.split(";")
    if len(steps) < 2 or not looks_like_command(steps[0].strip()):
        return candidate
    for i, step in enumerate(steps[1:], 1):
        words = step.strip()
        if words and not _SHELL_WORDS.match(words) and not looks_like_command(words):
            return ";".join(steps[:i]).rstrip()
    return candidate


def bare_commands(prose: str) -> list[tuple[int, str]]:
    """(offset, command) of every command a report writes in prose without code marks, as messy output often does: a
    known program with an option, or whose name (or `sudo`) is no English word (`tc qdisc show dev eth0`), so
    "ping the host" stays prose. The prose must already have its code spans masked and its warnings blanked."""
    found: list[tuple[int, str]] = []
    taken = -1
    for m in _BARE_START.finditer(prose):
        start = m.end()
        if start <= taken or start >= len(prose):
            continue
        end = start
        while (stop := _BARE_END.search(prose, end)) is not None and prose[stop.start() - 1 : stop.end()] == "\\\n":
            end = stop.end()  # a line continued with a backslash
        end = stop.start() if stop else len(prose)
        if (m["mid"] or "").startswith("(") and (close := _closing_paren(prose, start, end)) is not None:
            end = close  # "remove it (iptables -D INPUT … -j DROP) and then …": the aside ends the command
        candidate = " ".join(prose[start:end].replace("\\\n", " ").split())
        candidate = _PURPOSE.sub("", _COMPARISON.sub("", _SHELL_COMMENT.sub("", candidate)))
        candidate = _THEN_STEP.sub("; ", _SLASHED_STEP.sub("; ", _PLACED_STEP.sub("; ", candidate)))
        if (place := _PLACED_FIRST.match(candidate)) is not None:
            start, candidate = start + place.end(), candidate[place.end() :]
        candidate = _before_prose_step(candidate)
        if candidate.endswith(")") and candidate.count(")") > candidate.count("("):
            candidate = candidate[:-1].rstrip()  # "(az vm resize … --size Standard_D4s_v5)": the aside's close
        if (predicate := _PREDICATE.search(candidate)) is not None:
            candidate = candidate[: predicate.start()]
            if (clause := _NEW_SUBJECT.search(candidate)) is not None:
                candidate = candidate[: clause.start()]  # "… -j DROP and prometheus should start": the verb's own subject
            elif (clause := _THEN_STATE.search(candidate)) is not None and predicate[0].split()[-1] in _STATE_VERBS:
                candidate = candidate[: clause.start()]
            else:
                subject = parse_command_block(candidate)[-1:]  # "… -j DROP; afterwards iptables -S INPUT prints nothing"
                if not subject or not is_check(subject[0].text):
                    continue
        if not candidate or not looks_like_command(candidate):
            continue
        if (first_word := candidate.split()[0]).endswith(":") and first_word != ":":
            continue  # "dest: iptables -F INPUT": a label, the command starts after its colon (`: > file` is one)
        steps = parse_command_block(candidate, substitutions=False)
        simple = [c.text for c in steps]
        # "drift_detected false ; iptables -S INPUT | …": prose before the command; a first step that changes state is
        # one even when its text is a bare program name (`iptables-restore < rules.v4 && …`: its input redirected).
        if len(simple) > 1 and not looks_like_command(simple[0]) and not steps[0].mutating:
            labelled = simple[0].rpartition(": ")[2]  # "undo it all: iptables -F INPUT && …": the command after its label
            first = labelled if looks_like_command(labelled) else next(c for c in simple if looks_like_command(c))
            start, candidate = start + candidate.find(first), candidate[candidate.find(first) :]
        words = candidate.split()
        if len(words) < 2 or words[1] in _PREPOSITIONS:
            continue  # "curl from the sender to …": a probe told in words
        head = words[0].rsplit("/", 1)[-1]
        if _names_no_action(words) or (m["change"] is not None and not _changes(candidate)):
            continue
        if m["joined"] is not None and (head in _WORDS_TOO or not any(c.mutating for c in parse_command_block(candidate))):
            continue
        if m["mid"] and not _BARE_OPTION.search(candidate) and (len(words) < 3 or _PRONOUNS & set(words)):
            continue  # an aside, a clause or a sentence ("(docker set it)", ". docker put it there") names a program
        if (
            _BARE_OPTION.search(candidate)
            or head not in _WORDS_TOO
            or words[1] in _SUBCOMMANDS.get(head, ())
            or words[1].startswith("/")
            or _writes_by_path(candidate)
            or _SIGNALS_PIDS.match(candidate) is not None
        ):
            taken = start + len(candidate)
            if (word := heredoc_terminator(candidate)) is not None and (
                body_end := re.compile(rf"(?m)^[ \t]*{re.escape(word)}[ \t]*$").search(prose, end)
            ) is not None:  # `cat > rules.v4 <<'EOF'` written bare: the lines up to EOF are what it writes
                candidate, taken = candidate + prose[end : body_end.end()], body_end.end()
            found.append((start, candidate))
    return found
