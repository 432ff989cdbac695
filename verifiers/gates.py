"""The gates: the property test a verifier must pass before its reward is published.

Checks (all runs of a check must agree with the expected reward; how many runs: see
"Repeats" below):
oracle → 1; no-op → 0; every proper prefix of the reference steps → 0; every authored
partial solution → 0; the reference with one step left out → 0 where that step changes a
file that decides the task (`verifiers.omissions`); every probe on the no-op state and on
every unsolved state → 0; the probes built from what the oracle wrote (its outputs cut short,
their fields dropped, their numbers zeroed or scaled: on the oracle; its programs and named
outputs replaced by a flood of candidate answers: on the no-op) → 0; every stored
regression state → 0. A failed gate is a result (a failing `GateCheck`
with its evidence), never an exception; an engine failure is an exception. A sandbox
that cannot run a verification (`SandboxBroken`) is retried once in a fresh one, then
raised as the engine's failure naming the check — never recorded as a reward 0, which
would pass the rows that expect 0.

Repeats: the oracle, the no-op and every state no probe will run on (omission and
regression states; unsolved states when the battery has no probes) run R times: a verifier
that checks some things only in some runs (random spot checks, the clock, set order,
load) shows it on them. An unsolved state that probes will run on runs once: each of its
probe rows is the same state plus a change, so the verifier is asked about it again a
dozen times, and a run that lets part of the work go unchecked shows there as an
unexpected 1 (benchmarks/flaky_detection.py measures that detection does not drop).
Probe rows, the many, run once. Any row runs R times when its first result is unexpected,
and once the verifier has disagreed with itself anywhere every row is brought up to R.
Secondary (harbor) rows run once.

Order and early verdicts: the oracle settles first. A reference step that fails stops
its chain at once (`GateReport.reference_failure`, verdict ``reference-failed``); an
oracle the verifier rejects settles the verdict too (``verifier-unrunnable`` when its
output shows a missing tool, module, Python or network; else ``rejected``). Either way
the checks that need a working oracle are skipped and listed as skipped. Probes wait for
the oracle to pass, so the traced probes (`GateInput.traced_probes`, built from the
verifier's run on the oracle state) join the static ones. A secondary semantics settles
early too: its rows are queued once every primary row is done, and none runs when a
primary row failed (the verdict is a rejection, safe under no runtime); once one of its
rows fails, that runtime is refused (its export) and its rows not started by then are
skipped. Skipped rows are listed as skipped. Primary rows always all run: each failing
one is a finding for review.

Semantics: every row runs under the first of `spec.semantics`; when a task also declares
``harbor`` (imported Harbor / Terminal-Bench tasks, Harbor exports), the oracle, the
no-op and every probe on the no-op state run again as in Harbor's runtime (the solver's
own container, see `verifiers.runner`), as rows named ``harbor:…``.

Cost model: states are produced once (`verifiers.states`) and each verification is one
fresh container running the verification as its own command (`verifiers.runner`; a
full-state recipe's containers, verified by exec, come from the engine's standby,
`sandboxes.standby`: started ahead of demand, each used once). Everything runs on one
bounded thread pool: a state's verifications are queued the moment it is captured, and
container removal happens off the critical path. Two probe states whose verification inputs are
byte-identical (same image, same workspace bytes, same tamper evidence) are verified
once and the result is shared — the verifier cannot tell them apart. (Session 8 also let a
harbor probe row whose replay changed no file share the no-op's result; session 9 removed
that: a root process in the verifier's own container can leave state no listing covers —
kernel tables, sockets, cgroup files, directory metadata — so the row is verified.)
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace

from envfactory.core.errors import SandboxBroken
from envfactory.core.models import (
    CheckKind,
    EnvironmentSpec,
    GateCheck,
    GateReport,
    Reward,
    Semantics,
    SkippedCheck,
    StateKind,
    StateRef,
    Step,
    StepFailure,
    TaskVerdict,
    Verifier,
    VerifyScope,
)
from sandboxes.protocol import Sandbox, SandboxEngine

from .evidence import check_evidence
from .omissions import decisive_changes, omission_chains
from .probes import PROBES, FieldsDropped, Probe, TruncatedOutputs, by_name, superset_lines
from .probes.inputs import RECOMPUTED, changed_outputs, recomputed_steps
from .probes.numbers import CandidateFlood, perturbed_numbers
from .runner import (
    KILLS_ALL,
    PreparedState,
    Replay,
    VerifyResult,
    verifier_tar,
    verify_prepared,
)
from .states import (
    ProducedState,
    ReferenceStepFailed,
    pristine_state,
    probe_replay,
    produce_chain,
    produce_probe,
    produce_probe_batch,
    regression_state,
)

Progress = Callable[[int, int, str], None]  # (done, total, what just finished)
#: (the oracle state as verified, verifier files) → probes planted where the verifier looks
TracedProbes = Callable[[PreparedState, dict[str, tuple[bytes, int]]], tuple[Probe, ...]]
#: probes that act through a live process: in Harbor's runtime no verifier can stop them
#: (the harness lets solver processes live), so harbor rows end every process first
_PROCESS_PROBES = ("delayed-rewrite", "forged-output")


@dataclass(frozen=True)
class GateInput:
    engine: SandboxEngine
    spec: EnvironmentSpec
    verifier: Verifier
    files: Callable[[str], bytes]  # artifact key → bytes (the artifact store's `get`)
    image: str  # the built, pristine environment image
    repeats: int = 3
    regressions: tuple[StateRef, ...] = ()
    probes: tuple[Probe, ...] = PROBES
    concurrency: int = 2  # settings.sandbox.pool_size at the edge
    progress: Progress | None = None
    #: the image verification containers start from (the task image plus what the
    #: verifier needs offline, `verifiers.deps`); None: the pristine image itself
    verify_image: str | None = None
    #: what the verification layer could not provide (named in an unrunnable verdict)
    missing: tuple[str, ...] = ()
    provided: tuple[str, ...] = ()
    traced_probes: TracedProbes | None = None
    #: False: every row runs `repeats` times (the benchmark's baseline for flakiness)
    adaptive_repeats: bool = True
    #: check the reference with each step but the last left out (`verifiers.omissions`)
    omissions: bool = True
    #: probes built from what the oracle wrote (its outputs cut, JSON fields dropped, the
    #: reference run on minimal inputs)
    derived_probes: bool = True
    #: skip the secondary (harbor) rows that can no longer change a verdict; False: every
    #: row runs (a test that looks at each one)
    settle_early: bool = True


@dataclass
class CheckTiming:
    """What one check cost (for the throughput benchmark)."""

    name: str
    produce_s: float
    verify_s: list[float] = field(default_factory=list)  # each repeat, container to reward
    command_s: list[float] = field(default_factory=list)  # each repeat, the entry command
    shared_with: str | None = None  # verified once with an identical state


@dataclass
class GateRun:
    report: GateReport
    timings: list[CheckTiming]
    states: dict[str, ProducedState]
    results: dict[str, list[VerifyResult]]
    wall_s: float = 0.0
    #: what each row actually verified (layer image swapped in, harbor replay), by row name:
    #: the mutation score re-verifies exactly these (verifiers.mutation)
    prepared: dict[str, PreparedState] = field(default_factory=dict)


@dataclass(eq=False)
class _Check:
    kind: CheckKind
    expected: Reward
    state: ProducedState
    probe: Probe | None = None
    semantics: Semantics = "envfactory"
    prepared: PreparedState | None = None  # what is verified (default: state.prepared)
    repeats: int = 1
    secondary: bool = False  # a row under the task's other semantics (named "harbor:…")

    @property
    def name(self) -> str:
        return f"{self.semantics}:{self.state.name}" if self.secondary else self.state.name


def run_gates(inp: GateInput) -> GateReport:
    """Run every gate for one verifier; the report's verdict lists every failing reason."""
    return run_gates_detailed(inp).report


def run_gates_detailed(inp: GateInput) -> GateRun:
    run = _GateRunner(inp).run()
    return _harbor_only(inp, run) or run


def _harbor_only(inp: GateInput, run: GateRun) -> GateRun | None:
    """The task gated again under Harbor's runtime alone, when the evidence says that is
    the only runtime its tests work in: declared for both runtimes, the reference solution's
    state fails them in envfactory's (a fresh container, no process kept; in workspace scope
    only the workspace) and passes in Harbor's (the solver's own container, its processes
    kept) — tests that query a service the solver started, or read what the workspace
    leaves out. None otherwise: the first run stands. Decided by running the tests, never
    by what their text mentions (a test naming ``127.0.0.1:9090`` as data must not trade
    envfactory's battery for Harbor's smaller one)."""
    semantics = inp.spec.semantics
    if semantics[:1] != ("envfactory",) or "harbor" not in semantics:
        return None
    if not _oracle_failed(run.report, "envfactory"):
        return None
    harbor = replace(inp, spec=inp.spec.model_copy(update={"semantics": ("harbor",)}))
    again = _GateRunner(harbor).run()
    if _oracle_failed(again.report, "harbor") or not _oracle_row(again.report, "harbor"):
        return None  # the reference fails in both runtimes: the first verdict stands
    why = run.report.reasons[0] if run.report.reasons else "its oracle row failed"
    note = (
        "gated under harbor semantics only: the reference solution's state fails the tests "
        f"in envfactory's runtime ({why}) and passes in Harbor's (the solver's own "
        "container, its processes kept)"
    )
    again.report = again.report.model_copy(
        update={"notes": tuple(sorted({*again.report.notes, note}))}
    )
    again.wall_s += run.wall_s
    return again


def _oracle_row(report: GateReport, semantics: Semantics) -> GateCheck | None:
    return next(
        (c for c in report.checks if c.kind == CheckKind.ORACLE and c.semantics == semantics),
        None,
    )


def _oracle_failed(report: GateReport, semantics: Semantics) -> bool:
    """The tests rejected the reference solution's own state under `semantics` — a
    rejection, or a verifier that looked unrunnable (its output named a network it could
    not reach: stock Terminal-Bench test.sh tries to install its tools before failing for
    want of the solver's server). Not a failed reference step: that has no oracle row."""
    row = _oracle_row(report, semantics)
    return (
        report.outcome in (TaskVerdict.REJECTED, TaskVerdict.VERIFIER_UNRUNNABLE)
        and row is not None
        and any(r != row.expected for r in row.observed)
    )


class _GateRunner:
    def __init__(self, inp: GateInput) -> None:
        self.inp = inp
        self.spec = inp.spec
        self.primary: Semantics = inp.spec.semantics[0] if inp.spec.semantics else "envfactory"
        self.vfiles = verifier_tar(inp.verifier, inp.files)
        self.pool = ThreadPoolExecutor(max(1, inp.concurrency), thread_name_prefix="gate")
        self.reaper = ThreadPoolExecutor(2, thread_name_prefix="gate-rm")
        self.lock = threading.Lock()
        self.pending: list[Future[object]] = []
        self.checks: list[_Check] = []
        self.results: dict[str, list[VerifyResult]] = {}
        self.shared: dict[str, str] = {}  # check name → the identical check verified instead
        self.by_input: dict[str, str] = {}
        self.notes: list[str] = []
        self.noop: ProducedState | None = None  # the pristine state, once produced
        self.disagreed = False  # some row got different rewards on the same input
        self.ticked: set[str] = set()  # rows counted as done in the progress
        self.noop_ready = threading.Event()
        self.total = self.done = 0
        self.probes: tuple[Probe, ...] = inp.probes
        self.waiting: list[ProducedState] = []  # bases whose probes wait for the oracle
        self.oracle: ProducedState | None = None
        self.oracle_ok: bool | None = None  # None: not settled yet
        self.reference_failure: StepFailure | None = None
        self.unrunnable: tuple[str, ...] = ()
        self.skipped: list[SkippedCheck] = []
        self.expected: frozenset[str] = frozenset()  # paths the oracle changes
        #: why a secondary semantics' rows can no longer change its verdict (by semantics;
        #: "*": the primary verdict is a rejection, so no other runtime is safe either)
        self.moot: dict[str, str] = {}

    # -- planning -------------------------------------------------------------------------

    def run(self) -> GateRun:
        t0 = time.monotonic()
        spec = self.spec
        if len(spec.reference_solution) <= 1:
            self.notes.append("one-block reference solution: no prefix states to check")
        self.total = self._planned_total()
        with self._standby():  # ends after the removals: what it started meanwhile is done
            try:
                self._spawn(self._produce_reference)  # then partials and regressions
                self._spawn(self._produce_noop)
                self._drain()
                if self._harbor_rows() and self.oracle_ok:
                    self._harbor_checks()  # after every primary row: see its docstring
                    self._drain()
                self._last_tick()
            finally:
                self.pool.shutdown(wait=True)
                self.reaper.shutdown(wait=True)
        return self._finish(time.monotonic() - t0)

    @contextlib.contextmanager
    def _standby(self) -> Iterator[None]:
        """Containers started ahead of demand (`sandboxes.standby`) for the rows verified
        by exec: envfactory's full-state recipes, replayed and restarted first. Every other
        row's container runs its verification as its own command (`runner.one_shot`),
        which nothing started ahead could serve. Removed when the run ends."""
        if self.primary == "harbor" or self.spec.verify_scope != VerifyScope.FULL_STATE:
            yield
            return
        with self.inp.engine.standby(
            self.inp.verify_image or self.inp.image,
            limits=self.spec.limits,
            purpose="verify",
            network=False,
        ):
            yield

    def _planned_total(self) -> int:
        n_unsolved = max(len(self.spec.reference_solution) - 1, 0) + len(
            self.spec.partial_solutions
        )
        n_states = 2 + n_unsolved + len(self.inp.regressions)
        total = n_states + sum(1 if p.noop_only else 1 + n_unsolved for p in self.inp.probes)
        if self._harbor_rows():
            total += 2 + len(self.inp.probes)
        if self._omissions_apply():
            total += len(omission_chains(self.spec.reference_solution))
        return total

    def _omissions_apply(self) -> bool:
        return (
            self.inp.omissions
            and self.primary == "envfactory"
            and self.spec.verify_scope == VerifyScope.WORKSPACE
        )

    def _harbor_rows(self) -> bool:
        return self.primary == "envfactory" and "harbor" in self.spec.semantics

    def _produce_noop(self) -> None:
        try:
            self.noop = pristine_state(self.inp.engine, self.inp.image, self.spec)
        finally:
            self.noop_ready.set()
        self._on_state(self.noop, CheckKind.NOOP, 0)

    def _produce_reference(self) -> None:
        steps = self.spec.reference_solution
        n = len(steps)
        names = [f"prefix-{i + 1}" for i in range(n - 1)] + ["oracle"]
        kinds = [StateKind.PARTIAL] * (n - 1) + [StateKind.ORACLE]
        chain: list[ProducedState] = []
        try:
            for st in produce_chain(
                self.inp.engine,
                self.inp.image,
                self.spec,
                steps,
                names=names,
                kinds=kinds,
                stop_on_failure=True,
            ):
                if st.kind == StateKind.ORACLE:
                    self.oracle = st
                    self.expected = frozenset(c.path for c in st.diff)
                chain.append(st)
        except ReferenceStepFailed as failed:
            self.reference_failure = failed.failure
            self._settle(False, f"the reference solution failed at step {failed.failure.step}")
            return
        for st in chain:  # after the oracle: its changes are what the task asks for
            if st.kind == StateKind.ORACLE:
                self._on_state(st, CheckKind.ORACLE, 1)
            else:
                self._on_state(st, CheckKind.UNSOLVED, 0)
        for partial in self.spec.partial_solutions:
            self._spawn(self._produce_partial, partial.name, partial.steps)
        for ref in self.inp.regressions:
            self._spawn(self._produce_regression, ref)

    def _produce_partial(self, name: str, steps: Sequence[Step]) -> None:
        if self._settled_badly():
            return
        names: list[str | None] = [None] * (len(steps) - 1) + [f"partial:{name}"]
        (st,) = produce_chain(
            self.inp.engine,
            self.inp.image,
            self.spec,
            steps,
            names=names,
            kinds=[StateKind.PARTIAL] * len(steps),
        )
        self._on_state(st, CheckKind.UNSOLVED, 0)

    def _produce_regression(self, ref: StateRef) -> None:
        if self._settled_badly():
            return
        self._on_state(
            regression_state(self.inp.engine, self.inp.image, self.spec, ref),
            CheckKind.REGRESSION,
            0,
        )

    def _produce_probes(self, base: ProducedState, probes: tuple[Probe, ...]) -> None:
        if self._settled_badly():
            return
        if base.kind != StateKind.PRISTINE:
            probes = tuple(p for p in probes if not p.noop_only)
        if not probes:
            return
        by = {p.name: p for p in probes}
        if self.spec.verify_scope == VerifyScope.WORKSPACE and self.primary == "envfactory":
            for st in produce_probe_batch(self.inp.engine, self.inp.image, self.spec, base, probes):
                self._on_state(
                    st, CheckKind.PROBE, 0, by[st.name.split(":", 1)[1].split("@", 1)[0]]
                )
            return
        for p in probes:
            self._spawn(self._produce_probe, base, p)

    def _produce_probe(self, base: ProducedState, probe: Probe) -> None:
        if self._settled_badly():
            return
        st = produce_probe(self.inp.engine, self.inp.image, self.spec, base, probe, self.primary)
        self._on_state(st, CheckKind.PROBE, 0, probe)
        self._note_harness_limit(probe, self.primary)

    # -- the oracle settles first ---------------------------------------------------------

    def _settled_badly(self) -> bool:
        with self.lock:
            return self.oracle_ok is False

    def _settle(self, ok: bool, why: str = "") -> None:
        """The oracle's verdict is in: release the waiting probes, or skip what needs it."""
        with self.lock:
            if self.oracle_ok is not None:
                return
            self.oracle_ok = ok
            waiting, self.waiting = self.waiting, []
        if not ok:
            self._skip_rest(why)
            return
        if (
            self.inp.traced_probes is not None
            and self.oracle is not None
            and self.primary == "envfactory"
        ):
            traced = self.inp.traced_probes(self._prepared(self.oracle, "envfactory"), self.vfiles)
            self.probes = (*self.probes, *traced)
        for base in waiting:
            self._spawn(self._produce_probes, base, self.probes)
        self._spawn(self._spawn_oracle_probes)

    def _skip_rest(self, why: str) -> None:
        n_unsolved = max(len(self.spec.reference_solution) - 1, 0) + len(
            self.spec.partial_solutions
        )
        self.skipped.append(
            SkippedCheck(
                name=f"{len(self.probes)} probes on each of {1 + n_unsolved} states",
                why=why,
            )
        )
        with self.lock:
            self.total = self.done

    def _oracle_verified(self, results: Sequence[VerifyResult]) -> None:
        if all(r.reward == 1 for r in results):
            self._settle(True)
            return
        signs = unrunnable_signs(results, self.inp.missing)
        if signs:
            self.unrunnable = signs
        self._settle(False, "the verifier rejects the reference solution's state")

    # -- harbor rows ----------------------------------------------------------------------

    def _harbor_checks(self) -> None:
        """The oracle, the no-op and each probe on the no-op, as in Harbor's runtime.

        Queued once every primary row is done: a rejection there leaves no runtime safe,
        so then none of these can change a verdict and each is skipped (`_moot`); queued
        beside the primary rows they ran first (they need no state produced) and a
        rejected verifier paid for all of them."""
        assert self.oracle is not None
        noop = ProducedState("no-op", StateKind.PRISTINE, self._harbor_prepared(()), ())
        self._on_state(self.oracle, CheckKind.ORACLE, 1, semantics="harbor")
        self._on_state(noop, CheckKind.NOOP, 0, semantics="harbor")
        for probe in self.probes:
            recipe = (probe_replay(probe, self.spec, "harbor"),)
            st = ProducedState(
                f"probe:{probe.name}@no-op",
                StateKind.PROBE,
                self._harbor_prepared(recipe, kill=True),
                recipe,
            )
            self._on_state(st, CheckKind.PROBE, 0, probe, semantics="harbor")
        self.notes.append(
            "under harbor semantics a process the solver leaves running can rewrite the tests "
            "or the reward file during verification; no verifier can prevent that in Harbor's "
            "runtime (harbor probe rows end every process first); envfactory's runtime ends "
            "every solver process"
        )

    def _spawn_oracle_probes(self) -> None:
        """States built from what the reference solution produced: the reference with one
        step left out, and probes applied to the oracle."""
        if self.oracle is None or self.primary != "envfactory":
            return
        if self.spec.verify_scope != VerifyScope.WORKSPACE:
            return
        self.noop_ready.wait()
        if self.noop is None:
            return
        if self._omissions_apply():
            for name, steps in omission_chains(self.spec.reference_solution):
                self._spawn(self._produce_omission, name, steps)
        if not self.probes or not self.inp.derived_probes:
            return
        oracle, pristine = self.oracle.prepared.workspace, self.noop.prepared.workspace
        cut = TruncatedOutputs.for_oracle(oracle, pristine)
        dropped = FieldsDropped.for_oracle(oracle, pristine)
        on_oracle: tuple[Probe, ...] = ((cut,) if cut.paths else ()) + (
            (dropped,) if dropped.files else ()
        )
        on_oracle += perturbed_numbers(oracle, pristine, self.spec.instruction, self.spec.workdir)
        on_oracle += superset_lines(oracle, pristine, self.spec.instruction, self.spec.workdir)
        if on_oracle:
            self._spawn(self._produce_probes, self.oracle, on_oracle)
        flood = CandidateFlood.for_oracle(
            oracle, pristine, self.spec.instruction, self.spec.workdir
        )
        if flood.applies:  # the programs and outputs the oracle wrote, flooded on the no-op
            self._spawn(self._produce_probes, self.noop, (flood,))
        if any(p.name == "inputs-minimal" for p in self.probes):
            self._spawn(self._produce_recomputed)

    def _produce_recomputed(self) -> None:
        """The reference solution run on minimal inputs (`probes.inputs.recomputed_steps`),
        verified when its outputs differ from the oracle's."""
        assert self.oracle is not None and self.noop is not None
        steps = recomputed_steps(self.spec)
        names: list[str | None] = [None] * (len(steps) - 1) + [RECOMPUTED]
        (st,) = produce_chain(
            self.inp.engine,
            self.inp.image,
            self.spec,
            steps,
            names=names,
            kinds=[StateKind.PROBE] * len(steps),
        )
        changed = changed_outputs(
            st.prepared.workspace, self.oracle.prepared.workspace, self.noop.prepared.workspace
        )
        if changed:
            with self.lock:
                self.notes.append(
                    f"{RECOMPUTED} checked: from minimal inputs the reference solution wrote "
                    f"other bytes to {', '.join(changed[:5])}" + (" …" if len(changed) > 5 else "")
                )
            self._on_state(st, CheckKind.PROBE, 0, by_name("inputs-minimal"))
        else:
            with self.lock:
                self.notes.append(
                    f"{RECOMPUTED} not checked: the reference solution wrote the oracle's "
                    "outputs from minimal inputs (the inputs do not feed the answer)"
                )

    def _produce_omission(self, name: str, steps: Sequence[Step]) -> None:
        """The reference with one step left out, checked (expected 0, no probes on top) when
        it differs from the oracle in a file that decides the task."""
        assert self.oracle is not None and self.noop is not None
        names: list[str | None] = [None] * (len(steps) - 1) + [name]
        kinds = [StateKind.PARTIAL] * len(steps)
        (st,) = produce_chain(
            self.inp.engine, self.inp.image, self.spec, steps, names=names, kinds=kinds
        )
        decisive = decisive_changes(
            st.prepared.workspace,
            self.oracle.prepared.workspace,
            self.noop.prepared.workspace,
            self.spec.instruction,
            self.spec.workdir,
        )
        if decisive:
            self._on_state(st, CheckKind.UNSOLVED, 0, queue_probes=False)
            return
        with self.lock:
            self.notes.append(
                f"{name} not checked: leaving that step out changes no file the task started "
                "with or the instruction names (the step looks incidental)"
            )

    def _note_harness_limit(self, probe: Probe, semantics: str) -> None:
        """Say what the probe left out under `semantics` because no verifier can resist it."""
        limit = probe.harness_limits.get(semantics)
        if limit:
            with self.lock:
                self.notes.append(limit)

    def _harbor_prepared(self, recipe: tuple[Replay, ...], *, kill: bool = False) -> PreparedState:
        image = self.inp.verify_image or self.inp.image
        replay = (*recipe, KILLS_ALL) if kill and recipe else recipe
        return PreparedState(image, VerifyScope.FULL_STATE, replay=replay, semantics="harbor")

    # -- scheduling -----------------------------------------------------------------------

    def _on_state(
        self,
        st: ProducedState,
        kind: CheckKind,
        expected: Reward,
        probe: Probe | None = None,
        *,
        semantics: Semantics | None = None,
        queue_probes: bool = True,
    ) -> None:
        semantics = semantics or self.primary
        secondary = semantics != self.primary
        prepared = self._prepared(st, semantics)
        check = _Check(kind, expected, st, probe, semantics, prepared, 1, secondary)
        key = _input_key(prepared)
        with self.lock:
            twin = self.by_input.get(key) if kind == CheckKind.PROBE else None
            if twin is not None and self._rewarded(twin):
                # the probe changed nothing the verifier sees: the oracle's own state
                self.notes.append(
                    f"{check.name}: the probe left the oracle's state as it was "
                    "(nothing for it to attack): not checked"
                )
                return
            resampled = queue_probes and kind == CheckKind.UNSOLVED and self._probes_follow()
            check.repeats = runs = self._first_repeats(kind, secondary, resampled)
            self.checks.append(check)
            if twin is None:
                self.by_input.setdefault(key, check.name)
                self.results[check.name] = []
            else:
                self.shared[check.name] = twin
        if twin is None:
            for _ in range(runs):  # `check.repeats` may grow meanwhile (`_escalate`)
                self._spawn(self._verify, check)
        else:
            self._tick(check.name)
        if queue_probes and not secondary and probe is None:
            if kind in (CheckKind.NOOP, CheckKind.UNSOLVED):
                self._queue_probes(st)

    def _rewarded(self, name: str) -> bool:
        """Whether the check `name` expects reward 1 (under the lock)."""
        return any(c.name == name and c.expected == 1 for c in self.checks)

    def _prepared(self, st: ProducedState, semantics: Semantics) -> PreparedState:
        """What to verify for a state: the layer image swapped in, harbor rows replayed."""
        if semantics == "harbor" or self.primary == "harbor":
            if st.prepared.semantics == "harbor":
                return st.prepared
            keep = st.kind in (StateKind.ORACLE, StateKind.PARTIAL, StateKind.PRISTINE)
            return self._harbor_prepared(st.recipe, kill=not keep)
        prepared = st.prepared
        if prepared.scope == VerifyScope.FULL_STATE and self.expected:
            kept = tuple(t for t in prepared.tamper if t.path not in self.expected)
            prepared = replace(prepared, tamper=kept, expected=self.expected)
        if self.inp.verify_image:
            prepared = replace(prepared, image=self.inp.verify_image)
        return prepared

    def _queue_probes(self, base: ProducedState) -> None:
        if not self.probes and self.inp.traced_probes is None:
            return
        with self.lock:
            ok = self.oracle_ok
            if ok is None:
                self.waiting.append(base)
        if ok:
            self._spawn(self._produce_probes, base, self.probes)

    def _verify(self, check: _Check) -> None:
        if self._settled_badly() and check.kind != CheckKind.ORACLE:
            return  # listed as skipped in the report
        if check.secondary and self._moot(check):
            self._tick(f"{check.name} skipped")
            return
        res = self._verify_once_more_if_broken(check)
        if check.secondary and check.probe is not None:  # what this row left out, if it ran
            self._note_harness_limit(check.probe, check.semantics)
        with self.lock:
            self.results[check.name].append(res)
            if res.reward != check.expected:
                self._settle_semantics(check)
            done = list(self.results[check.name])
            more = self._escalate(check, done) if len(done) == check.repeats else []
            complete = len(done) == check.repeats and check.name not in self.ticked
            if complete:
                self.ticked.add(check.name)
        for again, extra in more:
            for _ in range(extra):
                self._spawn(self._verify, again)
        if complete:
            self._tick(check.name)
            if check.kind == CheckKind.ORACLE and check.semantics == self.primary:
                self._oracle_verified(done)

    # -- a secondary semantics settles early ----------------------------------------------

    def _settle_semantics(self, failed: _Check) -> None:
        """A row got an unexpected reward (under the lock): it fails, whatever its other runs
        say. Under a secondary semantics one failing row refuses that runtime (its export);
        under the primary one the verdict is a rejection, which refuses every runtime. Either
        way the secondary rows not started yet cannot change a verdict: they are skipped."""
        key = failed.semantics if failed.secondary else "*"
        self.moot.setdefault(key, failed.name)

    def _moot(self, check: _Check) -> bool:
        if not self.inp.settle_early:
            return False
        with self.lock:
            return "*" in self.moot or check.semantics in self.moot

    def _skip_reason(self, check: _Check) -> str:
        """Why a row has no results (it was skipped before its first verification)."""
        if check.secondary and "*" in self.moot:
            return f"{self.moot['*']} failed: the verdict is a rejection under every runtime"
        if check.secondary and check.semantics in self.moot:
            failed = self.moot[check.semantics]
            return f"{failed} failed: the task is already unsafe under {check.semantics}"
        return "the oracle settled the verdict"

    # -- repeats where they tell something --------------------------------------------------

    def _first_repeats(self, kind: CheckKind, secondary: bool, resampled: bool = False) -> int:
        """How often a new row runs at first: the states R times (`repeats`: they are few,
        and where a verifier that checks some things only some of the time shows it),
        except an unsolved state its probe rows will resample (`resampled`); probe rows
        once; every row R times once the verifier has disagreed with itself; secondary
        rows once."""
        if secondary:
            return 1
        if self.disagreed or not self.inp.adaptive_repeats:  # R times from the start
            return self.inp.repeats
        if kind == CheckKind.PROBE or resampled:
            return 1
        return self.inp.repeats

    def _probes_follow(self) -> bool:
        """Whether probes will run on the unsolved states (the battery has some)."""
        return bool(self.probes) or self.inp.traced_probes is not None

    def _escalate(self, check: _Check, done: Sequence[VerifyResult]) -> list[tuple[_Check, int]]:
        """Rows to run up to `repeats` times now that `check` has its first results (under
        the lock), each with how many more runs it needs: `check` itself when its result
        was unexpected; every row planned fewer times once the verifier disagrees with
        itself."""
        full = self.inp.repeats
        if check.secondary or full <= 1:
            return []
        if len({r.reward for r in done}) > 1 and not self.disagreed:
            self.disagreed = True
            again = [
                c
                for c in self.checks
                if not c.secondary
                and c.repeats < full
                and c.name in self.results
                and c.name not in self.shared
            ]
        elif check.repeats < full and (done[0].reward != check.expected or self.disagreed):
            again = [check]
        else:
            return []
        out = [(c, full - c.repeats) for c in again]
        for c in again:
            c.repeats = full
        return out

    def _verify_once_more_if_broken(self, check: _Check) -> VerifyResult:
        """One verification; a sandbox that could not run it gets one more, fresh one.

        Never a reward 0 for a broken sandbox: a 0 would pass the no-op and probe rows,
        which expect 0. A sandbox broken twice is the engine's failure, raised with the
        check's name, so the gate run fails loudly and its activity is retried."""
        run = functools.partial(
            verify_prepared,
            self.inp.engine,
            check.prepared or check.state.prepared,
            spec=self.spec,
            verifier=self.inp.verifier,
            verifier_files=self.vfiles,
            remove=self._remove_later,
        )
        try:
            return run()
        except SandboxBroken as first:
            try:
                return run()
            except SandboxBroken as exc:
                raise SandboxBroken(
                    f"verifying {check.name}: twice, {exc.message}",
                    reason=exc.reason,
                    detail=exc.detail,
                    hint=exc.hint,
                ) from first

    def _remove_later(self, box: Sandbox) -> None:
        self.reaper.submit(box.remove)

    def _spawn(self, fn: Callable[..., object], *args: object) -> None:
        fut = self.pool.submit(fn, *args)
        with self.lock:
            self.pending.append(fut)

    def _drain(self) -> None:
        """Wait for every task, including the ones tasks queue; re-raise the first error."""
        i = 0
        while True:
            with self.lock:
                if i >= len(self.pending):
                    return
                fut = self.pending[i]
            fut.result()
            i += 1

    def _last_tick(self) -> None:
        """The plan is an estimate (rows appear and vanish with what the oracle wrote): end
        the progress at done == total."""
        with self.lock:
            changed, self.total = self.total != self.done, self.done
        if changed and self.inp.progress:
            self.inp.progress(self.done, self.done, "done")

    def _tick(self, what: str) -> None:
        with self.lock:
            self.done += 1
            self.total = max(self.total, self.done)
            done, total = self.done, self.total
        if self.inp.progress:
            self.inp.progress(done, total, what)

    # -- reporting ------------------------------------------------------------------------

    def _finish(self, wall_s: float) -> GateRun:
        rows, timings = [], []
        failed_bases = self._failed_bases()
        for c in sorted(self.checks, key=_order):
            res = self.results[self.shared.get(c.name, c.name)]
            if not res:
                self.skipped.append(SkippedCheck(name=c.name, why=self._skip_reason(c)))
                continue
            rows.append(self._row(c, res, failed_bases))
            timings.append(
                CheckTiming(
                    c.name,
                    c.state.produce_s,
                    [r.duration_s for r in res],
                    [r.command_s for r in res],
                    self.shared.get(c.name),
                )
            )
        if self.reference_failure is None and self.oracle is None and self.oracle_ok is None:
            self.notes.append("the reference solution produced no oracle state")
        report = GateReport(
            env_id=self.spec.id,
            verifier_version=self.inp.verifier.version,
            checks=tuple(rows),
            repeats=self.inp.repeats,
            notes=tuple(sorted(set(self.notes))),
            reference_failure=self.reference_failure,
            unrunnable=self.unrunnable,
            provided=self.inp.provided,
            skipped=tuple(self.skipped),
            semantics=self.spec.semantics or ("envfactory",),
        )
        states = {c.name: c.state for c in self.checks}
        prepared = {c.name: c.prepared or c.state.prepared for c in self.checks}
        return GateRun(report, timings, states, self.results, wall_s, prepared)

    def _failed_bases(self) -> set[str]:
        """Unsolved states the verifier already accepts (their probes' failures derive)."""
        out = set()
        for c in self.checks:
            res = self.results.get(self.shared.get(c.name, c.name)) or []
            if c.kind in (CheckKind.UNSOLVED, CheckKind.NOOP) and any(
                r.reward != c.expected for r in res
            ):
                out.add(c.name)
        return out

    def _row(self, c: _Check, res: list[VerifyResult], failed_bases: set[str]) -> GateCheck:
        base = c.name.rsplit("@", 1)[1] if c.kind == CheckKind.PROBE and "@" in c.name else None
        if base is not None and c.secondary:
            base = f"{c.semantics}:{base}"
        return GateCheck(
            kind=c.kind,
            name=c.name,
            state=c.state.ref,
            expected=c.expected,
            observed=tuple(r.reward for r in res),
            duration_s=round(c.state.produce_s + sum(r.duration_s for r in res), 3),
            evidence=check_evidence(
                c.state, res, c.probe, shared_with=self.shared.get(c.name), expected=c.expected
            ),
            tamper=(c.prepared or c.state.prepared).tamper,
            semantics=c.semantics,
            derived_from=base if base in failed_bases else None,
        )


#: Output lines that say the verifier could not run at all (not that it judged the state).
_UNRUNNABLE = (
    (r"([\w.+-]+): (?:command )?not found", "command not found: {0}"),
    (r"No module named '?([\w.]+)'?", "Python module not installed: {0}"),
    (r"No interpreter found for Python ([\d.]+)", "Python {0} is not in the image"),
    (
        r"(?:Could not resolve host|Temporary failure in name resolution)[: ]*([\w.-]*)",
        "network: {0}",
    ),
    (r"Failed to (?:fetch|download)[: ]+(\S+)", "network: {0}"),
    (r"Network is unreachable", "network: unreachable"),
    (r"Unable to locate package (\S+)", "apt package: {0}"),
)


def unrunnable_signs(
    results: Sequence[VerifyResult], missing: Sequence[str] = ()
) -> tuple[str, ...]:
    """What the verifier lacked, from its output on a state it should accept. When the
    verification layer named what it could not provide and the run shows signs of a lack,
    those named things are the cause (the other signs are the install lines the layer made
    harmless, e.g. `apt-get update` or the uv installer failing offline)."""
    found: list[str] = []
    for r in results:
        text = f"{r.stdout}\n{r.stderr}"
        for pattern, fmt in _UNRUNNABLE:
            for m in re.finditer(pattern, text):
                item = fmt.format(*(g or "?" for g in m.groups()))
                if item not in found:
                    found.append(item)
    if found and missing:
        return tuple(missing[:8])  # what the layer could not provide, seen failing: the cause
    return tuple(found[:8])


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


def _order(c: _Check) -> tuple[int, int, str]:
    return (c.secondary, _KIND_ORDER.get(c.kind, 9), c.state.name)


def _input_key(p: PreparedState) -> str:
    """Everything a verification of `p` depends on besides the verifier itself."""
    h = hashlib.sha256()
    h.update(p.image.encode() + b"\0" + p.scope.encode() + b"\0" + p.semantics.encode())
    # A replayed state is its recipe: two recipes are two states, even with no workspace
    # bytes or tamper evidence to tell them apart (regression: every harbor probe row, and
    # full-state probes without tamper evidence, shared the first such row's result).
    for entry in p.replay:
        h.update(b"\0".join(a.encode() for a in entry.argv) + b"\1" + entry.workdir.encode())
    h.update(b"\2" + "\0".join(sorted(p.expected)).encode())
    for path, tar in p.workspace:
        h.update(
            path.encode() + b"\0" + (hashlib.sha256(tar).digest() if tar is not None else b"-")
        )
    for t in p.tamper:
        h.update(f"{t.kind} {t.path}".encode())
    return h.hexdigest()
