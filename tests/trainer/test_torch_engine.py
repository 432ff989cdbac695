import threading

import torch

from envfactory.trainer.engines import RolloutEngine, SamplingParams, TorchEngine
from envfactory.trainer.learner import collate
from envfactory.trainer.models import TinyModelSpec, build_tiny_model, token_logprobs
from envfactory.trainer.rollout import run_episode
from envfactory.trainer.synthetic import RecallEnvironment, get_task

TASK = get_task("three_turn_recall")


def _policy(seed=0):
    return build_tiny_model(TinyModelSpec(vocab_size=TASK.vocab_size), seed=seed)


def test_same_engine_logprob_mismatch_is_at_most_1e_7_in_fp32():
    policy = _policy()
    engine = TorchEngine(policy, seed=1)
    trajectories = [
        run_episode(engine, TASK.make(), s, SamplingParams(3), TASK.turns) for s in range(16)
    ]
    batch = collate(trajectories, torch.device("cpu"))  # padded, as the trainer sees it
    with torch.no_grad():
        logp, _ = token_logprobs(policy, batch.input_ids, batch.attention_mask, 1.0)
    assert logp.dtype == torch.float32
    diff = (logp - batch.rollout_logp)[batch.action_mask].abs()
    assert diff.numel() == 16 * 3 * 3
    assert float(diff.mean()) <= 1e-7


def test_the_engine_keeps_its_own_weights_until_they_are_synced():
    policy = _policy()
    engine = TorchEngine(policy, seed=1)
    assert isinstance(engine, RolloutEngine)
    with torch.no_grad():
        for p in policy.parameters():
            p.add_(torch.randn_like(p))
    stale = dict(engine.model.named_parameters())
    fresh = dict(policy.named_parameters())
    assert not torch.equal(stale["lm_head.weight"], fresh["lm_head.weight"])
    engine.update_weights(policy, version=3)
    assert engine.version == 3
    assert torch.equal(
        dict(engine.model.named_parameters())["lm_head.weight"], fresh["lm_head.weight"]
    )
    assert engine.generate([0, 3], SamplingParams(2)).weight_version == 3


def test_a_stop_token_ends_the_segment():
    engine = TorchEngine(_policy(), seed=2)
    gen = engine.generate([0, 3], SamplingParams(5, stop_token_ids=tuple(range(TASK.vocab_size))))
    assert gen.finish_reason == "stop" and len(gen.token_ids) == 1


def test_pause_holds_new_segments_until_resume():
    engine = TorchEngine(_policy(), seed=2)
    engine.pause()
    started, done = threading.Event(), threading.Event()

    def generate():
        started.set()
        engine.generate([0, 3], SamplingParams(1))
        done.set()

    worker = threading.Thread(target=generate)
    worker.start()
    started.wait()
    assert not done.is_set()
    engine.resume()
    worker.join(timeout=30)
    assert done.is_set()


def test_each_action_token_records_the_weight_version_it_was_sampled_with():
    policy = _policy()
    engine = TorchEngine(policy, seed=4)

    class SyncMidEpisode(RecallEnvironment):
        # a weight sync lands between the first and the second action
        def step(self, action):
            if self._turn == 0:
                engine.update_weights(policy, version=7)
            return super().step(action)

    traj = run_episode(engine, SyncMidEpisode(TASK.turns, TASK.n_symbols), 3, SamplingParams(2), 3)
    versions = [v for v in traj.policy_versions if v is not None]
    assert versions == [0, 0, 7, 7, 7, 7]
    assert traj.oldest_version == 0 and traj.staleness(8) == 8
