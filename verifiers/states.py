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

import re
import shlex
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace

from envfactory.core.errors import SandboxBroken, SandboxFileNotFound
from envfactory.core.models import (
    EnvironmentSpec,
    PathChange,
    Purpose,
    StateKind,
    StateRef,
    Step,
    StepFailure,
    VerifyScope,
)
from envfactory.core.models.rows import RowId
from sandboxes.protocol import Sandbox, SandboxEngine

from . import archives
from .prepare import (
    KILLS_ALL,
    PreparedState,
    Replay,
    archive_root,
    extract_workspace,
    native_usr_workspace,
    prepare_state,
    workspace_from,
)
from .probes import Probe
from .processes import KILL_STRAYS
from .statediff import live_diff, pristine_listing
from .step_errors import failed_commands, read_marks, step_output, traced
from .tamper import tamper_changes


@dataclass(frozen=True)
class ProducedState:
    """A captured state, ready to verify any number of times."""

    row: RowId  # the state's identity: no-op, prefix-2, oracle, probe:X@prefix-1, …
    kind: StateKind
    prepared: PreparedState
    recipe: tuple[Replay, ...] = ()  # how to re-create it from the pristine image
    diff: tuple[PathChange, ...] = ()  # sensitive changes against the pristine image
    ref: StateRef | None = None  # set when the state exists as an image
    produce_s: float = 0.0  # wall time to produce and capture it
    log: tuple[str, ...] = field(default=())  # failed steps, probe errors
    #: the workspace paths' tars of a full-state oracle or no-op (a full-state state is
    #: verified from its recipe; the probes built from the oracle's outputs read these)
    files: tuple[tuple[str, bytes | None], ...] = field(default=())
    #: commands that failed inside the reference steps that made it, each step having run
    #: through (`verifiers.step_errors`): a reference state's evidence
    errors: tuple[StepFailure, ...] = field(default=())

    @property
    def name(self) -> str:
        return str(self.row)

    @property
    def workspace(self) -> tuple[tuple[str, bytes | None], ...]:
        """The workspace paths' tars, whichever the scope (empty where none was kept)."""
        return self.prepared.workspace or self.files


class ReferenceStepFailed(Exception):
    """A step of a chain run with `stop_on_failure` exited non-zero (or timed out)."""

    def __init__(self, failure: StepFailure) -> None:
        super().__init__(f"step {failure.step} failed")
        self.failure = failure


def pristine_state(engine: SandboxEngine, image: str, spec: EnvironmentSpec) -> ProducedState:
    """The untouched environment (the no-op state). Its workspace is extracted too, so a
    probe that leaves the workspace as it was is recognised as the same verification."""
    t0 = time.monotonic()
    prepared = prepare_state(engine, state_image=image, pristine_image=image, spec=spec)
    files = tuple(extract_workspace(engine, image, spec))
    if spec.verify_scope == VerifyScope.WORKSPACE:
        prepared = replace(prepared, workspace=files)
    ref = StateRef(image=image, kind=StateKind.PRISTINE, label="no-op", env_id=spec.id)
    kept = files if spec.verify_scope == VerifyScope.FULL_STATE else ()
    return ProducedState(
        RowId.noop(), StateKind.PRISTINE, prepared, (), (), ref, time.monotonic() - t0, (), kept
    )


#: where a chain keeps its shell's variables and functions between steps (`carried`)
SHELL_STATE_DIR = "/.envfactory-shell"

#: Bash run around each step of a chain of several: what the earlier steps' shell held
#: (variables, arrays, functions; readonly and bash's own variables aside) is restored
#: first, and saved again when the step exits, however it exits (`exit`, `set -e`), with
#: its exit status kept. The last step removes the saved state instead. A step that sets
#: an EXIT trap of its own replaces this one: its successors then start as before.
_CARRY_HEAD = r"""__ef_s=%(dir)s/state
if [ -r "$__ef_s" ]; then . "$__ef_s"; fi
__ef_save() {
  __ef_rc=$?; set +e
  if [ -n "%(last)s" ]; then rm -rf %(dir)s; exit $__ef_rc; fi
  mkdir -p %(dir)s && {
    for __ef_v in $(compgen -v); do
      case $__ef_v in BASH*|EUID|UID|PPID|SHELLOPTS|FUNCNAME|GROUPS|HISTCMD|LINENO|\
        RANDOM|SECONDS|SRANDOM|EPOCH*|PIPESTATUS|_|OLDPWD|PWD|SHLVL|DIRSTACK|COMP_*|\
        OPTIND|OPTARG|OPTERR|IFS|PS[0-9]|__ef_*) continue ;; esac
      __ef_d=$(declare -p "$__ef_v" 2>/dev/null) || continue
      __ef_f=${__ef_d#declare -}; __ef_f=${__ef_f%%%% *}
      case $__ef_f in *r*) continue ;; esac
      printf '%%s\n' "$__ef_d"
    done
    for __ef_v in $(compgen -A function); do
      case $__ef_v in __ef_*) ;; *) declare -f "$__ef_v" ;; esac
    done
  } > "$__ef_s.tmp" && mv -f "$__ef_s.tmp" "$__ef_s"
  exit $__ef_rc
}
trap __ef_save EXIT
"""


def step_replay(
    step: Step, spec: EnvironmentSpec, *, carry: bool = False, last: bool = False
) -> Replay:
    """A step as a recipe entry: a bash of its own, in the task's working directory; with
    `carry`, one of a chain whose shell state it takes from the steps before it and
    leaves to the ones after (`carried`)."""
    script = carried(step.script, last=last) if carry else step.script
    return Replay(argv=("bash", "-c", script), workdir=spec.workdir)


def carried(script: str, *, last: bool) -> str:
    """`script` run as one step of a chain that behaves like one shell: the variables
    and functions of the steps before it restored, its own saved for the steps after.
    What a real solve.sh keeps across its `# step` markers (``work=$(mktemp -d)`` in
    step 1, ``cd $work`` in step 2) survives, and a state's recipe replays the same way
    in a fresh container, since the saved state is written there by the replayed steps
    themselves."""
    head = _CARRY_HEAD % {"dir": SHELL_STATE_DIR, "last": "1" if last else ""}
    return f"{head}{script}"


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


def _start(engine: SandboxEngine, image: str, spec: EnvironmentSpec, purpose: Purpose) -> Sandbox:
    """A sandbox on `image` with the task's limits, network and services."""
    return engine.start(
        image,
        limits=spec.limits,
        purpose=purpose,
        network=spec.limits.network,
        services=spec.services,
    )


def produce_chain(
    engine: SandboxEngine,
    pristine: str,
    spec: EnvironmentSpec,
    steps: Sequence[Step],
    *,
    rows: Sequence[RowId | None],
    kinds: Sequence[StateKind],
    want_diff: bool = True,
    stop_on_failure: bool = False,
) -> list[ProducedState]:
    """Apply `steps` in one sandbox, capturing after step i whenever `rows[i]` is set.

    With `stop_on_failure` (the reference solution), a failing step raises
    `ReferenceStepFailed` at once: nothing after it is worth producing."""
    out: list[ProducedState] = []
    t0 = time.monotonic()
    log: list[str] = []
    recipe: tuple[Replay, ...] = ()
    errors: tuple[StepFailure, ...] = ()
    if want_diff or spec.verify_scope == VerifyScope.FULL_STATE:
        pristine_listing(engine, pristine, spec)  # never while holding a sandbox slot
    box = _start(engine, pristine, spec, Purpose.GATE_STATE)
    try:
        carry = len(steps) > 1
        for i, step in enumerate(steps):
            entry = step_replay(step, spec, carry=carry, last=i == len(steps) - 1)
            recipe += (entry,)
            if stop_on_failure:
                errors += _run_or_raise(box, spec, entry, i + 1, step.title)
            else:
                log += run_recipe(
                    box, spec, [entry], [f"step {i + 1} ({step.title or 'untitled'})"]
                )
            row = rows[i]
            if row is None:
                continue
            prepared, diff = capture(
                engine, box, spec, pristine=pristine, recipe=recipe, want_diff=want_diff
            )
            now = time.monotonic()
            files = _full_state_files(box, spec) if kinds[i] == StateKind.ORACLE else ()
            out.append(
                ProducedState(
                    row, kinds[i], prepared, recipe, diff, None, now - t0, tuple(log), files, errors
                )
            )
            t0 = now
    finally:
        box.remove()
    return out


def _full_state_files(box: Sandbox, spec: EnvironmentSpec) -> tuple[tuple[str, bytes | None], ...]:
    """A full-state state's workspace tars (a workspace-scope state has them already)."""
    if spec.verify_scope != VerifyScope.FULL_STATE:
        return ()
    return tuple(workspace_from(box, spec.workspace_paths))


def _run_or_raise(
    box: Sandbox, spec: EnvironmentSpec, entry: Replay, number: int, title: str
) -> tuple[StepFailure, ...]:
    """Run a reference step (traced: `verifiers.step_errors`); raise `ReferenceStepFailed`
    when it fails, else return the commands that failed inside it."""
    title = title or _first_line(entry)
    try:
        res = box.exec(
            [*entry.argv[:-1], traced(entry.argv[-1])],
            timeout=spec.limits.exec_timeout_s,
            workdir=entry.workdir,
            user="root",
        )
    except SandboxBroken as exc:
        raise _broken_step(box, exc, number, title) from exc
    if not res.ok:
        output = step_output(res)
        failed = read_marks(res.stderr)[1]
        if res.disk_exceeded:
            output = f"the step wrote past the sandbox's disk quota ({spec.limits.disk_mb} MiB)\n{output}"
        raise ReferenceStepFailed(
            StepFailure(
                step=number,
                title=title,
                exit_code=res.exit_code,
                timed_out=res.timed_out,
                output=output.strip(),
                command=failed[-1][1][:300] if failed and failed[-1][0] == res.exit_code else "",
            )
        )
    return failed_commands(res, number, title)


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
    box = _start(engine, pristine, spec, Purpose.GATE_PROBE)
    try:
        log = run_recipe(box, spec, recipe, names)
        prepared, diff = capture(
            engine, box, spec, pristine=pristine, recipe=recipe, want_diff=False
        )
    finally:
        box.remove()
    return ProducedState(
        RowId.probe_on(probe.name, base.row),
        StateKind.PROBE,
        prepared,
        recipe,
        diff,
        None,
        time.monotonic() - t0,
        tuple(log),
    )


def read_state(
    engine: SandboxEngine, pristine: str, spec: EnvironmentSpec, base: ProducedState, script: str
) -> str | None:
    """`base` re-created from its recipe in a fresh sandbox, its strays ended, and what
    `script` (shell, as root) prints there; None when the script failed, timed out or
    printed past the output cap. Reads what a state holds that only its own programs
    can read (a database cluster: `probes.postgres`)."""
    box = _start(engine, pristine, spec, Purpose.GATE_PROBE)
    try:
        recipe = (*base.recipe, KILLS_ALL)
        run_recipe(box, spec, recipe, [f"{base.name} step {i + 1}" for i in range(len(recipe))])
        res = box.exec(["/bin/sh", "-c", script], timeout=spec.limits.exec_timeout_s, user="root")
    finally:
        box.remove()
    return res.stdout if res.ok and not res.truncated else None


#: Probes whose changes outside the workspace would disturb later probes in the same
#: container (hijacked interpreters and shells) run last in a batch.
_DISRUPTIVE = ("startup-hook", "path-hijack")
_KEEP = "/.envfactory-base"
_OUT = "/.envfactory-probes"
#: At most this much workspace (KiB, all probes of a batch together) is moved aside and
#: archived at once; past it each probe's workspace is archived on its own.
_BATCH_MAX_KIB = 64 * 1024
_BATCH_MAX_SCRIPT = 96 * 1024  # one exec's argument (Linux takes 128 KiB)


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
    and every process it left is killed before its workspace is taken. Probes that
    hijack the tools other probes use run last, so each probe's workspace is what it
    would leave on a clean copy of `base` — at a fraction of a container per probe.

    Nothing but the workspaces is taken from this sandbox, so it reads /usr/lib and
    /usr/local through the kernel's overlayfs where no workspace path lies there
    (`prepare.native_usr_workspace`: cheaper for the hundreds of processes a batch starts;
    what a probe writes there stays visible to the probes after it, as without it).

    They run in one exec, each copying its workspace aside, and one archive brings every
    workspace out (`_run_batch`: an exec and an archive cost the engine ~0.04 s of CPU
    each, more than most probes). The probes that exec did not finish (it stops at the
    first whose workspace it could not copy, so they are the last ones) run in an exec
    of their own each, in the same order, their workspaces archived by the engine.
    """
    assert spec.verify_scope == VerifyScope.WORKSPACE
    t0 = time.monotonic()
    box = engine.start(
        pristine,
        limits=spec.limits,
        purpose=Purpose.GATE_PROBE,
        network=spec.limits.network,
        services=spec.services,
        native_usr=native_usr_workspace(spec),
    )
    try:
        names = [f"{base.name} step {i + 1}" for i in range(len(base.recipe))]
        base_log = run_recipe(box, spec, base.recipe, names)
        keep, kib = _keep_workspace(box, spec)
        ordered = sorted(probes, key=lambda p: p.name in _DISRUPTIVE)
        done = _run_batch(box, spec, keep, ordered) if _batchable(spec, kib, len(ordered)) else {}
        per_probe = (time.monotonic() - t0) / len(done) if done else 0.0
        if done:
            t0 = time.monotonic()
        for i, probe in enumerate(ordered):
            got = done.get(i)
            if got is None:
                got = _run_alone(box, spec, keep, probe)
            workspace, log = got
            prepared = PreparedState(pristine, VerifyScope.WORKSPACE, workspace, (), (), ())
            recipe = (*base.recipe, probe_replay(probe, spec))
            now = time.monotonic()
            yield ProducedState(
                RowId.probe_on(probe.name, base.row),
                StateKind.PROBE,
                prepared,
                recipe,
                (),
                None,
                per_probe if i in done else now - t0,
                (*base_log, *log),
            )
            if i not in done:
                t0 = now
    finally:
        box.remove()


#: What a probe leaves: its workspace tars and, when it failed, a log line.
_Captured = tuple[tuple[tuple[str, bytes | None], ...], tuple[str, ...]]


def _run_alone(box: Sandbox, spec: EnvironmentSpec, keep: str, probe: Probe) -> _Captured:
    """One exec: restore the base workspace, run the probe as its own shell (as in a
    batch: its `exit`, `$$` and syntax are its own), kill every process it left behind;
    then archive."""
    script = (
        f"{keep}\ncd / && /bin/sh -c {shlex.quote(probe.script(spec))} </dev/null\nrc=$?\n"
        f"{KILL_STRAYS}\nexit $rc"
    )
    res = box.exec(
        ["/bin/sh", "-c", script], timeout=spec.limits.exec_timeout_s, user="root", workdir="/"
    )
    workspace = tuple(workspace_from(box, spec.workspace_paths))
    if res.ok:
        return workspace, ()
    tail = (res.stderr or res.stdout).strip()[-300:]
    return workspace, (f"probe {probe.name} exited {res.exit_code}: {tail}",)


def _batchable(spec: EnvironmentSpec, kib: int | None, n: int) -> bool:
    """Whether `n` probes may share one exec: the workspaces copied aside fit in memory
    and on disk at once, and no workspace path lies inside another (the outer one's
    copy would hold the inner one's too)."""
    if n < 2 or kib is None or kib * n > _BATCH_MAX_KIB:
        return False
    paths = [p.rstrip("/") + "/" for p in spec.workspace_paths]
    return not any(a != b and b.startswith(a) for a in paths for b in paths)


def _run_batch(
    box: Sandbox, spec: EnvironmentSpec, keep: str, probes: Sequence[Probe]
) -> dict[int, _Captured]:
    """Each probe in turn in one exec: restore the base workspace, run the probe as its
    own shell (`cd /`, as its recipe entry), kill every process it left, copy each
    workspace path under `_OUT/<i>/<k>/` (`cp -a`: modes, owners, times and hard links
    as they are; `mv` would be cheaper, but fuse-overlayfs moves a directory by copying
    it and then fails to remove it) and write the probe's exit status last — or stop
    there when the copy failed; then one archive of `_OUT`. The batch's own tools are
    named by absolute path and the stray-killing is shell builtins, so a probe that
    plants tools in PATH directories (run last) cannot change what is copied. Returns
    what each probe left, by its position, for those whose status is there (a probe that
    writes outside the workspace into this batch's own directories could still reach
    the copies made before it: the library's probes stay in the workspace and the usual
    tool and result places)."""
    lines = [f"cd / && /bin/rm -rf {_OUT} && /bin/mkdir -m 0700 {_OUT} || exit 125"]
    for i, probe in enumerate(probes):
        here = f"{_OUT}/{i}"
        dirs = " ".join([here, *(f"{here}/{k}" for k in range(len(spec.workspace_paths)))])
        copies = " && ".join(
            f"{{ ! [ -e {shlex.quote(ws)} ] && ! [ -L {shlex.quote(ws)} ] || "
            f"/bin/cp -a -- {shlex.quote(ws)} {here}/{k}/; }}"
            for k, ws in enumerate(spec.workspace_paths)
        )
        lines += [
            keep,
            f"/bin/sh -c {shlex.quote(probe.script(spec))} >{_OUT}/log-{i} 2>&1 </dev/null",
            "rc=$?",
            KILL_STRAYS,
            # made now (one process when nothing is there): nothing a probe wrote there
            # beforehand is taken for its copy
            f"/bin/mkdir {dirs} 2>/dev/null || {{ /bin/rm -rf {here} && /bin/mkdir {dirs}; }} "
            f"|| exit 0",
            f"{copies} && echo $rc >{here}/rc || exit 0",
        ]
    script = "\n".join([*lines, "exit 0"])
    if len(script) > _BATCH_MAX_SCRIPT:
        return {}
    box.exec(
        ["/bin/sh", "-c", script], timeout=spec.limits.exec_timeout_s, user="root", workdir="/"
    )
    try:
        items = archives.members(box.get_archive(_OUT))
    except SandboxFileNotFound:
        return {}
    status = {  # "<i>/rc", "log-<i>": each probe's exit status and output
        m.name.split("/", 1)[1]: data or b""
        for m, data in items
        if m.isreg() and m.name.count("/") in (1, 2)
    }
    trees = archives.regroup(items, 2)  # "<i>/<k>": workspace path k after probe i
    out: dict[int, _Captured] = {}
    for i, probe in enumerate(probes):
        rc = status.get(f"{i}/rc")
        if rc is None:
            break  # the exec ended before this probe was copied: it and the rest run alone
        workspace = tuple(
            (path, _repacked(trees.get(f"{i}/{k}", []), path))
            for k, path in enumerate(spec.workspace_paths)
        )
        code = rc.decode(errors="replace").strip()
        tail = status.get(f"log-{i}", b"").decode("utf-8", "replace").strip()[-300:]
        out[i] = (
            workspace,
            (() if code == "0" else (f"probe {probe.name} exited {code}: {tail}",)),
        )
    if len(out) < len(probes):  # cut short: end what it left running before the rest run
        box.exec(["/bin/sh", "-c", KILL_STRAYS], timeout=30, user="root", workdir="/")
    return out


def _repacked(items: list[archives.Member], path: str) -> bytes | None:
    """A workspace path copied aside, packed as `workspace_from` packs it (None: absent)."""
    root = archive_root(path)
    tree = [(m, d) for m, d in items if m.name.split("/", 1)[0] == root]
    return archives.repack(tree, root_name=root) if tree else None


def _keep_workspace(box: Sandbox, spec: EnvironmentSpec) -> tuple[str, int | None]:
    """Copy the workspace aside; return the shell that restores it before each probe
    (its tools by absolute path, as `_run_batch`'s), and the copy's size in KiB (None
    when the image cannot say)."""
    save, restore = [f"/bin/rm -rf {_KEEP}; /bin/mkdir -p {_KEEP}"], []
    for i, ws in enumerate(spec.workspace_paths):
        src, copy = shlex.quote(ws), shlex.quote(f"{_KEEP}/{i}")
        save.append(f"if [ -e {src} ]; then /bin/cp -a {src} {copy}; fi")
        restore.append(f"/bin/rm -rf {src}; if [ -e {copy} ]; then /bin/cp -a {copy} {src}; fi")
    save.append(f'set -- $(du -sk {_KEEP} 2>/dev/null); echo "envfactory-kib ${{1:-}}"')
    res = box.exec(["/bin/sh", "-c", "\n".join(save)], timeout=120, user="root", workdir="/")
    m = re.search(r"envfactory-kib (\d+)", res.stdout)
    return "\n".join(restore), int(m.group(1)) if m else None


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
    return ProducedState(
        RowId.regression(ref.label or ref.image[:19]),
        StateKind.REGRESSION,
        prepared,
        (),
        ref.diff,
        ref,
        time.monotonic() - t0,
    )
