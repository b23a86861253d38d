"""Shell and `az` command parsing: split a block into simple commands, tokenise, unwrap, classify and layer them.

Every detector, the trajectory check, the claims check and the agent's safety gate read commands through this one
parser, so a command is classified the same way wherever it appears (report, audit line, tool trace or a command
about to run) and the gate and the scorer agree on which program runs beneath sudo, env, xargs or `bash -c`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase
from functools import lru_cache
from typing import Literal

from ghost_eval.cases.case import Layer
from ghost_eval.shell.calls import az_run_command_scripts, netns_command_start, normal_forms
from ghost_eval.shell.programs import HANDLERS, INSPECTION_PROGRAMS, file_targets

__all__ = [
    "Command",
    "HOST_RESETS",
    "has_prompt",
    "here_document",
    "heredoc_terminator",
    "looks_like_command",
    "parse_command_block",
    "program_variants",
    "split_commands",
    "strip_prompt",
    "unquote",
    "unroll_loops",
]

_SEPARATORS = frozenset({";", "&&", "||", "|", "&", "|&", ";;"})
_RESERVED = frozenset({"do", "then", "else", "elif", "if", "while", "until", "!", "{", "}"})
"""Shell words that open a compound command's body: the command after them is what runs (`for …; do tc …; done`)."""
_PLACEHOLDER = re.compile(r"<([A-Za-z](?:[\w.: -]*[\w.])?)>")
"""`<service-ip>` in a report's command is a value to fill in, not two redirections."""
_ELLIPSIS = re.compile(r"(?<!\S)(?:\.\.\.|\u2026)(?!\S)")
"""`az network vnet subnet show ... --query …`: arguments left out for brevity, not a word of the command."""
_WRITE_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>"})
_READ_REDIRECTS = frozenset({"<", "<<", "<<<"})
_SUBSTITUTION = r"\$\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)"
"""`$( … )`, nested up to three deep: one word of the command around it, whatever pipes or spaces it holds."""
_TOKEN = re.compile(
    rf"""#.*|[;&|<>]+|(?P<word>(?:{_SUBSTITUTION}|[^\s'"\\;&|<>$]+|\$|\\.?|'[^']*(?:'|$)|"(?:[^"\\]|\\.)*(?:"|\\?$))+)""",
    re.DOTALL,
)
_INNER = re.compile(_SUBSTITUTION)
_QUOTED = re.compile(r"['\"\\]")
_PIECE = re.compile(r"""'([^']*)'?|"((?:[^"\\]|\\.)*)\\?"?|\\(.?)|([^'"\\]+)""", re.DOTALL)
_DOUBLE_ESCAPE = re.compile(r'\\([\\"])')
_HOST_PROMPT = r"(?:[\w.-]+(?::\S*?)?(?=\$))"
"""A bare host before `$` (`tf-dest-vm$ `, `tf-dest-vm:~$ `), as a report marks which VM ran each command."""
_PROMPT = re.compile(rf"^\s*(?:(?:\[[^\]]*\]\s*)|(?:[\w.-]+@[\w.-]+(?::\S*?)?\s*)|{_HOST_PROMPT})?[$#>]\s+")
_USER_PROMPT = re.compile(
    rf"^\s*(?:(?:\[[^\]]*\]\s*)|(?:[\w.-]+@[\w.-]+(?::\S*?)?\s*)|{_HOST_PROMPT})?\$\s+"
    r"|^\s*(?:\[[^\]]*\]|[\w.-]+@[\w.-]+(?::\S*?)?)#\s+"
)
_HEREDOC = re.compile(r"<<-?\s*(['\"]?)(\w+)\1")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_AZ_POWERSHELL = re.compile(r"^[A-Z][a-z]+-Az[A-Z]")
_KNOWN_PROGRAMS = (
    INSPECTION_PROGRAMS
    | frozenset({"az", "kubectl", "iptables-restore", "ip6tables-restore", "sudo", "ssh", "bash", "sh", "env", "timeout"})
    | frozenset({"cat", "grep", "egrep", "zgrep", "ls", "head", "tail", "less", "awk", "echo", "printf", "ps", "pgrep"})
    | frozenset({"sed", "tee", "vi", "vim", "nano", "emacs", "cp", "mv", "rm", "chmod", "chown", "touch", "truncate"})
    | frozenset({"ln", "install", "crontab", "modprobe", "rmmod", "lsmod", "openssl", "watch", "nohup", "getent"})
    | frozenset({"pkill", "kill", "killall", "reboot", "shutdown", "poweroff", "halt", "setenforce", "resolvectl", "nmcli"})
    | frozenset({"apt", "apt-get", "dnf", "yum", "pip", "fuser", "netfilter-persistent", "netplan", ":"})
)
"""Programs a report names as commands: a backticked span starting with one of them is a command."""


@dataclass(frozen=True, slots=True)
class Command:
    """One simple command (no pipes or `&&`), with wrappers such as `sudo`, `env` or `ssh host` removed."""

    text: str
    """The simple command as written, whitespace-normalised."""
    argv: tuple[str, ...]
    """Tokens after unwrapping; redirections are not part of argv."""
    program: str
    """Base name of argv[0] ("" for an empty command)."""
    layer: Layer
    mutating: bool
    reason: str
    """Why the command was classified this way, in words a report can show."""
    writes: tuple[str, ...] = ()
    """Files the command writes (redirections, `tee`, `sed -i`, editors, `cp`/`mv` targets)."""
    wrappers: tuple[tuple[str, ...], ...] = ()
    """The wrappers removed, outermost first, each with its own words (`("sudo", "-u", "root")`, `("bash", "-c")`)."""


def strip_prompt(line: str) -> str:
    """Drop a shell prompt (`$ `, `user@host:~$ `) or a host label (`(tf-dest-vm) `) in front of a command."""
    return _HOST_LABEL.sub("", _PROMPT.sub("", line, count=1), count=1)


_HOST_LABEL = re.compile(r"^\s*(?:\([A-Za-z][\w.-]*\)|[A-Za-z][\w.-]*-vm[ \t]*:)\s+(?=[A-Za-z/])")
"""`(tf-dest-vm) tc qdisc del …`, `tf-dest-vm:   iptables -D …`: a report's label of where the line runs, as a prompt
is; a subshell holds a command with its arguments, not one bare word before another command."""


def has_prompt(line: str) -> bool:
    """A `$ ` (or `user@host:~# `) prompt marks a command among output lines; a bare `# ` is a comment."""
    return _USER_PROMPT.match(line) is not None


def split_commands(block: str) -> list[str]:
    """Split a block into command lines: continuations joined, comments dropped, a here-document's body kept with its
    command (it is what the command writes: `cat > jail.local <<'EOF'` … `EOF`)."""
    lines: list[str] = []
    pending = ""
    heredoc_end: str | None = None
    for raw in block.splitlines():
        if heredoc_end is not None:
            lines[-1] += "\n" + raw.rstrip()
            if raw.strip() == heredoc_end:
                heredoc_end = None
            continue
        line = raw.rstrip()
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line = (pending + line).strip()
        pending = ""
        if not line or line.startswith("#"):
            continue
        heredoc = _HEREDOC.search(line)
        if heredoc:
            heredoc_end = heredoc.group(2)
        lines.append(line)
    if pending.strip():
        lines.append(pending.strip())
    return lines


def _tokenise(line: str) -> list[str]:
    """POSIX shell words and operator runs, as `shlex.shlex(posix=True, punctuation_chars=";&|<>")` splits them.

    A regex pass instead of shlex's character loop (scoring reads tens of commands per run, thousands of
    runs per second); `#` starts a comment only at the start of a word, as in a shell, and an unclosed quote
    runs to the end of the line instead of raising.
    """
    tokens: list[str] = []
    for m in _TOKEN.finditer(line):
        token = m.group(0)
        if token.startswith("#"):
            break
        if m.group("word") is not None and _QUOTED.search(token):
            token = unquote(token)
        tokens.append(token)
    return tokens


def unquote(word: str) -> str:
    """A word as the shell hands it to the program: quotes and backslash escapes removed (`ip''tables` is iptables)."""
    return "".join(_unquote_piece(p) for p in _PIECE.finditer(word))


def _unquote_piece(piece: re.Match[str]) -> str:
    single, double, escaped, plain = piece.groups()
    if single is not None:
        return single
    if double is not None:
        return _DOUBLE_ESCAPE.sub(r"\1", double)
    return escaped if escaped is not None else plain


def _simple_commands(tokens: list[str]) -> list[tuple[list[str], list[str]]]:
    """Split tokens on separators; return each simple command's argv and the files it redirects into."""
    out: list[tuple[list[str], list[str]]] = []
    argv: list[str] = []
    writes: list[str] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if not argv and tok.startswith("(") and not tok.startswith("(("):
            tok = tok.lstrip("(")  # a subshell `(curl … &)` runs its commands like any other
            if not tok:
                i += 1
                continue
        if tok in _SEPARATORS or tok == ")":
            if argv or writes:
                out.append((argv or [":"], writes))  # a bare `> file` truncates it, as `: > file` does
            argv, writes = [], []
        elif tok in _WRITE_REDIRECTS or tok in _READ_REDIRECTS or tok in {">&", "<&"}:
            if argv and argv[-1].isdigit():
                argv.pop()
            target = tokens[i + 1] if i + 1 < len(tokens) else ""
            if tok in _WRITE_REDIRECTS and target and not target.startswith("/dev/"):
                writes.append(target)
            i += 1
        elif argv or tok not in _RESERVED:
            argv.append(tok)
        i += 1
    if argv or writes:
        out.append((argv or [":"], writes))
    return out


_Words = tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _Wrapper:
    """How a program that runs another one takes its own words: getopt-style options, fixed operands, the command."""

    valued: str = ""
    """Short options that take a value (`-u root`, `-uroot`)."""
    long_valued: frozenset[str] = frozenset()
    """Long options that take the next word as their value when written without `=`."""
    operands: int = 0
    """The wrapper's own operands before the command (timeout's DURATION, ssh's host)."""
    runs: Literal["argv", "script", "joined", "option"] = "argv"
    """What follows: the command's words, one shell script (`sh -c '…'`), words a shell joins (`ssh host …`), or
    nothing but the script a command option gives (`su -c '…'`)."""
    needs: str = ""
    """An option without which the program runs nothing else (`-c` for a shell)."""
    describes: frozenset[str] = frozenset()
    """Options with which the command is only described or listed, never run (`command -v`, `sudo -l`)."""
    splits: frozenset[str] = frozenset()
    """Options whose value is split into the command's first words (`env -S 'iptables -F'`)."""
    command_options: frozenset[str] = frozenset()
    """Options whose value is a shell script the program runs, before or after an operand (`flock FILE -c '…'`,
    `su root -c '…'`)."""
    words_with: frozenset[str] = frozenset()
    """Options with which the command follows as words and no command option is read (`runuser -u USER cmd -c …`)."""


_COMMAND = frozenset({"-c", "--command"})
_USER_OPTIONS = frozenset({"--group", "--supp-group", "--shell", "--user", "--whitelist-environment"})
_MULTICALL = _Wrapper(describes=frozenset({"--list", "--list-full", "--help"}))
"""One binary that holds many programs (`busybox reboot`, `xtables-nft-multi iptables -F`): its first word is the program."""
_SHELL = _Wrapper(valued="oO", long_valued=frozenset({"--rcfile", "--init-file"}), runs="script", needs="-c")
_WRAPPERS: dict[str, _Wrapper] = {
    "sudo": _Wrapper(
        valued="aCcDgpRrTtUu",
        long_valued=frozenset(
            {"--auth-type", "--close-from", "--login-class", "--chdir", "--group", "--host", "--prompt", "--chroot"}
            | {"--role", "--type", "--command-timeout", "--other-user", "--user"}
        ),
        describes=frozenset({"-e", "--edit", "-l", "--list", "-v", "--validate", "-K", "--remove-timestamp", "-V", "--version"}),
    ),
    "doas": _Wrapper(valued="Cu"),
    "env": _Wrapper(
        valued="uCS", long_valued=frozenset({"--unset", "--chdir", "--split-string"}), splits=frozenset({"-S", "--split-string"})
    ),
    "stdbuf": _Wrapper(valued="ioe", long_valued=frozenset({"--input", "--output", "--error"})),
    "nice": _Wrapper(valued="n", long_valued=frozenset({"--adjustment"})),
    "ionice": _Wrapper(valued="cnpPu", long_valued=frozenset({"--class", "--classdata", "--pid", "--pgid", "--uid"})),
    "timeout": _Wrapper(valued="ks", long_valued=frozenset({"--kill-after", "--signal"}), operands=1),
    "nohup": _Wrapper(),
    "setsid": _Wrapper(),
    "time": _Wrapper(valued="fo", long_valued=frozenset({"--format", "--output"})),
    "xargs": _Wrapper(
        valued="adEILnPs",
        long_valued=frozenset({"--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-chars", "--process-slot-var"}),
    ),
    "command": _Wrapper(describes=frozenset({"-v", "-V"})),
    "exec": _Wrapper(valued="a"),
    "watch": _Wrapper(valued="nq", long_valued=frozenset({"--interval", "--equexit"}), runs="joined"),
    "eval": _Wrapper(runs="joined"),
    "ssh": _Wrapper(valued="BbcDEeFIiJLlmOopQRSWw", operands=1, runs="joined"),
    "taskset": _Wrapper(operands=1, describes=frozenset({"-p", "--pid"})),
    "chrt": _Wrapper(valued="TPD", operands=1, describes=frozenset({"-p", "--pid", "-m", "--max"})),
    "flock": _Wrapper(
        valued="wE", long_valued=frozenset({"--timeout", "--wait", "--conflict-exit-code"}), operands=1, command_options=_COMMAND
    ),
    "su": _Wrapper(valued="cgGsw", long_valued=_USER_OPTIONS, runs="option", command_options=_COMMAND),
    "runuser": _Wrapper(
        valued="ugGcsw", long_valued=_USER_OPTIONS, command_options=_COMMAND, words_with=frozenset({"-u", "--user"})
    ),
    "sg": _Wrapper(operands=1, runs="script", command_options=frozenset({"-c"})),
    "script": _Wrapper(valued="cEIOBTm", runs="option", command_options=_COMMAND),
    "pkexec": _Wrapper(long_valued=frozenset({"--user"})),
    "systemd-run": _Wrapper(
        valued="upEHM",
        long_valued=frozenset(
            {"--unit", "--property", "--setenv", "--host", "--machine", "--description", "--slice", "--uid", "--gid"}
            | {"--nice", "--working-directory", "--service-type", "--on-active", "--on-boot", "--on-calendar"}
        ),
    ),
    "setpriv": _Wrapper(
        long_valued=frozenset(
            {"--reuid", "--regid", "--groups", "--inh-caps", "--ambient-caps", "--bounding-set", "--securebits"}
            | {"--pdeathsig", "--selinux-label", "--apparmor-profile"}
        ),
        describes=frozenset({"-d", "--dump"}),
    ),
    "strace": _Wrapper(valued="abeEIoOpPsSuUX", describes=frozenset({"-p", "--attach"})),
    "ltrace": _Wrapper(valued="aADeFlnopsuwx", describes=frozenset({"-p"})),
    "cgexec": _Wrapper(valued="g"),
    "numactl": _Wrapper(valued="CNmpiP"),
    "prlimit": _Wrapper(describes=frozenset({"-p", "--pid"})),
    "faketime": _Wrapper(valued="f", operands=1),
    "proxychains": _Wrapper(valued="f"),
    "proxychains4": _Wrapper(valued="f"),
    **{name: _Wrapper() for name in ("unbuffer", "catchsegv", "chronic", "torsocks", "firejail")},
    **{name: _MULTICALL for name in ("busybox", "toybox", "xtables-multi", "xtables-nft-multi", "xtables-legacy-multi")},
    **{shell: _SHELL for shell in ("sh", "bash", "zsh", "dash", "ksh")},
}
"""Programs that run another program: the scorer and the safety gate both see through them to what really runs."""
_NETNS_EXEC = _Wrapper()
"""`ip [options] netns exec NAME command`: the one form in which `ip` runs another program."""


def _unwrap(argv: list[str]) -> tuple[tuple[_Words, ...], list[str] | str]:
    """Strip wrappers (sudo, env, timeout, xargs, `ip netns exec`, …) in front of the program that really runs.

    Returns the wrappers, outermost first, each with its own options, and the command beneath them: its words, or
    the script a shell or `ssh host` runs (a str).
    """
    wrappers: list[_Words] = []
    while argv:
        step = _unwrap_one(argv)
        if step is None:
            break
        words, argv_or_script = step
        wrappers.append(words)
        if isinstance(argv_or_script, str):
            return tuple(wrappers), argv_or_script
        argv = argv_or_script
    return tuple(wrappers), argv


def _unwrap_one(argv: list[str]) -> tuple[_Words, list[str] | str] | None:
    """One wrapper's words and what it runs; None when argv[0] runs nothing else (or has nothing left to run)."""
    if _ASSIGNMENT.match(argv[0]):
        return (argv[0],), argv[1:]
    head = argv[0].rsplit("/", 1)[-1]
    if head == "find":
        return _find_exec(argv)
    spec = _NETNS_EXEC if head == "ip" else _WRAPPERS.get(head)
    if spec is None:
        return None
    if spec.command_options and (at := _command_option(argv, spec)) is not None:
        return (*argv[:at], *argv[at + 1 :]), argv[at]
    if spec.runs == "option":
        return None
    if spec is _NETNS_EXEC:
        end, split = netns_command_start(argv), []
    else:
        start, options = _wrapper_options(argv, spec)
        if (spec.needs and spec.needs not in options) or spec.describes & options.keys():
            return None
        end, split = start + spec.operands, [w for name in spec.splits for w in options.get(name, "").split()]
    if end is None:
        return None
    words, rest = tuple(argv[:end]), split + argv[end:]
    if not rest:
        return None
    if spec.runs == "argv":
        return words, rest
    return words, rest[0] if spec.runs == "script" else " ".join(rest)


def _find_exec(argv: list[str]) -> tuple[_Words, list[str]] | None:
    """`find … -exec COMMAND {} ;` (or -execdir, -ok, -okdir) runs COMMAND for each file found."""
    at = next((i for i, w in enumerate(argv) if w in {"-exec", "-execdir", "-ok", "-okdir"}), None)
    if at is None:
        return None
    end = next((i for i in range(at + 1, len(argv)) if argv[i] in {";", "+"}), len(argv))
    return (tuple(argv[: at + 1]), argv[at + 1 : end]) if end > at + 1 else None


def _command_option(argv: list[str], spec: _Wrapper) -> int | None:
    """Where the script of a command option stands (`-c SCRIPT`, `-qc SCRIPT`, `--command SCRIPT`): among the
    wrapper's own options and before or after its one operand (a lock file, a user), never in the command's words."""
    short = {n[1] for n in spec.command_options if len(n) == 2}
    operands, i = 0, 1
    while i < len(argv) - 1:
        word = argv[i]
        bundle = word[1:] if word[:1] == "-" and word[1:2] != "-" else ""
        if word == "--" or word in spec.words_with:
            return None
        if word in spec.command_options or (bundle.isalpha() and bundle[-1] in short):
            return i + 1
        if not word.startswith("-"):
            operands += 1
            if operands > 1:
                return None
        elif word in spec.long_valued or (len(bundle) == 1 and bundle in spec.valued):
            i += 1
        i += 1
    return None


def _wrapper_options(argv: list[str], spec: _Wrapper) -> tuple[int, dict[str, str]]:
    """Where a wrapper's options end (its first operand), and the options it was given (name → value)."""
    options: dict[str, str] = {}
    i = 1
    while i < len(argv) and argv[i].startswith("-") and argv[i] != "-":
        word = argv[i]
        i += 1
        if word == "--":
            break
        if word.startswith("--"):
            name, eq, value = word.partition("=")
            if name in spec.long_valued and not eq and i < len(argv):
                value, i = argv[i], i + 1
            options[name] = value
            continue
        for at, letter in enumerate(word[1:], start=2):
            if letter not in spec.valued:
                options["-" + letter] = ""
                continue
            value = word[at:]
            if not value and i < len(argv):
                value, i = argv[i], i + 1
            options["-" + letter] = value
            break
    return i, options


_FOR_LOOP = re.compile(
    r"\bfor\s+(?P<var>[A-Za-z_]\w*)\s+in\s+(?P<items>[^;\n`$()]+?)\s*(?:;|\n)\s*do\b(?P<body>.*?)(?:;|\n)\s*done\b",
    re.DOTALL,
)
_LOOP_BODY = re.compile(r"^\s*for\s+[A-Za-z_]\w*\s+in\b[^\n]*?;\s*do\b(?P<body>.*?)(?:;|\n)\s*done\b", re.DOTALL)
"""Any for-loop, its body: what runs for each item of a list that cannot be written out."""
_MAX_LOOP_ITEMS = 32


def unroll_loops(block: str) -> str:
    """`for c in DOCKER DOCKER-USER; do iptables -F $c; done` runs the body once per listed word: write it out, so each
    command names what it touches. A list that is not plain words (a glob, a substitution) is left as written."""

    def unroll(m: re.Match[str]) -> str:
        items = m["items"].split()
        if not items or len(items) > _MAX_LOOP_ITEMS or any(_QUOTED.search(i) or "*" in i for i in items):
            return m[0]
        use = re.compile(rf"\$\{{{m['var']}\}}|\${m['var']}\b")
        return "\n".join(use.sub(item, m["body"].strip()) for item in items)

    return _FOR_LOOP.sub(unroll, block) if "for" in block else block


@lru_cache(maxsize=16384)
def parse_command_block(block: str, *, substitutions: bool = True) -> tuple[Command, ...]:
    """Every simple command in a block (a code block, an audit line), unwrapped and classified; with `substitutions`,
    also what each `$( … )` runs."""
    commands: list[Command] = []
    for line in split_commands(unroll_loops(block)):
        _parse_line(strip_prompt(line), commands, depth=0, substitutions=substitutions)
    return tuple(commands)


def _fill_in(m: re.Match[str]) -> str:
    """`<tf-source-vm public IP>` as one word, a value to fill in."""
    return "{" + m.group(1).replace(" ", "_") + "}"


def heredoc_terminator(line: str) -> str | None:
    """The word that ends the here-document a command line opens (`EOF` for `cat > rules.v4 <<'EOF'`), or None."""
    m = _HEREDOC.search(line)
    return m[2] if m else None


def here_document(raw: str) -> str:
    """The body of the here-document a command line opens (`cat > rules.v4 <<'EOF'` and the lines after it, as
    `split_commands` keeps them): the text the command writes; "" for a line without one."""
    first, _, body = raw.partition("\n")
    return body if _HEREDOC.search(first) else ""


_ARROW_TAILS = frozenset({"-", "--", "="})


def _before_arrow(tokens: list[str]) -> list[str]:
    """The words before an arrow (`curl -m 5 http://10.0.1.5:8080/ --> expect 200`, `… -> 200`, `… => ok`, `… → 200`):
    notes write a command's expected result after one. In a shell it would be a lone `-` redirected to a file, which
    no command is written as."""
    for i, token in enumerate(tokens):
        if token == "\u2192" or (token in _ARROW_TAILS and tokens[i + 1 : i + 2] == [">"]):
            return tokens[:i]
    return tokens


def _parse_line(line: str, out: list[Command], depth: int, outer: tuple[_Words, ...] = (), *, substitutions: bool = True) -> None:
    """Classify each simple command of a line; scripts run by a shell, `ssh` or `az vm run-command` are parsed too. A
    here-document's body (the lines after the first) is what its command writes, data rather than commands."""
    line = line.split("\n", 1)[0]
    for argv, writes in _simple_commands(_before_arrow(_tokenise(_ELLIPSIS.sub(" ", _PLACEHOLDER.sub(_fill_in, line))))):
        _parse_argv(argv, tuple(writes), out, depth, outer)
    if substitutions and depth < 3 and "$(" in line:  # what a substitution runs is a command too (`-n $(az vm show …)`)
        for inner in _INNER.finditer(line):
            for sub in split_commands(inner.group(0)[2:-1]):
                _parse_line(sub, out, depth + 1, outer)


def _parse_argv(argv: list[str], writes: tuple[str, ...], out: list[Command], depth: int, outer: tuple[_Words, ...]) -> None:
    """Classify one simple command beneath its wrappers, in its normal form (see `normal_forms`).

    A wrapper whose script shows no command (`ssh host ''`, or nested too deep) is itself the command, so it is never lost.
    """
    wrappers, inner = _unwrap(argv)
    wrappers = outer + wrappers
    if isinstance(inner, str):
        scripts = [inner]
    elif not inner or not inner[0]:
        return
    elif (run_command := az_run_command_scripts(inner)) is not None:
        scripts, wrappers = run_command, (*wrappers, tuple(inner))
    else:
        out.extend(_classify(form, writes, wrappers, " ".join(inner)) for form in normal_forms(tuple(inner)))
        return
    found = len(out)
    if depth < 3:
        for script in scripts:
            for sub in split_commands(script):
                _parse_line(sub, out, depth + 1, wrappers)
    if len(out) == found:
        out.append(_classify(wrappers[-1], writes, wrappers[:-1], " ".join(wrappers[-1])))


_GLOB = re.compile(r"[*?[]")


def program_variants(command: Command, names: Iterable[str] = ()) -> tuple[Command, ...]:
    """What a program named by a glob (`/sbin/ipt*bles`, `s?do`) may run: the command again with each program the
    glob matches (among the ones this model knows and `names`) in its place, its wrappers seen through as usual."""
    if not _GLOB.search(command.program):
        return ()
    out: list[Command] = []
    for name in sorted({*names, *_PROGRAM_NAMES}):
        if fnmatchcase(name, command.program):
            _parse_argv([name, *command.argv[1:]], command.writes, out, 0, command.wrappers)
    return tuple(out)


# --- classification -----------------------------------------------------------------------------------


HOST_RESETS = frozenset({"reboot", "poweroff", "halt"})
"""Programs (and `systemctl` verbs) that restart or stop the whole host; each is a whole command on its own (`sudo
reboot`), where any other single word is a name."""


_TCP_DEVICE = re.compile(r"[<>]\s*/dev/(?:tcp|udp)/[\w.-]+/(?:\d+|\$\w+)")
"""A redirection from or to bash's `/dev/tcp/<host>/<port>`: a connection attempt, the probe of a shell without nc."""


def looks_like_command(span: str) -> bool:
    """Whether a backticked span is a command (`iptables -L f2b-sshd`) rather than a name (`f2b-sshd`)."""
    if _TCP_DEVICE.search(span):  # bash opens a connection: `cat < /dev/tcp/10.0.1.5/5432`
        return True
    unrolled = unroll_loops(span)
    if unrolled != span:  # a loop is a command when its body runs one
        return any(looks_like_command(line) for line in split_commands(unrolled))
    if (loop := _LOOP_BODY.search(span)) is not None:  # over a substitution (`$(ls /sys/class/net)`): not unrolled
        return any(looks_like_command(line) for line in split_commands(loop["body"]))
    simple = [c.text for c in parse_command_block(span, substitutions=False)]
    if len(simple) > 1 or (len(simple) == 1 and "$(" in span and "$(" not in simple[0]):  # `IF=$(ip …); tc … "$IF" root`
        return any(looks_like_command(c) for c in simple)
    wrappers, inner = _unwrap(strip_prompt(span).split())
    words = wrappers[-1] if isinstance(inner, str) else inner
    if len(words) == 1 and words[0] in HOST_RESETS:
        return True
    if len(words) < 2:
        return False
    head = words[0].lstrip("(").rsplit("/", 1)[-1]
    return head in _KNOWN_PROGRAMS or _AZ_POWERSHELL.match(head) is not None


def _classify(argv: tuple[str, ...], redirects: tuple[str, ...], wrappers: tuple[_Words, ...], text: str) -> Command:
    program = argv[0].rsplit("/", 1)[-1] or argv[0]
    layer = Layer.CONTROL_PLANE if program == "az" or _AZ_POWERSHELL.match(program) else Layer.OS
    writes = redirects + file_targets(program, argv)
    handler = HANDLERS.get(program)
    if handler is not None:
        mutating, reason = handler(argv)
    elif layer is Layer.CONTROL_PLANE:
        reads = program.startswith(("Get-", "Test-"))
        mutating, reason = not reads, "Azure PowerShell " + ("read" if reads else "write")
    else:
        mutating, reason = False, "not a known state-changing command"
    if writes and not mutating:
        mutating, reason = True, f"writes {', '.join(writes)}"
    return Command(
        text=text, argv=argv, program=program, layer=layer, mutating=mutating, reason=reason, writes=writes, wrappers=wrappers
    )


_PROGRAM_NAMES = _KNOWN_PROGRAMS | _WRAPPERS.keys() | HANDLERS.keys()
"""Every program this model knows by name: what a glob in a program's name may stand for."""
