"""The body of one rollout worker process (the parent side is ``rollout_processes.py``).

A worker owns a private engine (one torch thread) and ``concurrent_episodes``
environments, one per episode thread (one episode at a time: a ``TorchEngine``; more:
a ``BatchingEngine`` that runs their token steps as one forward). Before every segment
it compares its weight version with the shared one and, when behind, copies the
shared-memory weights into its engine under the weights lock, so a forward always
runs on one complete version and its tokens carry that version or a newer one (the
trainer computes staleness from it, exactly as with rollout threads).

Two ways to get work:
- free-running (asynchronous SAO / PG / GRPO): draw the next prompt seed from a shared
  counter, play one episode (or the G episodes of a group) and send the item;
- jobs (synchronous GRPO): take ``Job``s from the jobs queue and answer each one.

A worker polls the stop event before every turn, so it ends at the next turn boundary
and closes its environment; an exception is reported as ``Failed`` (a crash is data
for the parent, which turns it into ``RolloutError``), never swallowed; each episode
thread reports its own.
"""

from __future__ import annotations

import os
import queue
import threading
import traceback
from dataclasses import dataclass
from multiprocessing.sharedctypes import Synchronized
from multiprocessing.synchronize import Event, Lock
from typing import Any

import torch
from pydantic import BaseModel, ConfigDict

from envfactory.trainer.engines.base import Generation, SamplingParams
from envfactory.trainer.engines.batching_engine import BatchingEngine
from envfactory.trainer.engines.torch_engine import TorchEngine
from envfactory.trainer.environments import EnvFactory, Environment
from envfactory.trainer.rollout import run_episode
from envfactory.trainer.trajectory import Trajectory

POLL_S = 0.2  # how often a blocked worker looks at the stop event


class Job(BaseModel):
    """One episode of synchronous GRPO: the prompt seed and its group."""

    model_config = ConfigDict(frozen=True)

    job_id: int
    seed: int
    group_id: str


class Ready(BaseModel):
    model_config = ConfigDict(frozen=True)

    worker: int


class Produced(BaseModel):
    """Episodes played; ``item`` is what the buffer gets (None: nothing to train on)."""

    model_config = ConfigDict(frozen=True)

    worker: int
    episodes: int
    item: tuple[Trajectory, ...] | None
    job_id: int | None = None


class Failed(BaseModel):
    model_config = ConfigDict(frozen=True)

    worker: int
    error: str


Message = Ready | Produced | Failed


@dataclass(frozen=True)
class WorkerSpec:
    """Everything a worker needs besides the shared objects; must pickle."""

    index: int
    seed: int
    env_factory: EnvFactory
    sampling: SamplingParams
    max_turns: int
    max_context_tokens: int
    group_size: int
    free_running: bool
    concurrent_episodes: int = 1
    nice: int = 0


@dataclass(frozen=True)
class Channels:
    """The objects shared with the parent (passed once, at process start)."""

    weights: torch.nn.Module  # parameters in shared memory
    version: Synchronized[int]
    lock: Lock
    prompts: Synchronized[int]
    jobs: Any  # multiprocessing Queue[Job]
    results: Any  # multiprocessing Queue[Message]
    stop: Event


class SharedWeightsEngine:
    """A private engine refreshed from the shared weights before every segment."""

    def __init__(self, channels: Channels, seed: int, concurrent_episodes: int = 1) -> None:
        self._channels = channels
        self._engine: TorchEngine | BatchingEngine = (
            BatchingEngine(channels.weights, seed, version=-1)
            if concurrent_episodes > 1
            else TorchEngine(channels.weights, seed, version=-1)
        )
        self.refresh()

    @property
    def version(self) -> int:
        return self._engine.version

    def refresh(self) -> None:
        ch = self._channels
        if ch.version.value == self._engine.version:
            return
        with ch.lock:
            named: dict[str, torch.Tensor] = dict(ch.weights.named_parameters())
            self._engine.load_weights(named, int(ch.version.value))

    def generate(self, prompt_ids: list[int], params: SamplingParams) -> Generation:
        self.refresh()
        return self._engine.generate(prompt_ids, params)


def worker_main(spec: WorkerSpec, channels: Channels) -> None:
    """The process target: play episodes until the stop event is set."""
    torch.set_num_threads(1)
    if spec.nice:
        os.nice(spec.nice)  # the learner first when both want a core (rollout_nice)
    envs: list[Environment] = []
    try:
        engine = SharedWeightsEngine(channels, spec.seed, spec.concurrent_episodes)
        envs = [spec.env_factory() for _ in range(spec.concurrent_episodes)]
        _send(channels, Ready(worker=spec.index))
        threads = [
            threading.Thread(target=_episodes, args=(spec, channels, engine, env), daemon=True)
            for env in envs[1:]
        ]
        for thread in threads:
            thread.start()
        _episodes(spec, channels, engine, envs[0])
        for thread in threads:
            thread.join()
    except BaseException as err:  # reported to the parent, which raises RolloutError
        _send(channels, Failed(worker=spec.index, error=f"{err!r}\n{traceback.format_exc()}"))
    finally:
        for env in envs:
            env.close()


def _episodes(
    spec: WorkerSpec, channels: Channels, engine: SharedWeightsEngine, env: Environment
) -> None:
    """One episode thread's loop; its crash is reported, not lost with the thread."""
    produce = _free_item if spec.free_running else _job_item
    try:
        while not channels.stop.is_set():
            message = produce(spec, channels, engine, env)
            if message is not None:
                _send(channels, message)
    except BaseException as err:
        _send(channels, Failed(worker=spec.index, error=f"{err!r}\n{traceback.format_exc()}"))


def _play(
    spec: WorkerSpec,
    channels: Channels,
    engine: SharedWeightsEngine,
    env: Environment,
    seed: int,
    group_id: str | None,
) -> Trajectory | None:
    return run_episode(
        engine,
        env,
        seed,
        spec.sampling,
        spec.max_turns,
        group_id,
        spec.max_context_tokens,
        should_stop=channels.stop.is_set,
    )


def _free_item(
    spec: WorkerSpec, channels: Channels, engine: SharedWeightsEngine, env: Environment
) -> Produced:
    with channels.prompts.get_lock():
        seed = int(channels.prompts.value)
        channels.prompts.value = seed + 1
    g = spec.group_size
    group_id = f"g{seed}" if g > 1 else None
    played = [_play(spec, channels, engine, env, seed, group_id) for _ in range(g)]
    complete = tuple(t for t in played if t is not None)
    # a group with a missing member has no valid baseline
    item = complete if len(complete) == g else None
    return Produced(worker=spec.index, episodes=g, item=item)


def _job_item(
    spec: WorkerSpec, channels: Channels, engine: SharedWeightsEngine, env: Environment
) -> Produced | None:
    try:
        job: Job = channels.jobs.get(timeout=POLL_S)
    except queue.Empty:
        return None
    traj = _play(spec, channels, engine, env, job.seed, job.group_id)
    item = None if traj is None else (traj,)
    return Produced(worker=spec.index, episodes=1, item=item, job_id=job.job_id)


def _send(channels: Channels, message: Message) -> None:
    """Put on the bounded results queue; give up only when the pool is stopping."""
    while True:
        try:
            channels.results.put(message, timeout=POLL_S)
            return
        except queue.Full:
            if channels.stop.is_set():
                return
