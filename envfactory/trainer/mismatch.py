"""Train/rollout mismatch across engines and precisions, and what DIS masks because of it.

DIS divides by the rollout engine's probability, so any difference between the engine's
numerics and the learner's shows up as an importance ratio ≠ 1 on tokens that are
perfectly on-policy. ``measure_mismatch`` samples continuations of prompts from an
engine, scores the same tokens with the learner (fp32 log-softmax, ``token_logprobs``)
and reports, over every generated token:

- ``mean_abs`` / ``max_abs``: |log π_learner − log π_rollout|;
- ``p99_abs``: the 99th percentile of |Δ|, and ``ratio_min`` / ``ratio_max``: how close
  the worst tokens come to the DIS window's edges;
- ``mean_signed``: the same difference without the absolute value (a systematic bias);
- ``masked``: per DIS preset, the fraction of tokens whose ratio falls outside the
  window, i.e. training signal DIS throws away on numerics alone;
- ``tokens_per_s``: generated tokens per wall second of the sampling phase.

The engine and the learner must hold the same weights (same version); nothing here
trains.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import torch

from envfactory.core.errors import TrainerError
from envfactory.trainer.engines.base import Generation, RolloutEngine, SamplingParams
from envfactory.trainer.losses import DIS_PRESETS, dis_keep_mask
from envfactory.trainer.models import token_logprobs


@dataclass(frozen=True)
class MismatchReport:
    tokens: int
    mean_abs: float
    max_abs: float
    p99_abs: float
    mean_signed: float
    ratio_min: float
    ratio_max: float
    masked: dict[str, float]
    seconds: float
    tokens_per_s: float


def random_prompts(n: int, length: int, vocab_size: int, seed: int) -> list[list[int]]:
    gen = torch.Generator().manual_seed(seed)
    return torch.randint(0, vocab_size, (n, length), generator=gen).tolist()


def _sample(
    engine: RolloutEngine,
    prompts: Sequence[list[int]],
    params: SamplingParams,
    concurrency: int,
) -> tuple[list[Generation], float]:
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        generations = list(pool.map(lambda p: engine.generate(p, params), prompts))
    return generations, time.perf_counter() - started


@torch.no_grad()
def _learner_logprobs(
    learner: torch.nn.Module, prompt: list[int], gen: Generation, temperature: float
) -> torch.Tensor:
    device = next(learner.parameters()).device
    ids = torch.tensor([prompt + list(gen.token_ids)], dtype=torch.long, device=device)
    logp, _ = token_logprobs(learner, ids, None, temperature)
    return logp[0, len(prompt) :].to("cpu", torch.float64)


def measure_mismatch(
    engine: RolloutEngine,
    learner: torch.nn.Module,
    prompts: Sequence[list[int]],
    params: SamplingParams,
    concurrency: int = 8,
) -> MismatchReport:
    """Sample from ``engine``, rescore with ``learner``; see the module docstring."""
    generations, seconds = _sample(engine, prompts, params, concurrency)
    diffs = []
    for prompt, gen in zip(prompts, generations, strict=True):
        if gen.token_ids:
            rollout = torch.tensor(gen.logprobs, dtype=torch.float64)
            diffs.append(_learner_logprobs(learner, prompt, gen, params.temperature) - rollout)
    if not diffs:
        raise TrainerError("the engine generated no token: nothing to compare")
    diff = torch.cat(diffs)
    ratio = torch.exp(diff.to(torch.float32))  # the DIS ratio, in the loss's dtype
    masked = {
        name: float((~dis_keep_mask(ratio, preset)).float().mean())
        for name, preset in DIS_PRESETS.items()
    }
    n = diff.numel()
    return MismatchReport(
        tokens=n,
        mean_abs=float(diff.abs().mean()),
        max_abs=float(diff.abs().max()),
        p99_abs=float(torch.quantile(diff.abs(), 0.99)),
        mean_signed=float(diff.mean()),
        ratio_min=float(ratio.min()),
        ratio_max=float(ratio.max()),
        masked=masked,
        seconds=seconds,
        tokens_per_s=n / max(seconds, 1e-9),
    )
