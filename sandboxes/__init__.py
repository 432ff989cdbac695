"""Docker sandboxes without a registry: base images, builds, locked-down exec, snapshots.

Imports nothing of ours but the domain models, errors and settings (``envfactory.core``).

Cheat-sheet (details in `protocol.py`; upper layers type against `SandboxEngine`/`Sandbox`)::

    engine = DockerEngine(settings.sandbox, run_id="run-42")   # settings from the edge
    image = engine.ensure_base_image("python")     # envfactory/base-python:<recipe hash>
    engine.ensure_base_image("minimal", release="trixie")  # Debian 13; default bookworm
    res = engine.build(context_tar, on_log=store_log)   # BuildResult; cached by content
    res.substitutions   # ("python:3.11-slim -> envfactory/base-python:…",)
    res.warnings        # ("ubuntu:24.04 -> envfactory/base:…: Ubuntu 24.04 (noble) is built as …",)

    with engine.sandbox(res.image, limits=spec.limits, purpose=Purpose.EPISODE) as sb:
        r = sb.exec("pytest -q", timeout=60, workdir="/workspace")  # never raises on exit≠0
        r.exit_code, r.stdout, r.truncated, r.timed_out, r.oom_killed, r.disk_exceeded
        # SandboxBroken (.reason: pids_exhausted / container_dead / runtime_error /
        # disk_exceeded) when the command never ran: never an exit code
        sb.write_file("/workspace/x.py", "print(1)"); sb.read_file("/logs/reward.txt")
        sb.diff()                     # [PathChange]; fast (overlay upper dir)
        ref = sb.snapshot(StateKind.SOLVER, label="judge-1")   # StateRef; ~0.4 s (layer load)
        sb.restart()                  # every process ends, files stay (~0.7 s)

    with engine.standby(image, limits=spec.limits, purpose=Purpose.VERIFY):  # gate runs
        engine.start(image, limits=spec.limits, purpose=Purpose.VERIFY)  # handed out, no wait

    async with engine.asandbox(image) as sb:       # Temporal activities
        r = await sb.aexec("make test")

    engine.gc()    # orphans only (owner process gone); never touches unlabelled things
    Janitor(engine, period_s=120).start()   # sandboxes.janitor: gc at start, then periodically

Disk: `Limits.disk_mb` per sandbox — storage-opt where the driver takes it, and a watchdog
(`disk.py`) that removes a sandbox past its quota (`r.disk_exceeded`).

Network is off unless `network=True` (or `Limits.network`); builds reach package
registries on envfactory's own build network, fenced off from the host and its LAN
(`build_network.py`), unless `settings.build_network` is off. A Dockerfile envfactory did
not write may make the daemon fetch nothing (`ADD <url>`, `FROM` / `COPY --from=` of a
non-base image are refused: `dockerfile_policy.py`). Root keeps only `Limits.capabilities`' profile
(`capabilities.py`: "root-work" by default, "locked" drops every capability). `SandboxFileNotFound` is a FileNotFoundError.

Modules, front door first::

    engine.py       DockerEngine: the pool of slots, standby, start/run/sandbox/asandbox, gc
    images.py       base images by flavour and release, FROM substitution, cached builds
    containers.py   a sandbox Kind's container: created locked down, started, adopted;
                    the runtime (runc/runsc), storage-opt, the disk watchdog
    standby.py      containers started ahead of demand (Kind, Launched, Standby)
    sandbox.py      DockerSandbox: exec, files, diff, snapshot, restart, remove
    execution.py    exec with a hard timeout and an output cap; a run's end mark
    base_image.py   debootstrap base images; builds.py: contexts, FROM maps, run_build
    log_tail.py     a build log's bounded tail (its last MiB) and the count of what was dropped
    capabilities.py, disk.py, health.py, native_usr.py, services.py,
    overlay_diff.py, overlay_snapshot.py, labels.py, gc.py, janitor.py, protocol.py
"""

from .engine import DockerEngine, tar_dir
from .protocol import Sandbox, SandboxEngine
from .sandbox import DockerSandbox

__all__ = ["DockerEngine", "DockerSandbox", "Sandbox", "SandboxEngine", "tar_dir"]
