"""Use cases: the scenario as the original use case injected it, its ground truth, the facts scoring relies on
(per environment), and the key facts a correct diagnosis states."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator

from ghost_eval.base.errors import CaseError
from ghost_eval.base.records import Record, load_yaml_record
from ghost_eval.cases.phrases import compile_claim, compile_phrase

__all__ = [
    "AZURE_DEMO",
    "Case",
    "CaseFacts",
    "LAB",
    "EnvironmentFacts",
    "Fault",
    "KeyFact",
    "Layer",
    "ListArgument",
    "Ownership",
    "Phase",
    "Source",
    "StatedValue",
    "TrajectoryBounds",
    "WrongClaim",
    "case_key",
    "load_case",
    "load_case_path",
    "load_cases",
]

CASE_SCHEMA_VERSION = "2"
ORIGINAL_REPOSITORY = "ranga-sampath/agentic-network-tools"
AZURE_DEMO = "azure_demo"
"""The environment the original use cases ran in: the demo resource group in Azure. Runs that do not say where
they ran (every run of the original tooling) ran there."""
LAB = "lab"
"""The local lab: network-namespace VMs and the ARM emulator, where fix trials run."""
_WORD = re.compile(r"[a-z0-9][a-z0-9.-]*")
_PROMPT_MATCH = 0.4
"""The least share of words a prompt shares with a phase's symptom to be that phase's (the original's prompts share
about 0.5-0.7 with the case's symptoms of their phase, and about 0.2-0.25 with the other phase's)."""
_PROMPT_MARGIN = 0.15
"""How far the best phase must lead the next for the match to be clear."""


def _words(text: str) -> frozenset[str]:
    return frozenset(_WORD.findall(text.lower()))


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


class Layer(StrEnum):
    """Where a fault lives: inside the VM, or in Azure's control plane."""

    OS = "os"
    CONTROL_PLANE = "control_plane"


_TRAFFIC = r"^(?:icmp|(?:tcp|udp)/\d{1,5})$"


class Fault(Record):
    """One injected fault: the ground truth the judge and the key facts are checked against."""

    id: str | None = None
    """Short name, referred to by phases."""
    layer: Layer
    host: str | None = None
    """VM name for OS faults (tf-source-vm / tf-dest-vm)."""
    resource: str | None = None
    """Azure resource or OS object at fault (NSG rule name, route, chain, qdisc)."""
    description: str
    reported: bool | None = None
    """Whether the scenario's prompt reports a symptom of this fault (in a case with several): a fix that leaves it
    alone leaves a reported failure in place, evidently narrower than necessary (criterion 3). False for a fault the
    prompt does not speak of (a leftover found on the way); None where the case does not say."""
    chains: dict[str, list[str]] = {}
    """For a firewall fault, the targets each chain it writes holds, in order (`DOCKER-USER: [RETURN]`,
    `DOCKER-ISOLATION-STAGE-2: [DROP, RETURN]`), as setup.sh writes them: a diagnosis that puts a DROP or a REJECT in
    a chain that holds none contradicts it."""
    affects: list[Annotated[str, Field(pattern=_TRAFFIC)]] = []
    """The only traffic the fault acts on, where it acts on part of it (`tcp/5001` for a DROP of one port, `icmp`): a
    check made with other traffic succeeds with the fault in place. Empty: all it carries, but `spares`."""
    spares: list[Annotated[str, Field(pattern=_TRAFFIC)]] = []
    """Traffic the fault leaves alone (`tcp/22`: SSH kept out of a shaper by a u32 filter, or accepted ahead of a DROP
    policy): a check made with it succeeds with the fault in place."""
    probe_visible: bool = True
    """Whether traffic the lab's VMs send can show the fault: false for an inbound allow that opens no working path
    (nothing listens behind it, and the VNet's default AllowVnetInBound admits the VMs' traffic with or without it).
    A probe then gets the same answer before and after the fix: only a read of the rule proves it gone."""
    next_hop_absent: str | None = None
    """For a route fault, the next-hop address nothing holds (no VM, NIC or appliance): a report that gives something
    there a state or a setting (running, stopped, its IP forwarding off) invents a device the case does not have."""

    @property
    def nsg_rule(self) -> tuple[str, str] | None:
        """(NSG, rule) when the fault is one security rule, written `<nsg>/<rule>` (`tf-dest-vm-nsg/ghost-demo-block-8080`)."""
        nsg, slash, rule = (self.resource or "").partition("/")
        return (nsg, rule) if slash and rule and "/" not in rule and nsg.lower().endswith("nsg") else None


class Ownership(Record):
    """A resource managed by a reconciling process: writing it directly is criterion 2."""

    kind: Literal["iptables_chain", "nft_table", "tc_qdisc", "file", "service", "azure_resource", "process"]
    name: str
    """Chain name, device, file path or resource name; a trailing `*` matches a prefix. For a process, its command
    line (`python3 /tmp/demo-uc-c/server.py`), which `pkill -f` patterns are matched against."""
    owner: str
    """The process that reconciles it (fail2ban, docker …): only one the case's environment really runs."""
    host: str | None = None
    managed_via: str | None = None
    """The supported way to change it (e.g. `fail2ban-client`)."""
    user_chains: list[str] = []
    """Names the pattern matches that the owner leaves to users (Docker's `DOCKER-USER`): writing them is safe."""
    ports: list[str] = []
    """For a process: the ports it listens on (`7070/tcp`), which `fuser -k 7070/tcp` reaches by port."""
    reapply_seconds: int | None = None
    """How often the owner puts its state back unprompted (ghost-shaper: every 300 s); None where it re-applies only on
    an event (a reload, a ban). A check repeated after at least this long sees whether a direct write stayed."""


class ListArgument(Record):
    """A list-valued setting whose current contents a replace would lose (criterion 1)."""

    resource: str
    argument: str
    """The CLI flag that replaces the list, e.g. `--service-endpoints`."""
    current_values: list[str]


def _compiling(patterns: list[str], compile_one: Callable[[str], object]) -> list[str]:
    """Validate that every pattern compiles; the error names the bad regex or concept."""
    for p in patterns:
        compile_one(p)
    return patterns


class StatedValue(Record):
    """A value the fault has, as data: one property of one named resource. A sentence that names the resource and gives
    the property another value contradicts the fact it belongs to (the grammar of each property is the scorer's, in
    `ghost_eval.scoring.keyfacts`)."""

    resource: str = Field(min_length=1)
    """The resource as reports name it: an NSG rule's or route table's name; a nameless qdisc by its kind (`netem`)."""
    property: Literal["priority", "next_hop", "loss", "port", "source", "direction", "protocol"]
    """priority: an NSG rule's priority; next_hop: a route's next-hop address (`none` for next hop type None, which has
    no address: any address given contradicts it); loss: a netem loss in percent; port: the destination port an NSG rule
    matches; source: an NSG rule's source prefix (`*` for any); direction: an NSG rule's direction (`Inbound` or
    `Outbound`); protocol: an NSG rule's protocol (`Tcp`, `Udp`, `Icmp`, `*`)."""
    value: str = Field(min_length=1)


class KeyFact(Record):
    """One fact a correct diagnosis states: scored found / missing / contradicted, with the sentence that decided it.

    `all_of` are phrases (regexes with `@concepts`, see `ghost_eval.cases.phrases`); the fact is found where every one of
    them matches within `window` consecutive sentences of the report that neither open with nor contain a
    refutation ("ruled out", "refuted"). It is contradicted where one of `contradicted_by` is asserted (the claim
    rules of `WrongClaim`), even if it is also found elsewhere.
    """

    id: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    kind: Literal["host", "component", "fault", "relation"]
    """host: where the fault is; component: which mechanism; fault: what it does; relation: how faults relate."""
    fact: str
    """The fact in words, as an expert would check it (the judge is asked about this sentence)."""
    all_of: list[str] = Field(min_length=1)
    window: int = Field(default=1, ge=1, le=4)
    """Consecutive sentences the phrases may spread over (1: all in one sentence)."""
    contradicted_by: list[str] = []
    values: list[StatedValue] = []
    """What the fact says as data (a rule's priority, a route's next hop): another value stated contradicts it."""

    @field_validator("all_of")
    @classmethod
    def _phrases_compile(cls, patterns: list[str]) -> list[str]:
        return _compiling(patterns, compile_phrase)

    @field_validator("contradicted_by")
    @classmethod
    def _claims_compile(cls, patterns: list[str]) -> list[str]:
        return _compiling(patterns, compile_claim)


class WrongClaim(Record):
    """A claim an expert rejects for this case; asserting it makes the diagnosis wrong.

    A claim counts only where a sentence asserts it: no hedge word (if, whether, suspected, hypothesis, could,
    may, claimed, reported…) before it, no refutation (refuted, ruled out, excluded…) or closing question mark
    after it, and the sentence does not open with a refutation label ("Refuted: …", "H2 (refuted): …"). In its
    patterns `.` stays inside the clause and never crosses a negation.
    """

    id: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    claim: str
    """The wrong claim in words."""
    patterns: list[str] = Field(min_length=1)
    contradicts: str | None = None
    """The key fact this claim contradicts, if any (its status becomes `contradicted`)."""

    @field_validator("patterns")
    @classmethod
    def _claims_compile(cls, patterns: list[str]) -> list[str]:
        return _compiling(patterns, compile_claim)


class Source(Record):
    """Where a case's facts come from: the original use case's files at a fixed commit."""

    repository: str = ORIGINAL_REPOSITORY
    commit: str = Field(pattern=r"^[0-9a-f]{40}$")
    files: list[str] = Field(min_length=1)
    """Paths in the repository the facts were read from (setup.sh, PROMPT.txt, teardown.sh …)."""
    silent: list[str] = []
    """What the original does not say, and what the case does about it (never an invented fact)."""
    twist_of: str | None = None
    """For a case that is not an original: the original case it varies."""
    twist: str | None = None
    """What the twist adds or changes compared with `twist_of`."""

    @model_validator(mode="after")
    def _twist_named(self) -> Source:
        if (self.twist_of is None) != (self.twist is None):
            raise ValueError("twist_of and twist go together: name the original and say what differs")
        return self


class Phase(Record):
    """One phase of a multi-phase original: what the agent is told, and which faults are live then."""

    id: str
    prompt_file: str | None = None
    """The original's prompt file for this phase (PROMPT.txt, PROMPT2.txt)."""
    symptom: str
    """What the agent is told in this phase, in the operator's words."""
    faults: list[str] = Field(min_length=1)
    """Ids of the ground-truth faults present in this phase."""
    before: str | None = None
    """What happens between the previous phase and this one (e.g. the first fault is fixed)."""
    key_facts: list[str] = []
    """Ids of the key facts that are the complete answer in this phase (the original may close a phase at the fault
    that fully explains its symptom); empty: every key fact of the case."""


class EnvironmentFacts(Record):
    """The facts that hold where a run was recorded, when they differ from the original demo in Azure.

    Fields left unset mean "as in the original". Scoring uses the facts of the run's own environment.
    """

    description: str = ""
    differences: list[str] = []
    """How this environment differs from the original (e.g. no netem in the lab's kernel), as data."""
    ownership: list[Ownership] | None = None
    list_arguments: list[ListArgument] | None = None
    key_facts: list[KeyFact] = []
    """Key facts restated as this environment shows them, each replacing the original's fact of the same id (the
    lab's kernel cannot corrupt packets, so a correct diagnosis there cannot name corruption)."""
    fault_scope: list[str] = []
    """Names this environment's version of the fault adds to the case's fault scope (the lab's loss chain): a fix may
    touch them."""


class CaseFacts(Record):
    """The facts scoring uses for one environment: ownership and the list arguments' current values."""

    environment: str
    ownership: list[Ownership] = []
    list_arguments: list[ListArgument] = []


class TrajectoryBounds(Record):
    """What a reasonable investigation of this case looks like, in tool calls."""

    min_tool_calls: int = 1
    max_tool_calls: int = 40
    required_layers: list[Layer] = []


class Case(Record):
    """One use case file under `cases/`."""

    schema_version: str = CASE_SCHEMA_VERSION
    id: str = Field(pattern=r"^([a-z][a-z0-9_-]*\.)?[a-z][a-z0-9_-]*$")
    """The bundled cases' ids are bare (`m`); a team's own are namespaced `<team>.<name>` so two teams never collide."""
    kind: Literal["fault", "behaviour"] = "fault"
    """`fault`: find a planted fault. `behaviour`: a test of the agent's contract (decline off-topic requests, never
    apply a fix unconfirmed, check both layers before closing), graded by the same deterministic checks."""
    title: str
    fault_class: str
    layers: list[Layer] = []
    """Layers the case involves; a fault case names at least one."""
    symptom: str
    """The prompt the agent receives, in the operator's words."""
    ground_truth: list[Fault]
    """Injected faults (empty for a no-fault case)."""
    expected_root_cause: str
    network_change_expected: bool = True
    """Whether a correct report changes something; false where the fault lies outside the network (c: the application
    on tf-dest-vm), so a report that recommends no network change has left nothing undone."""
    source: Source | None = None
    """The original files the facts were derived from; required for a fault case."""
    phases: list[Phase] = []
    """For a multi-phase original: the phases in order (empty: one phase, told `symptom`)."""
    ownership: list[Ownership] = []
    """Resources a reconciling process owns in the original environment; empty where it has no such process."""
    ownership_reason: str | None = None
    """Why the case has an owner (the original's daemon, or the seed articles' use of the case as the example)."""
    list_arguments: list[ListArgument] = []
    """List-valued settings and their values in the original environment after the fault setup."""
    environments: dict[str, EnvironmentFacts] = {}
    """Other environments the case runs in (e.g. `lab`) and how their facts differ from the original's."""
    fault_scope: list[str] = []
    """Ports, rule names, routes and addresses the fault is about; a fix may touch these."""
    key_facts: list[KeyFact] = []
    """What a correct diagnosis states (2-4 for a fault case)."""
    wrong_claims: list[WrongClaim] = []
    """What an expert rejects for this case."""
    criteria: list[int] = []
    """Remediation criteria (1-4) this case exercises."""
    trajectory: TrajectoryBounds = TrajectoryBounds()
    baseline: bool = False
    sentinel: bool = False
    recipe: dict[str, Any] | None = None
    """Fault setup/teardown for live runs (see the live-runs docs)."""
    recipe_from: str | None = None
    """Run live with another case's recipe (a behaviour case on a fault scenario); exclusive with `recipe`."""

    def setup_steps(self) -> list[dict[str, Any]]:
        """The recipe's setup steps as written (`run:` a script, `azure:` a control-plane call), for the rules that read
        what the fault injects as data."""
        return [step for step in (self.recipe or {}).get("setup") or [] if isinstance(step, dict)]

    @model_validator(mode="after")
    def _kind_rules(self) -> Case:
        if self.kind == "fault" and not self.layers:
            raise ValueError("layers: a fault case names at least one layer")
        if self.recipe is not None and self.recipe_from is not None:
            raise ValueError("recipe_from: give either recipe or recipe_from, not both")
        if self.kind == "fault" and self.source is None:
            raise ValueError("source: a fault case names the original files its facts come from")
        if self.kind == "fault" and not self.key_facts:
            raise ValueError("key_facts: a fault case lists the facts a correct diagnosis states")
        fact_ids = [f.id for f in self.key_facts]
        if len(set(fact_ids)) != len(fact_ids):
            raise ValueError(f"key_facts: ids repeat ({', '.join(sorted(fact_ids))})")
        for claim in self.wrong_claims:
            if claim.contradicts is not None and claim.contradicts not in fact_ids:
                raise ValueError(f"wrong_claims: {claim.id} contradicts {claim.contradicts!r}, which is no key fact")
        fault_ids = {f.id for f in self.ground_truth if f.id}
        for phase in self.phases:
            unknown = sorted(set(phase.faults) - fault_ids)
            if unknown:
                raise ValueError(f"phases: phase {phase.id} names faults {unknown} that ground_truth does not have")
            unknown = sorted(set(phase.key_facts) - set(fact_ids))
            if unknown:
                raise ValueError(f"phases: phase {phase.id} names key facts {unknown} that key_facts does not have")
        if AZURE_DEMO in self.environments:
            raise ValueError(f"environments: {AZURE_DEMO} is the original's; its facts are the case's own fields")
        for name, env in self.environments.items():
            unknown = sorted({f.id for f in env.key_facts} - set(fact_ids))
            if unknown:
                raise ValueError(f"environments.{name}.key_facts: {unknown} replace no key fact of the case")
        return self

    def in_environment(self, environment: str | None) -> Case:
        """The case as the run's environment shows it: its restated key facts in place of the original's, its own
        names added to the fault scope. The original's environment, or one the case does not describe, changes
        nothing."""
        env = self.environments.get(environment or AZURE_DEMO)
        if env is None or not (env.key_facts or env.fault_scope):
            return self
        restated = {f.id: f for f in env.key_facts}
        return self.model_copy(
            update={
                "key_facts": [restated.get(f.id, f) for f in self.key_facts],
                "fault_scope": [*self.fault_scope, *env.fault_scope],
            }
        )

    def in_phase(self, phase: str | None) -> Case:
        """The case as one of its phases asks it: that phase's key facts, and the wrong claims against them (or
        against none in particular). A phase is judged on its own answer; no phase, or one the case lacks, changes
        nothing."""
        chosen = next((p for p in self.phases if p.id == phase), None)
        if chosen is None or not chosen.key_facts:
            return self
        kept = set(chosen.key_facts)
        return self.model_copy(
            update={
                "key_facts": [f for f in self.key_facts if f.id in kept],
                "wrong_claims": [c for c in self.wrong_claims if c.contradicts is None or c.contradicts in kept],
            }
        )

    def phase_of_prompt(self, prompt: str | None) -> str | None:
        """The phase whose symptom the prompt tells (a v1 run keeps only the prompt it was given): the phase sharing
        clearly the most words with it, else None."""
        if not self.phases or not prompt or not prompt.strip():
            return None
        words = _words(prompt)
        overlap = sorted(((_jaccard(words, _words(p.symptom)), p.id) for p in self.phases), reverse=True)
        best, runner_up = overlap[0][0], overlap[1][0] if len(overlap) > 1 else 0.0
        return overlap[0][1] if best >= _PROMPT_MATCH and best - runner_up >= _PROMPT_MARGIN else None

    def stated(self, prop: str) -> dict[str, str]:
        """What the key facts state of one property, by resource (`{"ghost-demo-block-8080": "8080"}` for `port`)."""
        return {v.resource: v.value for fact in self.key_facts for v in fact.values if v.property == prop}

    def facts(self, environment: str | None) -> CaseFacts:
        """The facts that hold where a run was recorded: the environment's own where it has them, else the original's.

        An environment the case does not describe gets the original's facts, and `CaseFacts.environment` says which
        environment they belong to, so a verdict can say it used them.
        """
        name = environment or AZURE_DEMO
        env = self.environments.get(name)
        if env is None:
            return CaseFacts(environment=AZURE_DEMO, ownership=self.ownership, list_arguments=self.list_arguments)
        return CaseFacts(
            environment=name,
            ownership=self.ownership if env.ownership is None else env.ownership,
            list_arguments=self.list_arguments if env.list_arguments is None else env.list_arguments,
        )

    @field_validator("criteria")
    @classmethod
    def _criteria_range(cls, values: list[int]) -> list[int]:
        bad = [v for v in values if v not in (1, 2, 3, 4)]
        if bad:
            raise ValueError(f"criteria must be 1-4, got {bad}")
        return values


def case_key(use_case_id: str) -> str:
    """The original tooling named cases `use_case_m`; ours are `m`. Both name the same case."""
    return use_case_id.removeprefix("use_case_")


def load_case(path: Path) -> Case:
    case = load_yaml_record(Case, path, CaseError)
    if case.id != path.stem:
        raise CaseError(path, f"id {case.id!r} does not match the file name {path.stem!r}", "id")
    return case


def load_cases(directory: Path, ids: Iterable[str] | None = None) -> tuple[dict[str, Case], list[CaseError]]:
    """Load every case file; invalid files are returned as errors and the valid ones still load."""
    wanted = set(ids) if ids is not None else None
    cases: dict[str, Case] = {}
    errors: list[CaseError] = []
    for path in sorted(directory.glob("*.yaml")):
        if wanted is not None and path.stem not in wanted:
            continue
        try:
            cases[path.stem] = load_case(path)
        except CaseError as exc:
            errors.append(exc)
    return cases, errors


def load_case_path(folders: Sequence[Path], bundled: Path) -> tuple[dict[str, Case], list[CaseError]]:
    """Load the cases of every folder on a case path (the bundled folder and the teams' own).

    Where the path holds the bundled folder, a case outside it must have a namespaced id (`<team>.<name>`); an id
    defined twice is an error naming both files, and neither copy is used.
    """
    with_bundled = any(f.resolve() == bundled.resolve() for f in folders)
    cases: dict[str, Case] = {}
    where: dict[str, Path] = {}
    errors: list[CaseError] = []
    clashed: set[str] = set()
    seen: set[Path] = set()
    for folder in folders:
        if folder.resolve() in seen:  # one folder named twice (the bundled one, and a checkout's cases/)
            continue
        seen.add(folder.resolve())
        if not folder.is_dir():
            errors.append(CaseError(folder, "case folder not found"))
            continue
        own, own_errors = load_cases(folder)
        errors += own_errors
        for case_id, case in own.items():
            path = folder / f"{case_id}.yaml"
            if with_bundled and folder.resolve() != bundled.resolve() and "." not in case_id:
                errors.append(CaseError(path, f"a team's case id is namespaced <team>.<name>, got {case_id!r}", "id"))
            elif case_id in where:
                errors.append(CaseError(path, f"case id {case_id!r} is also defined in {where[case_id]}", "id"))
                clashed.add(case_id)
            else:
                cases[case_id], where[case_id] = case, path
    for case_id in clashed:
        del cases[case_id]
    return cases, errors
