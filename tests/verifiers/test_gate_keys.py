"""Which verifications the gates may share: only byte-identical verification inputs."""

from __future__ import annotations

from verifiers.gate.table import input_key as _input_key
from verifiers.runner import PreparedState, Replay


def _replayed(script: str, semantics: str = "harbor") -> PreparedState:
    return PreparedState(
        "img", "full-state", replay=(Replay(("/bin/sh", "-c", script)),), semantics=semantics
    )  # type: ignore[arg-type]


def test_two_replayed_states_with_different_recipes_are_never_shared():
    # Regression: the key ignored the recipe, so every harbor probe row (and full-state
    # probes without tamper evidence) took the result of the first such row, the oracle's.
    assert _input_key(_replayed("echo 1 > /logs/verifier/reward.txt")) != _input_key(
        _replayed("touch /app/out")
    )


def test_the_same_recipe_under_two_semantics_is_two_verifications():
    assert _input_key(_replayed("true", "harbor")) != _input_key(_replayed("true", "envfactory"))


def test_identical_workspace_states_share_one_key():
    a = PreparedState("img", "workspace", workspace=(("/app", b"tar-bytes"),))
    b = PreparedState("img", "workspace", workspace=(("/app", b"tar-bytes"),))
    assert _input_key(a) == _input_key(b)
