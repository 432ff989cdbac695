import pytest

from envfactory.core.errors import TrainerError
from envfactory.trainer.trajectory import Trajectory, TrajectoryBuilder


def _built():
    b = TrajectoryBuilder("p1")
    b.add_observation([0, 3])
    b.add_action((4, 5), (-0.1, -0.2), (2, 2))
    b.add_observation([1, 6])
    b.add_action((7,), (-0.3,), (3,))
    return b.build(reward=1.0, finish_reason="env_done", seconds=0.5)


def test_builder_records_tokens_masks_logprobs_and_versions_per_token():
    t = _built()
    assert t.token_ids == (0, 3, 4, 5, 1, 6, 7)
    assert t.action_mask == (False, False, True, True, False, False, True)
    assert t.rollout_logprobs == (None, None, -0.1, -0.2, None, None, -0.3)
    assert t.policy_versions == (None, None, 2, 2, None, None, 3)
    assert t.token_rewards == [0, 0, 0, 0, 0, 0, 1.0]
    assert (t.oldest_version, t.newest_version, t.staleness(5)) == (2, 3, 3)


def test_observation_tokens_cannot_carry_a_logprob():
    data = _built().model_dump()
    data["rollout_logprobs"] = (-1.0,) + tuple(data["rollout_logprobs"][1:])
    with pytest.raises(ValueError, match="exactly on action tokens"):
        Trajectory(**data)


def test_a_trajectory_without_action_tokens_is_refused():
    b = TrajectoryBuilder("p")
    b.add_observation([0, 1])
    with pytest.raises(ValueError, match="at least one action token"):
        b.build(0.0, "aborted", 0.0)


def test_an_action_needs_one_logprob_per_token():
    with pytest.raises(TrainerError):
        TrajectoryBuilder("p").add_action((1, 2), (-0.1,), (0, 0))


def test_trajectories_round_trip_through_json():
    t = _built()
    assert Trajectory.model_validate_json(t.model_dump_json()) == t
