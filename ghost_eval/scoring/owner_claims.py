"""What a diagnosis says keeps the fault in place, against the case's owners: an owner denied where the case has one, a
keeper invented where nothing re-applies the fault (setup.sh writes it once), or a process the case does not run named as
the keeper."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache

from ghost_eval.cases.case import Case, Ownership
from ghost_eval.cases.phrases import PHRASE_FLAGS
from ghost_eval.scoring.model import ClaimHit
from ghost_eval.scoring.text import denied_before

__all__ = ["owner_claims"]

_NO_OWNER = re.compile(
    r"\b(?:no\s+(?:daemon|service|process|tool|agent|one|owner)\s+(?:\w+\s+)?(?:manages|owns|maintains|re-?applies|re-?creates)"
    r"|(?:not|un)[-\s]?managed|nothing\s+(?:\w+\s+)?(?:manages|owns|maintains|re-?applies|re-?creates)|static\s+leftover"
    r"|hand-?made|no\s+jail\s+state)\b",
    PHRASE_FLAGS,
)


def _owner_denied(sentence: str) -> bool:
    """Whether the sentence says nothing manages the fault's object ("no daemon manages it, so it is a static leftover",
    "nothing re-applies it", "a hand-made rule"), not denied itself ("the policy isn't hand-made")."""
    return any(not denied_before(sentence, m.start(), words=1) for m in _NO_OWNER.finditer(sentence))


_REAPPLIED = re.compile(
    r"\b(?:re-?appl(?:ies|ied)|re-?enforc(?:es|ed)|re-?runs|re-?asserts)\b"
    r"|\b(?:puts|will\s+put)\s+(?:it|them|the\s+\w+)\s+back\b|\bkeeps?\s+(?:it|them|its\s+\w+|the\s+\w+)\s+(?:enforced|in\s+place)\b"
    r"|\b(?:comes?|coming)\s+back\s+(?:at|after|on)\b|\bsurviv\w*\s+(?:a\s+|the\s+next\s+)?(?:re)?boots?\b"
    r"|\bpersist\w*\s+(?:across|through|over)\s+(?:re)?boots?\b|\bwo(?:n['\u2019]?t|uld\s*n['\u2019]?t|uld\s+not|\s+not)\s+stick\b"
    r"|\b(?:saved|loaded|reloaded|restored)\s+(?:\w+\s+){0,3}?(?:by|with|from|through)\s+(?:netfilter|iptables)-persistent\b"
    r"|\b(?:netfilter|iptables)-persistent\s+(?:re)?loads\b",
    PHRASE_FLAGS,
)
_INVENTED_OWNER_CLAIM = "Something re-applies or persists the fault; setup.sh writes it once and nothing puts it back."


def _reapplied(sentence: str) -> bool:
    """Whether the sentence says something puts the fault back ("the hardening tooling will put the rule back", "a
    plain iptables -D won't stick", "saved with iptables-persistent, so it comes back at boot"), not denied."""
    return any(_NEGATION.search(_clause_before(sentence, m.start())) is None for m in _REAPPLIED.finditer(sentence))


_OTHER_OWNER = re.compile(
    r"\b(?:cron(?:tab)?|(?:systemd-)?networkd|NetworkManager|netplan|(?:netfilter|iptables)-persistent|ufw|firewalld"
    r"|cloud-init|rc\.local|Azure\s+Policy|Defender(?:\s+for\s+Cloud)?|just-in-time|JIT|wa(?:linux)?agent)\b",
    PHRASE_FLAGS,
)
_MANAGES = re.compile(
    r"\b(?:manages|managed\s+by|owned\s+by|owner\s+is|pushed\s+by|maintains|maintained\s+by|enforces|enforced\s+by"
    r"|re-?creat(?:es|ed)\s+by)\b",
    PHRASE_FLAGS,
)


def _other_owner(owners: tuple[str, ...], sentence: str) -> bool:
    """Whether the sentence makes a process the case does not run the fault's keeper ("networkd puts the tbf back",
    "pushed by Defender for Cloud just-in-time access", "rules.v4, which netfilter-persistent loads at boot"): a
    keeper is a fact of the case, and a named stranger contradicts it."""
    if not (_reapplied(sentence) or _MANAGES.search(sentence)):
        return False
    return any(
        m.group(0).lower() not in owners and _NEGATION.search(_clause_before(sentence, m.start())) is None
        for m in _OTHER_OWNER.finditer(sentence)
    )


_NEGATION = re.compile(r"\b(?:no|not|nothing|never|none|neither|nor|without)\b|n['\u2019]?t\b", PHRASE_FLAGS)


def _clause_before(sentence: str, at: int) -> str:
    """The words of the clause that lead up to `at` ("no rules file, unit or cron job on the VM contains or re-applies
    it": the negation governs the verb however many words, commas of a list among them, stand between them)."""
    return re.split(r"[.;:()\u2014]|\s(?:but|so|while|whereas)\s", sentence[max(0, at - 80) : at])[-1]


@cache
def _owner_absent(owners: tuple[str, ...]) -> re.Pattern[str]:
    """The case's owner said to play no part ("fail2ban isnt in the picture here", "harden-net is not involved")."""
    named = "|".join(re.escape(o) for o in owners)
    return re.compile(
        rf"\b(?:{named})(?:\.service)?\W+(?:is|was|has)\W*(?:n['\u2019]?t|\s+not|\s+nothing)\W+(?:\w+\W+){{0,3}}?"
        r"(?:picture|involved|responsible|part|to\W+do|at\W+fault|the\W+(?:cause|owner|culprit))\b",
        PHRASE_FLAGS,
    )


_EVERY = re.compile(r"(?i)\bevery\s+(\d+)\s*(s|secs?|seconds?|m|mins?|minutes?|h|hours?)\b")
_SECONDS = {"s": 1, "m": 60, "h": 3600}
_PATH = re.compile(r"/etc/[\w./-]*\w")


def _owner_misdescribed(owner: Ownership, sentence: str) -> bool:
    """Whether a sentence naming the owner gives it another interval than the case's ("ghost-shaper re-applies it every
    60 seconds" where it does every 300) or another file in its own folder (`/etc/ghost-shaper/ghost-shaper.yaml`
    where it reads `/etc/ghost-shaper/shaper.conf`): how the owner keeps the fault is a fact of the case."""
    if owner.owner.lower() not in sentence.lower():
        return False
    if owner.reapply_seconds is not None and any(
        int(m[1]) * _SECONDS[m[2][0].lower()] != owner.reapply_seconds for m in _EVERY.finditer(sentence)
    ):
        return True
    known = set(_PATH.findall(f"{owner.managed_via or ''} {owner.name}"))
    folder = f"/etc/{owner.owner}/"
    return any(p.startswith(folder) and p not in known for p in _PATH.findall(sentence)) and any(
        k.startswith(folder) for k in known
    )


def owner_claims(case: Case, asserting: Callable[[Callable[[str], bool]], str | None]) -> list[ClaimHit]:
    """The owner claims a diagnosis asserts that the case contradicts."""
    hits: list[ClaimHit] = []
    if case.ownership:  # with no owner, `_owner_absent` would name none and match any "is not involved"
        absent = _owner_absent(tuple(sorted({o.owner for o in case.ownership})))
        owners = " / ".join(sorted({f"{o.owner} manages {o.name}" for o in case.ownership}))
        if (unowned := asserting(lambda s: _owner_denied(s) or absent.search(s) is not None)) is not None:
            hits.append(ClaimHit(id="owner_denied", claim=f"Nothing manages the fault's object; {owners}.", sentence=unowned))
        if (misdescribed := asserting(lambda s: any(_owner_misdescribed(o, s) for o in case.ownership))) is not None:
            hits.append(
                ClaimHit(id="owner_facts", claim=f"The owner keeps the fault otherwise; {owners}.", sentence=misdescribed)
            )
        named = tuple(sorted({o.owner.lower() for o in case.ownership}))
        if (stranger := asserting(lambda s: _other_owner(named, s))) is not None:
            hits.append(ClaimHit(id="owner_other", claim=f"Another process keeps the fault; {owners}.", sentence=stranger))
    elif case.ground_truth and (kept := asserting(_reapplied)) is not None:
        hits.append(ClaimHit(id="owner_invented", claim=_INVENTED_OWNER_CLAIM, sentence=kept))
    return hits
