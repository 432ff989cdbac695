"""Rollout engines behind one interface (``RolloutEngine``): torch in-process, SGLang over HTTP."""

from envfactory.trainer.engines.base import Generation, RolloutEngine, SamplingParams
from envfactory.trainer.engines.sglang_engine import SGLangEngine, SGLangError
from envfactory.trainer.engines.torch_engine import TorchEngine

__all__ = [
    "Generation",
    "RolloutEngine",
    "SamplingParams",
    "SGLangEngine",
    "SGLangError",
    "TorchEngine",
]
