"""What a reward file is worth, read as Harbor 0.26 reads it (`Verifier._parse_reward_text`
and `_parse_reward_json`): where Harbor's trial errors, the reward here is 0."""

from __future__ import annotations

import pytest

from verifiers.reward_file import reward_from_file

#: (file, body, binary reward, no reward: Harbor's trial errors, or the object names none)
HARBOR_READS = [
    ("reward.txt", "1\n", 1, False),
    ("reward.txt", " 1.0 \n", 1, False),
    ("reward.txt", "0.999\n", 0, False),
    ("reward.txt", "", 0, True),  # empty: RewardFileEmptyError
    ("reward.txt", "\n", 0, True),  # not a number
    ("reward.txt", "nan\n", 0, True),  # non-finite
    ("reward.txt", "inf\n", 0, True),
    ("reward.txt", "1\n1\n", 0, True),  # two lines are not one number
    ("reward.json", '{"reward": 1}\n', 1, False),
    ("reward.json", '{"reward": 1.0, "accuracy": 0.5}\n', 1, False),
    ("reward.json", '{"reward": true}\n', 1, False),  # Harbor's pydantic model takes it as 1.0
    ("reward.json", '{"reward": 1, "status": "passed"}\n', 0, True),  # a non-numeric value errors
    ("reward.json", '{"reward": 1, "x": NaN}\n', 0, True),  # a non-finite value errors
    ("reward.json", '{"reward": 1e309}\n', 0, True),
    ("reward.json", "1\n", 0, True),  # not an object
    ("reward.json", '{"score": 1}\n', 0, True),  # names no reward
    ("reward.json", "", 0, True),
]


@pytest.mark.parametrize(("name", "body", "reward", "no_reward"), HARBOR_READS)
def test_a_reward_file_is_worth_what_harbor_reads_from_it(
    name: str, body: str, reward: int, no_reward: bool
) -> None:
    got, notes = reward_from_file(f"{name}\n{body}", 0, False, "/logs/verifier")
    assert got == reward, notes
    assert no_reward == any("is not a reward" in n for n in notes), notes


def test_a_graded_value_is_shown_though_only_exactly_1_rewards() -> None:
    reward, notes = reward_from_file('reward.json\n{"reward": 0.46}\n', 0, False, "/logs/v")
    assert reward == 0
    assert notes == ["graded reward 0.46 in reward.json: reward 0 (1 only for exactly 1)"]
    assert reward_from_file("reward.txt\n0\n", 0, False, "/logs/v") == (0, [])
