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

Thread safety: one generate call holds the engine lock for its whole segment, so a
segment never mixes weight versions; ``pause`` blocks new segments until ``resume``.
"""

from __future__ import annotations

import copy
import threading

import torch

from envfactory.trainer.engines.base import Generation, SamplingParams


class TorchEngine:
    def __init__(
        self,
        model: torch.nn.Module,
        seed: int,
        version: int = 0,
        dtype: torch.dtype | None = None,
    ) -> None:
        self._model = copy.deepcopy(model).eval()
        if dtype is not None:
            self._model.to(dtype)
        for param in self._model.parameters():
            param.requires_grad_(False)
        self._lock = threading.Lock()
        self._resumed = threading.Event()
        self._resumed.set()
        self._version = version
        self._generator = torch.Generator().manual_seed(seed)

    @property
    def version(self) -> int:
        return self._version

    @property
    def model(self) -> torch.nn.Module:
        return self._model

    def _next_token(self, ids: list[int], temperature: float) -> tuple[int, float]:
        device = next(self._model.parameters()).device
        x = torch.tensor([ids], dtype=torch.long, device=device)
        logits = self._model(input_ids=x).logits[0, -1].to(torch.float32) / temperature
        logp = torch.log_softmax(logits, dim=-1)
        token = int(torch.multinomial(logp.exp().cpu(), 1, generator=self._generator))
        return token, float(logp[token])

    @torch.no_grad()
    def generate(self, prompt_ids: list[int], params: SamplingParams) -> Generation:
        self._resumed.wait()
        with self._lock:
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

    def update_weights(self, model: torch.nn.Module, version: int) -> None:
        self.load_weights(dict(model.named_parameters()), version)

    @torch.no_grad()
    def load_weights(self, named: dict[str, torch.Tensor], version: int) -> None:
        """Copy ``named`` parameters in (cast to the engine's dtype), between segments."""
        params = dict(self._model.named_parameters())
        unknown = sorted(set(named) - set(params))
        if unknown:
            raise KeyError(f"unknown parameters {unknown[:3]}")
        with self._lock:
            for name, tensor in named.items():
                params[name].copy_(tensor)
            self._version = version

    def pause(self) -> None:
        self._resumed.clear()

    def resume(self) -> None:
        self._resumed.set()
