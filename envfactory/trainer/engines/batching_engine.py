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

import threading
from dataclasses import dataclass, field

import torch

from envfactory.trainer.engines.base import EngineFinish, Generation, SamplingParams
from envfactory.trainer.engines.local_copy import LocalCopyEngine, sample


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


class BatchingEngine(LocalCopyEngine):
    def __init__(
        self, model: torch.nn.Module, seed: int, version: int = 0, max_batch: int = 64
    ) -> None:
        super().__init__(model, seed, version)
        self._queue = threading.Condition()
        self._waiting: list[_Segment] = []
        self._leading = False
        self._max_batch = max_batch
        self.forwards = 0  # batched forward passes run (a benchmark counter)
        self.segments_stepped = 0  # sum of the batch sizes of those passes

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
            device = self._device()
            logits = self._model(input_ids=ids.to(device), attention_mask=mask.to(device)).logits
            version = self._version
        rows = logits[torch.arange(len(batch), device=device), last.to(device)]
        temperatures = torch.tensor([s.params.temperature for s in batch], device=device)
        tokens, logp = sample(rows, temperatures, self._generator)
        for row, segment in enumerate(batch):
            token = int(tokens[row])
            segment.take(token, float(logp[row, token]), version)
        self.forwards += 1
        self.segments_stepped += len(batch)
