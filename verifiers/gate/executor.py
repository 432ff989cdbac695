"""Runs the gate's work: one bounded thread pool for producing and verifying, a second
small one that removes containers off the critical path, and the progress count.

A state's verifications are queued the moment it is captured; work queues more work
(`spawn` from inside a task), and `drain` waits for all of it, re-raising the first error.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

from sandboxes.protocol import Sandbox

Progress = Callable[[int, int, str], None]  # (done, total, what just finished)


class Executor:
    def __init__(self, concurrency: int, progress: Progress | None, total: int) -> None:
        self.lock = threading.Lock()  # guards the scheduler's state as well as this one's
        self._pool = ThreadPoolExecutor(max(1, concurrency), thread_name_prefix="gate")
        self._reaper = ThreadPoolExecutor(2, thread_name_prefix="gate-rm")
        self._pending: list[Future[object]] = []
        self._progress = progress
        self._count = [0, total]  # done, total (an estimate: rows appear with the oracle)

    def spawn(self, fn: Callable[..., object], *args: object) -> None:
        fut = self._pool.submit(fn, *args)
        with self.lock:
            self._pending.append(fut)

    def remove_later(self, box: Sandbox) -> None:
        self._reaper.submit(box.remove)

    def drain(self) -> None:
        """Wait for every task, including the ones tasks queue; re-raise the first error."""
        i = 0
        while True:
            with self.lock:
                if i >= len(self._pending):
                    return
                fut = self._pending[i]
            fut.result()
            i += 1

    def shutdown(self) -> None:
        self._pool.shutdown(wait=True)
        self._reaper.shutdown(wait=True)

    def tick(self, what: str) -> None:
        with self.lock:
            self._count[0] += 1
            self._count[1] = max(self._count[1], self._count[0])
            done, total = self._count
        if self._progress:
            self._progress(done, total, what)

    def stop_counting(self) -> None:
        """Nothing more will run (the oracle settled the verdict): total = done."""
        with self.lock:
            self._count[1] = self._count[0]

    def last_tick(self) -> None:
        """End the progress at done == total (the plan was an estimate)."""
        with self.lock:
            done, total = self._count
            self._count[1] = done
        if done != total and self._progress:
            self._progress(done, done, "done")


class Event:
    """Work that waits for something to have happened: `then(fn)` queues `fn` on the
    executor once `fire()` was called (at once when it was)."""

    def __init__(self, ex: Executor) -> None:
        self._ex = ex
        self._waiting: list[Callable[[], object]] | None = []  # None once fired

    def then(self, fn: Callable[[], object]) -> None:
        with self._ex.lock:
            if self._waiting is not None:
                self._waiting.append(fn)
                return
        self._ex.spawn(fn)

    def fire(self) -> None:
        with self._ex.lock:
            waiting, self._waiting = self._waiting, None
        for fn in waiting or ():
            self._ex.spawn(fn)
