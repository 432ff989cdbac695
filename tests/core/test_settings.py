"""Settings: environment variables with the ENVFACTORY_ prefix, explicit arguments first."""

from __future__ import annotations

import pytest

from envfactory.core.errors import ConfigError
from envfactory.core.settings import AgentSettings, AgentsSettings, Settings, load_settings


def test_environment_variables_fill_nested_settings(monkeypatch, tmp_path):
    monkeypatch.setenv("ENVFACTORY_HOME", str(tmp_path))
    monkeypatch.setenv("ENVFACTORY_SANDBOX__POOL_SIZE", "5")
    settings = load_settings()
    assert settings.home == tmp_path
    assert settings.sandbox.pool_size == 5
    assert settings.db_url == f"sqlite:///{tmp_path.resolve() / 'envfactory.db'}"


def test_explicit_arguments_beat_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("ENVFACTORY_DATABASE_URL", "sqlite:///env.db")
    settings = Settings(database_url="postgresql+psycopg://u@h/db", home=tmp_path)
    assert settings.db_url == "postgresql+psycopg://u@h/db"
    assert not settings.embedded_db


def test_envfactory_base_image_sets_the_sandbox_base_image(monkeypatch):
    monkeypatch.setenv("ENVFACTORY_BASE_IMAGE", "registry.example/python:3.12")
    assert load_settings().sandbox.base_image == "registry.example/python:3.12"
    monkeypatch.setenv("ENVFACTORY_SANDBOX__BASE_IMAGE", "registry.example/other:1")
    assert load_settings().sandbox.base_image == "registry.example/other:1"  # the specific wins


def test_a_role_inherits_the_shared_default_and_its_own_variable_wins(monkeypatch):
    monkeypatch.setenv("ENVFACTORY_AGENTS__DEFAULT__BACKEND", "openai")
    monkeypatch.setenv("ENVFACTORY_AGENTS__DEFAULT__MODEL", "big-model")
    monkeypatch.setenv("ENVFACTORY_AGENTS__DEFAULT__BASE_URL", "http://models.internal/v1")
    monkeypatch.setenv("ENVFACTORY_AGENTS__DEFAULT__TEMPERATURE", "0.7")
    monkeypatch.setenv("ENVFACTORY_AGENTS__JUDGE__MODEL", "small-model")
    monkeypatch.setenv("ENVFACTORY_AGENTS__RED_TEAM__BACKEND", "scripted")
    agents = load_settings().agents
    assert (agents.research.backend, agents.research.model) == ("openai", "big-model")
    assert agents.research.base_url == "http://models.internal/v1"
    assert (agents.judge.model, agents.judge.temperature) == ("small-model", 0.7)
    assert agents.judge.base_url == "http://models.internal/v1"
    assert agents.red_team.backend == "scripted"
    assert (
        agents.verifier.max_tokens == AgentSettings().max_tokens
    )  # untouched fields keep defaults


def test_explicit_role_settings_inherit_the_explicit_default():
    agents = AgentsSettings(
        default=AgentSettings(backend="openai", model="m", max_tokens=512),
        judge=AgentSettings(temperature=0.0),
    )
    assert (agents.judge.backend, agents.judge.model, agents.judge.max_tokens) == (
        "openai",
        "m",
        512,
    )
    assert agents.judge.temperature == 0.0


def test_the_openai_backend_without_a_model_is_refused_naming_the_variable(monkeypatch):
    """Regression (issue 14): ENVFACTORY_AGENTS_BACKEND=openai sent model "scripted"."""
    monkeypatch.setenv("ENVFACTORY_AGENTS__DEFAULT__BACKEND", "openai")
    monkeypatch.setenv("ENVFACTORY_AGENTS__JUDGE__MODEL", "small-model")
    with pytest.raises(ConfigError) as err:
        load_settings()
    message = str(err.value)
    assert "ENVFACTORY_AGENTS__DEFAULT__MODEL" in message
    assert "ENVFACTORY_AGENTS__RESEARCH__MODEL" in message
    assert "ENVFACTORY_AGENTS__JUDGE__MODEL" not in message  # the judge has its model


def test_an_empty_variable_counts_as_unset(monkeypatch):
    """compose passes `${ENVFACTORY_AGENTS_MODEL:-}`: empty must not become a model ""."""
    monkeypatch.setenv("ENVFACTORY_AGENTS__DEFAULT__MODEL", "")
    monkeypatch.setenv("ENVFACTORY_AGENTS__DEFAULT__BASE_URL", "")
    monkeypatch.setenv("ENVFACTORY_AGENTS__DEFAULT__BACKEND", "")
    agents = load_settings().agents
    assert (agents.research.backend, agents.research.model, agents.research.base_url) == (
        "scripted",
        None,
        None,
    )
    monkeypatch.setenv("ENVFACTORY_AGENTS__DEFAULT__BACKEND", "openai")
    with pytest.raises(ConfigError, match="ENVFACTORY_AGENTS__DEFAULT__MODEL"):
        load_settings()


def test_a_misspelt_role_or_a_bad_value_is_named_by_its_variable(monkeypatch):
    monkeypatch.setenv("ENVFACTORY_AGENTS__JUDG__MODEL", "m")
    monkeypatch.setenv("ENVFACTORY_AGENTS__VERIFIER__TEMPERATURE", "warm")
    with pytest.raises(ConfigError) as err:
        load_settings()
    assert "ENVFACTORY_AGENTS__JUDG" in str(err.value)
    assert "ENVFACTORY_AGENTS__VERIFIER__TEMPERATURE" in str(err.value)


def test_the_shortcut_analyst_is_a_role_like_the_others(monkeypatch):
    monkeypatch.setenv("ENVFACTORY_AGENTS__DEFAULT__BACKEND", "openai")
    monkeypatch.setenv("ENVFACTORY_AGENTS__DEFAULT__MODEL", "big-model")
    monkeypatch.setenv("ENVFACTORY_AGENTS__SHORTCUT_ANALYST__MODEL", "careful-model")
    monkeypatch.setenv("ENVFACTORY_AGENTS__ANALYST_ATTEMPTS", "2")
    agents = load_settings().agents
    assert (agents.shortcut_analyst.backend, agents.shortcut_analyst.model) == (
        "openai",
        "careful-model",
    )
    assert "shortcut_analyst" in agents.roles() and agents.analyst_attempts == 2
    assert AgentsSettings().shortcut_analyst.backend == "scripted"  # the demo needs no endpoint


def test_an_empty_solve_rate_band_is_refused_naming_both_variables(monkeypatch):
    monkeypatch.setenv("ENVFACTORY_GATES__MIN_SOLVE_RATE", "0.8")
    monkeypatch.setenv("ENVFACTORY_GATES__MAX_SOLVE_RATE", "0.5")
    with pytest.raises(ConfigError) as err:
        load_settings()
    assert "ENVFACTORY_GATES__MIN_SOLVE_RATE=0.8" in str(err.value)
    assert "ENVFACTORY_GATES__MAX_SOLVE_RATE=0.5" in str(err.value)
    monkeypatch.setenv("ENVFACTORY_GATES__MAX_SOLVE_RATE", "0.9")
    gates = load_settings().gates
    assert (gates.min_solve_rate, gates.max_solve_rate) == (0.8, 0.9)
