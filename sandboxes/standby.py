"""Standby: containers created and started ahead of demand, so `start` need not wait.

A caller that knows it will start many sandboxes of one kind (a gate run: the containers
its full-state recipes are verified in by exec) opens a standby scope on the engine
(`engine.standby(...)`);
while it is open, the engine keeps up to `depth` containers of that kind created and
started, and `engine.start` with the same arguments hands one out at once while a
replacement starts in the background. A start leaves the critical path: what a
verification then waits for is its exec and its copy. (Most verifications are no longer
exec'd: their container's own command is the verification, `DockerEngine.run`, which
nothing started ahead can serve. On 2 cores the gates are CPU-bound, and an exec costs
more CPU than a start ahead of demand saves in waiting.)

Invariants (the reward's: DESIGN.md, "Invariants of a trustworthy reward"):
- a standby container is pristine: started from the image (`sleep infinity` under the
  init process) and never exec'd into, written to or read before it is handed out;
- each is handed out at most once; from then on it is the caller's, who removes it as
  any sandbox: nothing ever goes back on standby, so no verification shares a container;
- a kind is the whole of what `start` decides a container by — image, limits (which
  carry the capability profile), network, purpose and run id — and a standby container
  is created by the very function `start` uses for that kind, so a container handed out
  has exactly the limits, network and capabilities asked for;
- standby containers carry every sandbox's ownership labels: the janitor reaps them if
  their process dies; the end of a scope removes its containers not handed out (in the
  background, so the caller does not wait: `settle` does), closing the engine or the
  process exiting removes every one before returning;
- at most `depth` per open kind wait besides those handed out; they hold no pool slot
  until handed out, so they never keep `start` waiting for one;
- a `start` that finds none waiting while one of its kind is being started waits for
  that one rather than starting a second beside it: demand never adds starts to a
  machine whose starts are already behind (`take`).
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import threading
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

from envfactory.core.models import Limits, Purpose


@dataclass(frozen=True)
class Kind:
    """Everything `start` decides a container by; the standby key."""

    image: str
    limits: Limits
    network: bool
    purpose: Purpose
    run_id: str | None
    #: the private network of the sandbox's services (`services.py`); never on standby
    join: str | None = None
    #: /usr/lib and /usr/local through the kernel's overlayfs (`native_usr.py`)
    native_usr: bool = False
    #: the container's own command, run once and read to its end (`DockerEngine.run`);
    #: empty: `sleep infinity`, driven by exec. Never on standby.
    command: tuple[str, ...] = ()


@dataclass
class Launched:
    """A created and started container, not yet a sandbox: its id, name and inspect."""

    id: str
    name: str
    info: dict[str, Any] = field(repr=False)
    #: its kernel-overlay volumes' writable directories on this host (`native_usr.py`):
    #: mount point → upper directory
    uppers: dict[str, str] = field(default_factory=dict)
    #: the output stream attached before the start (a `Kind.command` container's)
    stream: Any = field(default=None, repr=False)


Launch = Callable[[Kind], Launched]
Discard = Callable[[str], None]


@dataclass
class _Shelf:
    """One open kind: how many scopes hold it, what waits, what is being started."""

    holders: int = 0
    ready: deque[Launched] = field(default_factory=deque)
    starts: set[Future[None]] = field(default_factory=set)  # queued or running


#: how often a caller waiting for a start in flight looks again (a start's end wakes it sooner)
_WAIT_POLL_S = 0.5


def _running(starts: set[Future[None]]) -> bool:
    """Whether one of the starts has begun (a queued one may wait behind the others)."""
    return any(fut.running() for fut in starts)


class Standby:
    """Containers of the open kinds, started ahead of demand (see the module docstring).

    `launch` creates and starts one container of a kind (the engine's own path);
    `discard` removes one by id. `depth` 0 turns standby off: scopes do nothing and
    `take` finds nothing. `starters` bounds the starts running at once."""

    def __init__(self, launch: Launch, discard: Discard, *, depth: int, starters: int = 2):
        self.depth = depth
        self._launch, self._discard = launch, discard
        self._shelves: dict[Kind, _Shelf] = {}
        self._lock = threading.RLock()  # a done callback may run in the submitting thread
        self._changed = threading.Condition(self._lock)  # a start ended (a waiter may take)
        self._starters = max(1, starters)
        self._pool: ThreadPoolExecutor | None = None
        self._reaper: ThreadPoolExecutor | None = None  # empties ended scopes
        self._drains: list[Future[None]] = []
        self.started = self.handed_out = self.discarded = 0  # counters for tests, benchmarks
        self.waited_for = 0  # containers handed out to a caller that waited for their start
        #: the last failure of a background start or removal (a `start` on demand meets a
        #: start's failure again and raises it)
        self.last_error: BaseException | None = None

    @contextlib.contextmanager
    def keep(self, kind: Kind) -> Iterator[None]:
        """Keep `depth` containers of `kind` started while the block runs. At its end the
        starts not begun are cancelled and, in the background (off the caller's critical
        path; `settle` waits for it), the waiting containers and those of the starts in
        flight are removed."""
        if self.depth <= 0:
            yield
            return
        with self._lock:
            self._shelves.setdefault(kind, _Shelf()).holders += 1
        self._refill(kind)
        try:
            yield
        finally:
            self._release(kind)

    def take(self, kind: Kind) -> Launched | None:
        """A started container of `kind`, never handed out before; None when none waits
        and none is starting. When none waits but a start of the kind is running, the
        caller waits for it instead of starting a second container beside it: on a busy
        machine (the starts are behind) that second start is what made standby slower
        than none. A replacement starts in the background."""
        with self._changed:
            shelf = self._shelves.get(kind)
            waited = False
            while shelf is not None and not shelf.ready and _running(shelf.starts):
                waited = True
                self._changed.wait(_WAIT_POLL_S)
                if self._shelves.get(kind) is not shelf:
                    shelf = None  # the scope ended meanwhile
            got = shelf.ready.popleft() if shelf is not None and shelf.ready else None
            self.handed_out += got is not None
            self.waited_for += got is not None and waited
        if shelf is not None:
            self._refill(kind)  # after a miss too: demand outran supply
        return got

    def settle(self, timeout: float | None = None) -> None:
        """Wait until the containers of every ended scope are removed."""
        with self._lock:
            drains = list(self._drains)
        wait(drains, timeout)

    def close(self) -> None:
        """End every scope and remove every container not handed out, before returning
        (idempotent; also run at process exit). Sandboxes handed out stay their callers'."""
        with self._lock:
            shelves, self._shelves = list(self._shelves.values()), {}
            pool, self._pool = self._pool, None
            reaper, self._reaper = self._reaper, None
        if pool is not None:  # queued starts never begin; running ones remove theirs
            pool.shutdown(wait=True, cancel_futures=True)
        for shelf in shelves:
            self._empty(shelf)
        if reaper is not None:
            reaper.shutdown(wait=True)  # the ended scopes' removals, all of them
        atexit.unregister(self.close)

    def waiting(self, kind: Kind | None = None) -> int:
        """How many containers wait (of `kind`, or of every kind)."""
        with self._lock:
            shelves = [self._shelves.get(kind)] if kind else list(self._shelves.values())
            return sum(len(s.ready) for s in shelves if s is not None)

    # -- internals ------------------------------------------------------------------------

    def _release(self, kind: Kind) -> None:
        with self._lock:
            shelf = self._shelves.get(kind)
            if shelf is None:
                return  # closed meanwhile
            shelf.holders -= 1
            if shelf.holders > 0:
                return
            del self._shelves[kind]
            self._changed.notify_all()  # callers waiting for a start of it start their own
            for fut in list(shelf.starts):
                fut.cancel()  # a start not begun never begins
            if self._reaper is None:
                self._reaper = ThreadPoolExecutor(1, thread_name_prefix="standby-rm")
            drain = self._reaper.submit(self._empty, shelf)
            self._drains = [d for d in self._drains if not d.done()] + [drain]

    def _empty(self, shelf: _Shelf) -> None:
        """Wait for the starts in flight (a start whose shelf is gone removes its
        container), then remove what waits."""
        with self._lock:
            starts = list(shelf.starts)
        for fut in starts:
            fut.cancel()
        wait(starts)
        while True:
            with self._lock:
                if not shelf.ready:
                    return
                got = shelf.ready.popleft()
            self._remove(got.id)

    def _refill(self, kind: Kind) -> None:
        """Start as many as `kind` lacks, in the background."""
        with self._lock:
            shelf = self._shelves.get(kind)
            if shelf is None:
                return
            missing = self.depth - len(shelf.ready) - len(shelf.starts)
            if missing <= 0:
                return
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self._starters, thread_name_prefix="standby")
                atexit.register(self.close)
            for _ in range(missing):
                fut = self._pool.submit(self._start_one, kind, shelf)
                shelf.starts.add(fut)
                fut.add_done_callback(functools.partial(self._forget, shelf))

    def _forget(self, shelf: _Shelf, fut: Future[None]) -> None:
        with self._changed:
            shelf.starts.discard(fut)
            self._changed.notify_all()  # a waiter takes what it started, or starts its own

    def _start_one(self, kind: Kind, shelf: _Shelf) -> None:
        try:
            got = self._launch(kind)
        except Exception as exc:  # recorded; `start` on demand meets it again and raises
            with self._lock:
                self.last_error = exc
            return
        with self._changed:
            self.started += 1
            wanted = self._shelves.get(kind) is shelf
            if wanted:
                shelf.ready.append(got)
                self._changed.notify_all()
        if not wanted:
            self._remove(got.id)  # its scope ended while it started

    def _remove(self, container_id: str) -> None:
        """Remove one waiting container; a failure is recorded and the rest still go (the
        janitor reaps what is left once this process is gone)."""
        try:
            self._discard(container_id)
        except Exception as exc:
            with self._lock:
                self.last_error = exc
            return
        with self._lock:
            self.discarded += 1
