"""The SGLang client against a real HTTP server on 127.0.0.1 speaking SGLang's protocol.

``FakeSGLangServer`` samples from a real tiny model; what is faked is only SGLang's
scheduler. A test marked ``gpu`` runs the same client against a real SGLang server.
"""

import os
import threading

import httpx
import pytest
import torch

from envfactory.core.errors import RolloutEngineError
from envfactory.trainer.engines import SamplingParams, SGLangEngine, SGLangError
from envfactory.trainer.engines.sglang_engine import served_version
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


def _perturb(policy, scale=0.05):
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for p in policy.parameters():
            p.add_(scale * torch.randn(p.shape, generator=gen))


def test_generate_returns_the_sampled_tokens_with_their_logprobs(server, policy):
    engine = SGLangEngine(server.url)
    gen = engine.generate([0, 3], SamplingParams(max_new_tokens=4))
    assert len(gen.token_ids) == len(gen.logprobs) == 4
    assert gen.finish_reason == "length"
    assert all(lp <= 0.0 for lp in gen.logprobs)
    diffs = _trainer_logprobs(
        policy, [run_episode(engine, TASK.make(), s, SamplingParams(2), 2) for s in range(8)]
    )
    assert float(diffs.mean()) <= 1e-7


def test_a_stop_token_ends_the_generation_with_finish_reason_stop(server):
    engine = SGLangEngine(server.url)
    vocab = list(range(TASK.vocab_size))
    gen = engine.generate([0, 3], SamplingParams(max_new_tokens=3, stop_token_ids=tuple(vocab)))
    assert gen.finish_reason == "stop" and len(gen.token_ids) == 1


def test_the_engine_names_the_servers_weights_at_start(server):
    assert server.weight_version == "default"
    engine = SGLangEngine(server.url, version=4)
    assert server.weight_version == "4" and engine.server_weight_version() == "4"


def test_weight_sync_sends_tensors_pauses_and_continues_and_writes_no_file(
    server, policy, tmp_path, monkeypatch
):
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)  # a checkpoint written anywhere relative would land here
    engine = SGLangEngine(server.url)
    _perturb(policy)
    engine.update_weights(policy, version=1)
    assert server.calls[-3:] == [
        "/pause_generation",
        "/update_weights_from_tensor",
        "/continue_generation",
    ]
    assert server.tensor_payloads == [1]  # one entry: tp_size 1
    assert list(cwd.iterdir()) == []
    assert engine.version == 1 and engine.server_weight_version() == "1"
    # the server now computes with the perturbed weights: its logprobs match the trainer's
    trajs = [run_episode(engine, TASK.make(), s, SamplingParams(3), TASK.turns) for s in range(8)]
    assert all(set(v for v in t.policy_versions if v is not None) == {1} for t in trajs)
    assert float(_trainer_logprobs(policy, trajs).mean()) <= 1e-7


def test_syncing_leaves_the_trainers_parameters_private(server, policy):
    engine = SGLangEngine(server.url)
    engine.update_weights(policy, version=1)
    assert not any(p.is_shared() for p in policy.parameters())


def test_the_segment_version_comes_from_the_servers_weight_version(server):
    engine = SGLangEngine(server.url, version=5)
    # the server holds older weights than the client believes (a lagging sync)
    httpx.post(server.url + "/update_weight_version", json={"new_version": "3"})
    assert engine.generate([0, 3], SamplingParams(1)).weight_version == 3


def test_a_segment_answered_on_newer_weights_keeps_the_version_it_started_with():
    # a request retracted by a pause finishes on newer weights: its first tokens are older
    assert served_version({"weight_version": "7"}, requested_at=6) == 6
    assert served_version({"weight_version": "6"}, requested_at=6) == 6
    assert served_version({}, requested_at=6) == 6


def test_a_server_that_lost_our_weights_is_an_error(server):
    engine = SGLangEngine(server.url)
    httpx.post(server.url + "/update_weight_version", json={"new_version": "default"})
    with pytest.raises(SGLangError, match="never set") as info:
        engine.generate([0, 3], SamplingParams(1))
    assert isinstance(info.value, RolloutEngineError) and info.value.retryable


def test_generation_waits_while_paused_and_resumes_on_continue(server):
    engine = SGLangEngine(server.url)
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


def test_a_refused_weight_update_raises_with_the_servers_message(server):
    engine = SGLangEngine(server.url)
    wrong = build_tiny_model(TinyModelSpec(vocab_size=TASK.vocab_size, num_layers=3), seed=0)
    with pytest.raises(SGLangError, match="Failed to update weights"):
        engine.update_weights(wrong, version=1)
    assert server.calls[-1] == "/continue_generation"  # never left paused
    assert engine.version == 0


def test_an_unreachable_server_is_a_rollout_engine_error_naming_the_url():
    with pytest.raises(SGLangError, match="127.0.0.1:9"):
        SGLangEngine("http://127.0.0.1:9", timeout_s=2)


@pytest.mark.gpu
def test_a_real_sglang_server_serves_logprobs_and_takes_tensor_weights():
    url = os.environ.get("ENVFACTORY_TEST_SGLANG_URL")
    if not url:
        pytest.skip("set ENVFACTORY_TEST_SGLANG_URL to a running SGLang server")
    engine = SGLangEngine(url)
    gen = engine.generate([1, 2, 3], SamplingParams(max_new_tokens=8))
    assert len(gen.token_ids) == len(gen.logprobs) > 0 and gen.weight_version == 0


def test_the_trainer_runs_on_the_sglang_engine_and_syncs_every_update(server, policy):
    engine = SGLangEngine(server.url)
    trainer = Trainer(tiny_config(batch_size=4), policy, TASK.make, engine=engine)
    history = trainer.run(3)
    assert engine.version == trainer.version == 3
    assert server.weight_version == "3"
    # 1 initial push + 3 updates, all from tensors
    assert server.calls.count("/update_weights_from_tensor") == 4
    # per step only a few same-version tokens: a few fp32 ulps at most
    assert all(m.logprob_mismatch is None or m.logprob_mismatch <= 1e-6 for m in history)
