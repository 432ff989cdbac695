"""The critic: a copy of the policy's decoder with a scalar value head.

SAO's critic replaces the group baseline. Three properties from the paper (the loop
and the learner own K and the warm-up; this module owns the network and the freeze):
- frozen attention: parameters whose names match the freeze patterns never change.
  The default follows the paper ("only MoE/MLP projections of the critic train"):
  attention, embeddings and norms are frozen; the MLP projections and the new value
  head train. A pattern that matches no parameter is an error, because a silent no-op
  freeze would train the whole critic while the config claims otherwise;
- "faster value": K = 2 critic updates per policy update (``TrainerConfig.critic_updates``);
- its own learning rate, separate from the policy's.

Frozen parameters are excluded from the optimizer and have ``requires_grad=False``,
so weight decay cannot touch them either: they stay bitwise unchanged.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from transformers import PreTrainedModel

from envfactory.core.errors import TrainerConfigError

DEFAULT_FREEZE_PATTERNS: tuple[str, ...] = (r"\.self_attn\.", r"embed_tokens\.", r"norm\.")


class FreezePatternError(TrainerConfigError):
    """A freeze pattern matched no parameter name."""


@dataclass(frozen=True)
class CriticConfig:
    lr: float = 5e-6
    freeze_patterns: tuple[str, ...] = DEFAULT_FREEZE_PATTERNS


class Critic(torch.nn.Module):
    """``values[:, t]`` = V(tokens_<t), the state in which token t is chosen.

    Aligned like ``token_logprobs``: the value of the state before token t comes from
    the hidden state at t − 1. (Reading it at t would make it Q(s, a_t), and the
    advantage of a_t would shrink towards zero as the critic learns.) Position 0
    has no state before it and gets 0.
    """

    def __init__(self, policy: PreTrainedModel) -> None:
        super().__init__()
        self.backbone = copy.deepcopy(policy.get_decoder())
        hidden = policy.config.hidden_size
        self.head = torch.nn.Linear(hidden, 1)
        # zero init: V = 0 at the start, so the first advantages are the raw returns
        torch.nn.init.zeros_(self.head.weight)
        torch.nn.init.zeros_(self.head.bias)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None) -> torch.Tensor:
        hidden = self.backbone(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        values = self.head(hidden[:, :-1].to(torch.float32)).squeeze(-1)
        return torch.nn.functional.pad(values, (1, 0), value=0.0)


def freeze_by_patterns(module: torch.nn.Module, patterns: Sequence[str]) -> list[str]:
    """Freeze every parameter whose name matches a pattern; return the frozen names."""
    names = [name for name, _ in module.named_parameters()]
    frozen: set[str] = set()
    for pattern in patterns:
        regex = re.compile(pattern)
        hits = [n for n in names if regex.search(n)]
        if not hits:
            sample = ", ".join(names[:6])
            raise FreezePatternError(
                f"freeze pattern {pattern!r} matches no parameter of the critic",
                hint=f"parameter names look like: {sample}, ...",
            )
        frozen.update(hits)
    for name, param in module.named_parameters():
        if name in frozen:
            param.requires_grad_(False)
    return sorted(frozen)


def build_critic(
    policy: PreTrainedModel, config: CriticConfig
) -> tuple[Critic, torch.optim.Optimizer]:
    """A critic initialised from the policy, attention frozen, with its own optimizer."""
    critic = Critic(policy)
    freeze_by_patterns(critic, config.freeze_patterns)
    trainable = [p for p in critic.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(trainable, lr=config.lr, weight_decay=0.0)
    return critic, optimizer


def value_loss(
    values: torch.Tensor, returns: torch.Tensor, action_mask: torch.Tensor
) -> torch.Tensor:
    """Mean squared error on action tokens only (observation tokens have no target)."""
    n = action_mask.sum().clamp(min=1).to(torch.float32)
    err = (values.to(torch.float32) - returns) ** 2
    return err.masked_fill(~action_mask, 0.0).sum() / n


def explained_variance(values: torch.Tensor, returns: torch.Tensor, mask: torch.Tensor) -> float:
    """1 − Var(returns − V) / Var(returns) over action tokens; NaN-free (0 if Var = 0)."""
    v, r = values[mask].to(torch.float64), returns[mask].to(torch.float64)
    if r.numel() < 2:
        return 0.0
    var_r = torch.var(r, unbiased=False)
    if float(var_r) == 0.0:
        return 0.0
    return float(1.0 - torch.var(r - v, unbiased=False) / var_r)
