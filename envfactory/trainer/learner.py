"""One optimisation step on a batch of trajectories: advantages, critic, policy.

Order within a step (values for the advantages come from the critic *before* it is
updated on this batch, as in PPO/VAPO):

1. collate right-padded tensors; position 0 and padding are never action tokens;
2. advantages: skip-observation GAE from critic values (sao, pg; returns use
   λ_critic), group-standardised rewards (grpo), or reward minus a running mean of
   earlier batches' rewards (mean_baseline; the mean moves after the advantages);
3. K critic updates on the value targets (critic-only while warming up);
4. one policy update with the algorithm's loss, unless the critic is warming up.

Explained variance is measured on the values of step 2, before the critic has seen
this batch: 1 − Var(R − V) / Var(R) with R the λ_critic = 1 return (the episode's
reward, γ = 1) on every action token. It says how much of the reward's spread the
baseline the advantages actually used removes; measured after the K updates it would
be an in-sample fit.

The policy version increments only when the policy changed; the caller syncs weights.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass

import torch

from envfactory.core.errors import TrainerError
from envfactory.trainer.config import TrainerConfig
from envfactory.trainer.critic import Critic, explained_variance, value_loss
from envfactory.trainer.gae import group_advantages, skip_observation_gae
from envfactory.trainer.losses import LossOutput, dis_loss, pg_loss, ppo_clip_loss
from envfactory.trainer.models import token_logprobs
from envfactory.trainer.trajectory import Trajectory


@dataclass(frozen=True)
class Batch:
    input_ids: torch.Tensor
    attention_mask: torch.Tensor
    action_mask: torch.Tensor
    rollout_logp: torch.Tensor
    versions: torch.Tensor  # -1 on observation tokens
    trajectories: tuple[Trajectory, ...]


def collate(trajectories: list[Trajectory], device: torch.device) -> Batch:
    width = max(len(t.token_ids) for t in trajectories)
    b = len(trajectories)
    ids = torch.zeros(b, width, dtype=torch.long)
    att = torch.zeros(b, width, dtype=torch.long)
    act = torch.zeros(b, width, dtype=torch.bool)
    lp = torch.zeros(b, width, dtype=torch.float32)
    ver = torch.full((b, width), -1, dtype=torch.long)
    for i, t in enumerate(trajectories):
        n = len(t.token_ids)
        ids[i, :n] = torch.tensor(t.token_ids)
        att[i, :n] = 1
        act[i, :n] = torch.tensor(t.action_mask)
        lp[i, :n] = torch.tensor([x if x is not None else 0.0 for x in t.rollout_logprobs])
        ver[i, :n] = torch.tensor([v if v is not None else -1 for v in t.policy_versions])
    if act[:, 0].any():
        raise TrainerError(
            "the first token of a trajectory must be an observation (it has no context)"
        )
    return Batch(
        ids.to(device),
        att.to(device),
        act.to(device),
        lp.to(device),
        ver.to(device),
        tuple(trajectories),
    )


@dataclass(frozen=True)
class StepStats:
    policy_updated: bool
    keep_fraction: float
    mask_fraction: float
    logprob_mismatch: float
    value_loss: float
    explained_variance: float
    policy_grad_norm: float
    critic_grad_norm: float
    entropy: float


class Learner:
    def __init__(
        self,
        policy: torch.nn.Module,
        critic: Critic | None,
        critic_optimizer: torch.optim.Optimizer | None,
        config: TrainerConfig,
    ) -> None:
        self.policy = policy
        self.critic = critic
        self.critic_optimizer = critic_optimizer
        self.config = config
        self.optimizer = torch.optim.AdamW(policy.parameters(), lr=config.lr, weight_decay=0.0)
        self.device = next(policy.parameters()).device
        self.baseline: float | None = None  # mean_baseline's running mean of rewards

    def _gae_targets(self, batch: Batch, values: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Advantages (λ) and value targets (λ_critic) from the critic's current values."""
        adv = torch.zeros_like(values)
        ret = torch.zeros_like(values)
        cfg = self.config
        for i, traj in enumerate(batch.trajectories):
            n = len(traj.token_ids)
            v = values[i, :n].tolist()
            a, _ = skip_observation_gae(traj.token_rewards, v, traj.action_mask, cfg.gamma, cfg.lam)
            _, r = skip_observation_gae(
                traj.token_rewards, v, traj.action_mask, cfg.gamma, cfg.lam_critic
            )
            adv[i, :n] = torch.tensor([x if x is not None else 0.0 for x in a])
            ret[i, :n] = torch.tensor([x if x is not None else 0.0 for x in r])
        return adv, ret

    def _group_advantages(self, batch: Batch) -> torch.Tensor:
        groups: dict[str, list[int]] = defaultdict(list)
        for i, traj in enumerate(batch.trajectories):
            groups[traj.group_id or traj.prompt_id].append(i)
        adv = torch.zeros(batch.action_mask.shape, dtype=torch.float32, device=self.device)
        for members in groups.values():
            scores = group_advantages([batch.trajectories[i].reward for i in members])
            for i, score in zip(members, scores, strict=True):
                adv[i] = score
        return adv.masked_fill(~batch.action_mask, 0.0)

    def _mean_baseline_advantages(self, batch: Batch) -> torch.Tensor:
        rewards = torch.tensor([t.reward for t in batch.trajectories], device=self.device)
        mean = float(rewards.mean())
        baseline = mean if self.baseline is None else self.baseline
        decay = self.config.baseline_decay
        self.baseline = (
            mean if self.baseline is None else decay * self.baseline + (1 - decay) * mean
        )
        adv = (rewards - baseline)[:, None].expand(batch.action_mask.shape)
        return adv.masked_fill(~batch.action_mask, 0.0)

    def _critic_updates(
        self, batch: Batch, returns: torch.Tensor, first_values: torch.Tensor
    ) -> tuple[float, float]:
        """K value updates; returns (last value loss, last critic grad norm).

        The first update reuses the forward pass the advantages were computed from (the
        same weights, so the same values): one critic forward fewer per step."""
        assert self.critic is not None and self.critic_optimizer is not None
        loss_value, grad_norm = math.nan, 0.0
        for k in range(self.config.critic_updates):
            values = first_values if k == 0 else self.critic(batch.input_ids, batch.attention_mask)
            loss = value_loss(values, returns, batch.action_mask)
            self.critic_optimizer.zero_grad(set_to_none=True)
            loss.backward()
            params = [p for p in self.critic.parameters() if p.requires_grad]
            grad_norm = float(torch.nn.utils.clip_grad_norm_(params, self.config.max_grad_norm))
            self.critic_optimizer.step()
            loss_value = float(loss.detach())
        return loss_value, grad_norm

    def _policy_loss(self, logp: torch.Tensor, batch: Batch, adv: torch.Tensor) -> LossOutput:
        cfg = self.config
        if cfg.algorithm in ("sao", "mean_baseline"):
            return dis_loss(logp, batch.rollout_logp, adv, batch.action_mask, cfg.dis)
        if cfg.algorithm == "pg":
            return pg_loss(logp, batch.rollout_logp, adv, batch.action_mask)
        return ppo_clip_loss(logp, batch.rollout_logp, adv, batch.action_mask, cfg.ppo_clip)

    def _advantages(self, batch: Batch) -> tuple[torch.Tensor, float, float, float]:
        """Advantages, plus (value loss, explained variance, critic grad norm)."""
        mask = batch.action_mask
        v_loss, ev, c_norm = math.nan, math.nan, 0.0
        if self.critic is not None:
            first = self.critic(batch.input_ids, batch.attention_mask)
            values = first.detach().to(torch.float32)
            adv, returns = self._gae_targets(batch, values)
            ev = explained_variance(values, returns, mask)  # before the critic sees the batch
            v_loss, c_norm = self._critic_updates(batch, returns, first)
        elif self.config.algorithm == "mean_baseline":
            adv = self._mean_baseline_advantages(batch)
        else:
            adv = self._group_advantages(batch)
        if self.config.normalize_advantages and mask.sum() > 1:
            mean, std = adv[mask].mean(), adv[mask].std()
            adv = ((adv - mean) / (std + 1e-6)).masked_fill(~mask, 0.0)
        return adv, v_loss, ev, c_norm

    def _policy_update(self, loss: torch.Tensor) -> float:
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        params = self.policy.parameters()
        norm = float(torch.nn.utils.clip_grad_norm_(params, self.config.max_grad_norm))
        self.optimizer.step()
        return norm

    def step(self, trajectories: list[Trajectory], version: int, step_index: int) -> StepStats:
        batch = collate(trajectories, self.device)
        mask = batch.action_mask
        adv, v_loss, ev, c_norm = self._advantages(batch)
        logp, entropy = token_logprobs(
            self.policy, batch.input_ids, batch.attention_mask, self.config.temperature, True
        )
        assert entropy is not None
        # the train/rollout mismatch is only meaningful on tokens sampled with these weights
        same = mask & (batch.versions == version)
        diff = (logp.detach() - batch.rollout_logp)[same].abs()
        out = self._policy_loss(logp, batch, adv)
        warming = self.critic is not None and step_index < self.config.critic_warmup_steps
        p_norm = 0.0 if warming else self._policy_update(out.loss)
        return StepStats(
            policy_updated=not warming,
            keep_fraction=out.keep_fraction,
            mask_fraction=out.mask_fraction,
            logprob_mismatch=float(diff.mean()) if diff.numel() else math.nan,
            value_loss=v_loss,
            explained_variance=ev,
            policy_grad_norm=p_norm,
            critic_grad_norm=c_norm,
            entropy=float(entropy.detach()[mask].mean()),
        )
