"""Rollout workers as processes: episodes run outside the learner's interpreter.

With rollout threads the learner and every episode share one GIL, so on CPU the
"asynchronous" overlap is mostly taking turns. Here each worker is its own process
(``rollout_worker.worker_main``) with its own engine and environment.

Weights: ``SharedPolicy`` is the trainer's weight sink. It holds one copy of the
policy's parameters in shared memory plus a shared version number; ``update_weights``
copies a new version in under a lock. Workers read the version before each segment
and copy the weights out under the same lock when it moved (see ``rollout_worker``), so
a push costs one parameter copy, whatever the number of workers, and nothing touches
disk. Each trajectory's tokens carry the version that produced them.

``RolloutPool`` is one run's set of workers: free-running (asynchronous modes: each
worker draws prompts from a shared counter) or answering jobs (synchronous GRPO).
Invariants:
- ``start`` returns once every worker is ready (imports done, weights loaded), so the
  trainer's clock measures rollouts, not interpreter start-up;
- a worker's crash or silent death surfaces as ``RolloutError`` on the next read;
- ``close`` (also on exceptions, as a context manager) sets the stop event, keeps
  draining results so no worker blocks on a full pipe, joins every worker (each ends
  at its next turn boundary and closes its environment) and terminates only those
  still alive after ``grace_s``: no process outlives the pool.

Start method: ``forkserver`` with torch and the worker module preloaded. Like ``spawn``
a worker inherits no threads or locks from the learner, but the ~5 s import of torch
and transformers is paid once by the fork server instead of once per worker.
"""

from __future__ import annotations

import copy
import pickle
import queue
import time
from collections import deque
from multiprocessing.context import BaseContext
from typing import Any

import torch
import torch.multiprocessing as torch_mp

from envfactory.core.errors import RolloutError, TrainerConfigError
from envfactory.trainer.engines.base import SamplingParams
from envfactory.trainer.environments import EnvFactory
from envfactory.trainer.rollout_worker import (
    Channels,
    Failed,
    Job,
    Produced,
    Ready,
    WorkerSpec,
    worker_main,
)

PRELOAD = [
    "torch",
    "envfactory.trainer.rollout_worker",
    "transformers.models.qwen2.modeling_qwen2",  # the tiny models' class
]


def process_context() -> BaseContext:
    ctx = torch_mp.get_context("forkserver")
    ctx.set_forkserver_preload(PRELOAD)
    return ctx


class SharedPolicy:
    """The weights rollout processes read (see the module docstring)."""

    def __init__(self, policy: torch.nn.Module, ctx: BaseContext | None = None) -> None:
        self.ctx = ctx or process_context()
        self.model = copy.deepcopy(policy).eval()
        for param in self.model.parameters():
            param.requires_grad_(False)
        self.model.share_memory()
        self.lock = self.ctx.Lock()
        self.shared_version = self.ctx.Value("q", 0)

    @property
    def version(self) -> int:
        return int(self.shared_version.value)

    @torch.no_grad()
    def update_weights(self, model: torch.nn.Module, version: int) -> None:
        source = dict(model.named_parameters())
        with self.lock:
            for name, param in self.model.named_parameters():
                param.copy_(source[name])
            self.shared_version.value = version


def check_picklable(env_factory: EnvFactory) -> None:
    try:
        pickle.dumps(env_factory)
    except (pickle.PicklingError, AttributeError, TypeError) as err:
        raise TrainerConfigError(
            f"rollout_mode 'processes' sends the environment factory to each worker, and "
            f"{env_factory!r} cannot be pickled ({err})",
            hint="pass a module-level function or class (or a method of a picklable object), "
            "not a lambda or closure; or use rollout_mode 'threads'",
        ) from None


class RolloutPool:
    """One run's rollout processes (see the module docstring)."""

    def __init__(
        self,
        shared: SharedPolicy,
        specs: list[WorkerSpec],
        next_prompt: int,
        queue_size: int,
        grace_s: float = 60.0,
    ) -> None:
        for spec in specs:
            check_picklable(spec.env_factory)
        ctx = shared.ctx
        self._stop = ctx.Event()
        self._prompts = ctx.Value("q", next_prompt)
        self._jobs: Any = ctx.Queue()
        self._results: Any = ctx.Queue(maxsize=queue_size)
        channels = Channels(
            shared.model,
            shared.shared_version,
            shared.lock,
            self._prompts,
            self._jobs,
            self._results,
            self._stop,
        )
        self._procs = [
            ctx.Process(  # type: ignore[attr-defined]
                target=worker_main, args=(spec, channels), daemon=True, name=f"rollout-{spec.index}"
            )
            for spec in specs
        ]
        self._pending: deque[Produced] = deque()
        self._grace_s = grace_s

    @property
    def next_prompt(self) -> int:
        return int(self._prompts.value)

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self._procs if p.pid is not None]

    def __enter__(self) -> RolloutPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self, timeout_s: float = 300.0) -> None:
        for proc in self._procs:
            proc.start()
        ready, deadline = 0, time.monotonic() + timeout_s
        while ready < len(self._procs):
            if time.monotonic() > deadline:
                raise RolloutError(f"rollout workers not ready after {timeout_s:.0f} s")
            message = self._read(timeout=0.5)
            if isinstance(message, Ready):
                ready += 1
            elif message is not None:
                self._pending.append(message)

    def submit(self, job: Job) -> None:
        self._jobs.put(job)

    def next_produced(self, timeout: float) -> Produced | None:
        """The next finished item, or None after ``timeout`` s; raises RolloutError."""
        if self._pending:
            return self._pending.popleft()
        message = self._read(timeout)
        return message if isinstance(message, Produced) else None

    def _read(self, timeout: float) -> Produced | Ready | None:
        try:
            message = self._results.get(timeout=timeout)
        except queue.Empty:
            self._check_alive()
            return None
        if isinstance(message, Failed):
            raise RolloutError(f"rollout worker {message.worker} failed: {message.error}")
        assert isinstance(message, Produced | Ready)
        return message

    def _check_alive(self) -> None:
        for proc in self._procs:
            if not proc.is_alive() and not self._stop.is_set():
                raise RolloutError(
                    f"rollout worker {proc.name} (pid {proc.pid}) exited with code "
                    f"{proc.exitcode} without a report",
                    hint="killed from outside or out of memory; resume from the last checkpoint",
                )

    def close(self) -> None:
        self._stop.set()
        deadline = time.monotonic() + self._grace_s
        while any(p.is_alive() for p in self._procs) and time.monotonic() < deadline:
            self._drain()  # a worker flushing into a full pipe could not exit
            for proc in self._procs:
                proc.join(timeout=0.05)
        for proc in self._procs:
            if proc.is_alive():  # stuck in one environment step past the grace period
                proc.terminate()
                proc.join(timeout=5.0)
        self._drain()
        self._jobs.cancel_join_thread()  # unplayed jobs are dropped, not flushed
        for channel in (self._jobs, self._results):
            channel.close()

    def _drain(self) -> None:
        try:
            while True:
                self._results.get_nowait()
        except queue.Empty:
            return


def worker_specs(
    env_factory: EnvFactory,
    sampling: SamplingParams,
    *,
    workers: int,
    seed: int,
    max_turns: int,
    max_context_tokens: int,
    group_size: int,
    free_running: bool,
    concurrent_episodes: int = 1,
    nice: int = 0,
) -> list[WorkerSpec]:
    """One spec per worker; worker i samples with its own seed."""
    return [
        WorkerSpec(
            index=i,
            seed=seed * 1_000 + i,
            env_factory=env_factory,
            sampling=sampling,
            max_turns=max_turns,
            max_context_tokens=max_context_tokens,
            group_size=group_size,
            free_running=free_running,
            concurrent_episodes=concurrent_episodes,
            nice=nice,
        )
        for i in range(workers)
    ]
