"""`envfactory demo` refuses seeds it cannot run before it starts anything, and exits
non-zero, saying why per seed, when any seed ends other than published (issue 14: a new
seed stopped at research with `no research script` and the demo still exited 0)."""

from __future__ import annotations

import shutil
from pathlib import Path

from rich.console import Console
from typer.testing import CliRunner

from envfactory.cli import app
from envfactory.cli.demo import all_published
from workflows.types import SynthesisResult

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "seeds" / "flask-build-transitive-pin"


def test_a_seed_dir_with_an_unscripted_seed_is_refused_before_anything_starts(tmp_path):
    seeds = tmp_path / "seeds"
    shutil.copytree(EXAMPLE, seeds / EXAMPLE.name)
    (seeds / "tls-rotation").mkdir()
    (seeds / "tls-rotation" / "seed.yaml").write_text(
        "title: Rotate the relay's TLS certificate\ndescription: renew and reload\n"
        "domain: operations\n"
    )
    env = {"ENVFACTORY_HOME": str(tmp_path / "home"), "COLUMNS": "250"}
    res = CliRunner().invoke(app, ["demo", "--seeds-dir", str(seeds), "--no-train"], env=env)
    assert res.exit_code == 1, res.output
    out = " ".join(res.output.split())
    assert 'refused seed tls-rotation: seed "Rotate the relay\'s TLS certificate" cannot run' in out
    assert f"refused seed {EXAMPLE.name}" not in out  # the example has its scripts
    assert "1 of 2 seed(s) cannot run with these agent settings: tls-rotation" in out
    assert "ENVFACTORY_AGENTS__DEFAULT__MODEL" in out
    assert "base image" not in out  # refused before Docker, Temporal or the store
    assert not (tmp_path / "home" / "envfactory.db").exists()


def test_any_seed_not_published_fails_the_demo_and_says_why():
    console = Console(record=True, width=250)
    results = [
        SynthesisResult(seed_id="seed-a", env_id="env-a", outcome="published"),
        SynthesisResult(
            seed_id="seed-b",
            env_id=None,
            outcome="rejected",
            reasons=("pipeline failed: no research script",),
        ),
        SynthesisResult(
            seed_id="seed-c", env_id="env-c", outcome="unproven", reasons=("judges solved 0 of 2",)
        ),
    ]
    names = {"seed-a": "a", "seed-b": "b", "seed-c": "c"}
    assert all_published(results, names, console) is False
    text = console.export_text()
    assert "not published b (seed-b): rejected — pipeline failed: no research script" in text
    assert "not published c (seed-c): unproven — judges solved 0 of 2" in text
    assert "(seed-a)" not in text
    assert "2 of 3 seed(s) did not end published" in text
    assert all_published(results[:1], names, Console(record=True)) is True
