"""The gates: the property test a verifier must pass before its reward is published.

Every run of a check must agree with its expected reward: oracle → 1; no-op, every
unsolved state, every probe and every regression state → 0; a correct alternative → 1
and a tolerance → 0 are warnings (rows and stages: `gate.plan`). A failed gate is a
result (a failing `GateCheck` with its evidence), never an exception. A sandbox that
cannot run a verification (`SandboxBroken`) is retried once in a fresh one, then raised
as the engine's failure naming the check — never a reward 0, which passes rows expecting 0.

This module is the scheduler that ties the parts in `verifiers.gate` (plan, policy, table,
backend, executor, report): states are produced once and each one's verifications are
queued the moment it is captured.

Semantics: every row runs under the first of `spec.semantics`; when a task also declares
``harbor`` (imported Harbor / Terminal-Bench tasks, Harbor exports), the oracle, the
no-op and every probe on the no-op run again as in Harbor's runtime (the solver's own
container, see `verifiers.runner`), as rows named ``harbor:…``. A task whose reference
state fails envfactory's runtime and passes Harbor's is gated under Harbor's alone
(`gate.runtime`).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace

from envfactory.core.models import (
    WARNING_KINDS,
    CheckKind,
    GateReport,
    Reward,
    Semantics,
    SkippedCheck,
    StateKind,
    StateRef,
    Step,
    StepFailure,
    VerifyScope,
)
from envfactory.core.models.rows import RowId

from .gate import variants
from .gate.backend import DockerBackend, verify_with_retry
from .gate.executor import Event, Executor, Progress
from .gate.inputs import GateInput, TracedProbes
from .gate.plan import GateOptions, GatePlan, oracle_probes, plan_gates, probes_for
from .gate.policy import EarlyVerdicts, OracleGate, RepeatPolicy
from .gate.report import (
    CheckTiming,
    GateRun,
    Outcome,
    build_run,
    may_be_config_only,
    premise_held,
    row_finding,
    row_not_applicable,
    unrunnable_signs,
)
from .gate.runtime import harbor_only, reference_failed
from .gate.table import DROPPED_NOTE, Admission, Row, RowTable
from .gate.views import HARBOR_LEFT_PROCESSES, Views
from .probes import Probe, by_name
from .probes.answer_keys import answer_probe, answers, parse_found, search_script
from .probes.applicability import ReadLog, pinned_paths
from .probes.cluster_rows import cluster_probes
from .probes.postgres import data_directories, export_script, parse_export
from .probes.tools import loads_note
from .probes.trusted import trusted_probe
from .probes.workspace import mentioned_paths
from .runner import PreparedState, VerifyResult, verifier_tar
from .states import ProducedState, ReferenceStepFailed

__all__ = [
    "CheckTiming",
    "GateInput",
    "GateRun",
    "Progress",
    "TracedProbes",
    "run_gates",
    "run_gates_detailed",
    "unrunnable_signs",
]


def run_gates(inp: GateInput) -> GateReport:
    """Run every gate for one verifier; the report's verdict lists every failing reason."""
    return run_gates_detailed(inp).report


def run_gates_detailed(inp: GateInput) -> GateRun:
    """`run_gates` with the rows' timings; gated again under Harbor's runtime alone when
    only that runtime accepts the reference (`gate.runtime.harbor_only`); `reference-failed`
    when the reference fails in every runtime tried (`gate.runtime.reference_failed`)."""
    run = _Scheduler(inp).run()
    schedule = lambda again: _Scheduler(again).run()  # noqa: E731
    return harbor_only(inp, run, schedule) or reference_failed(run) or run


@dataclass
class _Found:
    """What the run learnt on its way (under the executor's lock)."""

    noop: ProducedState | None = None
    oracle: ProducedState | None = None
    expected: frozenset[str] = frozenset()  # the paths the oracle changes
    reference_failure: StepFailure | None = None
    unrunnable: tuple[str, ...] = ()


class _Scheduler:
    """Ties the plan, the policy and the table to the backend through the executor."""

    def __init__(self, inp: GateInput) -> None:
        self.inp = inp
        self.spec = inp.spec
        self.vfiles = verifier_tar(inp.verifier, inp.files)
        self.plan: GatePlan = plan_gates(
            inp.spec,
            inp.probes,
            inp.regressions,
            GateOptions(inp.omissions, inp.derived_probes, inp.traced_probes is not None),
        )
        self.backend = inp.backend or DockerBackend(
            inp.engine, inp.image, inp.spec, inp.verifier, self.vfiles
        )
        self.views = Views(self.plan.primary, inp.image, inp.verify_image)
        self.ex = Executor(inp.concurrency, inp.progress, self.plan.total)
        self.table = RowTable()
        self.repeats = RepeatPolicy(inp.repeats, inp.adaptive_repeats)
        self.oracle_gate = OracleGate()
        self.verdicts = EarlyVerdicts(inp.settle_early)
        self.found = _Found()
        self.battery: list[Probe] = list(inp.probes)  # traced probes join at the oracle
        self.notes: list[str] = list(self.plan.notes)
        self.skipped: list[SkippedCheck] = []
        self.noop_ready = Event(self.ex)  # the no-op state exists (or failed to)
        self.reads: ReadLog | None = None  # what the traced verification of the oracle read
        #: the paths the instruction names (configuration it names stays graded)
        self.named = tuple(mentioned_paths(self.spec.instruction, self.spec.workdir))
        self.pinned: frozenset[str] = frozenset()  # the verifier's tools it loaded (full-state)

    @property
    def primary(self) -> Semantics:
        return self.plan.primary

    def run(self) -> GateRun:
        t0 = time.monotonic()
        with self._standby():  # ends after the removals: what it started meanwhile is done
            try:
                self.ex.spawn(self._produce_reference)  # then partials and regressions
                self.ex.spawn(self._produce_noop)
                self.ex.drain()
                if self.plan.secondary and self.oracle_gate.ok:
                    self._secondary_checks(self.plan.secondary)  # after every primary row
                    self.ex.drain()
                self.ex.last_tick()
            finally:
                self.ex.shutdown()
        return self._finish(time.monotonic() - t0)

    def _standby(self) -> AbstractContextManager[object]:
        """Containers started ahead of demand for the rows verified by exec (full-state
        recipes, replayed and restarted first); every other row's container runs its
        verification as its own command, which nothing started ahead could serve."""
        if not self.plan.standby:
            return contextlib.nullcontext()
        return self.backend.standby(self.inp.verify_image or self.inp.image)

    # -- stage 1: the states ------------------------------------------------------------

    def _produce_noop(self) -> None:
        try:
            self.found.noop = self.backend.pristine()
        finally:
            self.noop_ready.fire()
        self._on_state(self.found.noop, CheckKind.NOOP, 0)

    def _produce_reference(self) -> None:
        steps = self.spec.reference_solution
        rows = self.plan.chain
        kinds = [StateKind.PARTIAL] * (len(rows) - 1) + [StateKind.ORACLE]
        try:
            chain = self.backend.chain(steps, rows, kinds, stop_on_failure=True)
        except ReferenceStepFailed as failed:
            self.found.reference_failure = failed.failure
            self._settle(False, f"the reference solution failed at step {failed.failure.step}")
            return
        for st in chain:
            if st.kind == StateKind.ORACLE:
                self.found.oracle = st
                self.found.expected = frozenset(c.path for c in st.diff)
        for st in chain:  # after the oracle: its changes are what the task asks for
            if st.kind == StateKind.ORACLE:
                self._on_state(st, CheckKind.ORACLE, 1)
            else:
                self._on_state(st, CheckKind.UNSOLVED, 0)
        for row, partial in self.plan.partials:
            self.ex.spawn(self._produce_partial, row, partial)
        for _, ref in self.plan.regressions:
            self.ex.spawn(self._produce_regression, ref)

    def _produce_partial(self, row: RowId, steps: Sequence[Step]) -> None:
        if self._settled_badly():
            return
        rows: list[RowId | None] = [None] * (len(steps) - 1) + [row]
        (st,) = self.backend.chain(steps, rows, [StateKind.PARTIAL] * len(steps))
        self._on_state(st, CheckKind.UNSOLVED, 0)

    def _produce_regression(self, ref: StateRef) -> None:
        if self._settled_badly():
            return
        self._on_state(self.backend.regression(ref), CheckKind.REGRESSION, 0)

    # -- stage 2: after a passing oracle ------------------------------------------------

    def _settled_badly(self) -> bool:
        with self.ex.lock:
            return self.oracle_gate.failed

    def _settle(self, ok: bool, why: str = "") -> None:
        """The oracle's verdict is in: release the waiting probes, or skip what needs it."""
        with self.ex.lock:
            waiting = self.oracle_gate.settle(ok)
        if waiting is None:
            return
        if not ok:
            self.skipped.append(
                SkippedCheck(
                    name=f"{len(self.battery)} probes on each of {1 + self.plan.unsolved} states",
                    why=why,
                )
            )
            self.ex.stop_counting()
            return
        if (
            self.inp.traced_probes is not None
            and self.found.oracle
            and self.primary == "envfactory"
        ):
            oracle = self._prepared(self.found.oracle, None)
            traced = self.inp.traced_probes(oracle, self.vfiles)
            self.battery += traced.probes
            # a service beside the environment reads files no trace of ours shows
            self.reads = None if self.spec.services else traced.reads
            self.pinned = self._toolchain(traced.reads)
            if note := loads_note(self.battery):
                self._note(note)
        for base in waiting:
            assert isinstance(base, ProducedState)
            self.ex.spawn(self._produce_probes, base, tuple(self.battery))
        self.noop_ready.then(self._oracle_rows)

    def _oracle_verified(self, results: Sequence[VerifyResult]) -> None:
        if all(r.reward == 1 for r in results):
            self._settle(True)
            return
        signs = unrunnable_signs(results, self.inp.missing)
        if signs:
            self.found.unrunnable = signs
        self._settle(False, "the verifier rejects the reference solution's state")

    def _queue_probes(self, base: ProducedState) -> None:
        if not self.plan.probes_follow:
            return
        with self.ex.lock:
            ok = self.oracle_gate.wait_for(base)
        if ok:
            self.ex.spawn(self._produce_probes, base, tuple(self.battery))

    def _produce_probes(self, base: ProducedState, probes: tuple[Probe, ...]) -> None:
        if self._settled_badly():
            return
        probes = probes_for(base.kind, probes)
        if not probes:
            return
        if not self.plan.batch_probes:
            for p in probes:
                self.ex.spawn(self._produce_probe, base, p)
            return
        self._batch(base, probes, CheckKind.PROBE)

    def _produce_warnings(
        self, base: ProducedState, probes: tuple[Probe, ...], kind: CheckKind
    ) -> None:
        """Rows whose unexpected reward is a warning: correct alternatives (expected 1) and
        tolerances (expected 0)."""
        if self._settled_badly():
            return
        if self.plan.batch_probes:
            self._batch(base, probes, kind)
            return
        expected: Reward = 1 if kind == CheckKind.ALTERNATIVE else 0
        for p in probes:
            self.ex.spawn(self._produce_probe, base, p, kind, expected)

    def _batch(self, base: ProducedState, probes: tuple[Probe, ...], kind: CheckKind) -> None:
        """The probes' states made in one sandbox; each a row expecting 1 when it is a
        correct alternative, else 0."""
        by = {p.name: p for p in probes}
        expected: Reward = 1 if kind == CheckKind.ALTERNATIVE else 0
        for st in self.backend.probe_batch(base, probes):
            assert st.row.probe is not None
            self._on_state(st, kind, expected, by[st.row.probe])

    def _produce_probe(
        self,
        base: ProducedState,
        probe: Probe,
        kind: CheckKind = CheckKind.PROBE,
        expected: Reward = 0,
    ) -> None:
        if self._settled_badly():
            return
        st = self.backend.probe(base, probe, self.primary)
        self._on_state(st, kind, expected, probe)
        self._note_harness_limit(probe, self.primary)

    def _oracle_rows(self) -> None:
        """States built from what the reference solution produced: the reference with one
        step left out (workspace scope), the probes built from the oracle's outputs (every
        scope: full-state states keep their workspace files for them), and the probes on
        the database clusters it wrote (full-state scope)."""
        oracle, noop = self.found.oracle, self.found.noop
        if oracle is None or noop is None:
            return
        if self.plan.live_databases:
            self.ex.spawn(self._produce_cluster_probes)
        for row, steps in self.plan.omissions:
            self.ex.spawn(self._produce_omission, row, steps)
        if self.plan.derived:
            self._derived_rows(oracle, noop)
            self.ex.spawn(self._produce_answer_probe)
            if self.plan.batch_probes:  # compares workspace states
                self.ex.spawn(self._produce_trusted)

    def _produce_answer_probe(self) -> None:
        """The reference's answers searched for in what a solver can read of the pristine
        environment (`probes.answer_keys`): a probe row on the no-op where one is found."""
        oracle, noop = self.found.oracle, self.found.noop
        assert oracle is not None and noop is not None
        found = answers(oracle.workspace, noop.workspace, self.spec)
        if not found or not self.battery or self._settled_badly():
            return
        text = self.backend.read(noop, search_script(found, self.spec))
        if text is None:
            self._note("the environment could not be searched for the reference's answers")
            return
        probe = answer_probe(found, parse_found(text), self.spec)
        if probe is not None:
            self._produce_probe(noop, probe)

    def _derived_rows(self, oracle: ProducedState, noop: ProducedState) -> None:
        made = oracle_probes(oracle.workspace, noop.workspace, self.spec, self.battery)
        if made.on_oracle:
            self.ex.spawn(self._produce_probes, oracle, made.on_oracle)
        if made.on_noop:  # the programs and outputs the oracle wrote, flooded on the no-op
            self.ex.spawn(self._produce_probes, noop, made.on_noop)
        if made.alternatives:  # other correct final states: expected 1
            self.ex.spawn(self._produce_warnings, oracle, made.alternatives, CheckKind.ALTERNATIVE)
        if made.tolerances:  # changes the instruction does not rule out: expected 0
            self.ex.spawn(self._produce_warnings, oracle, made.tolerances, CheckKind.TOLERANCE)
        if made.recompute and self.plan.batch_probes:  # compares workspace states
            self.ex.spawn(self._produce_recomputed)

    def _produce_cluster_probes(self) -> None:
        """Probes on the rows of the database clusters the reference wrote (full-state
        scope: the state's programs read them, `probes.postgres`), on the oracle."""
        oracle, noop = self.found.oracle, self.found.noop
        assert oracle is not None and noop is not None
        directories = data_directories(oracle.diff)
        if not directories or self._settled_badly():
            return
        script = export_script(directories)
        after, before = self.backend.read(oracle, script), self.backend.read(noop, script)
        if after is None or before is None:
            self._note(f"could not read the rows of {', '.join(directories)}: no row probes")
            return
        for probe in cluster_probes(parse_export(before), parse_export(after)):
            self.ex.spawn(self._produce_cluster_probe, oracle, probe)

    def _produce_cluster_probe(self, oracle: ProducedState, probe: Probe) -> None:
        """A cluster probe's state, verified only where its statements changed a row: one
        that changed none (every statement refused) left the oracle's state, which is no
        attack."""
        if self._settled_badly():
            return
        st = self.backend.probe(oracle, probe, self.primary)
        failed = [line for line in st.log if line.startswith(f"probe {probe.name} exited")]
        if failed:
            self._note(f"probe:{probe.name}@oracle: not applied ({failed[0][:200]})")
            return
        self._on_state(st, CheckKind.PROBE, 0, probe)

    def _produce_recomputed(self) -> None:
        """The reference on minimal inputs, a probe row when its outputs differ."""
        oracle, noop = self.found.oracle, self.found.noop
        assert oracle is not None and noop is not None
        st, note = variants.recomputed(self.backend, self.spec, oracle, noop)
        self._note(note)
        if st is not None:
            self._on_state(st, CheckKind.PROBE, 0, by_name("inputs-minimal"))

    def _produce_trusted(self) -> None:
        """The reference run with the settings the verifier reads, and the reference leaves
        as they are, changed (`probes.trusted`): a probe row when its outputs differ."""
        oracle, noop = self.found.oracle, self.found.noop
        assert oracle is not None and noop is not None
        probe = trusted_probe(self.reads, oracle.workspace, noop.workspace)
        if probe is None or not self.battery or self._settled_badly():
            return
        st, note = variants.trusted(self.backend, self.spec, probe, oracle, noop)
        self._note(note)
        if st is not None:
            self._on_state(st, CheckKind.PROBE, 0, probe)

    def _produce_omission(self, row: RowId, steps: Sequence[Step]) -> None:
        """The reference with one step left out, checked (expected 0, no probes on top) when
        it differs from the oracle in a file that decides the task."""
        oracle, noop = self.found.oracle, self.found.noop
        assert oracle is not None and noop is not None
        st, note = variants.omission(self.backend, self.spec, row, steps, oracle, noop)
        if st is not None:
            self._on_state(st, CheckKind.UNSOLVED, 0, queue_probes=False)
        else:
            self._note(note)

    # -- stage 3: the secondary runtime ---------------------------------------------------

    def _secondary_checks(self, semantics: Semantics) -> None:
        """The oracle, the no-op and each probe on the no-op, as in the secondary runtime.

        Queued once every primary row is done: a rejection there leaves no runtime safe,
        so then none of these can change a verdict and each is skipped (`EarlyVerdicts`);
        queued beside the primary rows they ran first (they need no state produced) and a
        rejected verifier paid for all of them."""
        oracle = self.found.oracle
        assert oracle is not None
        states = variants.secondary_states(semantics, self.battery, self.spec, self.views, oracle)
        for st, kind, expected, probe in states:
            self._on_state(st, kind, expected, probe, semantics=semantics)
        self._note(HARBOR_LEFT_PROCESSES)

    # -- rows ---------------------------------------------------------------------------

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
        secondary = semantics if semantics and semantics != self.primary else None
        prepared = self._prepared(st, secondary)
        if probe is not None and probe.premise_file:  # read back after each verification
            prepared = replace(prepared, premise_file=probe.premise_file)
        row = Row(st.row.under(secondary), kind, expected, st, prepared)
        row.probe = probe
        with self.ex.lock:
            admitted = self.table.admit(row)
            if admitted == Admission.DROPPED:
                self.notes.append(f"{row.name}: {DROPPED_NOTE}")
                return
            resampled = queue_probes and kind == CheckKind.UNSOLVED and self.plan.probes_follow
            row.repeats = runs = self.repeats.first(
                kind, secondary=row.secondary, resampled=resampled
            )
        if admitted == Admission.OWNER:
            for _ in range(runs):  # `row.repeats` may grow meanwhile (escalation)
                self.ex.spawn(self._verify, row)
        else:
            self.ex.tick(row.name)
        if queue_probes and not row.secondary and probe is None:
            if kind in (CheckKind.NOOP, CheckKind.UNSOLVED):
                self._queue_probes(st)

    def _prepared(self, st: ProducedState, secondary: Semantics | None) -> PreparedState:
        return self.views.prepared(st, secondary, self.found.expected, self.pinned)

    def _toolchain(self, reads: ReadLog | None) -> frozenset[str]:
        """The verifier's own tools as the traced oracle verification loaded them, pinned
        for the rows that follow (full-state scope only: a workspace-scope verification
        runs on the pristine image's tools whatever the state holds)."""
        if reads is None or self.spec.verify_scope != VerifyScope.FULL_STATE:
            return frozenset()
        verifier = self.inp.verifier
        outside = (*self.spec.workspace_paths, verifier.mount_path or "", verifier.reward_dir or "")
        pinned = pinned_paths(reads, outside)
        if pinned:
            self._note(
                f"full-state scope: {len(pinned)} file(s) the verifier loaded from the image "
                "(interpreters, libraries, configuration) are pinned: a state that changes "
                "one has tamper evidence (reward 0)"
            )
        return pinned

    def _verify(self, row: Row) -> None:
        with self.ex.lock:
            if self.oracle_gate.failed and row.kind != CheckKind.ORACLE:
                return  # listed as skipped in the report
            moot = self.verdicts.is_moot(row.id)
        if moot:
            self.ex.tick(f"{row.name} skipped")
            return
        res = verify_with_retry(self.backend, row.prepared, self.ex.remove_later, row.name)
        if row.secondary and row.probe is not None:  # what this row left out, if it ran
            self._note_harness_limit(row.probe, row.id.semantics or self.primary)
        with self.ex.lock:
            done = self.table.record(row, res)
            if res.reward != row.expected and row.kind not in WARNING_KINDS:
                if premise_held(row, res) and not self._may_be_ungraded(row):
                    self.verdicts.failed(row.id)  # too strict, or a tolerance: a warning
            rewards = [r.reward for r in done] if len(done) == row.repeats else []
            more = self.repeats.escalate(row, rewards, self.table.owners()) if rewards else []
            complete = self.table.finish(row, len(done))
        for again, extra in more:
            assert isinstance(again, Row)
            for _ in range(extra):
                self.ex.spawn(self._verify, again)
        if complete:
            self.ex.tick(row.name)
            if row.kind == CheckKind.ORACLE and not row.secondary:
                self._oracle_verified(done)

    def _may_be_ungraded(self, row: Row) -> bool:
        """Whether the trace, read after, may make a failing unsolved row not applicable
        (`gate.report.may_be_config_only`): its failure then settles no runtime early."""
        if self.inp.traced_probes is None:
            return False
        return may_be_config_only(row, self.found.oracle, self.named)

    def _note(self, text: str) -> None:
        with self.ex.lock:
            self.notes.append(text)

    def _note_harness_limit(self, probe: Probe, semantics: str) -> None:
        """Say what the probe left out under `semantics` because no verifier can resist it."""
        limit = probe.harness_limits.get(semantics)
        if limit:
            self._note(limit)

    # -- the report -----------------------------------------------------------------------

    def _finish(self, wall_s: float) -> GateRun:
        found = self.found
        if found.reference_failure is None and found.oracle is None and self.oracle_gate.ok is None:
            self.notes.append("the reference solution produced no oracle state")
        outcome = Outcome(
            tuple(self.notes), tuple(self.skipped), found.reference_failure, found.unrunnable
        )
        return build_run(
            self.spec,
            self.inp.verifier,
            table=self.table,
            primary=self.primary,
            outcome=outcome,
            skip_reason=lambda r: self.verdicts.skip_reason(r.id),
            not_applicable=lambda r: row_not_applicable(
                r, self.reads, self.table.results_of(r), self.found.oracle, self.named
            ),
            finding=lambda r: row_finding(r, self.reads),
            repeats=self.inp.repeats,
            provided=self.inp.provided,
            wall_s=wall_s,
        )
