"""Producing the states the gates verify: each one once, then reused by every repeat.

A state is produced in a sandbox (apply solution steps, or a probe on top of another
state) and *captured*: its diff against the pristine image, the tars of its workspace
paths and, when needed, a committed image. The reference solution's prefixes and the
oracle come from one sandbox: run step 1, capture "prefix-1", run step 2, … capture
"oracle" — n states for the price of one container.

Invariants:
- a terminal capture ends every process first (the container stops), so what the
  verification sees is a filesystem, never a live solver process, and the workspace tars
  match the committed image;
- diffs are always relative to the pristine image (`tamper.merge_diffs` composes a
  probe's diff with its base state's);
- a failing step is data: it is recorded on the state and verification goes on.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from envfactory.core.models import EnvironmentSpec, PathChange, StateKind, StateRef, Step
from sandboxes.protocol import Sandbox, SandboxEngine

from .probes import Probe
from .runner import PreparedState, prepare_state, workspace_from
from .tamper import merge_diffs, tamper_changes


@dataclass(frozen=True)
class ProducedState:
    """A captured state, ready to verify any number of times."""

    name: str  # "no-op", "prefix-2", "oracle", "partial:x", "probe:conftest-pass@prefix-1"
    kind: StateKind
    prepared: PreparedState
    diff: tuple[PathChange, ...] = ()  # against the pristine image
    ref: StateRef | None = None  # None when not committed (workspace scope, probe states)
    produce_s: float = 0.0  # wall time to produce and capture it
    log: tuple[str, ...] = field(default=())  # failed steps, probe errors

    @property
    def image(self) -> str | None:
        return self.ref.image if self.ref else None


def pristine_state(engine: SandboxEngine, image: str, spec: EnvironmentSpec) -> ProducedState:
    """The untouched environment (the no-op state): nothing to produce."""
    prepared = prepare_state(
        engine, state_image=image, pristine_image=image, spec=spec, state_diff=(), workspace=()
    )
    ref = StateRef(image=image, kind=StateKind.PRISTINE, label="no-op", env_id=spec.id)
    return ProducedState("no-op", StateKind.PRISTINE, prepared, (), ref, 0.0)


def run_steps(
    box: Sandbox, spec: EnvironmentSpec, steps: Sequence[Step], offset: int = 0
) -> list[str]:
    """Run solution steps in order; returns one log line per failed step."""
    log = []
    for i, step in enumerate(steps, start=offset + 1):
        res = box.exec(step.script, timeout=spec.limits.exec_timeout_s, workdir=spec.workdir)
        if not res.ok:
            tail = (res.stderr or res.stdout).strip()[-300:]
            log.append(f"step {i} ({step.title or 'untitled'}) exited {res.exit_code}: {tail}")
    return log


def end_processes(box: Sandbox) -> None:
    """Kill everything in the container; with an init + `sleep` entrypoint it stops."""
    box.exec(["/bin/sh", "-c", "kill -9 -1 2>/dev/null; sleep 1"], timeout=5, user="root")


def capture(
    box: Sandbox,
    spec: EnvironmentSpec,
    *,
    name: str,
    kind: StateKind,
    pristine: str,
    base_diff: Sequence[PathChange] = (),
    commit: bool,
    terminal: bool,
) -> tuple[PreparedState, tuple[PathChange, ...], StateRef | None]:
    """Capture the sandbox's current filesystem as a state (see module docstring)."""
    if terminal:
        end_processes(box)
    diff = merge_diffs(base_diff, box.diff())
    ref = None
    if commit or spec.verify_scope == "full-state":
        ref = box.snapshot(kind, label=name, env_id=spec.id).model_copy(update={"diff": diff})
    workspace = (
        workspace_from(box, spec.workspace_paths) if spec.verify_scope == "workspace" else ()
    )
    if spec.verify_scope == "workspace":
        prepared = PreparedState(
            pristine, "workspace", tuple(workspace), tamper_changes(diff, spec.workspace_paths)
        )
    else:
        assert ref is not None
        prepared = PreparedState(
            ref.image, "full-state", (), tamper_changes(diff, spec.workspace_paths)
        )
    return prepared, diff, ref


def produce_chain(
    engine: SandboxEngine,
    pristine: str,
    spec: EnvironmentSpec,
    steps: Sequence[Step],
    *,
    names: Sequence[str | None],
    kinds: Sequence[StateKind],
    commit: Sequence[bool],
) -> list[ProducedState]:
    """Apply `steps` in one sandbox, capturing after step i whenever `names[i]` is set."""
    out: list[ProducedState] = []
    t0 = time.monotonic()
    log: list[str] = []
    box = engine.start(
        pristine, limits=spec.limits, purpose="gate-state", network=spec.limits.network
    )
    try:
        last = max(i for i, n in enumerate(names) if n is not None)
        for i, step in enumerate(steps[: last + 1]):
            log += run_steps(box, spec, [step], offset=i)
            if names[i] is None:
                continue
            prepared, diff, ref = capture(
                box, spec, name=names[i], kind=kinds[i], pristine=pristine,  # type: ignore[arg-type]
                commit=commit[i], terminal=i == last,
            )  # fmt: skip
            now = time.monotonic()
            out.append(ProducedState(names[i], kinds[i], prepared, diff, ref, now - t0, tuple(log)))  # type: ignore[arg-type]
            t0 = now
    finally:
        box.remove()
    return out


def produce_probe(
    engine: SandboxEngine,
    pristine: str,
    spec: EnvironmentSpec,
    base: ProducedState,
    probe: Probe,
    *,
    commit: bool,
) -> ProducedState | None:
    """Apply `probe` on top of `base`; None when the probe changed nothing there."""
    t0 = time.monotonic()
    image = base.image or pristine
    box = engine.start(image, limits=spec.limits, purpose="gate-probe", network=False)
    try:
        res = probe.apply(box, spec)
        if not box.diff():
            return None
        name = f"probe:{probe.name}@{base.name}"
        prepared, diff, ref = capture(
            box, spec, name=name, kind=StateKind.PROBE, pristine=pristine, base_diff=base.diff,
            commit=commit, terminal=True,
        )  # fmt: skip
    finally:
        box.remove()
    log = (
        ()
        if res.ok
        else (f"probe exited {res.exit_code}: {(res.stderr or res.stdout).strip()[-300:]}",)
    )
    return ProducedState(name, StateKind.PROBE, prepared, diff, ref, time.monotonic() - t0, log)


def regression_state(
    engine: SandboxEngine, pristine: str, spec: EnvironmentSpec, ref: StateRef
) -> ProducedState:
    """A stored shortcut state: prepared from its image (its diff when it has one)."""
    t0 = time.monotonic()
    prepared = prepare_state(
        engine,
        state_image=ref.image,
        pristine_image=pristine,
        spec=spec,
        state_diff=ref.diff or None,
    )
    name = f"regression:{ref.label or ref.image[:19]}"
    return ProducedState(name, StateKind.REGRESSION, prepared, ref.diff, ref, time.monotonic() - t0)
