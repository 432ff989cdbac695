"""Is a sandbox still able to run commands? `SandboxBroken` when it is not.

An exit status is the command's answer; a broken sandbox never gave one. Exit 125 and
126 are ambiguous (`timeout` and the runtime use them, and so may any command), so they
count as broken only on evidence the command cannot forge:
- the runtime never started the exec: `exec_inspect` reports no pid (its output is the
  runtime's message, e.g. "OCI runtime exec failed: … read init-p: connection reset");
- our `timeout` wrapper could not fork the command (its own one-line message, exit 125)
  *and* the container's pids are at their limit (sampled from the engine's stats: a
  command that merely prints those words is not believed).
Then the container's state says why: not running (dead, with its exit code and OOM
flag), pids exhausted, or another runtime refusal.
"""

from __future__ import annotations

import time

import docker
import docker.errors

from envfactory.core.errors import BrokenReason, SandboxBroken

from . import execution as X

_WORDS: dict[str, tuple[str, str]] = {
    "pids_exhausted": (
        "its pids limit is exhausted",
        "a process left running forks without end: restart() ends every process "
        "(files stay), or start a new sandbox",
    ),
    "container_dead": ("the container is not running", "start a new sandbox; remove() this one"),
    "runtime_error": ("the container runtime refused the command", "start a new sandbox"),
    "disk_exceeded": (
        "it wrote past its disk quota and was stopped",
        "raise limits.disk_mb if the task needs more",
    ),
}


def broken(container_id: str, reason: BrokenReason, detail: str) -> SandboxBroken:
    what, hint = _WORDS[reason]
    message = f"sandbox {container_id[:12]} can no longer run commands: {what}"
    return SandboxBroken(
        message + (f": {detail}" if detail else ""), reason=reason, detail=detail, hint=hint
    )


def never_started(
    client: docker.DockerClient,
    container_id: str,
    exec_id: str,
    exit_code: int,
    out: X.StreamOutcome,
) -> SandboxBroken | None:
    """`SandboxBroken` when an exec that ended with 125/126 never ran its command."""
    text = (out.stdout + out.stderr).decode("utf-8", "replace").strip()
    if client.api.exec_inspect(exec_id).get("Pid") == 0:
        return diagnose(client, container_id, text)
    wrapper = exit_code == 125 and not out.stdout and X.WRAPPER_FORK_FAILED.fullmatch(text)
    if wrapper and pids_full(client, container_id):
        return broken(container_id, "pids_exhausted", text)
    return None  # the command ran and chose its status (e.g. the verifier runner's 125)


def diagnose(client: docker.DockerClient, container_id: str, text: str) -> SandboxBroken:
    """Why the sandbox cannot run commands: dead container, full pids, or the runtime."""
    state = client.api.inspect_container(container_id).get("State") or {}
    if not state.get("Running"):
        oom = ", out of memory" if state.get("OOMKilled") else ""
        why = f"{text} (container exited {state.get('ExitCode')}{oom}) {state.get('Error') or ''}"
        return broken(container_id, "container_dead", why.strip())
    if pids_full(client, container_id):
        return broken(container_id, "pids_exhausted", text)
    return broken(container_id, "runtime_error", text)


def pids_full(client: docker.DockerClient, container_id: str, samples: int = 3) -> bool:
    """At its pids limit in any of a few samples: a fork bomb churns, and one sample can
    catch it between generations (measured: 1 in 30 samples fell to 6 of 32)."""
    for i in range(samples):
        try:
            stats = client.api.stats(container_id, stream=False, one_shot=True)
        except docker.errors.APIError:
            return False
        pids = stats.get("pids_stats") or {}
        limit, current = pids.get("limit") or 0, pids.get("current") or 0
        if limit and current >= limit - 1:
            return True
        if i + 1 < samples:
            time.sleep(0.05)
    return False
