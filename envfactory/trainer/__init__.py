"""SAO: single-rollout asynchronous RL with DIS, a frozen-attention critic and skip-observation GAE.

torch is imported only under this package. Entry points: ``Trainer`` (loop.py),
``TrainerConfig`` (config.py), engines (engines/), environments (environments.py,
synthetic.py). See MISSION.md (SAO section) for the equations.
"""
