#!/usr/bin/env bash
# Cross-engine check: a bf16 SGLang server vs the fp32 learner, on the trainer's own model.
#
# NOT RUN YET. It needs a CUDA GPU and sglang (`pip install -e '.[trainer,gpu]'`); the
# development machines have neither, so the numbers it prints have never been seen.
# Run it on a GPU machine from the repository root:
#
#     bash benchmarks/gpu_check.sh            # WORK=/tmp/dir PORT=30777 PYTHON=python
#
# What it does:
#   1. builds a small Qwen2-shaped model whose head_dim (64) SGLang's attention kernels
#      accept, and trains it 20 SAO steps with `envfactory train` (torch engine), which
#      saves the policy as a Hugging Face directory under $WORK/run/model;
#   2. serves that directory with SGLang in bf16 (`--skip-tokenizer-init`: token ids in,
#      token ids out; the tiny model has no tokenizer);
#   3. runs benchmarks/precision_mismatch.py against the server: the fp32 learner (on the
#      GPU) rescores every sampled token and the script prints mean/max |Δ log π|, the
#      fraction each DIS preset masks on numerics alone, and generated tokens/s;
#   4. runs `envfactory train --engine sglang` for 3 steps, so weight sync through
#      /update_weights_from_tensor (CUDA IPC handles) and weight_version are exercised
#      against a real server; its JSON summary ends with the step's logprob_mismatch.
set -euo pipefail

PY=${PYTHON:-python}
WORK=${WORK:-$(mktemp -d)}
PORT=${PORT:-30777}
URL="http://127.0.0.1:${PORT}"

"$PY" -c 'import sglang, torch; assert torch.cuda.is_available(), "no CUDA GPU"' || {
  echo "gpu_check: needs a CUDA GPU and sglang (pip install -e '.[trainer,gpu]')" >&2
  exit 2
}

"$PY" - "$WORK/init" <<'PYEOF'
import sys
from envfactory.trainer.models import TinyModelSpec, build_tiny_model
spec = TinyModelSpec(vocab_size=256, hidden_size=256, intermediate_size=512,
                     num_layers=2, num_heads=4, num_kv_heads=2, max_positions=2048)
build_tiny_model(spec, seed=0).save_pretrained(sys.argv[1])
PYEOF

"$PY" -m envfactory.cli train --synthetic two_turn_recall --model "$WORK/init" \
  --lr 3e-3 --steps 20 --warmup 2 --batch-size 32 --out "$WORK/run" --json >"$WORK/train.json"
echo "trained: $(cut -c1-200 "$WORK/train.json")"

"$PY" -m sglang.launch_server --model-path "$WORK/run/model" --dtype bfloat16 \
  --skip-tokenizer-init --port "$PORT" --host 127.0.0.1 --mem-fraction-static 0.3 \
  >"$WORK/sglang.log" 2>&1 &
SERVER=$!
trap 'kill "$SERVER" 2>/dev/null || true' EXIT
for _ in $(seq 1 180); do
  curl -sf "$URL/health" >/dev/null && break
  kill -0 "$SERVER" 2>/dev/null || { tail -50 "$WORK/sglang.log"; exit 1; }
  sleep 2
done

echo "== bf16 SGLang server vs fp32 learner =="
"$PY" benchmarks/precision_mismatch.py --sglang-url "$URL" --model "$WORK/run/model" \
  --learner-device cuda --prompts 256 --prompt-len 64 --new-tokens 128 --concurrency 64

echo "== envfactory train --engine sglang (tensor weight sync, weight_version) =="
"$PY" -m envfactory.cli train --synthetic two_turn_recall --model "$WORK/run/model" \
  --lr 3e-3 --steps 3 --warmup 0 --batch-size 32 --engine sglang --sglang-url "$URL" \
  --out "$WORK/run-sglang" --json | tail -c 600
echo
