"""A torch rollout engine that batches the token steps of concurrent segments.

Continuous batching, as an inference server does it: every thread that calls
``generate`` queues its segment; whichever caller finds the engine idle becomes the
leader for one step, takes every queued segment (up to ``max_batch``), runs *one*
forward over them (right-padded, so each prefix sees exactly its own tokens) and
samples one token for each. Segments that need more tokens go back in the queue; new
ones join at the next step, without waiting for the batch to drain. For tiny models
a forward is per-op overhead, so one forward over 32 prefixes costs about what one
over a single prefix does (``benchmarks/sao_vs_grpo.py`` measures it): concurrently
running single rollouts stop paying for their forwards one by one.

Invariants (those of ``engines/base.py``, plus):
- each token's logprob is the fp32 log-softmax of the logits it was sampled from, as
  in ``TorchEngine`` and ``models.token_logprobs``;
- a forward runs under the weights lock, so no step mixes two weight versions; a
  segment reports the version of its *first* token's step: a weight update between
  two tokens of one segment makes later tokens newer than reported, never older,
  so staleness is never under-estimated;
- an error in a step fails every segment of that step (their callers raise it), and
  the next caller leads the next step: one bad segment does not wedge the engine.
"""

from __future__ import annotations

import copy
import threading
from dataclasses import dataclass, field

import torch

from envfactory.trainer.engines.base import EngineFinish, Generation, SamplingParams


@dataclass
class _Segment:
    ids: list[int]
    params: SamplingParams
    version: int | None = None
    tokens: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    finish: EngineFinish = "length"
    done: bool = False
    error: BaseException | None = None

    def take(self, token: int, logprob: float, version: int) -> None:
        if self.version is None:
            self.version = version
        self.ids.append(token)
        self.tokens.append(token)
        self.logprobs.append(logprob)
        if token in self.params.stop_token_ids:
            self.finish, self.done = "stop", True
        elif len(self.tokens) >= self.params.max_new_tokens:
            self.done = True


class BatchingEngine:
    def __init__(
        self, model: torch.nn.Module, seed: int, version: int = 0, max_batch: int = 64
    ) -> None:
        self._model = copy.deepcopy(model).eval()
        for param in self._model.parameters():
            param.requires_grad_(False)
        self._weights_lock = threading.Lock()
        self._queue = threading.Condition()
        self._waiting: list[_Segment] = []
        self._leading = False
        self._resumed = threading.Event()
        self._resumed.set()
        self._version = version
        self._max_batch = max_batch
        self._generator = torch.Generator().manual_seed(seed)
        self.forwards = 0  # batched forward passes run (a benchmark counter)
        self.segments_stepped = 0  # sum of the batch sizes of those passes

    @property
    def version(self) -> int:
        return self._version

    @property
    def model(self) -> torch.nn.Module:
        return self._model

    def generate(self, prompt_ids: list[int], params: SamplingParams) -> Generation:
        self._resumed.wait()
        segment = _Segment(list(prompt_ids), params)
        with self._queue:
            self._waiting.append(segment)
        while True:
            with self._queue:
                while self._leading and not segment.done:
                    self._queue.wait()
                if segment.done:
                    break
                batch = self._waiting[: self._max_batch]
                del self._waiting[: self._max_batch]
                self._leading = True
            self._lead(batch)
        if segment.error is not None:
            raise segment.error
        version = self._version if segment.version is None else segment.version
        return Generation(tuple(segment.tokens), tuple(segment.logprobs), segment.finish, version)

    def _lead(self, batch: list[_Segment]) -> None:
        """One step for ``batch``; the unfinished go back to the front of the queue."""
        try:
            self._step(batch)
        except BaseException as err:
            for segment in batch:
                segment.error, segment.done = err, True
        finally:
            with self._queue:
                self._waiting[:0] = [s for s in batch if not s.done]
                self._leading = False
                self._queue.notify_all()

    @torch.no_grad()
    def _step(self, batch: list[_Segment]) -> None:
        lengths = [len(s.ids) for s in batch]
        ids = torch.zeros(len(batch), max(lengths), dtype=torch.long)
        mask = torch.zeros_like(ids)
        for row, segment in enumerate(batch):
            ids[row, : lengths[row]] = torch.tensor(segment.ids)
            mask[row, : lengths[row]] = 1
        last = torch.tensor(lengths) - 1
        with self._weights_lock:
            device = next(self._model.parameters()).device
            logits = self._model(input_ids=ids.to(device), attention_mask=mask.to(device)).logits
            version = self._version
        rows = logits[torch.arange(len(batch), device=device), last.to(device)]
        temperatures = torch.tensor([s.params.temperature for s in batch], device=device)
        logp = torch.log_softmax(rows.to(torch.float32) / temperatures[:, None], dim=-1).cpu()
        tokens = torch.multinomial(logp.exp(), 1, generator=self._generator).squeeze(1)
        for row, segment in enumerate(batch):
            token = int(tokens[row])
            segment.take(token, float(logp[row, token]), version)
        self.forwards += 1
        self.segments_stepped += len(batch)

    def update_weights(self, model: torch.nn.Module, version: int) -> None:
        self.load_weights(dict(model.named_parameters()), version)

    @torch.no_grad()
    def load_weights(self, named: dict[str, torch.Tensor], version: int) -> None:
        """Copy ``named`` parameters in, between two batched steps."""
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
