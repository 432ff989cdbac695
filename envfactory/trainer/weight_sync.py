"""Weight sync: the trainer's weights go to the rollout side after every policy update.

``sync_lag`` > 0 deliberately serves weights that many versions old (a shadow copy of
the policy holds them), to measure robustness to policy lag; with no lag the live
policy is pushed as is.
"""

from __future__ import annotations

import copy
from collections import deque

import torch

from envfactory.trainer.engines.base import WeightSink


class WeightSync:
    """Pushes the trainer's weights to the engine after each update, ``lag`` versions late."""

    def __init__(self, engine: WeightSink, policy: torch.nn.Module, lag: int) -> None:
        self._engine = engine
        self._policy = policy
        self._lag = lag
        self._history: deque[tuple[int, dict[str, torch.Tensor]]] = deque(maxlen=lag + 1)
        self._shadow = copy.deepcopy(policy) if lag else None

    def push(self, version: int) -> None:
        if self._shadow is None:
            self._engine.update_weights(self._policy, version)
            return
        state = {k: v.detach().clone() for k, v in self._policy.state_dict().items()}
        self._history.append((version, state))
        if len(self._history) == self._history.maxlen:
            old_version, old_state = self._history[0]
            self._shadow.load_state_dict(old_state)
            self._engine.update_weights(self._shadow, old_version)
