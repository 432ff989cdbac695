"""The janitor: removes sandboxes whose owner process is dead, at start and periodically.

A process that owns sandboxes and dies without its `finally` blocks (SIGKILL, SIGTERM
with Python's default handler, a crashed host) leaves its containers running. Every
long-lived process (each worker, `envfactory up`) runs a janitor: one sweep when it
starts, then one every `period_s`, in a daemon thread.

Invariants (those of `gc.collect`, which does the work):
- only containers carrying our ownership labels and naming themselves are considered;
- a container whose owner (`host:pid:pid start time`) is alive on this host is never
  touched, so janitors of several processes on one engine never fight over live work,
  and a reused pid does not keep an orphan alive;
- another host's containers are left alone unless older than `foreign_ttl_s`.
A sweep that fails (the engine is down) is reported to `on_error` and tried again at the
next period; it never stops the process that runs the janitor.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import docker.errors

from envfactory.core.errors import SandboxError

from .engine import DockerEngine


class Janitor:
    """`with Janitor(engine, period_s=120).start():` — sweeps until the block ends."""

    def __init__(
        self,
        engine: DockerEngine,
        *,
        period_s: float,
        foreign_ttl_s: float | None = None,
        on_removed: Callable[[list[str]], None] | None = None,
        on_error: Callable[[Exception], None] | None = None,
    ) -> None:
        self.engine = engine
        self.period_s = period_s
        self.foreign_ttl_s = foreign_ttl_s
        self.on_removed = on_removed
        self.on_error = on_error
        self.sweeps = 0  # completed sweeps (tests and status lines read it)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def sweep(self) -> list[str]:
        """One pass: remove the orphans now; return what was removed."""
        try:
            removed = self.engine.gc(foreign_ttl_s=self.foreign_ttl_s)
        except (docker.errors.DockerException, SandboxError, OSError) as exc:
            if self.on_error is not None:
                self.on_error(exc)
            return []
        self.sweeps += 1
        if removed and self.on_removed is not None:
            self.on_removed(removed)
        return removed

    def start(self) -> Janitor:
        """Sweep once now, then every `period_s` in a daemon thread."""
        self.sweep()
        self._thread = threading.Thread(target=self._loop, name="envfactory-janitor", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)

    def _loop(self) -> None:
        while not self._stop.wait(self.period_s):
            self.sweep()

    def __enter__(self) -> Janitor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
