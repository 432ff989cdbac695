"""The training buffer between rollout workers and the trainer.

Invariants:
- an item is a tuple of trajectories that must be trained together: one trajectory
  in single-rollout mode (it enters the moment it finishes), a whole group of G in
  GRPO mode (the group barrier is the producer's job, not the buffer's);
- ``take`` hands out whole items, oldest first, and never an item whose staleness
  (trainer version − oldest token version) exceeds ``max_staleness``: such items are
  dropped and counted, never trained on;
- ``put`` blocks while the buffer holds ``capacity`` trajectories (back-pressure keeps
  producers from racing ahead into data that would only go stale);
"""

from __future__ import annotations

import threading
from collections import deque

from envfactory.trainer.trajectory import Trajectory

Item = tuple[Trajectory, ...]


class BufferClosed(Exception):
    """The buffer was closed while a caller waited on it."""


class TrajectoryBuffer:
    def __init__(self, capacity: int, max_staleness: int) -> None:
        self._items: deque[Item] = deque()
        self._size = 0
        self._capacity = capacity
        self._max_staleness = max_staleness
        self._cond = threading.Condition()
        self._closed = False
        self.dropped_stale = 0

    def __len__(self) -> int:
        with self._cond:
            return self._size

    def put(self, item: Item) -> None:
        with self._cond:
            while self._size >= self._capacity and not self._closed:
                self._cond.wait(timeout=0.5)
            if self._closed:
                raise BufferClosed
            self._items.append(item)
            self._size += len(item)
            self._cond.notify_all()

    def _pop_fresh(self, trainer_version: int) -> Item | None:
        while self._items:
            item = self._items.popleft()
            self._size -= len(item)
            self._cond.notify_all()
            if max(t.staleness(trainer_version) for t in item) <= self._max_staleness:
                return item
            self.dropped_stale += len(item)
        return None

    def take(self, n: int, trainer_version: int) -> list[Trajectory]:
        """Block until ``n`` fresh trajectories are available; return them."""
        batch: list[Trajectory] = []
        with self._cond:
            while len(batch) < n:
                item = self._pop_fresh(trainer_version)
                if item is not None:
                    batch.extend(item)
                    continue
                if self._closed:
                    raise BufferClosed
                self._cond.wait(timeout=0.5)
        return batch

    def snapshot(self) -> list[Item]:
        with self._cond:
            return list(self._items)

    def restore(self, items: list[Item]) -> None:
        with self._cond:
            for item in items:
                self._items.append(item)
                self._size += len(item)
            self._cond.notify_all()

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()
