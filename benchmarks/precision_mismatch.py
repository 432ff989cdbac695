"""Train/rollout logprob mismatch across engines and precisions, and what DIS masks for it.

The learner scores in fp32. The rollout engine is one of:

- ``--sglang-url URL``: a running SGLang server (on a GPU machine: typically bf16)
  serving the same weights as ``--model`` (``benchmarks/gpu_check.sh`` sets that up);
- otherwise the in-process torch engine in ``--engine-dtype`` (fp32 or bf16, CPU),
  on ``--model`` or fresh tiny models: one with the default init (std 0.02: nearly
  uniform next-token distributions) and one with std 0.3 (peaked ones, closer to a
  trained model's), since bf16 error grows with the logits' scale.

Prints mean / max |Δ log π|, the signed mean, the fraction of tokens each DIS preset
masks on numerics alone, and generated tokens/s. One run, small by default: on two
shared CPU cores the bf16 run takes about a minute.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from envfactory.trainer.engines import SamplingParams  # noqa: E402
from envfactory.trainer.mismatch import MismatchReport, measure_mismatch, random_prompts  # noqa: E402
from envfactory.trainer.models import TinyModelSpec, build_tiny_model, limit_cpu_threads  # noqa: E402

TINY_INIT_STDS = (0.02, 0.3)


def _learner(model: str | None, device: str, init_std: float = 0.02) -> torch.nn.Module:
    if model is None:
        spec = TinyModelSpec(vocab_size=64, max_positions=512, init_std=init_std)
        policy = build_tiny_model(spec, seed=0)
    else:
        from transformers import AutoModelForCausalLM

        policy = AutoModelForCausalLM.from_pretrained(model, torch_dtype=torch.float32)
    return policy.to(device).eval()


def _engine(args: argparse.Namespace, learner: torch.nn.Module):  # type: ignore[no-untyped-def]
    if args.sglang_url:
        from envfactory.trainer.engines import SGLangEngine

        return SGLangEngine(args.sglang_url)  # serves --model as loaded: no weight push
    from envfactory.trainer.engines import TorchEngine

    return TorchEngine(learner, seed=1, dtype=getattr(torch, args.engine_dtype))


def _print(label: str, report: MismatchReport) -> None:
    masked = "  ".join(f"{k} {v:.4f}" for k, v in report.masked.items())
    print(
        f"{label}: {report.tokens} tokens\n"
        f"  |Δlogp| mean {report.mean_abs:.3e}  p99 {report.p99_abs:.3e}  "
        f"max {report.max_abs:.3e}  signed mean {report.mean_signed:+.3e}\n"
        f"  ratio range [{report.ratio_min:.4f}, {report.ratio_max:.4f}]\n"
        f"  DIS masked on numerics alone: {masked}\n"
        f"  generation: {report.tokens_per_s:.1f} tokens/s over {report.seconds:.1f} s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sglang-url", default=None)
    parser.add_argument("--model", default=None, help="HF model directory (default: tiny)")
    parser.add_argument("--engine-dtype", default="bfloat16", choices=["float32", "bfloat16"])
    parser.add_argument("--learner-device", default="cpu")
    parser.add_argument("--prompts", type=int, default=32)
    parser.add_argument("--prompt-len", type=int, default=16)
    parser.add_argument("--new-tokens", type=int, default=24)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    limit_cpu_threads(1)
    stds = TINY_INIT_STDS if args.model is None and not args.sglang_url else (None,)
    for std in stds:
        learner = _learner(args.model, args.learner_device, std or 0.02)
        vocab = int(learner.config.vocab_size)
        prompts = random_prompts(args.prompts, args.prompt_len, vocab, seed=0)
        engine = _engine(args, learner)
        params = SamplingParams(args.new_tokens)
        report = measure_mismatch(engine, learner, prompts, params, args.concurrency)
        label = (
            f"sglang ({args.sglang_url}) vs fp32 learner"
            if args.sglang_url
            else f"torch {args.engine_dtype} engine vs fp32 learner (CPU)"
            + (f", tiny model init std {std}" if std else "")
        )
        if args.json:
            print(json.dumps({"label": label, **report.__dict__}))
        else:
            _print(label, report)


if __name__ == "__main__":
    main()
