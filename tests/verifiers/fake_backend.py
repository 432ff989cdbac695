"""An in-memory `GateBackend`: the gate scheduler's policy tested in milliseconds.

A state is a dict of files (path under the workdir → text); a step and a probe are Python
functions from files to files; the verifier is a predicate over the files (given, too, how
many times it has seen those very files, so that a flaky verifier is one line). Failures
are configurable: a step that raises fails the reference, `broken(files)` says how many
verifications of a state break (`SandboxBroken`) before one runs, `delay_s` slows every
state's production. Every call is counted, so a test can say what ran and how often.

It speaks the real types (`ProducedState`, `PreparedState` with workspace tars, `Replay`
recipes for Harbor's runtime), so the scheduler cannot tell it from `DockerBackend`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import cast

from envfactory.core.errors import SandboxBroken
from envfactory.core.models import (
    BuildContext,
    EnvironmentSpec,
    PartialSolution,
    Provenance,
    Semantics,
    StateKind,
    StateRef,
    Step,
    StepFailure,
    Verifier,
    VerifyScope,
)
from envfactory.core.models.rows import RowId
from sandboxes.protocol import Sandbox
from verifiers.archives import tar_of
from verifiers.gate.backend import Remove
from verifiers.gates import GateInput
from verifiers.probes import Probe
from verifiers.probes.workspace import file_bytes
from verifiers.runner import KILLS_ALL, PreparedState, Replay, VerifyResult
from verifiers.states import ProducedState, ReferenceStepFailed

Files = dict[str, str]
Transform = Callable[[Files], Files]
WORKDIR = "/app"
IMAGE = "fake:pristine"


class FakeProbe(Probe):
    """A probe whose attack is a Python function over the state's files."""

    name = "fake"

    def __init__(self, name: str, attack: Transform, *, noop_only: bool = False) -> None:
        self.name = name  # type: ignore[misc]
        self.attack = attack
        self.noop_only = noop_only  # type: ignore[misc]

    def script(self, spec: EnvironmentSpec) -> str:
        return f"fake-probe {self.name}"


def step(script: str) -> Step:
    return Step(title=script, script=script)


def spec(
    steps: Sequence[str],
    *,
    partials: dict[str, Sequence[str]] | None = None,
    semantics: tuple[Semantics, ...] = ("envfactory",),
) -> EnvironmentSpec:
    """A task whose reference runs `steps` (each one a key of `FakeBackend.steps`)."""
    return EnvironmentSpec(
        id="env-fake",
        name="fake",
        instruction="write out.txt",
        build=BuildContext(files=()),
        workdir=WORKDIR,
        workspace_paths=(WORKDIR,),
        verify_scope=VerifyScope.WORKSPACE,
        reference_solution=tuple(step(s) for s in steps),
        partial_solutions=tuple(
            PartialSolution(name=n, steps=tuple(step(s) for s in ss))
            for n, ss in (partials or {}).items()
        ),
        semantics=semantics,
    )


VERIFIER = Verifier(env_id="env-fake", files=(), entry="true", provenance=Provenance(author="test"))


def _key(files: Files) -> str:
    return hashlib.sha256(json.dumps(files, sort_keys=True).encode()).hexdigest()[:16]


@dataclass
class FakeBackend:
    """`steps`: a reference or partial step's script → what it does to the files (raise to
    fail it). `verifier(files, n)`: the reward for the n-th verification (from 0) of
    those files (`harbor`: the same under Harbor's runtime, where it differs). `broken(files)`:
    how many verifications of those files break first."""

    spec: EnvironmentSpec
    steps: dict[str, Transform]
    verifier: Callable[[Files, int], bool]
    initial: Files = field(default_factory=dict)
    regressions: dict[str, Files] = field(default_factory=dict)  # StateRef.label → files
    probes: Sequence[FakeProbe] = ()
    broken: Callable[[Files], int] = lambda files: 0
    #: the verifier as it behaves under Harbor's runtime, where that differs
    harbor: Callable[[Files, int], bool] | None = None
    delay_s: float = 0.0

    def __post_init__(self) -> None:
        self.lock = threading.Lock()
        self.verified: Counter[str] = Counter()  # state key → verifications run
        self.breaks: Counter[str] = Counter()  # state key → broken verifications
        self.produced: list[str] = []  # row names, in production order
        self.standbys = 0
        self._states: dict[str, Files] = {}

    # -- the protocol ---------------------------------------------------------------------

    def pristine(self) -> ProducedState:
        return self._state(RowId.noop(), StateKind.PRISTINE, dict(self.initial))

    def chain(
        self,
        steps: Sequence[Step],
        rows: Sequence[RowId | None],
        kinds: Sequence[StateKind],
        *,
        stop_on_failure: bool = False,
    ) -> list[ProducedState]:
        files, out = dict(self.initial), []
        for i, (s, row, kind) in enumerate(zip(steps, rows, kinds, strict=True), start=1):
            try:
                files = self.steps[s.script](dict(files))
            except Exception as exc:
                if stop_on_failure:
                    raise ReferenceStepFailed(
                        StepFailure(step=i, title=s.title, exit_code=1, output=str(exc))
                    ) from exc
            if row is not None:
                out.append(self._state(row, kind, files))
        return out

    def regression(self, ref: StateRef) -> ProducedState:
        files = self.regressions[ref.label or ""]
        return self._state(RowId.regression(ref.label or ""), StateKind.REGRESSION, files)

    def probe(self, base: ProducedState, probe: Probe, semantics: Semantics) -> ProducedState:
        assert isinstance(probe, FakeProbe)
        files = probe.attack(dict(self.files_of(base.prepared)))
        return self._state(RowId.probe_on(probe.name, base.row), StateKind.PROBE, files)

    def probe_batch(self, base: ProducedState, probes: Sequence[Probe]) -> Iterator[ProducedState]:
        for p in probes:
            yield self.probe(base, p, "envfactory")

    def read(self, base: ProducedState, script: str) -> str | None:
        """No state here holds a database cluster: nothing to read."""
        self.calls["read"] += 1
        return None

    def verify(self, prepared: PreparedState, remove: Remove) -> VerifyResult:
        files = self.files_of(prepared)
        key = _key(files)
        with self.lock:
            if self.breaks[key] < self.broken(files):
                self.breaks[key] += 1
                raise SandboxBroken("the fake sandbox broke", reason="container_dead")
            n = self.verified[key]
            self.verified[key] += 1
        remove(cast(Sandbox, _NoSandbox()))
        judge = self.harbor if self.harbor and prepared.semantics == "harbor" else self.verifier
        ok = judge(files, n)
        return VerifyResult(reward=int(ok), exit_code=0 if ok else 1)

    @contextlib.contextmanager
    def standby(self, image: str) -> Iterator[None]:
        self.standbys += 1
        yield

    # -- helpers --------------------------------------------------------------------------

    def files_of(self, prepared: PreparedState) -> Files:
        """The files a prepared state holds: its workspace tar, or its replayed recipe."""
        if prepared.workspace:
            raw = file_bytes(prepared.workspace)
            return {p.removeprefix(WORKDIR + "/"): b.decode() for p, b in raw.items()}
        files = dict(self.initial)
        for entry in prepared.replay:
            files = self._replay(entry, files)
        return files

    def verifications(self, files: Files) -> int:
        """How many times a state with exactly these files was verified."""
        return self.verified[_key(files)]

    def _replay(self, entry: Replay, files: Files) -> Files:
        if entry == KILLS_ALL:
            return files
        if entry.argv[0] == "fake-state":
            return dict(self._states[entry.argv[1]])
        script = entry.argv[-1]
        probe = next(p for p in self.probes if p.script(self.spec) == script)
        return probe.attack(dict(files))

    def _state(self, row: RowId, kind: StateKind, files: Files) -> ProducedState:
        if self.delay_s:
            time.sleep(self.delay_s)
        key = _key(files)
        tar = tar_of({f"app/{p}": (t.encode(), 0o644) for p, t in files.items()})
        with self.lock:
            self._states[key] = dict(files)
            self.produced.append(str(row))
        return ProducedState(
            row,
            kind,
            PreparedState(IMAGE, VerifyScope.WORKSPACE, workspace=((WORKDIR, tar),)),
            recipe=(Replay(("fake-state", key)),),
        )


class _NoSandbox:
    """What the fake hands to `remove`: nothing to remove."""

    def remove(self) -> None:
        return None


def gate_input(backend: FakeBackend, **kw: object) -> GateInput:
    """The `GateInput` that runs the scheduler on `backend` (no engine, no image)."""
    args: dict[str, object] = {
        "engine": None,
        "spec": backend.spec,
        "verifier": VERIFIER,
        "files": lambda key: b"",
        "image": IMAGE,
        "probes": tuple(backend.probes),
        "concurrency": 2,
        "derived_probes": False,
        "omissions": False,
        "backend": backend,
    }
    args.update(kw)
    return GateInput(**args)  # type: ignore[arg-type]
