"""Settings: environment variables with the ENVFACTORY_ prefix, explicit arguments first."""

from __future__ import annotations

from envfactory.core.settings import Settings, load_settings


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
