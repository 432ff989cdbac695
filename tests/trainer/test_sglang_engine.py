import os
import threading

import pytest
import torch

from envfactory.trainer.engines import SamplingParams, SGLangEngine, SGLangError
from envfactory.trainer.learner import collate
from envfactory.trainer.loop import Trainer
from envfactory.trainer.models import TinyModelSpec, build_tiny_model, token_logprobs
from envfactory.trainer.rollout import run_episode
from envfactory.trainer.synthetic import get_task

from .fake_sglang import FakeSGLangServer
from .helpers import tiny_config

TASK = get_task("two_turn_recall")


@pytest.fixture
def policy():
    return build_tiny_model(TinyModelSpec(vocab_size=TASK.vocab_size), seed=11)


@pytest.fixture
def server(policy, tmp_path):
    path = tmp_path / "initial"
    policy.save_pretrained(path)
    with FakeSGLangServer(str(path), seed=5) as srv:
        yield srv


def _trainer_logprobs(policy, trajectories):
    batch = collate(trajectories, torch.device("cpu"))
    with torch.no_grad():
        logp, _ = token_logprobs(policy, batch.input_ids, batch.attention_mask, 1.0)
    return (logp - batch.rollout_logp)[batch.action_mask].abs()


def test_generate_returns_the_sampled_tokens_with_their_logprobs(server, policy, tmp_path):
    engine = SGLangEngine(server.url, tmp_path / "weights")
    gen = engine.generate([0, 3], SamplingParams(max_new_tokens=4))
    assert len(gen.token_ids) == len(gen.logprobs) == 4
    assert gen.finish_reason == "length"
    assert all(lp <= 0.0 for lp in gen.logprobs)
    diffs = _trainer_logprobs(
        policy, [run_episode(engine, TASK.make(), s, SamplingParams(2), 2) for s in range(8)]
    )
    assert float(diffs.mean()) <= 1e-7


def test_a_stop_token_ends_the_generation_with_finish_reason_stop(server, tmp_path):
    engine = SGLangEngine(server.url, tmp_path / "weights")
    vocab = list(range(TASK.vocab_size))
    gen = engine.generate([0, 3], SamplingParams(max_new_tokens=3, stop_token_ids=tuple(vocab)))
    assert gen.finish_reason == "stop" and len(gen.token_ids) == 1


def test_weight_sync_pauses_loads_from_disk_with_a_version_and_continues(server, policy, tmp_path):
    engine = SGLangEngine(server.url, tmp_path / "weights")
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for p in policy.parameters():
            p.add_(0.05 * torch.randn(p.shape, generator=gen))
    engine.update_weights(policy, version=1)
    assert server.calls[-3:] == [
        "/pause_generation",
        "/update_weights_from_disk",
        "/continue_generation",
    ]
    assert engine.version == 1
    assert engine.server_weight_version() == "1"
    # a mean over a few dozen tokens: single tokens differ by up to one fp32 ulp
    trajs = [run_episode(engine, TASK.make(), s, SamplingParams(3), TASK.turns) for s in range(8)]
    assert all(set(v for v in t.policy_versions if v is not None) == {1} for t in trajs)
    assert float(_trainer_logprobs(policy, trajs).mean()) <= 1e-7


def test_generation_waits_while_paused_and_resumes_on_continue(server, tmp_path):
    engine = SGLangEngine(server.url, tmp_path / "weights")
    engine.pause()
    result = {}
    worker = threading.Thread(
        target=lambda: result.update(gen=engine.generate([0, 4], SamplingParams(2)))
    )
    worker.start()
    while server.waiting == 0:
        threading.Event().wait(0.01)
    assert "gen" not in result
    engine.resume()
    worker.join(timeout=30)
    assert len(result["gen"].token_ids) == 2


def test_a_failed_weight_update_raises_with_the_servers_message(server, tmp_path):
    engine = SGLangEngine(server.url, tmp_path / "weights")
    with pytest.raises(SGLangError, match="Failed to load weights"):
        engine._post("/update_weights_from_disk", {"model_path": str(tmp_path / "missing")})
    assert server.calls[-1] == "/update_weights_from_disk"


@pytest.mark.gpu
def test_a_real_sglang_server_serves_logprobs_that_match_the_trainer(tmp_path):
    url = os.environ.get("ENVFACTORY_TEST_SGLANG_URL")
    if not url:
        pytest.skip("set ENVFACTORY_TEST_SGLANG_URL to a running SGLang server")
    engine = SGLangEngine(url, tmp_path / "weights")
    gen = engine.generate([1, 2, 3], SamplingParams(max_new_tokens=8))
    assert len(gen.token_ids) == len(gen.logprobs) > 0


def test_the_trainer_runs_on_the_sglang_engine_and_syncs_every_update(server, policy, tmp_path):
    engine = SGLangEngine(server.url, tmp_path / "weights", keep_checkpoints=1)
    trainer = Trainer(tiny_config(batch_size=4), policy, TASK.make, engine=engine)
    history = trainer.run(3)
    assert engine.version == trainer.version == 3
    assert server.weight_version == "3"
    assert [p.name for p in (tmp_path / "weights").iterdir()] == ["v3"]
    # per step only a few same-version tokens: a few fp32 ulps at most
    assert all(m.logprob_mismatch is None or m.logprob_mismatch <= 1e-6 for m in history)
