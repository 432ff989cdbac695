"""SAO: single-rollout asynchronous RL with DIS, a frozen-attention critic and skip-observation GAE.

torch is imported only under this package. Map (MISSION.md, SAO section, has the
equations):

- ``trajectory``: tokens as sampled, action mask, rollout logprobs, versions per token;
- ``losses``: DIS (SAO), plain PG and PPO-clip (GRPO baseline);
- ``gae``: skip-observation token-level GAE and GRPO group advantages;
- ``critic``: value head on a copy of the policy decoder; attention, embeddings and
  norms frozen by pattern;
- ``engines``: rollout engines behind one interface (torch in-process, SGLang HTTP);
- ``environments`` / ``synthetic``: environments as data generation (packs, built-ins;
  ``graded_recall`` is the one where the value function matters);
- ``buffer`` / ``loop`` / ``learner``: the async single-rollout loop and the update;
- ``mismatch``: train/rollout logprob mismatch across engines and precisions;
- ``checkpoint``, ``metrics``, ``models``, ``config``.
"""
