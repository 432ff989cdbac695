"""The gates: the property test a verifier must pass before its reward is published.

Checks (each repeated R times; all repeats must agree with the expected reward):
oracle → 1; no-op → 0; every proper prefix of the reference steps → 0; every authored
partial solution → 0; every probe on the no-op state and on every unsolved state → 0;
every stored regression state → 0. A failed gate is a result (a failing `GateCheck`
with its evidence), never an exception; an engine failure is an exception.

Cost model: states are produced once (`verifiers.states`) and each verification is one
fresh container (`verifiers.runner`). Everything runs on one bounded thread pool:
a state's verifications and its probes are queued the moment it is captured, and
container removal happens off the critical path. Two probe states whose verification
inputs are byte-identical (same image, same workspace bytes, same tamper evidence) are
verified once and the result is shared — the verifier cannot tell them apart.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

from envfactory.core.models import (
    CheckKind,
    EnvironmentSpec,
    GateCheck,
    GateReport,
    StateKind,
    StateRef,
    Step,
    Verifier,
)
from sandboxes.protocol import Sandbox, SandboxEngine

from .evidence import check_evidence
from .probes import PROBES, Probe
from .runner import PreparedState, VerifyResult, verifier_tar, verify_prepared
from .states import (
    ProducedState,
    pristine_state,
    produce_chain,
    produce_probe,
    produce_probe_batch,
    regression_state,
)

Progress = Callable[[int, int, str], None]  # (done, total, what just finished)


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


@dataclass(frozen=True)
class _Check:
    kind: CheckKind
    expected: int
    state: ProducedState
    probe: Probe | None = None


def run_gates(inp: GateInput) -> GateReport:
    """Run every gate for one verifier; the report's verdict lists every failing reason."""
    return run_gates_detailed(inp).report


def run_gates_detailed(inp: GateInput) -> GateRun:
    return _GateRunner(inp).run()


class _GateRunner:
    def __init__(self, inp: GateInput) -> None:
        self.inp = inp
        self.spec = inp.spec
        self.vfiles = verifier_tar(inp.verifier, inp.files)
        self.pool = ThreadPoolExecutor(max(1, inp.concurrency), thread_name_prefix="gate")
        self.reaper = ThreadPoolExecutor(2, thread_name_prefix="gate-rm")
        self.lock = threading.Lock()
        self.pending: list[Future] = []
        self.checks: list[_Check] = []
        self.results: dict[str, list[VerifyResult]] = {}
        self.shared: dict[str, str] = {}  # check name → the identical check verified instead
        self.by_input: dict[str, str] = {}
        self.notes: list[str] = []
        self.total = self.done = 0

    # -- planning -------------------------------------------------------------------------

    def run(self) -> GateRun:
        t0 = time.monotonic()
        spec, inp = self.spec, self.inp
        steps = spec.reference_solution
        if len(steps) <= 1:
            self.notes.append("one-block reference solution: no prefix states to check")
        self.total = self._planned_total()
        try:
            self._spawn(self._produce_noop)
            self._spawn(self._produce_reference)
            for partial in spec.partial_solutions:
                self._spawn(self._produce_partial, partial.name, partial.steps)
            for ref in inp.regressions:
                self._spawn(self._produce_regression, ref)
            self._drain()
        finally:
            self.pool.shutdown(wait=True)
            self.reaper.shutdown(wait=True)
        return self._finish(time.monotonic() - t0)

    def _planned_total(self) -> int:
        n_unsolved = max(len(self.spec.reference_solution) - 1, 0) + len(
            self.spec.partial_solutions
        )
        n_states = 2 + n_unsolved + len(self.inp.regressions)
        return n_states + len(self.inp.probes) * (1 + n_unsolved)

    def _produce_noop(self) -> None:
        self._on_state(
            pristine_state(self.inp.engine, self.inp.image, self.spec), CheckKind.NOOP, 0
        )

    def _produce_reference(self) -> None:
        steps = self.spec.reference_solution
        n = len(steps)
        names = [f"prefix-{i + 1}" for i in range(n - 1)] + ["oracle"]
        kinds = [StateKind.PARTIAL] * (n - 1) + [StateKind.ORACLE]
        for st in produce_chain(
            self.inp.engine, self.inp.image, self.spec, steps, names=names, kinds=kinds
        ):
            oracle = st.kind == StateKind.ORACLE
            self._on_state(
                st, CheckKind.ORACLE if oracle else CheckKind.UNSOLVED, 1 if oracle else 0
            )

    def _produce_partial(self, name: str, steps: Sequence[Step]) -> None:
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
        self._on_state(
            regression_state(self.inp.engine, self.inp.image, self.spec, ref),
            CheckKind.REGRESSION,
            0,
        )

    def _produce_probe_batch(self, base: ProducedState) -> None:
        probes = {p.name: p for p in self.inp.probes}
        for st in produce_probe_batch(
            self.inp.engine, self.inp.image, self.spec, base, self.inp.probes
        ):
            self._on_state(
                st, CheckKind.PROBE, 0, probes[st.name.split(":", 1)[1].split("@", 1)[0]]
            )

    def _produce_probe(self, base: ProducedState, probe: Probe) -> None:
        st = produce_probe(self.inp.engine, self.inp.image, self.spec, base, probe)
        self._on_state(st, CheckKind.PROBE, 0, probe)

    # -- scheduling -----------------------------------------------------------------------

    def _on_state(
        self, st: ProducedState, kind: CheckKind, expected: int, probe: Probe | None = None
    ) -> None:
        check = _Check(kind, expected, st, probe)
        key = _input_key(st.prepared)
        with self.lock:
            self.checks.append(check)
            twin = self.by_input.get(key) if kind == CheckKind.PROBE else None
            if twin is None:
                self.by_input.setdefault(key, st.name)
                self.results[st.name] = []
            else:
                self.shared[st.name] = twin
        if twin is None:
            for _ in range(self.inp.repeats):
                self._spawn(self._verify, check)
        else:
            self._tick(st.name)
        if kind in (CheckKind.NOOP, CheckKind.UNSOLVED) and probe is None and self.inp.probes:
            if self.spec.verify_scope == "workspace":
                self._spawn(self._produce_probe_batch, st)
            else:
                for p in self.inp.probes:
                    self._spawn(self._produce_probe, st, p)

    def _verify(self, check: _Check) -> None:
        res = verify_prepared(
            self.inp.engine, check.state.prepared, spec=self.spec, verifier=self.inp.verifier,
            verifier_files=self.vfiles, remove=self._remove_later,
        )  # fmt: skip
        with self.lock:
            self.results[check.state.name].append(res)
            complete = len(self.results[check.state.name]) == self.inp.repeats
        if complete:
            self._tick(check.state.name)

    def _remove_later(self, box: Sandbox) -> None:
        self.reaper.submit(box.remove)

    def _spawn(self, fn: Callable, *args: object) -> None:
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

    def _tick(self, what: str) -> None:
        with self.lock:
            self.done += 1
            done, total = self.done, self.total
        if self.inp.progress:
            self.inp.progress(done, total, what)

    # -- reporting ------------------------------------------------------------------------

    def _finish(self, wall_s: float) -> GateRun:
        rows, timings = [], []
        for c in sorted(self.checks, key=_order):
            source = self.shared.get(c.state.name, c.state.name)
            res = self.results[source]
            rows.append(
                GateCheck(
                    kind=c.kind,
                    name=c.state.name,
                    state=c.state.ref,
                    expected=c.expected,  # type: ignore[arg-type]
                    observed=tuple(r.reward for r in res),
                    duration_s=round(c.state.produce_s + sum(r.duration_s for r in res), 3),
                    evidence=check_evidence(
                        c.state,
                        res,
                        c.probe,
                        shared_with=self.shared.get(c.state.name),
                        expected=c.expected,
                    ),
                    tamper=c.state.prepared.tamper,
                )  # fmt: skip
            )
            timings.append(
                CheckTiming(
                    c.state.name,
                    c.state.produce_s,
                    [r.duration_s for r in res],
                    [r.command_s for r in res],
                    self.shared.get(c.state.name),
                )  # fmt: skip
            )
        report = GateReport(
            env_id=self.spec.id, verifier_version=self.inp.verifier.version, checks=tuple(rows),
            repeats=self.inp.repeats, notes=tuple(sorted(set(self.notes))),
        )  # fmt: skip
        states = {c.state.name: c.state for c in self.checks}
        return GateRun(report, timings, states, self.results, wall_s)


_KIND_ORDER = {k: i for i, k in enumerate(
    [CheckKind.ORACLE, CheckKind.NOOP, CheckKind.UNSOLVED, CheckKind.PROBE, CheckKind.REGRESSION]
)}  # fmt: skip


def _order(c: _Check) -> tuple[int, str]:
    return (_KIND_ORDER.get(c.kind, 9), c.state.name)


def _input_key(p: PreparedState) -> str:
    """Everything a verification of `p` depends on besides the verifier itself."""
    h = hashlib.sha256()
    h.update(p.image.encode() + b"\0" + p.scope.encode())
    for path, tar in p.workspace:
        h.update(
            path.encode() + b"\0" + (hashlib.sha256(tar).digest() if tar is not None else b"-")
        )
    for t in p.tamper:
        h.update(f"{t.kind} {t.path}".encode())
    return h.hexdigest()
