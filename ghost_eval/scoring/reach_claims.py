"""What a diagnosis says a fault or a tool reaches, against what the case and the tools can: SSH put through a shaper
whose filters keep port 22 out of it, the Azure drift check said to show a guest's firewall rule, a service said to
listen behind an allow that opens no working path."""

from __future__ import annotations

import re
from collections.abc import Callable

from ghost_eval.cases.case import Case, Layer
from ghost_eval.cases.phrases import PHRASE_FLAGS, compile_phrase
from ghost_eval.scoring.model import ClaimHit
from ghost_eval.scoring.text import denied_before

__all__ = ["reach_claims"]

_SHAPING = compile_phrase("@shaping")
_SSH = r"(?:\bport\s+22\b|\btcp/22\b|\b[ds]?port\s+22\b|(?<![\w-])(?<!non\s)ssh\b)"
_SPARED_SHAPED = re.compile(
    rf"(?<!except\s)(?<!for\s)(?<!but\s)(?<!than\s){_SSH}(?:(?!\b(?:but|while|whereas|except|other|rest|else|everything|bypass\w*|exempt\w*|skip\w*|untouched"
    r"|unshaped|not|no|never|1:1)\b|n['\u2019]t\b)[^.;,])*?"
    r"\b(?:into|through|via|gets|get)\s+(?:the\s+)?(?:[\w-]+\s+)?(?:netem|tbf|shap\w*|delay)\b"
    rf"|\b(?:only|mostly|just)\s+(?:the\s+)?{_SSH}(?:/\w+)?\s+(?:traffic\s+)?(?:is\s+|are\s+)?(?:being\s+)?"
    r"(?:delayed|slowed|shaped|throttled|hit|dropped)\b",
    PHRASE_FLAGS,
)
"""SSH said to be what the shaper acts on ("the u32 filters put port 22 traffic into the netem band", "SSH goes through
netem", "only SSH is being delayed"), where the case's filters keep port 22 out of it."""
_SPARED_CLAIM = "SSH (port 22) goes through the shaping; the case's filters keep port 22 out of it."


def _spares_ssh(case: Case) -> bool:
    return any(f.layer is Layer.OS and "tcp/22" in f.spares and _SHAPING.search(f.resource or "") for f in case.ground_truth)


_ENI_HOLDS_OS = re.compile(
    r"(?:detect_effective_network_drift|effective[-\s]network[-\s]drift|\beni(?:_\w+)?\b|\bazure(?:[-\s]only)?\s+(?:baseline|"
    r"snapshot|drift))[^.;]{0,120}?\b(?P<verb>has|have|had|shows?|showed|lists?|listed|flag(?:s|ged)?|records?|recorded"
    r"|includes?|included|contains?|contained|catch(?:es)?|caught|surfac(?:es|ed)|reveal(?:s|ed)|report(?:s|ed)|sees|saw)\b"
    r"(?P<held>[^.;]{0,160}?)\b(?:iptables|INPUT\s+chain|(?:host|guest|os)\s+firewall)",
    PHRASE_FLAGS,
)
"""The Azure-side drift check (`detect_effective_network_drift` against an `eni_…` baseline) said to hold a guest
firewall rule ("the eni_pre_window_P drift report lists … and the iptables rule", "the ENI snapshot records the VM's
effective state including its iptables rules"): it compares NSGs and routes only, as the original's tool says."""
_ENI_CLAIM = "The Azure drift check shows a guest firewall rule; it compares NSGs and routes only."


def _eni_holds_os(sentence: str) -> bool:
    m = _ENI_HOLDS_OS.search(sentence)
    return (
        m is not None
        and not denied_before(sentence, m.start("verb"), words=3)
        and re.search(r"(?i)\b(?:only|not|no|but|without)\b|n['\u2019]t\b", m["held"]) is None
    )


_LISTENER = re.compile(
    r"\b(?:xrdp|rdp\s+(?:service|server|daemon)|(?:a|an|the)\s+(?:rdp\s+|remote\s+desktop\s+)?(?:service|server|listener|daemon))"
    r"\b[^.;]{0,60}?\b(?P<verb>(?:is\s+)?running|listening|answer(?:s|ing)|listens|accepts?\s+connections|responds)\b"
    r"|\b(?P<state>listening|answering)\s+on\s+(?:tcp\s*/?\s*)?(?:port\s+)?\d+",
    PHRASE_FLAGS,
)
"""A service said to listen behind an allow that opens no working path ("xrdp is actually running on the box and
answering on 3389"): the case starts none, which is why no probe can see the fault."""
_LISTENER_CLAIM = "A service listens behind the rule; the case starts none, so the rule opens no working path."


def _listener_said(sentence: str) -> bool:
    return any(
        not denied_before(sentence, m.start("verb") if m["verb"] else m.start("state"), words=3)
        and not denied_before(sentence, m.start(), words=2)
        for m in _LISTENER.finditer(sentence)
    )


_REAL_CAUSE = re.compile(
    r"\b(?:real|actual|main|primary|true|root|underlying)\s+(?:problem|cause|issue|culprit|blocker)\s*(?:is|=|:|->)\s*"
    r"(?P<what>[^.;,]{0,60})",
    PHRASE_FLAGS,
)
_FIREWALL = compile_phrase("@os_firewall|@deny|\\bINPUT\\b")
_SHAPED = compile_phrase("@shaping|@delay")


def _unreported_called_the_cause(case: Case) -> Callable[[str], bool]:
    """Whether a sentence calls a fault the scenario's prompt never reports ("the real problem is the delay on the
    source side", where the prompt reports failed connections and the delay only slows them) the real cause."""
    kinds = [_SHAPED if _SHAPING.search(f.resource or "") else _FIREWALL for f in case.ground_truth if f.reported is False]

    def says(sentence: str) -> bool:
        return any(
            any(k.search(m["what"]) for k in kinds) and not denied_before(sentence, m.start(), words=2)
            for m in _REAL_CAUSE.finditer(sentence)
        )

    return says


_UNREPORTED_CLAIM = "A fault the prompt never reports is called the real cause of the reported failure."


def reach_claims(case: Case, asserting: Callable[[Callable[[str], bool]], str | None]) -> list[ClaimHit]:
    """The reach claims a diagnosis asserts that the case or the tools contradict."""
    hits: list[ClaimHit] = []
    if _spares_ssh(case) and (spared := asserting(lambda s: _SPARED_SHAPED.search(s) is not None)) is not None:
        hits.append(ClaimHit(id="spared_shaped", claim=_SPARED_CLAIM, sentence=spared))
    if any(f.layer is Layer.OS for f in case.ground_truth) and (eni := asserting(_eni_holds_os)) is not None:
        hits.append(ClaimHit(id="azure_drift_sees_os", claim=_ENI_CLAIM, sentence=eni))
    if (
        any(f.reported is False for f in case.ground_truth)
        and (unreported := asserting(_unreported_called_the_cause(case))) is not None
    ):
        hits.append(ClaimHit(id="unreported_as_cause", claim=_UNREPORTED_CLAIM, sentence=unreported))
    if any(not f.probe_visible for f in case.ground_truth) and (listener := asserting(_listener_said)) is not None:
        hits.append(ClaimHit(id="listener_invented", claim=_LISTENER_CLAIM, sentence=listener))
    return hits
