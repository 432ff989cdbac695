import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from envfactory.core.errors import TrainerError
from envfactory.trainer.gae import group_advantages, plain_gae, skip_observation_gae

TOKENS = "a a o o a a".split()
MASK = [t == "a" for t in TOKENS]
REWARDS = [0.0, 0.0, 0.0, 0.0, 0.0, 1.0]
VALUES = [0.1, 0.2, 9.0, -9.0, 0.3, 0.4]


def test_undiscounted_gae_bridges_over_observation_tokens():
    adv, ret = skip_observation_gae(REWARDS, VALUES, MASK, gamma=1.0, lam=1.0)
    assert adv[2] is None and adv[3] is None
    assert [adv[i] for i in (0, 1, 4, 5)] == pytest.approx([0.9, 0.8, 0.7, 0.6])
    assert [ret[i] for i in (0, 1, 4, 5)] == pytest.approx([1.0, 1.0, 1.0, 1.0])


def test_lambda_095_matches_the_hand_computed_reference():
    adv, _ = skip_observation_gae(REWARDS, VALUES, MASK, gamma=1.0, lam=0.95)
    assert adv[2] is None and adv[3] is None
    assert [adv[i] for i in (0, 1, 4, 5)] == pytest.approx([0.799675, 0.7365, 0.67, 0.6])


def test_a_reward_on_an_observation_token_is_refused():
    with pytest.raises(TrainerError, match="observation token 2"):
        skip_observation_gae([0, 0, 1.0, 0, 0, 1.0], VALUES, MASK, 1.0, 1.0)


segments = st.lists(
    st.tuples(st.booleans(), st.floats(-5, 5), st.floats(-5, 5)), min_size=1, max_size=40
)


@settings(max_examples=200, deadline=None)
@given(
    tokens=segments,
    gamma=st.floats(0.0, 1.0),
    lam=st.floats(0.0, 1.0),
)
def test_skip_observation_gae_equals_plain_gae_on_the_action_tokens_alone(tokens, gamma, lam):
    mask = [is_action for is_action, _, _ in tokens]
    rewards = [r if is_action else 0.0 for is_action, r, _ in tokens]
    values = [v for _, _, v in tokens]
    adv, _ = skip_observation_gae(rewards, values, mask, gamma, lam)
    idx = [i for i, m in enumerate(mask) if m]
    compressed = plain_gae([rewards[i] for i in idx], [values[i] for i in idx], gamma, lam)
    assert [adv[i] for i in idx] == pytest.approx(compressed, abs=1e-9)
    assert all(adv[i] is None for i, m in enumerate(mask) if not m)


def test_group_advantages_standardise_within_the_group():
    scores = group_advantages([1.0, 0.0, 0.0, 1.0])
    assert scores == pytest.approx([1.0, -1.0, -1.0, 1.0], abs=1e-5)
    assert group_advantages([1.0, 1.0]) == [0.0, 0.0]
    with pytest.raises(TrainerError):
        group_advantages([1.0])
