"""The batching engine: concurrent segments share forwards, and what each token records
(logprob, weight version) is what a batch-1 engine would have recorded."""

import threading

import pytest
import torch

from envfactory.trainer.engines import RolloutEngine, SamplingParams
from envfactory.trainer.engines.batching_engine import BatchingEngine
from envfactory.trainer.learner import collate
from envfactory.trainer.models import TinyModelSpec, build_tiny_model, token_logprobs
from envfactory.trainer.rollout import run_episode
from envfactory.trainer.synthetic import get_task

from .helpers import tiny_config, tiny_trainer

TASK = get_task("three_turn_recall")


def _policy(seed=0):
    return build_tiny_model(TinyModelSpec(vocab_size=TASK.vocab_size), seed=seed)


def _episodes_in_threads(engine, n, tokens=3):
    """``n`` episodes at once, one thread each, released together."""
    out, start = [None] * n, threading.Barrier(n)

    def play(i):
        start.wait()
        out[i] = run_episode(engine, TASK.make(), i, SamplingParams(tokens), TASK.turns)

    threads = [threading.Thread(target=play, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


def test_concurrent_episodes_share_forwards_and_keep_fp32_logprobs():
    policy = _policy()
    engine = BatchingEngine(policy, seed=1)
    assert isinstance(engine, RolloutEngine)
    trajectories = _episodes_in_threads(engine, 16)
    steps = 16 * TASK.turns * 3  # every episode: 3 turns x 3 tokens, one step each
    assert engine.segments_stepped == steps
    # some steps served several episodes at once (16 threads released together)
    assert engine.forwards < steps
    batch = collate(trajectories, torch.device("cpu"))
    with torch.no_grad():
        logp, _ = token_logprobs(policy, batch.input_ids, batch.attention_mask, 1.0)
    diff = (logp - batch.rollout_logp)[batch.action_mask].abs()
    assert diff.numel() == steps
    assert float(diff.mean()) <= 1e-7 and float(diff.max()) <= 1e-5


def test_a_segment_reports_the_version_of_its_first_token_never_a_newer_one():
    policy = _policy()
    engine = BatchingEngine(policy, seed=1)
    seen = []
    original = engine._step

    def step_then_update(batch):  # a weight update lands between two tokens of a segment
        original(batch)
        seen.append(engine.version)
        engine.update_weights(policy, engine.version + 1)

    engine._step = step_then_update  # an observer on the engine under test
    gen = engine.generate([0, 3], SamplingParams(3))
    assert seen == [0, 1, 2] and engine.version == 3
    assert gen.weight_version == 0 and len(gen.token_ids) == 3


def test_a_stop_token_ends_the_segment_and_max_new_tokens_ends_the_next():
    engine = BatchingEngine(_policy(), seed=2)
    every = tuple(range(TASK.vocab_size))
    stopped = engine.generate([0, 3], SamplingParams(5, stop_token_ids=every))
    assert stopped.finish_reason == "stop" and len(stopped.token_ids) == 1
    full = engine.generate([0, 3], SamplingParams(4))
    assert full.finish_reason == "length" and len(full.token_ids) == 4


def test_an_error_in_a_step_fails_that_segment_and_the_engine_serves_the_next():
    engine = BatchingEngine(_policy(), seed=2)
    with pytest.raises(IndexError):
        engine.generate([0, TASK.vocab_size + 5], SamplingParams(1))  # token out of vocab
    assert len(engine.generate([0, 3], SamplingParams(2)).token_ids) == 2


def test_the_trainer_batches_concurrent_episodes_with_rollout_threads():
    trainer = tiny_trainer(tiny_config(rollout_workers=2, concurrent_episodes=4))
    assert isinstance(trainer.engine, BatchingEngine)
    history = trainer.run(3)
    assert trainer.version == 3 and all(m.trajectories == 8 for m in history)
    assert trainer.engine.forwards < trainer.engine.segments_stepped


@pytest.mark.slow
@pytest.mark.parametrize("arm", [{"algorithm": "sao"}, {"algorithm": "grpo", "group_size": 4}])
def test_worker_processes_play_concurrent_episodes(arm):
    config = tiny_config(rollout_mode="processes", rollout_workers=1, concurrent_episodes=4, **arm)
    trainer = tiny_trainer(config)
    history = trainer.run(3)
    assert trainer.version == trainer.weights.version == 3
    assert all(m.trajectories == 8 and m.staleness_max <= 4 for m in history)
