"""Cross-precision mismatch: a bf16 rollout engine against the fp32 learner (CPU)."""

import torch

from envfactory.trainer.engines import SamplingParams, TorchEngine
from envfactory.trainer.mismatch import measure_mismatch, random_prompts
from envfactory.trainer.models import TinyModelSpec, build_tiny_model

VOCAB = 32


def _learner(seed=0, init_std=0.3):
    return build_tiny_model(TinyModelSpec(vocab_size=VOCAB, init_std=init_std), seed=seed)


def _measure(engine, learner):
    prompts = random_prompts(6, 8, VOCAB, seed=0)
    return measure_mismatch(engine, learner, prompts, SamplingParams(6), concurrency=1)


def test_a_bf16_engine_differs_from_the_fp32_learner_and_the_dis_mask_is_reported():
    learner = _learner()
    report = _measure(TorchEngine(learner, seed=1, dtype=torch.bfloat16), learner)
    assert report.tokens == 36
    # fp32 rounding of the same code is ~1e-7; bf16 weights and activations are far above
    assert report.mean_abs > 1e-4
    assert report.ratio_min < 1.0 < report.ratio_max
    assert set(report.masked) == {"reasoning", "coding"}
    assert all(0.0 <= v <= 1.0 for v in report.masked.values())


def test_an_fp32_engine_running_the_same_code_matches_to_rounding():
    learner = _learner()
    report = _measure(TorchEngine(learner, seed=1), learner)
    assert report.mean_abs <= 1e-6
    assert report.masked == {"reasoning": 0.0, "coding": 0.0}


def test_tokens_outside_the_window_are_counted_as_masked():
    # an engine on quite different weights: many ratios leave the reasoning window
    learner = _learner(seed=0, init_std=0.5)
    other = _learner(seed=1, init_std=0.5)
    report = _measure(TorchEngine(other, seed=1), learner)
    assert report.masked["reasoning"] > 0.0
    assert report.ratio_min < 0.7 or report.ratio_max > 6.0
