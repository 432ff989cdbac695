"""A seed nobody scripted is refused before any pipeline starts, and the scripted backend
finds its scripts through the package wherever the command runs (issue 14).

Run as a user runs it: `python -m envfactory.cli` in a subprocess whose working
directory is /tmp, far from examples/seeds, settings from the environment."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "seeds" / "sqlite-wal-crash-recovery"
NEW_SEED = """\
title: Rotate the expiring TLS certificates of the internal mail relay
description: Postfix on the relay still serves last year's certificate; renew and reload it.
domain: operations
"""


def envfactory(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("ENVFACTORY_")}
    full = {
        **base,
        "PYTHONPATH": str(REPO),
        "ENVFACTORY_HOME": str(tmp_path / "home"),
        # port 1 on loopback refuses at once: no pipeline can start there
        "ENVFACTORY_TEMPORAL__ADDRESS": "127.0.0.1:1",
        "COLUMNS": "250",
        **env,
    }
    return subprocess.run(
        [sys.executable, "-m", "envfactory.cli", *args],
        cwd="/tmp",
        env=full,
        capture_output=True,
        text=True,
        timeout=120,
    )


def new_seed(tmp_path: Path) -> Path:
    d = tmp_path / "tls-rotation"
    d.mkdir()
    (d / "seed.yaml").write_text(NEW_SEED)
    return d


def test_submitting_a_seed_nobody_scripted_is_refused_and_stores_nothing(tmp_path):
    done = envfactory(tmp_path, "seed", "submit", str(new_seed(tmp_path)))
    assert done.returncode == 1
    err = " ".join(done.stderr.split())
    assert (
        "cannot run here: the research, judge, verifier, red_team role(s) use the "
        "scripted backend" in err
    ), err
    assert "ENVFACTORY_AGENTS__DEFAULT__BACKEND=openai" in err
    assert "ENVFACTORY_AGENTS__DEFAULT__MODEL=<model name>" in err
    assert not (tmp_path / "home" / "envfactory.db").exists()


def test_a_stored_seed_nobody_scripted_is_refused_by_seed_start(tmp_path):
    stored = envfactory(tmp_path, "seed", "submit", str(new_seed(tmp_path)), "--no-start", "--json")
    assert stored.returncode == 0, stored.stderr
    seed_id = json.loads(stored.stdout)["id"]
    done = envfactory(tmp_path, "seed", "start", seed_id)
    assert done.returncode == 1
    assert "role(s) use the scripted backend" in " ".join(done.stderr.split())
    assert "Temporal" not in done.stderr  # refused before any connection was tried


def test_with_a_model_configured_the_same_seed_goes_on_to_its_pipeline(tmp_path):
    done = envfactory(
        tmp_path,
        "seed",
        "submit",
        str(new_seed(tmp_path)),
        ENVFACTORY_AGENTS__DEFAULT__BACKEND="openai",
        ENVFACTORY_AGENTS__DEFAULT__MODEL="some-model",
    )
    assert done.returncode == 0, done.stderr
    assert "accepted" in done.stdout
    assert "not started: cannot reach Temporal at 127.0.0.1:1" in " ".join(done.stdout.split())


def test_an_example_seed_passes_the_check_from_any_working_directory(tmp_path):
    done = envfactory(tmp_path, "seed", "submit", str(EXAMPLE), "--json")
    assert done.returncode == 0, done.stderr
    assert "pipeline: not started: cannot reach Temporal" in done.stderr


def test_the_worker_finds_an_example_seeds_scripts_with_cwd_elsewhere(tmp_path):
    """Regression (issue 14): in the compose stack the worker looked for examples/seeds
    relative to its working directory and found no script for the example seeds."""
    code = f"""
from workflows.composition import model_source
from envfactory.core.models import AgentRole, TaskSeed
from envfactory.core.settings import load_settings
from envfactory.seeds import load_seed
settings = load_settings()
d = load_seed({str(EXAMPLE)!r}, settings.seeds)
f = d.fields
seed = TaskSeed(id=d.seed_id, title=f.title, description=f.description, domain=f.domain,
                content_hash=d.content_hash, source=f.source)
models = model_source(settings)
for role in AgentRole:
    if role.value in ("research", "judge", "verifier", "red_team"):
        print(role.value, len(models.model(role, seed).script.turns))
"""
    base = {k: v for k, v in os.environ.items() if not k.startswith("ENVFACTORY_")}
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd="/tmp",
        capture_output=True,
        text=True,
        env={**base, "PYTHONPATH": str(REPO)},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    roles = dict(line.split() for line in done.stdout.splitlines())
    assert set(roles) == {"research", "judge", "verifier", "red_team"}
    assert all(int(n) >= 1 for n in roles.values())
