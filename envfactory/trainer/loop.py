"""The training loop: single-rollout asynchronous (SAO, PG) or synchronous groups (GRPO).

Asynchronous mode: ``rollout_workers`` workers each play one episode per prompt and
put the finished trajectory into the buffer at once (asynchronous GRPO: the G
rollouts of one prompt, handed over as one group when all are done); the trainer takes a batch as
soon as ``batch_size`` fresh trajectories are there, updates, and pushes the new
weights to the engine. Workers never wait for each other, so one slow episode delays
only itself. Synchronous mode (GRPO): each step launches ``batch_size / G`` prompts ×
G rollouts, waits for all of them (the group and batch barrier), then trains.

Workers are threads of this interpreter (``rollout_mode="threads"``, any engine) or
processes (``"processes"``, torch engine only; ``rollout_processes.py``): then the
trainer syncs weights into shared memory instead of an in-process engine, and a
feeder thread moves finished items from the workers' queue into the buffer. With
``concurrent_episodes`` > 1 each worker plays that many episodes at once and the
torch engine batches their token steps (``BatchingEngine``).

Invariants:
- ``version`` counts policy updates; every action token records the version it was
  sampled with, so staleness = trainer version − token version, capped by the buffer;
- weight sync follows every policy update (``sync_lag`` > 0 deliberately serves
  weights that many versions old, to measure robustness to policy lag);
- a checkpoint holds weights, optimizers, version, step, prompt counter and buffered
  trajectories with their versions, so staleness accounting survives a resume.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import torch

from envfactory.core.errors import RolloutError, TrainerConfigError
from envfactory.trainer.buffer import BufferClosed, TrajectoryBuffer
from envfactory.trainer.config import TrainerConfig
from envfactory.trainer.critic import build_critic
from envfactory.trainer.engines.base import RolloutEngine, SamplingParams, WeightSink
from envfactory.trainer.engines.batching_engine import BatchingEngine
from envfactory.trainer.engines.torch_engine import TorchEngine
from envfactory.trainer.environments import EnvFactory, Environment
from envfactory.trainer.learner import Learner, StepStats
from envfactory.trainer.metrics import StepMetrics
from envfactory.trainer.rollout import run_episode
from envfactory.trainer.rollout_processes import (
    RolloutPool,
    SharedPolicy,
    check_picklable,
    worker_specs,
)
from envfactory.trainer.rollout_worker import Job
from envfactory.trainer.trajectory import Trajectory
from envfactory.trainer.weight_sync import WeightSync

StepCallback = Callable[[StepMetrics], None]


class Trainer:
    def __init__(
        self,
        config: TrainerConfig,
        policy: torch.nn.Module,
        env_factory: EnvFactory,
        engine: RolloutEngine | None = None,
    ) -> None:
        self.config = config
        self.policy = policy
        self.env_factory = env_factory
        if engine is not None:
            # an external engine (an SGLang server) serves the trainer's weights from the
            # first token on, under version 0, whatever it loaded at start
            engine.update_weights(policy, 0)
        self.engine = engine or _own_engine(config, policy)
        self.shared = self._shared_policy(config, policy, env_factory, engine)
        # where weight syncs go: the workers' shared memory, or the in-process engine
        self.weights: WeightSink = self.shared or self.engine
        critic, critic_opt = (None, None)
        if config.uses_critic:
            critic, critic_opt = build_critic(policy, config.critic_config())  # type: ignore[arg-type]
        self.learner = Learner(policy, critic, critic_opt, config)
        self.buffer = TrajectoryBuffer(config.capacity, config.max_staleness)
        self.sync = WeightSync(self.weights, policy, config.sync_lag)
        self.version = 0
        self.step = 0
        self.next_prompt = config.seed * 1_000_003
        self._prompt_lock = threading.Lock()
        self.history: list[StepMetrics] = []
        self.produced = 0
        self.idle_s = 0.0
        self.tokens_trained = 0
        self._started = 0.0
        self._failure: BaseException | None = None

    @staticmethod
    def _shared_policy(
        config: TrainerConfig,
        policy: torch.nn.Module,
        env_factory: EnvFactory,
        engine: RolloutEngine | None,
    ) -> SharedPolicy | None:
        if config.rollout_mode == "threads":
            return None
        if engine is not None:
            raise TrainerConfigError(
                "rollout_mode 'processes' runs the torch engine in worker processes; "
                "an external engine already runs outside the trainer",
                hint="use rollout_mode 'threads' with --engine sglang",
            )
        check_picklable(env_factory)
        return SharedPolicy(policy)

    @property
    def sampling(self) -> SamplingParams:
        cfg = self.config
        return SamplingParams(cfg.max_new_tokens, cfg.temperature, cfg.stop_token_ids)

    def _take_prompt(self) -> int:
        with self._prompt_lock:
            seed = self.next_prompt
            self.next_prompt += 1
            return seed

    def _episode(
        self,
        env: Environment,
        seed: int,
        group_id: str | None = None,
        stop: threading.Event | None = None,
    ) -> Trajectory | None:
        cfg = self.config
        traj = run_episode(
            self.engine,
            env,
            seed,
            self.sampling,
            cfg.max_turns,
            group_id,
            cfg.max_context_tokens,
            should_stop=stop.is_set if stop else None,
        )
        with self._prompt_lock:
            self.produced += 1
        return traj

    def _worker(self, stop: threading.Event) -> None:
        env = self.env_factory()
        try:
            while not stop.is_set():
                item = self._produce(env, stop)
                if item is not None:
                    self.buffer.put(item)
        except BufferClosed:
            return
        except BaseException as err:
            # fail loudly: wake the trainer instead of leaving it waiting for data
            self._failure = err
            self.buffer.close()
        finally:
            env.close()

    def _produce(self, env: Environment, stop: threading.Event) -> tuple[Trajectory, ...] | None:
        """One buffer item: a trajectory, or a complete group for asynchronous GRPO."""
        seed = self._take_prompt()
        if self.config.algorithm != "grpo":
            traj = self._episode(env, seed, stop=stop)
            return None if traj is None else (traj,)
        group = [self._episode(env, seed, f"g{seed}", stop) for _ in range(self.config.group_size)]
        complete = [t for t in group if t is not None]
        # a group with a missing member has no valid baseline
        return tuple(complete) if len(complete) == len(group) else None

    def run(self, steps: int, on_step: StepCallback | None = None) -> list[StepMetrics]:
        """Train ``steps`` more steps; returns this call's metrics (also in ``history``)."""
        self._started = time.perf_counter() - (self.history[-1].wall_s if self.history else 0.0)
        if self.config.algorithm == "grpo" and not self.config.grpo_async:
            return self._run_sync(steps, on_step)
        return self._run_async(steps, on_step)

    def _run_async(self, steps: int, on_step: StepCallback | None) -> list[StepMetrics]:
        if self.shared is not None:
            return self._run_async_processes(self.shared, steps, on_step)
        stop = threading.Event()
        self.buffer = self._fresh_buffer()
        workers = [
            threading.Thread(target=self._worker, args=(stop,), daemon=True, name=f"rollout-{i}")
            for i in range(self.config.rollout_threads)
        ]
        for worker in workers:
            worker.start()
        try:
            return self._train_from_buffer(steps, on_step)
        finally:
            stop.set()
            self.buffer.close()
            # Workers stop at their next turn boundary (each turn is bounded by the engine's
            # and the sandbox's own timeouts) and close their environments; waiting for them
            # here is what keeps containers and threads from outliving the run.
            for worker in workers:
                worker.join()

    def _train_from_buffer(self, steps: int, on_step: StepCallback | None) -> list[StepMetrics]:
        out: list[StepMetrics] = []
        for _ in range(steps):
            waited = time.perf_counter()
            batch = self._take_batch()
            self.idle_s += time.perf_counter() - waited
            out.append(self._train(batch, on_step))
        return out

    def _pool(self, shared: SharedPolicy, free_running: bool) -> RolloutPool:
        """Started worker processes; the clock restarts once they are ready."""
        cfg = self.config
        specs = worker_specs(
            self.env_factory,
            self.sampling,
            workers=cfg.rollout_workers,
            seed=cfg.seed,
            max_turns=cfg.max_turns,
            max_context_tokens=cfg.max_context_tokens,
            group_size=cfg.group_size if free_running else 1,
            free_running=free_running,
            concurrent_episodes=cfg.concurrent_episodes,
            nice=cfg.rollout_nice,
        )
        pool = RolloutPool(shared, specs, self.next_prompt, queue_size=cfg.rollout_threads)
        try:
            pool.start()
        except BaseException:
            pool.close()
            raise
        self._started = time.perf_counter() - (self.history[-1].wall_s if self.history else 0.0)
        return pool

    def _run_async_processes(
        self, shared: SharedPolicy, steps: int, on_step: StepCallback | None
    ) -> list[StepMetrics]:
        stop = threading.Event()
        self.buffer = self._fresh_buffer()
        with self._pool(shared, free_running=True) as pool:
            feeder = threading.Thread(
                target=self._feed, args=(pool, stop), daemon=True, name="rollout-feeder"
            )
            feeder.start()
            try:
                return self._train_from_buffer(steps, on_step)
            finally:
                stop.set()
                self.buffer.close()
                feeder.join()
                self.next_prompt = pool.next_prompt

    def _feed(self, pool: RolloutPool, stop: threading.Event) -> None:
        """Worker processes' items into the buffer; a dead worker wakes the trainer."""
        try:
            while not stop.is_set():
                produced = pool.next_produced(timeout=0.2)
                if produced is None:
                    continue
                with self._prompt_lock:
                    self.produced += produced.episodes
                if produced.item is not None:
                    self.buffer.put(produced.item)
        except BufferClosed:
            return
        except RolloutError as err:
            self._failure = err
            self.buffer.close()

    def _take_batch(self) -> list[Trajectory]:
        try:
            return self.buffer.take(self.config.batch_size, self.version)
        except BufferClosed:
            failure, self._failure = self._failure, None
            raise RolloutError(
                f"a rollout worker failed: {failure!r}",
                hint="the cause is chained below; fix the environment or engine and resume",
            ) from failure

    def _fresh_buffer(self) -> TrajectoryBuffer:
        # keeps trajectories restored from a checkpoint or left from an earlier run()
        items = self.buffer.snapshot()
        buffer = TrajectoryBuffer(self.config.capacity, self.config.max_staleness)
        buffer.dropped_stale = self.buffer.dropped_stale
        buffer.restore(items)
        return buffer

    def _sync_batch(self, pool: ThreadPoolExecutor) -> list[Trajectory]:
        g = self.config.group_size
        jobs = []
        for _ in range(self.config.batch_size // g):
            seed = self._take_prompt()
            jobs += [pool.submit(self._grouped_episode, seed, f"g{seed}") for _ in range(g)]
        results = [job.result() for job in jobs]  # the barrier: wait for the slowest
        return _complete_groups(results, g)

    def _sync_batch_processes(self, pool: RolloutPool) -> list[Trajectory]:
        g = self.config.group_size
        jobs: list[Job] = []
        for _ in range(self.config.batch_size // g):
            seed = self._take_prompt()
            jobs += [Job(job_id=len(jobs) + k, seed=seed, group_id=f"g{seed}") for k in range(g)]
        for job in jobs:
            pool.submit(job)
        results: dict[int, Trajectory | None] = {}
        while len(results) < len(jobs):  # the barrier: wait for the slowest
            produced = pool.next_produced(timeout=0.5)
            if produced is None or produced.job_id is None:
                continue
            self.produced += produced.episodes
            results[produced.job_id] = produced.item[0] if produced.item else None
        return _complete_groups([results[job.job_id] for job in jobs], g)

    def _grouped_episode(self, seed: int, group_id: str) -> Trajectory | None:
        env = self.env_factory()
        try:
            return self._episode(env, seed, group_id)
        finally:
            env.close()

    def _run_sync(self, steps: int, on_step: StepCallback | None) -> list[StepMetrics]:
        if self.shared is not None:
            with self._pool(self.shared, free_running=False) as processes:
                return self._sync_steps(
                    lambda: self._sync_batch_processes(processes), steps, on_step
                )
        with ThreadPoolExecutor(max_workers=self.config.rollout_threads) as threads:
            return self._sync_steps(lambda: self._sync_batch(threads), steps, on_step)

    def _sync_steps(
        self, take: Callable[[], list[Trajectory]], steps: int, on_step: StepCallback | None
    ) -> list[StepMetrics]:
        out: list[StepMetrics] = []
        for _ in range(steps):
            waited = time.perf_counter()
            batch = take()
            self.idle_s += time.perf_counter() - waited
            out.append(self._train(batch, on_step))
        return out

    def _train(self, batch: list[Trajectory], on_step: StepCallback | None) -> StepMetrics:
        staleness = [t.staleness(self.version) for t in batch]
        stats = self.learner.step(batch, self.version, self.step)
        if stats.policy_updated:
            self.version += 1
            self.sync.push(self.version)
        metrics = self._metrics(batch, staleness, stats)
        self.step += 1
        self.history.append(metrics)
        if on_step is not None:
            on_step(metrics)
        return metrics

    def _metrics(
        self, batch: list[Trajectory], staleness: list[int], stats: StepStats
    ) -> StepMetrics:
        wall = max(time.perf_counter() - self._started, 1e-9)
        self.tokens_trained += sum(len(t.token_ids) for t in batch)
        return StepMetrics(
            step=self.step,
            policy_version=self.version,
            policy_updated=stats.policy_updated,
            trajectories=len(batch),
            reward_mean=sum(t.reward for t in batch) / len(batch),
            keep_fraction=stats.keep_fraction,
            mask_fraction=stats.mask_fraction,
            logprob_mismatch=_measured(stats.logprob_mismatch),
            staleness_mean=sum(staleness) / len(staleness),
            staleness_max=max(staleness),
            value_loss=_measured(stats.value_loss),
            explained_variance=_measured(stats.explained_variance),
            policy_grad_norm=stats.policy_grad_norm,
            critic_grad_norm=stats.critic_grad_norm,
            entropy=stats.entropy,
            tokens_per_s=self.tokens_trained / wall,
            trajectories_per_s=self.produced / wall,
            trainer_idle_fraction=min(1.0, self.idle_s / wall),
            dropped_stale=self.buffer.dropped_stale,
            wall_s=wall,
        )


def _own_engine(config: TrainerConfig, policy: torch.nn.Module) -> RolloutEngine:
    """Concurrent episodes share batched forwards; one episode per worker needs no batching."""
    if config.concurrent_episodes > 1:
        return BatchingEngine(policy, seed=config.seed)
    return TorchEngine(policy, seed=config.seed)


def _complete_groups(results: list[Trajectory | None], g: int) -> list[Trajectory]:
    complete: list[Trajectory] = []
    for start in range(0, len(results), g):
        group = [t for t in results[start : start + g] if t is not None]
        if len(group) == g:  # a group with a missing member has no valid baseline
            complete.extend(group)
    return complete


def _measured(value: float) -> float | None:
    return value if math.isfinite(value) else None
