"""What the in-process torch engines share: a frozen private copy of the policy, its
weight version, weight updates between steps, pause/resume, and the sampling step.

The copy changes only through ``load_weights`` (under ``_weights_lock``), exactly like a
separate inference server's weights; a subclass holds the same lock around each forward
so no step mixes two versions. ``sample`` is the one place a token and its logprob are
drawn: the fp32 log-softmax of the (temperature-scaled) logits, as in
``models.token_logprobs``, so the rollout/train mismatch in fp32 stays at float rounding.
"""

from __future__ import annotations

import copy
import threading

import torch


def sample(
    logits: torch.Tensor, temperatures: torch.Tensor, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """One token per row of ``logits`` (rows × vocab), and each row's fp32 logprobs (on
    the CPU): ``(tokens[rows], logp[rows, vocab])``."""
    logp = torch.log_softmax(logits.to(torch.float32) / temperatures[:, None], dim=-1).cpu()
    tokens = torch.multinomial(logp.exp(), 1, generator=generator).squeeze(1)
    return tokens, logp


class LocalCopyEngine:
    """Base of `TorchEngine` and `BatchingEngine` (see the module docstring)."""

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
        self._weights_lock = threading.Lock()
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

    def _device(self) -> torch.device:
        return next(self._model.parameters()).device

    def update_weights(self, model: torch.nn.Module, version: int) -> None:
        self.load_weights(dict(model.named_parameters()), version)

    @torch.no_grad()
    def load_weights(self, named: dict[str, torch.Tensor], version: int) -> None:
        """Copy ``named`` parameters in (cast to the copy's dtype), between two steps."""
        params = dict(self._model.named_parameters())
        unknown = sorted(set(named) - set(params))
        if unknown:
            raise KeyError(f"unknown parameters {unknown[:3]}")
        with self._weights_lock:
            for name, tensor in named.items():
                params[name].copy_(tensor)
            self._version = version

    def pause(self) -> None:
        self._resumed.clear()

    def resume(self) -> None:
        self._resumed.set()
