"""Migrations: upgrade → downgrade → upgrade on SQLite and PostgreSQL, no drift between the
ORM models and the migrations, the embedded default migrates itself, and the CLI."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import pytest
from sqlalchemy import inspect
from typer.testing import CliRunner

from envfactory.cli import app
from envfactory.core.errors import ConfigError
from envfactory.core.settings import Settings
from envfactory.store import Store
from envfactory.store.db import make_engine
from envfactory.store.migrate import check, current, downgrade, ensure_schema, head, upgrade
from envfactory.store.schema import metadata

TABLES = set(metadata.tables)


def _tables(url: str) -> set[str]:
    engine = make_engine(url)
    try:
        return set(inspect(engine).get_table_names()) - {"alembic_version"}
    finally:
        engine.dispose()


def test_upgrade_downgrade_upgrade_leaves_a_schema_identical_to_the_models(db_url: str) -> None:
    assert current(db_url) is None
    upgrade(db_url)
    assert current(db_url) == head() and _tables(db_url) == TABLES
    assert check(db_url) == []
    downgrade(db_url, "base")
    assert current(db_url) is None and _tables(db_url) == set()
    upgrade(db_url)
    assert current(db_url) == head() and check(db_url) == []


def test_check_reports_drift_when_the_database_lags_the_models(db_url: str) -> None:
    upgrade(db_url)
    downgrade(db_url, "base")
    diffs = check(db_url)
    assert {d[1].name for d in diffs if d[0] == "add_table"} == TABLES


def test_the_migrations_are_found_through_the_package() -> None:
    import migrations

    assert head() == "0006"
    assert (Path(migrations.__file__).parent / "versions" / "0001_initial_schema.py").is_file()


def test_the_embedded_default_is_migrated_automatically(settings: Settings) -> None:
    assert not settings.home.exists()
    assert ensure_schema(settings) == head()
    assert ensure_schema(settings) == head()  # idempotent
    with Store.from_settings(settings) as store:
        assert store.seeds.count() == 0


def _ensure(home: str) -> str:
    return ensure_schema(Settings(home=Path(home), database_url=None))


@pytest.mark.slow
def test_two_processes_migrating_a_fresh_home_at_once_both_succeed(tmp_path: Path) -> None:
    with multiprocessing.get_context("fork").Pool(3) as pool:
        revs = pool.map(_ensure, [str(tmp_path / "home")] * 3)
    assert revs == [head()] * 3


def test_an_external_database_behind_head_is_refused_with_a_hint(db_url: str) -> None:
    settings = Settings(home=Path("/nonexistent"), database_url=db_url)
    with pytest.raises(ConfigError, match="envfactory db upgrade"):
        ensure_schema(settings)
    upgrade(db_url)
    assert ensure_schema(settings) == head()


def test_db_commands_upgrade_report_check_and_downgrade(db_url: str, tmp_path: Path) -> None:
    runner = CliRunner()
    env = {"ENVFACTORY_DATABASE_URL": db_url, "ENVFACTORY_HOME": str(tmp_path / "h")}
    before = runner.invoke(app, ["db", "current"], env=env)
    assert before.exit_code == 0 and "needs `envfactory db upgrade`" in before.output
    up = runner.invoke(app, ["db", "upgrade"], env=env)
    assert up.exit_code == 0 and f"at revision {head()}" in up.output
    assert "up to date" in runner.invoke(app, ["db", "current"], env=env).output
    ok = runner.invoke(app, ["db", "check"], env=env)
    assert ok.exit_code == 0 and "matches" in ok.output
    down = runner.invoke(app, ["db", "downgrade", "base"], env=env)
    assert down.exit_code == 0 and current(db_url) is None
    drift = runner.invoke(app, ["db", "check"], env=env)
    assert drift.exit_code == 1


def _upgrade(url: str) -> str | None:
    upgrade(url)
    return current(url)


@pytest.mark.slow
def test_concurrent_upgrades_of_one_database_all_succeed(db_url: str) -> None:
    """PostgreSQL serialises them with an advisory lock; SQLite with its write lock."""
    with multiprocessing.get_context("fork").Pool(3) as pool:
        assert pool.map(_upgrade, [db_url] * 3) == [head()] * 3
    assert check(db_url) == []


def test_0003_marks_decisions_recorded_before_it_as_unrecorded(db_url: str) -> None:
    """Audit rows written before identities were audited say so, rather than guess."""
    from datetime import UTC, datetime

    from sqlalchemy import text

    from envfactory.core.models import AuthMethod, Evidence, ReviewItem, ShortcutFinding

    upgrade(db_url, "0002")
    finding = ShortcutFinding(
        id="f", env_id="e", source="probe", rule="r", evidence=Evidence(summary="s")
    )
    with Store.open(db_url) as store:
        _insert_old_finding(store, finding)  # the ORM's row has columns 0002 lacks
        item = ReviewItem(id="r1", finding_id="f", env_id="e")
        store.reviews.add(item)
        doc = item.model_dump_json()
        with store.engine.begin() as conn:
            conn.execute(
                text(
                    "INSERT INTO review_decisions (review_id, reviewer, decision, at, before,"
                    " after) VALUES ('r1', 'ana', 'confirm', :at, :doc, :doc)"
                ),
                {"at": datetime.now(UTC), "doc": doc},
            )
    upgrade(db_url)
    with Store.open(db_url) as store:
        (audit,) = store.reviews.audit("r1")
    assert (audit.reviewer, audit.auth, audit.note) == ("ana", AuthMethod.UNRECORDED, "")


def _insert_old_finding(store: Store, finding: object) -> None:
    """A finding row as migrations before 0005 wrote it (no found_by column)."""
    from sqlalchemy import text

    doc = finding.model_dump_json(exclude={"found_by", "rationale", "weakness"})  # type: ignore[attr-defined]
    with store.engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO findings (id, env_id, source, rule, created_at, doc)"
                " VALUES (:id, :env, :source, :rule, :at, :doc)"
            ),
            {
                "id": finding.id,  # type: ignore[attr-defined]
                "env": finding.env_id,  # type: ignore[attr-defined]
                "source": finding.source,  # type: ignore[attr-defined]
                "rule": finding.rule,  # type: ignore[attr-defined]
                "at": finding.created_at,  # type: ignore[attr-defined]
                "doc": doc,
            },
        )


def test_0005_reads_findings_stored_before_it_as_found_by_the_rules(db_url: str) -> None:
    from envfactory.core.models import Evidence, ShortcutFinding

    upgrade(db_url, "0003")
    old = ShortcutFinding(
        id="f-old", env_id="e", source="probe", rule="r", evidence=Evidence(summary="s")
    )
    with Store.open(db_url) as store:
        _insert_old_finding(store, old)
    upgrade(db_url)
    new = ShortcutFinding(
        id="f-new",
        env_id="e",
        source="trajectory",
        rule="model:reads-expected-output",
        evidence=Evidence(summary="s"),
        found_by="model",
        rationale="it copied the expected file",
        weakness="the verifier compares against a file the solver can read",
    )
    with Store.open(db_url) as store:
        store.findings.add(new)
        assert store.findings.get("f-old").found_by == "rules"
        assert [f.id for f in store.findings.list(found_by="rules")] == ["f-old"]
        (model,) = store.findings.list(found_by="model")
    assert (model.id, model.weakness) == ("f-new", new.weakness)


def test_0006_fills_the_list_summaries_of_seeds_and_packs_stored_before_it(db_url: str) -> None:
    from sqlalchemy import text

    from envfactory.core.models import Attachment, PackManifest, PackMember, TaskSeed
    from tests.store.test_roundtrip import K1, samples

    upgrade(db_url, "0005")
    seed = TaskSeed(
        id="seed-old",
        title="t",
        description="d" * 1234,
        domain="x",
        attachments=(Attachment(path="a", key=K1, size=7), Attachment(path="b", key=K1, size=5)),
        content_hash=K1,
    )
    pack: PackManifest = samples()["pack"]  # type: ignore[assignment]
    pack = pack.model_copy(update={"members": (PackMember(path="m", sha256=K1, size=9),) * 3})
    with Store.open(db_url) as store, store.engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO seeds (id, content_hash, title, domain, created_at, doc)"
                " VALUES (:id, :hash, 't', 'x', :at, :doc)"
            ),
            {"id": seed.id, "hash": K1, "at": seed.created_at, "doc": seed.model_dump_json()},
        )
        conn.execute(
            text(
                "INSERT INTO packs (id, created_by, archive_key, created_at, doc)"
                " VALUES (:id, 'ana', NULL, :at, :doc)"
            ),
            {"id": pack.id, "at": pack.created_at, "doc": pack.model_dump_json()},
        )
    upgrade(db_url)
    with Store.open(db_url) as store:
        (s,) = store.seeds.list_page().items
        (p,) = store.packs.list_page().items
    assert (s.attachments, s.attachment_bytes, s.description_chars) == (2, 12, 1234)
    assert (p.format, p.environments, p.members, p.bytes) == ("envfactory", 1, 3, 27)
