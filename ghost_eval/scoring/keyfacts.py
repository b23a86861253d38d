"""Diagnosis by key facts: each fact of the case found, missing or contradicted, with the sentence that decided it.

The report is read as Markdown (markdown-it): headings, paragraphs, list items, table cells and blockquotes are
blocks; code blocks are evidence, not claims, and are left out. Blocks are split into sentences by the one
sentence splitter of `ghost_eval.scoring.text`. A fact is found in a window of consecutive sentences that
together match all of its phrases; a wrong claim counts only where a sentence asserts it.
"""

from __future__ import annotations

import re
from functools import cache

from markdown_it import MarkdownIt

from ghost_eval.cases import Case, KeyFact, WrongClaim
from ghost_eval.phrases import PHRASE_FLAGS, compile_claim, compile_phrase
from ghost_eval.scoring.model import ClaimHit, DiagnosisResult, FactResult
from ghost_eval.scoring.text import split_sentences

__all__ = ["check_key_facts", "claim_asserted", "report_sentences"]

_REFUTATION = r"\b(?:refuted|ruled\W+out|disproven|disproved|excluded|rejected|eliminated|not\W+the\W+(?:root\W+)?cause)\b"
_REFUTED = re.compile(_REFUTATION, PHRASE_FLAGS)
_HEDGE = re.compile(
    r"\b(?:hypothes\w*|suspect\w*|whether|if|could|might|may|possibl[ey]|perhaps|assum\w*|consider\w*|initially"
    r"|claim\w*|reported|said|stated|according|thought|believed|appeared\W+to|suggest\w*)\b",
    PHRASE_FLAGS,
)
_REFUTED_AFTER = re.compile(rf"{_REFUTATION}|\?(?=\W*$)", PHRASE_FLAGS)
"""A refutation, or the question mark that ends the sentence (not one inside a `--query "[?…]"`)."""
_REFUTED_LABEL = re.compile(rf"\W*(?:(?:hypothesis\W*\d*|h\d+|\d+[.)])\W*)?{_REFUTATION}", PHRASE_FLAGS)
"""A board label opening the sentence: "Refuted: …", "H2 (refuted): …", "Ruled out - …"."""
_CLAUSE = re.compile(r";|\s[\u2014\u2013]\s|\s--?\s|,\s*(?=(?:but|whereas|while|however|instead)\b)", re.IGNORECASE)
"""Where a sentence's clauses part: a refutation in one clause does not take the others with it."""
_BLOCK_TOKENS = frozenset({"inline"})
_ROW = re.compile(r"^\s*\|", re.MULTILINE)
_MARKDOWN = MarkdownIt("commonmark").enable("table").disable(["inline", "text_join"])
"""Blocks only: the inline tokens keep their text, and parsing links and emphasis inside them would cost as much again."""


def report_sentences(text: str) -> list[str]:
    """The report's prose as sentences, in order: every inline block of the Markdown, code blocks left out; a table
    row that Markdown did not read as a table (no header separator) is a sentence of its own."""
    blocks = [token.content for token in _MARKDOWN.parse(text) if token.type in _BLOCK_TOKENS and token.content.strip()]
    lines = [line for block in blocks for line in (block.splitlines() if _ROW.search(block) else [block])]
    return [sentence for line in lines for sentence in split_sentences(line)]


@cache
def _phrases(patterns: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    return tuple(compile_phrase(p) for p in patterns)


@cache
def _claims(patterns: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    return tuple(compile_claim(p) for p in patterns)


def claim_asserted(claim: re.Pattern[str], sentence: str) -> bool:
    """Whether the sentence asserts the claim: unhedged before it, unrefuted after it, not opened by a refutation."""
    if _REFUTED_LABEL.match(sentence):
        return False
    pos = 0
    while (m := claim.search(sentence, pos)) is not None:
        if _HEDGE.search(sentence, 0, m.start()):
            return False
        if not _REFUTED_AFTER.search(sentence, m.end()):
            return True
        pos = m.start() + 1
    return False


def _asserting(patterns: tuple[str, ...], sentences: list[str], joined: str) -> str | None:
    """The first sentence asserting any of the claim patterns (a claim found nowhere in the text is skipped at once)."""
    compiled = [c for c in _claims(patterns) if c.search(joined)]
    if not compiled:
        return None
    return next((s for s in sentences if any(claim_asserted(c, s) for c in compiled)), None)


def _found(fact: KeyFact, sentences: list[str]) -> str | None:
    """The first window of sentences (refuted clauses removed) where every phrase of the fact matches."""
    phrases = _phrases(tuple(fact.all_of))
    for start, first in enumerate(sentences):
        window = [s for s in sentences[start : start + fact.window] if s]
        if first and all(any(p.search(s) for s in window) for p in phrases):
            return " ".join(window)
    return None


def _unrefuted(sentence: str) -> str:
    """The sentence without its refuted clauses ("H2 is refuted too; the qdisc is re-applied" keeps the second).

    A bare verdict clause ("… - ruled out") refutes the clause before it; a sentence that opens with a refutation
    label loses its first clause.
    """
    clauses = _CLAUSE.split(sentence)
    keep = [not _REFUTED.search(c) for c in clauses]
    if _REFUTED_LABEL.match(sentence):
        keep[0] = False
    for i, clause in enumerate(clauses):
        if i and not keep[i] and len(_REFUTED.sub(" ", clause).split()) <= 3:
            keep[i - 1] = False
    return " ".join(c.strip() for c, k in zip(clauses, keep, strict=True) if k and c.strip())


def check_key_facts(case: Case, text: str) -> DiagnosisResult:
    """Score a diagnosis text against the case's key facts and wrong claims."""
    sentences = report_sentences(text)
    joined = "\n".join(sentences)
    facts_text = [_unrefuted(s) for s in sentences]
    hits = [
        ClaimHit(id=claim.id, claim=claim.claim, sentence=sentence)
        for claim in case.wrong_claims
        if (sentence := _asserting(tuple(claim.patterns), sentences, joined)) is not None
    ]
    contradicting = {c.contradicts: h.sentence for c, h in _claim_hits(case.wrong_claims, hits) if c.contradicts}
    facts: list[FactResult] = []
    for fact in case.key_facts:
        against = _asserting(tuple(fact.contradicted_by), sentences, joined) or contradicting.get(fact.id)
        if against is not None:
            facts.append(FactResult(id=fact.id, kind=fact.kind, fact=fact.fact, status="contradicted", sentence=against))
            continue
        found = _found(fact, facts_text)
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
