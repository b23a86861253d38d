"""Judging a store: select and sample runs, send each to a judge of another family, reuse the cache, keep verdicts."""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

from ghost_eval.base.errors import GhostEvalError
from ghost_eval.cases.case import Case, case_key
from ghost_eval.evaluation.evaluate import evidence_of, score_record
from ghost_eval.evaluation.v1_verdict import add_verdict
from ghost_eval.judge.clients import Completion, JudgeClient
from ghost_eval.judge.family import assign_judge
from ghost_eval.judge.judging import excluded_verdict, judge_evidence
from ghost_eval.judge.prompt import Question, template_hash
from ghost_eval.judge.record import Disagreement, JudgeVerdict, TokenCount
from ghost_eval.judge.stored import cached_answers, cached_diagnoses, stored_verdicts
from ghost_eval.store import IndexEntry, Problem, RunFilter, Store

__all__ = ["JudgeOptions", "JudgeOutcome", "JudgeSummary", "judge_entry", "judge_store", "sample_entries"]


@dataclass(frozen=True)
class JudgeOptions:
    force: bool = False
    """Ignore cached answers and write a new verdict file beside the old ones."""
    allow_self_judging: bool = False
    """Let a judge score its own model family when no other judge is configured (the verdict is marked)."""
    sample_percent: float | None = None
    seed: int = 0
    concurrency: int = 4


@dataclass(frozen=True)
class JudgeOutcome:
    entry: IndexEntry
    verdict: JudgeVerdict
    file: Path | None
    """The verdict file written now; None when every answer came from the cache or the identical file existed."""
    calls: int = 0
    cached: int = 0
    tokens: TokenCount = field(default_factory=TokenCount)
    cost_usd: float | None = None


@dataclass
class JudgeSummary:
    """What a judge run did and spent, for the closing summary."""

    selected: int
    """Runs matching the filter, before sampling."""
    outcomes: list[JudgeOutcome] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    @property
    def calls(self) -> int:
        return sum(o.calls for o in self.outcomes)

    @property
    def cached(self) -> int:
        return sum(o.cached for o in self.outcomes)

    @property
    def tokens(self) -> TokenCount:
        return TokenCount(input=sum(o.tokens.input for o in self.outcomes), output=sum(o.tokens.output for o in self.outcomes))

    @property
    def cost_usd(self) -> float | None:
        known = [o.cost_usd for o in self.outcomes if o.cost_usd is not None]
        return sum(known) if known else None

    @property
    def excluded(self) -> list[JudgeVerdict]:
        return [o.verdict for o in self.outcomes if o.verdict.verdict == "excluded"]

    @property
    def with_errors(self) -> list[JudgeVerdict]:
        return [o.verdict for o in self.outcomes if o.verdict.errors]

    @property
    def disagreements(self) -> list[tuple[JudgeVerdict, Disagreement]]:
        return [(o.verdict, d) for o in self.outcomes if o.verdict.anchor for d in o.verdict.anchor.disagreements]


def sample_entries(entries: Sequence[IndexEntry], percent: float | None, seed: int) -> list[IndexEntry]:
    """A reproducible sample: the same runs, percent and seed always pick the same runs (kept in store order)."""
    if percent is None:
        return list(entries)
    if not 0 < percent <= 100:
        raise GhostEvalError(f"--sample must be a percentage in (0, 100], got {percent}")
    k = math.ceil(len(entries) * percent / 100)
    chosen = set(random.Random(seed).sample(sorted(e.run_id for e in entries), k))
    return [e for e in entries if e.run_id in chosen]


class _LazyClient:
    """Makes the vendor client only when a question is actually asked, so a fully cached run needs no key."""

    def __init__(self, model: str, factory: Callable[[str], JudgeClient]) -> None:
        self._model = model
        self._factory = factory
        self._client: JudgeClient | None = None

    @property
    def model(self) -> str:
        return self._model

    def complete(self, prompt: Question) -> Completion:
        if self._client is None:
            self._client = self._factory(self._model)
        return self._client.complete(prompt)


def judge_entry(
    store: Store,
    entry: IndexEntry,
    cases: dict[str, Case],
    judges: Sequence[str],
    client_for: Callable[[str], JudgeClient],
    options: JudgeOptions,
    problems: list[Problem],
) -> JudgeOutcome | None:
    """Judge one stored run and keep the verdict beside it; None when its folder cannot be read (see `problems`).

    `judges` are judge model ids in order of preference; `client_for` makes the client of one, and is called only
    when an answer is not in the cache.
    """
    record = store.read(entry)
    problems.extend(record.problems)
    if not record.readable:
        return None
    evidence = evidence_of(record)
    provider = record.metadata.provider if record.metadata else None
    assignment = assign_judge(entry.model_id, judges, provider=provider, allow_self=options.allow_self_judging)
    if assignment.judge is None:
        verdict = excluded_verdict(evidence, assignment.excluded_reason or "excluded")
        return JudgeOutcome(entry, verdict, add_verdict(store, entry, verdict.scorer, verdict))
    existing = [] if options.force else stored_verdicts(record.folder, problems, entry.run_id)
    judgement = judge_evidence(
        evidence,
        cases.get(case_key(entry.use_case_id)),
        _LazyClient(assignment.judge, client_for),
        cached=cached_answers(existing, assignment.judge, template_hash()),
        cached_diagnoses=cached_diagnoses(existing, assignment.judge, template_hash()),
        agent_prompt=record.prompt,
        score=score_record(record, cases),
        self_judged=assignment.self_judged,
    )
    all_cached = judgement.cached > 0 and judgement.calls == 0
    written = None if all_cached else add_verdict(store, entry, judgement.verdict.scorer, judgement.verdict)
    return JudgeOutcome(
        entry, judgement.verdict, written, judgement.calls, judgement.cached, judgement.tokens, judgement.cost_usd
    )


def judge_store(
    store: Store,
    cases: dict[str, Case],
    clients: Mapping[str, JudgeClient],
    options: JudgeOptions | None = None,
    flt: RunFilter | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> JudgeSummary:
    """Judge the selected runs with the configured judges (judge model → client, in order of preference).

    Each run goes to the first judge of another model family; a run whose family every judge shares is recorded
    as excluded (or judged and marked, when self-judging is forced). A rejected API key stops the whole run.
    `progress(done, total)` is called once before the first run and after each one.
    """
    if not clients:
        raise GhostEvalError("no judge model configured")
    options = options or JudgeOptions()
    selected = store.runs(flt)
    entries = sample_entries(selected, options.sample_percent, options.seed)
    summary = JudgeSummary(selected=len(selected), problems=list(store.problems))
    order = {e.run_id: i for i, e in enumerate(entries)}
    if progress is not None:
        progress(0, len(entries))
    pool = ThreadPoolExecutor(max_workers=max(1, options.concurrency))
    per_run: dict[Future[JudgeOutcome | None], list[Problem]] = {}
    try:
        for entry in entries:
            problems: list[Problem] = []
            future = pool.submit(judge_entry, store, entry, cases, list(clients), clients.__getitem__, options, problems)
            per_run[future] = problems
        for done, future in enumerate(as_completed(per_run), start=1):
            outcome = future.result()
            summary.problems.extend(per_run[future])
            if outcome is not None:
                summary.outcomes.append(outcome)
            if progress is not None:
                progress(done, len(entries))
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    summary.outcomes.sort(key=lambda o: order[o.entry.run_id])
    return summary
