"""Checkpoint and resume for ``Trainer``.

What is saved: policy and critic weights, both optimizers, the policy version, the
step, the prompt counter, run counters (wall time, idle time, produced trajectories)
and every trajectory waiting in the buffer, with its per-token policy versions.
In-flight episodes are not saved: they are simply played again after a resume.

Resume restores the version first and then syncs the engine to the restored weights
under that version, so a buffered trajectory's staleness is measured against the
same version count as before the stop, and new tokens carry versions that continue
the old sequence. An injected policy lag (``sync_lag``, a benchmark knob) starts
again from zero after a resume: its weight history is not saved.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch

from envfactory.core.errors import TrainerError
from envfactory.trainer.loop import Trainer
from envfactory.trainer.metrics import StepMetrics
from envfactory.trainer.trajectory import Trajectory

STATE_FILE = "trainer_state.pt"
BUFFER_FILE = "buffer.json"
METRICS_FILE = "metrics.jsonl"


def save_checkpoint(trainer: Trainer, directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    learner = trainer.learner
    state = {
        "config": trainer.config.model_dump(),
        "policy": trainer.policy.state_dict(),
        "policy_optimizer": learner.optimizer.state_dict(),
        "critic": learner.critic.state_dict() if learner.critic is not None else None,
        "critic_optimizer": (
            learner.critic_optimizer.state_dict() if learner.critic_optimizer is not None else None
        ),
        "mean_baseline": learner.baseline,
        "version": trainer.version,
        "step": trainer.step,
        "next_prompt": trainer.next_prompt,
        "counters": {
            "produced": trainer.produced,
            "idle_s": trainer.idle_s,
            "tokens_trained": trainer.tokens_trained,
            "dropped_stale": trainer.buffer.dropped_stale,
        },
    }
    torch.save(state, directory / STATE_FILE)
    items = [[t.model_dump(mode="json") for t in item] for item in trainer.buffer.snapshot()]
    (directory / BUFFER_FILE).write_text(json.dumps(items))
    lines = [m.model_dump_json() for m in trainer.history]
    (directory / METRICS_FILE).write_text("\n".join(lines) + ("\n" if lines else ""))
    return directory


def load_checkpoint(trainer: Trainer, directory: Path) -> Trainer:
    """Restore ``trainer`` (built with the same config and model shape) in place."""
    path = directory / STATE_FILE
    if not path.is_file():
        raise TrainerError(
            f"no checkpoint at {directory} (expected {STATE_FILE})",
            hint="train without --resume first, or point --out at an earlier run",
        )
    state = torch.load(path, weights_only=False)
    learner = trainer.learner
    trainer.policy.load_state_dict(state["policy"])
    learner.optimizer.load_state_dict(state["policy_optimizer"])
    if learner.critic is not None and state["critic"] is not None:
        learner.critic.load_state_dict(state["critic"])
        assert learner.critic_optimizer is not None
        learner.critic_optimizer.load_state_dict(state["critic_optimizer"])
    learner.baseline = state.get("mean_baseline")
    trainer.version = state["version"]
    trainer.step = state["step"]
    trainer.next_prompt = state["next_prompt"]
    counters = state["counters"]
    trainer.produced = counters["produced"]
    trainer.idle_s = counters["idle_s"]
    trainer.tokens_trained = counters["tokens_trained"]
    trainer.buffer.dropped_stale = counters["dropped_stale"]
    raw = json.loads((directory / BUFFER_FILE).read_text())
    trainer.buffer.restore([tuple(Trajectory.model_validate(t) for t in item) for item in raw])
    metrics_path = directory / METRICS_FILE
    if metrics_path.is_file():
        lines = [ln for ln in metrics_path.read_text().splitlines() if ln]
        trainer.history = [StepMetrics.model_validate_json(ln) for ln in lines]
    trainer.weights.update_weights(trainer.policy, trainer.version)
    return trainer
