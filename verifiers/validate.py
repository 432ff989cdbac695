"""Validate task directories end to end: import, build, run every gate.

The plain function behind `envfactory validate` and the throughput benchmark (the
workflows layer calls the same pieces as activities). A task that fails a gate is a
result (`TaskValidation.report.verdict`); an unreadable task or a failed build raises, and
so does a workspace of `/` once the built image gives the workdir (`settle_workdir`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

from envfactory.core.models import GateReport, GateVerdict, LimitCaps
from envfactory.core.models.rows import row_semantics_of
from sandboxes.protocol import SandboxEngine

from .battery import gate_input
from .formats import ImportedTask, context_tar, load_task, settle_workdir
from .formats.files import with_built_services
from .formats.model import BlobReader, BlobWriter
from .gates import GateInput, GateRun, Progress, run_gates_detailed
from .probes import Probe


class Artifacts(BlobReader, BlobWriter, Protocol):
    """What validation needs of the artifact store: `put_bytes` and `get`."""


@dataclass
class TaskValidation:
    path: Path
    task: ImportedTask
    image: str
    run: GateRun
    build_s: float
    substitutions: tuple[str, ...] = ()  # "ubuntu:24.04 -> envfactory/base-…" (FROM lines)
    warnings: tuple[str, ...] = ()  # e.g. a release that differs from the one named

    @property
    def report(self) -> GateReport:
        return self.run.report

    @property
    def passed(self) -> bool:
        return self.report.verdict == GateVerdict.PASSED

    @property
    def rejected_as_expected(self) -> bool | None:
        """For tasks broken on purpose: did a check of the expected name/kind fail?
        None for tasks that declare no expected failure."""
        t = self.task
        if t.expected_failure is None and t.expected_failure_kind is None:
            return None
        failing = [c for c in self.report.checks if not c.passed]
        return any(
            (
                t.expected_failure is None
                or c.row.matches(t.expected_failure)
                or c.kind.value == t.expected_failure
            )
            and (t.expected_failure_kind is None or c.kind == t.expected_failure_kind)
            for c in failing
        )


def validate_task(
    engine: SandboxEngine,
    path: Path,
    artifacts: Artifacts,
    *,
    repeats: int = 3,
    concurrency: int = 2,
    probes: tuple[Probe, ...] | None = None,
    progress: Progress | None = None,
    on_stage: Callable[[str], None] | None = None,
    adjust: Callable[[GateInput], GateInput] | None = None,
    caps: LimitCaps | None = None,
) -> TaskValidation:
    """Import the task at `path`, build its image and its verification layer, run every
    gate on its verifier (`probes=None`: the whole library, tailored and traced; `adjust`
    changes the gate input before the run, for benchmarks that compare batteries; `caps`:
    the operator's ceilings on the task's limits)."""
    task = load_task(path, artifacts, caps)
    if on_stage:
        on_stage("building")
    t0 = time.monotonic()
    build = engine.build(
        context_tar(task.spec.build, artifacts.get), dockerfile=task.spec.build.dockerfile
    )
    spec, verifier = settle_workdir(task.spec, task.verifier, build.workdir)
    task = task.model_copy(update={"spec": spec, "verifier": verifier})
    spec = with_built_services(
        spec, lambda tar, df: engine.build(tar, dockerfile=df).image, artifacts.get
    )
    build_s = time.monotonic() - t0
    if on_stage:
        on_stage("verification layer")
    inp, layer_notes = gate_input(
        engine,
        spec=spec,
        verifier=verifier,
        files=artifacts.get,
        image=build.image,
        repeats=repeats,
        concurrency=concurrency,
        probes=probes,
        progress=progress,
    )
    if _expects_a_secondary_row(task.expected_failure, spec.semantics):
        # broken on purpose where another runtime shows it: the early verdicts would skip
        # the very row the task says it fails on once an envfactory row rejects it
        inp = replace(inp, settle_early=False)
    if on_stage:
        on_stage("gating")
    run = run_gates_detailed(adjust(inp) if adjust else inp)
    notes = (*run.report.notes, *task.notes, *layer_notes)
    run.report = run.report.model_copy(update={"notes": tuple(dict.fromkeys(notes))})
    return TaskValidation(
        Path(path),
        task,
        build.image,
        run,
        build_s,
        tuple(build.substitutions),
        tuple(build.warnings),
    )


def _expects_a_secondary_row(expected: str | None, semantics: Sequence[str]) -> bool:
    """Whether a task's `expected_failure` names a row under one of its other semantics
    (e.g. ``harbor:probe:reward-file``)."""
    return expected is not None and row_semantics_of(expected) in semantics[1:]
