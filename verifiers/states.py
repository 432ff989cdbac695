"""Producing the states the gates verify: each one once, then reused by every repeat.

A gate state is a *recipe* (solution steps, then maybe a probe) applied to the pristine
image in a sandbox and captured:
- scope ``workspace``: the tars of the workspace paths (what verification copies in);
- scope ``full-state``: the recipe itself, which each verification replays in a fresh
  container and then restarts (every process ends) before verifying, plus the tamper
  evidence of the produced state (a state with tamper evidence is never verified: its
  reward is 0 by rule).

Why recipes and not `docker commit`: on this engine (fuse-overlayfs) a commit costs ~10 s
and a `docker diff` 4–7 s, while a container start is ~0.5 s and a restart ~0.4 s; steps
are cheap shell. Measured, not guessed — see benchmarks/validate_throughput.py. A state
is committed only when asked (`commit=True`), to keep it as evidence.

The reference solution's prefixes and the oracle come from one sandbox: run step 1,
capture "prefix-1", run step 2, …, capture "oracle". Invariant: tamper evidence is always
relative to the pristine image; a failing step is data recorded on the state.
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace

from envfactory.core.errors import SandboxBroken
from envfactory.core.models import (
    EnvironmentSpec,
    PathChange,
    StateKind,
    StateRef,
    Step,
    StepFailure,
    VerifyScope,
)
from sandboxes.protocol import Sandbox, SandboxEngine

from .probes import Probe
from .processes import KILL_STRAYS
from .runner import PreparedState, Replay, extract_workspace, prepare_state, workspace_from
from .statediff import live_diff, pristine_listing
from .tamper import tamper_changes


@dataclass(frozen=True)
class ProducedState:
    """A captured state, ready to verify any number of times."""

    name: str  # "no-op", "prefix-2", "oracle", "partial:x", "probe:conftest-pass@prefix-1"
    kind: StateKind
    prepared: PreparedState
    recipe: tuple[Replay, ...] = ()  # how to re-create it from the pristine image
    diff: tuple[PathChange, ...] = ()  # sensitive changes against the pristine image
    ref: StateRef | None = None  # set when the state exists as an image
    produce_s: float = 0.0  # wall time to produce and capture it
    log: tuple[str, ...] = field(default=())  # failed steps, probe errors


class ReferenceStepFailed(Exception):
    """A step of a chain run with `stop_on_failure` exited non-zero (or timed out)."""

    def __init__(self, failure: StepFailure) -> None:
        super().__init__(f"step {failure.step} failed")
        self.failure = failure


def kill_replay() -> Replay:
    """A recipe entry that ends every process the entries before it left running."""
    return Replay(argv=("/bin/sh", "-c", KILL_STRAYS), workdir="/")


def pristine_state(engine: SandboxEngine, image: str, spec: EnvironmentSpec) -> ProducedState:
    """The untouched environment (the no-op state). Its workspace is extracted too, so a
    probe that leaves the workspace as it was is recognised as the same verification."""
    t0 = time.monotonic()
    prepared = prepare_state(engine, state_image=image, pristine_image=image, spec=spec)
    if spec.verify_scope == VerifyScope.WORKSPACE:
        prepared = replace(prepared, workspace=tuple(extract_workspace(engine, image, spec)))
    ref = StateRef(image=image, kind=StateKind.PRISTINE, label="no-op", env_id=spec.id)
    return ProducedState("no-op", StateKind.PRISTINE, prepared, (), (), ref, time.monotonic() - t0)


def step_replay(step: Step, spec: EnvironmentSpec) -> Replay:
    return Replay(argv=("bash", "-c", step.script), workdir=spec.workdir)


def probe_replay(probe: Probe, spec: EnvironmentSpec, semantics: str = "envfactory") -> Replay:
    """The probe as a recipe entry, as far as a verifier can resist it under `semantics`."""
    return Replay(argv=("/bin/sh", "-c", probe.script_under(spec, semantics)), workdir="/")


def run_recipe(
    box: Sandbox, spec: EnvironmentSpec, recipe: Sequence[Replay], names: Sequence[str]
) -> list[str]:
    """Run recipe entries in order; one log line per entry that failed."""
    log = []
    for entry, name in zip(recipe, names, strict=True):
        res = box.exec(
            list(entry.argv), timeout=spec.limits.exec_timeout_s, workdir=entry.workdir, user="root"
        )
        if not res.ok:
            tail = (res.stderr or res.stdout).strip()[-300:]
            log.append(
                f"{name} exited {res.exit_code}{' (timed out)' if res.timed_out else ''}: {tail}"
            )
    return log


def capture(
    engine: SandboxEngine,
    box: Sandbox,
    spec: EnvironmentSpec,
    *,
    pristine: str,
    recipe: tuple[Replay, ...],
    want_diff: bool,
) -> tuple[PreparedState, tuple[PathChange, ...]]:
    """Capture the sandbox's current filesystem as a state (see module docstring).

    Callers that want a diff warm `statediff.pristine_listing` before starting `box`."""
    full = spec.verify_scope == VerifyScope.FULL_STATE
    diff = live_diff(engine, box, pristine, spec) if (want_diff or full) else ()
    notes = (
        () if diff is not None else ("could not list the state's changes: tamper evidence unknown",)
    )
    tamper = tamper_changes(diff or (), spec.workspace_paths)
    if full:
        return PreparedState(
            pristine, VerifyScope.FULL_STATE, (), tamper, recipe, notes, diff is not None
        ), diff or ()
    workspace = tuple(workspace_from(box, spec.workspace_paths))
    return PreparedState(
        pristine, VerifyScope.WORKSPACE, workspace, tamper, (), notes, diff is not None
    ), diff or ()


def produce_chain(
    engine: SandboxEngine,
    pristine: str,
    spec: EnvironmentSpec,
    steps: Sequence[Step],
    *,
    names: Sequence[str | None],
    kinds: Sequence[StateKind],
    want_diff: bool = True,
    stop_on_failure: bool = False,
) -> list[ProducedState]:
    """Apply `steps` in one sandbox, capturing after step i whenever `names[i]` is set.

    With `stop_on_failure` (the reference solution), a failing step raises
    `ReferenceStepFailed` at once: nothing after it is worth producing."""
    out: list[ProducedState] = []
    t0 = time.monotonic()
    log: list[str] = []
    recipe: tuple[Replay, ...] = ()
    if want_diff or spec.verify_scope == VerifyScope.FULL_STATE:
        pristine_listing(engine, pristine, spec)  # never while holding a sandbox slot
    box = engine.start(
        pristine,
        limits=spec.limits,
        purpose="gate-state",
        network=spec.limits.network,
        services=spec.services,
    )
    try:
        for i, step in enumerate(steps):
            entry = step_replay(step, spec)
            recipe += (entry,)
            if stop_on_failure:
                _run_or_raise(box, spec, entry, i + 1, step.title)
            else:
                log += run_recipe(
                    box, spec, [entry], [f"step {i + 1} ({step.title or 'untitled'})"]
                )
            name = names[i]
            if name is None:
                continue
            prepared, diff = capture(
                engine, box, spec, pristine=pristine, recipe=recipe, want_diff=want_diff
            )
            now = time.monotonic()
            out.append(
                ProducedState(name, kinds[i], prepared, recipe, diff, None, now - t0, tuple(log))
            )
            t0 = now
    finally:
        box.remove()
    return out


def _run_or_raise(
    box: Sandbox, spec: EnvironmentSpec, entry: Replay, number: int, title: str
) -> None:
    title = title or _first_line(entry)
    try:
        res = box.exec(
            list(entry.argv),
            timeout=spec.limits.exec_timeout_s,
            workdir=entry.workdir,
            user="root",
        )
    except SandboxBroken as exc:
        raise _broken_step(box, exc, number, title) from exc
    if not res.ok:
        output = f"{res.stdout.strip()[-1500:]}\n{res.stderr.strip()[-1500:]}".strip()
        if res.disk_exceeded:
            output = f"the step wrote past the sandbox's disk quota ({spec.limits.disk_mb} MiB)\n{output}"
        raise ReferenceStepFailed(
            StepFailure(
                step=number,
                title=title,
                exit_code=res.exit_code,
                timed_out=res.timed_out,
                output=output.strip(),
            )
        )


def _broken_step(box: Sandbox, exc: SandboxBroken, number: int, title: str) -> ReferenceStepFailed:
    """The sandbox could not run reference step `number`. When a restart (every process
    ends, files stay) brings it back, what the earlier steps left running broke it: the
    reference solution failed. When it does not, the engine is at fault and the second
    `SandboxBroken` propagates (the gate run fails loudly and is retried)."""
    if exc.reason != "disk_exceeded":
        box.restart()
        box.exec(["true"], timeout=30)
    output = f"the sandbox could not run this step: {exc.message}"
    return ReferenceStepFailed(StepFailure(step=number, title=title, output=output))


def _first_line(entry: Replay) -> str:
    """A title for an untitled step: its heading comment, else its first command."""
    lines = [
        ln.strip()
        for ln in entry.argv[-1].splitlines()
        if ln.strip() and not ln.startswith(("set ", "cd ", "export ", "#!"))
    ]
    return lines[0].lstrip("# ")[:80] if lines else ""


def produce_probe(
    engine: SandboxEngine,
    pristine: str,
    spec: EnvironmentSpec,
    base: ProducedState,
    probe: Probe,
    semantics: str = "envfactory",
) -> ProducedState:
    """Re-create `base` from its recipe in a fresh sandbox and apply `probe` on top."""
    t0 = time.monotonic()
    recipe = (*base.recipe, probe_replay(probe, spec, semantics))
    names = [f"{base.name} step {i + 1}" for i in range(len(base.recipe))] + [f"probe {probe.name}"]
    if spec.verify_scope == VerifyScope.FULL_STATE:
        pristine_listing(engine, pristine, spec)  # never while holding a sandbox slot
    box = engine.start(
        pristine,
        limits=spec.limits,
        purpose="gate-probe",
        network=spec.limits.network,
        services=spec.services,
    )
    try:
        log = run_recipe(box, spec, recipe, names)
        prepared, diff = capture(
            engine, box, spec, pristine=pristine, recipe=recipe, want_diff=False
        )
    finally:
        box.remove()
    name = f"probe:{probe.name}@{base.name}"
    return ProducedState(
        name, StateKind.PROBE, prepared, recipe, diff, None, time.monotonic() - t0, tuple(log)
    )


#: Probes whose changes outside the workspace would disturb later probes in the same
#: container (hijacked interpreters and shells) run last in a batch.
_DISRUPTIVE = ("startup-hook", "path-hijack")
_KEEP = "/.envfactory-base"


def produce_probe_batch(
    engine: SandboxEngine,
    pristine: str,
    spec: EnvironmentSpec,
    base: ProducedState,
    probes: Sequence[Probe],
) -> Iterator[ProducedState]:
    """Every probe on `base` in ONE sandbox (scope `workspace` only), yielding each state.

    A workspace-scope verification sees nothing of a state but its workspace, so a probe
    state is fully described by the workspace it leaves. The sandbox re-creates `base`
    once and keeps a copy of its workspace; each probe then starts from that copy, runs,
    and every process it left is killed before its workspace is archived. Probes that
    hijack the tools other probes use run last, so each probe's workspace is what it
    would leave on a clean copy of `base` — at a fraction of a container per probe.
    """
    assert spec.verify_scope == VerifyScope.WORKSPACE
    t0 = time.monotonic()
    box = engine.start(
        pristine,
        limits=spec.limits,
        purpose="gate-probe",
        network=spec.limits.network,
        services=spec.services,
    )
    try:
        names = [f"{base.name} step {i + 1}" for i in range(len(base.recipe))]
        base_log = run_recipe(box, spec, base.recipe, names)
        keep = _keep_workspace(box, spec)
        for probe in sorted(probes, key=lambda p: p.name in _DISRUPTIVE):
            # One exec: restore the base workspace, run the probe in a subshell (its `exit`
            # ends only the subshell), then kill every process it left behind.
            script = f"{keep}\n(\n{probe.script(spec)}\n)\nrc=$?\n{KILL_STRAYS}\nexit $rc"
            res = box.exec(
                ["/bin/sh", "-c", script], timeout=spec.limits.exec_timeout_s, user="root"
            )
            workspace = tuple(workspace_from(box, spec.workspace_paths))
            prepared = PreparedState(pristine, VerifyScope.WORKSPACE, workspace, (), (), ())
            log = (
                ()
                if res.ok
                else (
                    f"probe {probe.name} exited {res.exit_code}: {(res.stderr or res.stdout).strip()[-300:]}",
                )
            )
            recipe = (*base.recipe, probe_replay(probe, spec))
            now = time.monotonic()
            yield ProducedState(
                f"probe:{probe.name}@{base.name}",
                StateKind.PROBE,
                prepared,
                recipe,
                (),
                None,
                now - t0,
                (*base_log, *log),
            )
            t0 = now
    finally:
        box.remove()


def _keep_workspace(box: Sandbox, spec: EnvironmentSpec) -> str:
    """Copy the workspace aside; return the shell that restores it before each probe."""
    save, restore = [f"rm -rf {_KEEP}; mkdir -p {_KEEP}"], []
    for i, ws in enumerate(spec.workspace_paths):
        src, copy = shlex.quote(ws), shlex.quote(f"{_KEEP}/{i}")
        save.append(f"if [ -e {src} ]; then cp -a {src} {copy}; fi")
        restore.append(f"rm -rf {src}; if [ -e {copy} ]; then cp -a {copy} {src}; fi")
    box.exec(["/bin/sh", "-c", "\n".join(save)], timeout=120, user="root")
    return "\n".join(restore)


def regression_state(
    engine: SandboxEngine, pristine: str, spec: EnvironmentSpec, ref: StateRef
) -> ProducedState:
    """A stored shortcut state: prepared from its image (with its diff when it has one)."""
    t0 = time.monotonic()
    prepared = prepare_state(
        engine,
        state_image=ref.image,
        pristine_image=pristine,
        spec=spec,
        state_diff=ref.diff or None,
    )
    name = f"regression:{ref.label or ref.image[:19]}"
    return ProducedState(
        name, StateKind.REGRESSION, prepared, (), ref.diff, ref, time.monotonic() - t0
    )
