"""How a command ends on SIGTERM or SIGINT: its sandboxes removed, its exit status 128+N.

Python's default SIGTERM ends the process at once, with no `finally` run: every
container a command had started (an episode, a gate's verification, a build's services)
stayed running, and `sandbox gc` had to find it later. Here both signals take one path:

1. at the first signal, no sandbox of this process starts any more and every container
   and services network it created is removed (`sandboxes.shutdown`), live ones too,
   so worker threads mid-exec fail fast instead of finishing their queue;
2. `KeyboardInterrupt` is raised in the main thread, so each command's own `finally`
   (stores, temp dirs, the Temporal dev server of `demo`) runs as on Ctrl-C;
3. at the end, the same removal once more and again at interpreter exit (after worker
   threads have joined), for anything launched in between; the exit status is 128 plus
   the signal's number (143 for SIGTERM, 130 for SIGINT), as a shell reports it.

A second signal during the removal interrupts it; the final removals still run.
"""

from __future__ import annotations

import atexit
import contextlib
import signal
from collections.abc import Iterator
from types import FrameType

SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextlib.contextmanager
def sandboxes_removed_on_signals() -> Iterator[None]:
    """Run the block; on SIGTERM / SIGINT end it as the module docstring says."""
    received: list[int] = []

    def on_signal(signum: int, frame: FrameType | None) -> None:
        first = not received
        received.append(signum)
        if first:
            remove_own_sandboxes()
        raise KeyboardInterrupt

    previous = {sig: signal.signal(sig, on_signal) for sig in SIGNALS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if received:
            remove_own_sandboxes()
            atexit.register(remove_own_sandboxes)
            raise SystemExit(128 + received[0])  # not click's "Aborted!" status 1


def remove_own_sandboxes() -> None:
    """Stop this process's sandboxes from starting and remove those it has; an engine
    that cannot be reached (a command that never used Docker) is not an error."""
    import docker.errors

    from sandboxes import shutdown

    shutdown.begin()
    with contextlib.suppress(docker.errors.DockerException, OSError):
        shutdown.remove_own()
