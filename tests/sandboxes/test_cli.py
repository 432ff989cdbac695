"""The `envfactory images` and `envfactory sandbox` commands against the real engine."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from envfactory.cli import app

pytestmark = pytest.mark.docker


def test_images_base_prints_the_cached_base_image(base_image: str) -> None:
    res = CliRunner().invoke(app, ["images", "base", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["tag"] == base_image


def test_sandbox_gc_for_an_unknown_run_removes_nothing(base_image: str) -> None:
    res = CliRunner().invoke(app, ["sandbox", "gc", "--all", "--run-id", "no-such-run", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout) == []
