"""Seed intake on good seeds: the examples, attachment rules, content hashing, concurrent
duplicate submits, and the `seed submit|list|show` commands."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from envfactory.cli import app
from envfactory.core.errors import InvalidSeed
from envfactory.core.models import TaskSeed
from envfactory.core.settings import SeedLimits
from envfactory.seeds import load_seed, submit_seed
from envfactory.store import ArtifactStore, Store
from tests.seeds.conftest import MODEL_ENV

EXAMPLES = sorted((Path(__file__).parents[2] / "examples" / "seeds").iterdir())


def test_there_are_at_least_four_example_seeds() -> None:
    assert len(EXAMPLES) >= 4 and all((d / "seed.yaml").is_file() for d in EXAMPLES)


@pytest.mark.parametrize("example", EXAMPLES, ids=[d.name for d in EXAMPLES])
def test_every_example_seed_is_accepted_with_its_files(
    example: Path, store: Store, artifacts: ArtifactStore
) -> None:
    seed = submit_seed(example, store=store, artifacts=artifacts, limits=SeedLimits())
    assert store.seeds.get(seed.id) == seed
    assert seed.id == f"seed-{seed.content_hash[:12]}"
    assert len(seed.description) > 500  # an expert's ticket, not a one-liner
    assert seed.attachments
    for a in seed.attachments:
        assert artifacts.get(a.key, verify=True) == (example / a.path).read_bytes()


def test_a_directory_seed_without_an_attachments_key_attaches_every_other_file(
    seed_dir: Path, limits: SeedLimits
) -> None:
    text = (seed_dir / "seed.yaml").read_text().split("attachments:")[0]
    (seed_dir / "seed.yaml").write_text(text)
    assert sorted(f.path for f in load_seed(seed_dir, limits).files) == [
        "data/orders.csv",
        "job.py",
    ]
    assert load_seed(seed_dir / "seed.yaml", limits).files == ()  # a FILE attaches what it lists


def test_listed_directories_are_attached_recursively(seed_dir: Path, limits: SeedLimits) -> None:
    (seed_dir / "data" / "deep").mkdir()
    (seed_dir / "data" / "deep" / "x.json").write_text("{}")
    paths = [f.path for f in load_seed(seed_dir, limits).files]
    assert paths == ["data/deep/x.json", "data/orders.csv", "job.py"]


def test_binary_attachments_need_not_be_utf8(seed_dir: Path, limits: SeedLimits) -> None:
    (seed_dir / "data" / "orders.db").write_bytes(bytes(range(256)))
    assert any(f.path == "data/orders.db" for f in load_seed(seed_dir, limits).files)


def test_the_content_hash_covers_attachments_but_not_the_source(
    seed_dir: Path, limits: SeedLimits
) -> None:
    h0 = load_seed(seed_dir, limits).content_hash
    with (seed_dir / "seed.yaml").open("a") as f:
        f.write("source: someone else\n")
    assert load_seed(seed_dir, limits).content_hash == h0
    (seed_dir / "job.py").write_text("print('etl v2')\n")
    assert load_seed(seed_dir, limits).content_hash != h0


def test_two_concurrent_submits_of_one_seed_store_it_once(
    seed_dir: Path, limits: SeedLimits, store: Store, artifacts: ArtifactStore
) -> None:
    barrier, results = threading.Barrier(2), []

    def submit() -> None:
        barrier.wait()
        try:
            results.append(submit_seed(seed_dir, store=store, artifacts=artifacts, limits=limits))
        except InvalidSeed as exc:
            results.append(exc)

    threads = [threading.Thread(target=submit) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(type(r).__name__ for r in results) == ["InvalidSeed", "TaskSeed"]
    assert store.seeds.count() == 1


def test_seed_commands_submit_list_and_show(seed_dir: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    env = {
        "ENVFACTORY_HOME": str(tmp_path / "home"),
        "ENVFACTORY_DATABASE_URL": None,
        "COLUMNS": "200",
        **MODEL_ENV,  # a model is configured: this unscripted seed may run
    }
    empty = runner.invoke(app, ["seed", "list"], env=env)
    assert empty.exit_code == 0 and "no seeds yet" in empty.output
    sub = runner.invoke(app, ["seed", "submit", str(seed_dir), "--json"], env=env)
    assert sub.exit_code == 0, sub.output
    seed = TaskSeed.model_validate_json(sub.stdout)
    listed = runner.invoke(app, ["seed", "list", "--json"], env=env)
    assert [s["id"] for s in json.loads(listed.stdout)] == [seed.id]
    shown = runner.invoke(app, ["seed", "show", seed.id, "--json"], env=env)
    assert TaskSeed.model_validate_json(shown.stdout) == seed
    human = runner.invoke(app, ["seed", "show", seed.id], env=env)
    assert seed.id in human.output and "data/orders.csv" in human.output
    assert seed.id in runner.invoke(app, ["seed", "list"], env=env).output
    missing = runner.invoke(app, ["seed", "show", "seed-000000000000"], env=env)
    assert missing.exit_code == 1 and "no seed 'seed-000000000000'" in missing.stderr
    for cmd in (["seed", "--help"], ["seed", "submit", "--help"], ["db", "--help"]):
        assert runner.invoke(app, cmd).exit_code == 0


def test_a_seed_may_set_its_judges_and_solve_rate_band(
    seed_dir: Path, limits: SeedLimits, store: Store, artifacts: ArtifactStore
) -> None:
    text = (seed_dir / "seed.yaml").read_text()
    extra = "  judges: 4\n  min_solve_rate: 0.25\n  max_solve_rate: 0.75\n"
    (seed_dir / "seed.yaml").write_text(
        text.replace("base_image: python\n", "base_image: python\n" + extra)
    )
    seed = submit_seed(seed_dir, store=store, artifacts=artifacts, limits=limits)
    c = store.seeds.get(seed.id).constraints
    assert (c.judges, c.min_solve_rate, c.max_solve_rate) == (4, 0.25, 0.75)


def test_a_seed_that_sets_no_band_hashes_as_it_did_before_bands_existed(
    seed_dir: Path, limits: SeedLimits
) -> None:
    """Regression guard: new optional constraints must not change stored seeds' ids."""
    import hashlib

    draft = load_seed(seed_dir, limits)
    f = draft.fields
    doc = {
        "title": f.title,
        "description": f.description,
        "domain": f.domain,
        "repository": f.repository,
        "constraints": {"max_turns": 40, "time_budget_s": 900, "base_image": "python"},
        "attachments": sorted((x.path, hashlib.sha256(x.data).hexdigest()) for x in draft.files),
    }
    canonical = json.dumps(doc, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    assert draft.content_hash == hashlib.sha256(canonical.encode()).hexdigest()


def test_seed_show_prints_a_stored_title_with_control_characters_as_escapes(
    seed_dir: Path, tmp_path: Path
) -> None:
    """A seed stored before control characters were refused cannot drive the terminal."""
    from envfactory.core.settings import Settings

    home = tmp_path / "home"
    env = {"ENVFACTORY_HOME": str(home), "ENVFACTORY_DATABASE_URL": None, "COLUMNS": "200"}
    runner = CliRunner()
    sub = runner.invoke(app, ["seed", "submit", str(seed_dir), "--json"], env=env | MODEL_ENV)
    seed = TaskSeed.model_validate_json(sub.stdout)
    with Store.from_settings(Settings(home=home, database_url=None)) as store:
        bad = seed.model_copy(
            update={
                "id": "seed-00000000abcd",
                "title": "ok\x1b[2J[bold]x[/]\rgone",
                "content_hash": "0" * 64,
            }
        )
        store.seeds.add(bad)
    human = runner.invoke(app, ["seed", "show", bad.id], env=env)
    assert human.exit_code == 0, human.output
    assert "\x1b" not in human.output and "\r" not in human.output
    assert "ok\\x1b[2J[bold]x[/]\\rgone" in human.output
    listed = runner.invoke(app, ["seed", "list"], env=env)
    assert "\x1b" not in listed.output
