"""The gate's plan: which rows a task has, what each expects, and what each waits for.

Pure and deterministic: a spec, a probe battery and the stored regressions in, a
`GatePlan` out; nothing here runs a container. The stages, in order:

1. **states** — the reference chain (``prefix-1`` … ``prefix-(n-1)``, then ``oracle``, one
   sandbox), the no-op, each authored partial solution and each regression state, every
   one verified as soon as it is captured;
2. **after a passing oracle** — the probes on the no-op and on every unsolved state, the
   traced probes, the omissions (the reference with one step left out) and the probes
   built from what the oracle wrote (`oracle_probes`): none is worth producing before the
   oracle shows the verifier can accept the task at all;
3. **after every primary row** — the rows under a secondary runtime (``harbor:…``): the
   oracle, the no-op and each probe on the no-op.

What the oracle wrote decides some rows (derived probes, omissions whose step changes no
deciding file): the plan names those as *possible*; `oracle_probes` builds them from the
oracle's workspace, again without a container.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from envfactory.core.models import (
    CheckKind,
    EnvironmentSpec,
    Semantics,
    StateKind,
    StateRef,
    Step,
    VerifyScope,
)
from envfactory.core.models.rows import RowId

from ..omissions import omission_chains
from ..probes import (
    FieldsDropped,
    GitHookReplay,
    HollowCommits,
    Probe,
    TruncatedOutputs,
    UncommittedResult,
    superset_lines,
)
from ..probes.alternatives import alternatives_for
from ..probes.database import database_changes
from ..probes.numbers import CandidateFlood, CentsOff, asks_for_cents, perturbed_numbers
from ..probes.other_records import other_records_probes
from ..probes.records import record_probes
from ..probes.rows import row_probes
from ..probes.tools import ToolReplay, loads_of
from ..probes.undone import named_programs, undone_files
from ..probes.visible import VisibleExamplesOnly
from ..probes.workspace import Workspace, file_bytes, mentioned_paths, without_paths

#: the secondary runtime a task may also declare (its rows run after the primary ones)
HARBOR: Semantics = "harbor"


@dataclass(frozen=True)
class GateOptions:
    """What the caller switched on or off (from `GateInput`)."""

    omissions: bool = True
    derived_probes: bool = True
    traced_probes: bool = False


@dataclass(frozen=True)
class GatePlan:
    """The rows a task has and how its states are produced."""

    primary: Semantics
    chain: tuple[RowId, ...]  # the reference's prefixes, then the oracle
    partials: tuple[tuple[RowId, tuple[Step, ...]], ...]
    regressions: tuple[tuple[RowId, StateRef], ...]
    omissions: tuple[tuple[RowId, tuple[Step, ...]], ...]  # produced after a passing oracle
    probes: tuple[Probe, ...]  # the static battery (traced probes join it later)
    secondary: Semantics | None  # the runtime whose rows run after every primary row
    batch_probes: bool  # a base's probes are produced in one sandbox (workspace scope)
    standby: bool  # verified by exec in containers started ahead (full-state recipes)
    derived: bool  # probes built from what the oracle wrote (its workspace files, any scope)
    live_databases: bool  # probes on the rows of database clusters the oracle wrote
    traced: bool  # a traced-probe builder was given (it runs under envfactory only)
    total: int  # rows, as far as they can be known before the oracle ran
    notes: tuple[str, ...]

    @property
    def unsolved(self) -> int:
        """States the probes run on besides the no-op (prefixes and partials)."""
        return len(self.chain) - 1 + len(self.partials)

    @property
    def probes_follow(self) -> bool:
        """Whether probes will run on the unsolved states (the battery has some)."""
        return bool(self.probes) or self.traced


def plan_gates(
    spec: EnvironmentSpec,
    probes: Sequence[Probe],
    regressions: Sequence[StateRef] = (),
    options: GateOptions = GateOptions(),
) -> GatePlan:
    steps = spec.reference_solution
    primary: Semantics = spec.semantics[0] if spec.semantics else "envfactory"
    envfactory = primary == "envfactory"
    workspace = spec.verify_scope == VerifyScope.WORKSPACE
    chain = (*(RowId.prefix(i + 1) for i in range(len(steps) - 1)), RowId.oracle())
    omits = options.omissions and envfactory and workspace
    omissions = tuple(omission_chains(steps)) if omits else ()
    plan = GatePlan(
        primary=primary,
        chain=chain,
        partials=tuple((RowId.partial(p.name), p.steps) for p in spec.partial_solutions),
        regressions=tuple((regression_row(ref), ref) for ref in regressions),
        omissions=omissions,
        probes=tuple(probes),
        secondary=HARBOR if envfactory and HARBOR in spec.semantics else None,
        batch_probes=workspace and envfactory,
        standby=primary != HARBOR and spec.verify_scope == VerifyScope.FULL_STATE,
        derived=options.derived_probes and envfactory,
        live_databases=options.derived_probes and envfactory and not workspace,
        traced=options.traced_probes,
        total=0,
        notes=_families_not_run(spec, options, envfactory, workspace)
        + (("one-block reference solution: no prefix states to check",) if len(steps) <= 1 else ()),
    )
    return _with_total(plan)


#: the probe families built from the oracle's workspace outputs (`oracle_probes`)
DERIVED_FAMILIES = (
    "truncation, fields, numbers, supersets, records, undone files, visible examples, "
    "candidate flood, git history, SQLite rows, alternatives and tolerances"
)


def _families_not_run(
    spec: EnvironmentSpec, options: GateOptions, envfactory: bool, workspace: bool
) -> tuple[str, ...]:
    """What the report says of the probe families this plan leaves out, and why: a family
    that did not run is never silent (DESIGN.md, invariant 7)."""
    if not spec.reference_solution:
        return ()
    if not options.derived_probes:
        return (f"not run: the probes built from the oracle's outputs ({DERIVED_FAMILIES}): "
                "switched off for this run",)  # fmt: skip
    if not envfactory:
        return (f"not run: the probes built from the oracle's outputs ({DERIVED_FAMILIES}) "
                "and the omissions: they run under envfactory's runtime only",)  # fmt: skip
    if not workspace:
        return ("not run: the omissions (the reference with one step left out) and "
                "inputs-minimal: they compare workspace states, and full-state states are "
                "verified from their recipes",)  # fmt: skip
    return ()


def _with_total(plan: GatePlan) -> GatePlan:
    n_unsolved = plan.unsolved
    n_states = 2 + n_unsolved + len(plan.regressions)
    total = n_states + sum(1 if p.noop_only else 1 + n_unsolved for p in plan.probes)
    if plan.secondary:
        total += 2 + len(plan.probes)
    total += len(plan.omissions)
    return replace(plan, total=total)


def regression_row(ref: StateRef) -> RowId:
    return RowId.regression(ref.label or ref.image[:19])


def probes_for(base: StateKind, probes: Sequence[Probe]) -> tuple[Probe, ...]:
    """The probes that run on a base state: all on the no-op, the others skip the
    no-op-only ones (their attack does not depend on how far the work got)."""
    if base == StateKind.PRISTINE:
        return tuple(probes)
    return tuple(p for p in probes if not p.noop_only)


def secondary_rows(
    semantics: Semantics, probes: Sequence[Probe]
) -> tuple[tuple[RowId, CheckKind], ...]:
    """The rows under a secondary runtime: its oracle, its no-op, each probe on the no-op."""
    rows = [(RowId.oracle(), CheckKind.ORACLE), (RowId.noop(), CheckKind.NOOP)]
    rows += [(RowId.probe_on(p.name, RowId.noop()), CheckKind.PROBE) for p in probes]
    return tuple((row.under(semantics), kind) for row, kind in rows)


@dataclass(frozen=True)
class OracleProbes:
    """The probes built from what the oracle wrote."""

    on_oracle: tuple[Probe, ...]  # its outputs cut, fields dropped, numbers changed, padded,
    # left uncommitted or hollow, one file left undone, its changes made to other records
    on_noop: tuple[Probe, ...]  # its programs and outputs flooded on the untouched state, its
    # files replayed by the repository's hooks and by the verifier's tools (traced loads)
    recompute: bool  # the reference run again on minimal inputs
    alternatives: tuple[Probe, ...] = ()  # other correct final states, on the oracle
    #: changes the instruction does not rule out (records reordered, one duplicated): on
    #: the oracle, expected 0, a 1 is a warning
    tolerances: tuple[Probe, ...] = ()


def oracle_probes(
    oracle: Workspace, pristine: Workspace, spec: EnvironmentSpec, probes: Sequence[Probe]
) -> OracleProbes:
    """What the oracle's outputs (`oracle` against `pristine`, workspace tars) give to
    attack. Empty when the battery has no probes."""
    if not probes:
        return OracleProbes((), (), False)
    oracle = without_paths(oracle, spec.ungraded_paths)  # the task grades none of them
    pristine = without_paths(pristine, spec.ungraded_paths)
    after, before = file_bytes(oracle), file_bytes(pristine)
    cut, prose = TruncatedOutputs.for_oracle(oracle, pristine).without_prose(
        after, spec.instruction
    )
    named = mentioned_paths(spec.instruction, spec.workdir)
    cut, by_products = cut.without_by_products(named, named_programs(oracle, pristine, named))
    dropped = FieldsDropped.for_oracle(oracle, pristine)
    on_oracle: tuple[Probe, ...] = ((cut,) if cut.paths else ()) + (
        (dropped,) if dropped.files else ()
    )
    numbers = perturbed_numbers(oracle, pristine, spec.instruction, spec.workdir)
    cents = tuple(p for p in numbers if isinstance(p, CentsOff))
    exact = asks_for_cents(spec.instruction)
    on_oracle += tuple(p for p in numbers if exact or not isinstance(p, CentsOff))
    on_oracle += superset_lines(oracle, pristine, spec.instruction, spec.workdir)
    flood = CandidateFlood.for_oracle(oracle, pristine, spec.instruction, spec.workdir)
    on_noop: tuple[Probe, ...] = (flood,) if flood.applies else ()
    uncommitted = UncommittedResult.for_states(after, before)
    on_oracle += (uncommitted, HollowCommits(uncommitted.repos)) if uncommitted.repos else ()
    on_oracle += undone_files(oracle, pristine, spec.instruction, spec.workdir)
    hooks = GitHookReplay.for_states(after, before)
    on_noop += (hooks,) if hooks.applies else ()
    tools = ToolReplay.for_states(loads_of(probes), after, before)
    on_noop += (tools,) if tools.applies else ()
    lookup = VisibleExamplesOnly.for_states(oracle, pristine, spec.workdir)
    on_noop += (lookup,) if lookup.applies else ()
    databases = database_changes(oracle, pristine)
    on_oracle += row_probes(databases)
    on_oracle += other_records_probes(oracle, pristine)
    required, tolerated = record_probes(oracle, pristine, spec, databases)
    return OracleProbes(
        on_oracle + required,
        on_noop,
        any(p.name == "inputs-minimal" for p in probes),
        alternatives_for(oracle, pristine),
        tolerated + tuple(t for t in (prose, by_products) if t.paths) + (() if exact else cents),
    )


_KIND_ORDER = {
    k: i
    for i, k in enumerate(
        [
            CheckKind.ORACLE,
            CheckKind.NOOP,
            CheckKind.UNSOLVED,
            CheckKind.PROBE,
            CheckKind.REGRESSION,
        ]
    )
}


def report_order(row: RowId, kind: CheckKind) -> tuple[bool, int, str]:
    """Where a row sits in the report: primary rows first, by kind, then by state name."""
    return (row.semantics is not None, _KIND_ORDER.get(kind, 9), str(row.state))
