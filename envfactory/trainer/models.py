"""Model construction and the one scoring function shared by trainer and torch engine.

Invariant: the trainer's log πθ and the torch rollout engine's recorded logprob come
from the same function (``token_logprobs``) in fp32 at the same temperature. DIS
divides by the rollout probability, so a trainer/engine numerics gap would show up as
a spurious importance ratio; sharing the code keeps the gap at float rounding
(measured by the ``logprob_mismatch`` metric, asserted ≤ 1e-7 in the tests). That
number says only that one fp32 code path agrees with itself: a bf16 engine feeding the
fp32 learner is another matter, measured by ``mismatch.py`` and
``benchmarks/precision_mismatch.py`` (CPU) and ``benchmarks/gpu_check.sh`` (SGLang).

Tiny models are built from a config with random init: nothing is downloaded.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    PreTrainedModel,
    Qwen2Config,
    Qwen2ForCausalLM,
)

from envfactory.core.errors import TrainerConfigError
from envfactory.trainer.environments import ByteCodec, Codec, HFCodec


@dataclass(frozen=True)
class TinyModelSpec:
    """A Qwen2-shaped model small enough to train on two CPU cores in seconds."""

    vocab_size: int = 16
    hidden_size: int = 32
    intermediate_size: int = 64
    num_layers: int = 2
    num_heads: int = 4
    num_kv_heads: int = 2
    max_positions: int = 256
    init_std: float = 0.02  # larger: peakier next-token distributions


def build_tiny_model(spec: TinyModelSpec, seed: int) -> PreTrainedModel:
    """A randomly initialised causal LM; eager attention for bitwise-stable padding."""
    config = Qwen2Config(
        vocab_size=spec.vocab_size,
        hidden_size=spec.hidden_size,
        intermediate_size=spec.intermediate_size,
        num_hidden_layers=spec.num_layers,
        num_attention_heads=spec.num_heads,
        num_key_value_heads=spec.num_kv_heads,
        max_position_embeddings=spec.max_positions,
        initializer_range=spec.init_std,
        tie_word_embeddings=False,
        attn_implementation="eager",  # type: ignore[call-arg]  # a PretrainedConfig kwarg
        bos_token_id=None,
        eos_token_id=None,
        pad_token_id=None,
    )
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        model = Qwen2ForCausalLM(config)
    model.float()  # in place (nn.Module.float returns the module itself)
    return model


def limit_cpu_threads(n: int) -> None:
    """Tiny models are bound by per-op overhead: one intra-op thread per process is
    fastest and leaves the other cores to rollout threads. Call at the process edge."""
    torch.set_num_threads(n)


def load_policy(model: str, spec: TinyModelSpec, seed: int) -> PreTrainedModel:
    """``"tiny"`` builds a fresh tiny model; anything else is a local HF checkpoint dir."""
    if model == "tiny":
        return build_tiny_model(spec, seed)
    path = Path(model)
    if not path.is_dir():
        raise TrainerConfigError(
            f"--model {model!r} is neither 'tiny' nor a local checkpoint directory",
            hint="nothing is downloaded: pass a directory written by save_pretrained",
        )
    return AutoModelForCausalLM.from_pretrained(path, torch_dtype=torch.float32)


def load_codec(model: str) -> Codec:
    """Bytes for ``"tiny"``; the checkpoint's own tokenizer for a model directory."""
    if model == "tiny":
        return ByteCodec()
    return HFCodec(AutoTokenizer.from_pretrained(model))


def token_logprobs(
    model: torch.nn.Module,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor | None,
    temperature: float,
    with_entropy: bool = False,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """log π(token_t | tokens_<t) for every position t ≥ 1, shape ``[B, T]``.

    Position 0 has no context and gets 0; callers mask it (it is always an
    observation token). Computed in fp32 whatever the model's dtype.
    """
    logits = model(input_ids=input_ids, attention_mask=attention_mask).logits
    logits = logits[:, :-1].to(torch.float32) / temperature
    logp_all = torch.log_softmax(logits, dim=-1)
    picked = logp_all.gather(-1, input_ids[:, 1:, None]).squeeze(-1)
    logp = torch.nn.functional.pad(picked, (1, 0), value=0.0)
    if not with_entropy:
        return logp, None
    entropy = -(logp_all.exp() * logp_all).sum(-1)
    return logp, torch.nn.functional.pad(entropy, (1, 0), value=0.0)
