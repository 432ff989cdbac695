"""`envfactory seed submit` stores the seed, then starts its pipeline when it can."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from envfactory.cli import app
from envfactory.core.settings import Settings
from envfactory.store import Store

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "seeds" / "etl-silent-row-drop"


def _env(home: Path) -> dict[str, str]:
    # port 1 on loopback refuses at once: no Temporal server is reachable there
    return {"ENVFACTORY_HOME": str(home), "ENVFACTORY_TEMPORAL__ADDRESS": "127.0.0.1:1"}


def test_a_seed_is_stored_even_when_no_temporal_server_is_reachable(tmp_path: Path) -> None:
    home = tmp_path / "home"
    result = CliRunner().invoke(app, ["seed", "submit", str(EXAMPLE), "--json"], env=_env(home))
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout)
    assert "pipeline: not started: cannot reach Temporal at 127.0.0.1:1" in result.stderr
    assert f"envfactory seed start {body['id']}" in result.stderr
    with Store.from_settings(Settings(home=home, database_url=None)) as store:
        assert store.seeds.get(body["id"]).title == body["title"]


def test_no_start_skips_the_pipeline(tmp_path: Path) -> None:
    home = tmp_path / "home"
    args = ["seed", "submit", str(EXAMPLE), "--json", "--no-start"]
    result = CliRunner().invoke(app, args, env=_env(home))
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["title"]
    assert "pipeline: not started (--no-start)" in result.stderr


def test_starting_an_unknown_seed_is_a_clear_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["seed", "start", "seed-000000000000"], env=_env(tmp_path))
    assert result.exit_code == 1
    assert "no seed 'seed-000000000000'" in result.stderr
