"""A rollout engine on a Hugging Face model in this process (CPU or one GPU).

It keeps its *own* copy of the weights: the trainer updates its model freely and the
engine changes only on ``update_weights``, exactly like a separate inference server.
Each token is sampled from a full forward over the prefix (no KV cache) and the
recorded logprob is that distribution's, computed by the same fp32 log-softmax as
``models.token_logprobs``: in fp32 the rollout/train mismatch stays at float
rounding. ``dtype=torch.bfloat16`` runs the engine's copy in bf16 (weights cast on
every sync, logits upcast to fp32 before the softmax) like a bf16 inference server
feeding an fp32 learner: the cross-precision mismatch ``mismatch.py`` measures.
Without a KV cache a segment costs O(L²); fine for the CPU/test path, and the
SGLang engine is the one for long GPU rollouts.

Thread safety: one generate call holds the weights lock for its whole segment, so a
segment never mixes weight versions; ``pause`` blocks new segments until ``resume``.
"""

from __future__ import annotations

import torch

from envfactory.trainer.engines.base import Generation, SamplingParams
from envfactory.trainer.engines.local_copy import LocalCopyEngine, sample


class TorchEngine(LocalCopyEngine):
    def _next_token(self, ids: list[int], temperature: float) -> tuple[int, float]:
        x = torch.tensor([ids], dtype=torch.long, device=self._device())
        logits = self._model(input_ids=x).logits[:, -1]
        temperatures = torch.tensor([temperature], device=logits.device)
        tokens, logp = sample(logits, temperatures, self._generator)
        token = int(tokens[0])
        return token, float(logp[0, token])

    @torch.no_grad()
    def generate(self, prompt_ids: list[int], params: SamplingParams) -> Generation:
        self._resumed.wait()
        with self._weights_lock:
            ids = list(prompt_ids)
            tokens: list[int] = []
            logprobs: list[float] = []
            finish = "length"
            for _ in range(params.max_new_tokens):
                token, logprob = self._next_token(ids, params.temperature)
                ids.append(token)
                tokens.append(token)
                logprobs.append(logprob)
                if token in params.stop_token_ids:
                    finish = "stop"
                    break
            return Generation(tuple(tokens), tuple(logprobs), finish, self._version)  # type: ignore[arg-type]
