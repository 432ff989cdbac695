"""Keyset pages of summaries (`list_page`), on SQLite and PostgreSQL: a walk over all pages
returns every row once in one order (ties in `created_at` included) while rows are added,
and each summary says what its stored model holds without carrying it."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from envfactory.core.errors import NotFound
from envfactory.core.models import (
    Attachment,
    EnvStatus,
    PackManifest,
    PackMember,
    ReviewItem,
    ReviewState,
    SeedSummary,
    TaskOrigin,
    TaskSeed,
)
from envfactory.store import Key, Page, Store
from tests.store.test_roundtrip import K1, samples

T0 = datetime(2026, 12, 1, 9, 0, 0, 123456, tzinfo=UTC)


def _seed(i: int, at: datetime, description: str = "d") -> TaskSeed:
    files = tuple(Attachment(path=f"f{n}", key=K1, size=100 * (n + 1)) for n in range(i % 3))
    return TaskSeed(
        id=f"seed-{i:03d}",
        title=f"seed {i}",
        description=description,
        domain="data",
        attachments=files,
        content_hash=f"{i:064x}",
        created_at=at,
    )


def _walk(fetch: Callable[[Key | None, int], Page[Any]], limit: int) -> list[list[str]]:
    """The ids on each page, following `next_key` to the end."""
    pages: list[list[str]] = []
    after: Key | None = None
    while len(pages) < 100:  # a walk that never ends is a failure, not a hang
        page = fetch(after, limit)
        pages.append([i.id for i in page.items])
        if page.next_key is None:
            return pages
        after = page.next_key
    raise AssertionError(f"still walking after 100 pages: {pages[:3]} …")


def test_walking_seed_pages_returns_every_seed_once_newest_first(store: Store) -> None:
    # four seeds share each created_at: the id must break every tie, in the database
    seeds = [_seed(i, T0 + timedelta(seconds=i // 4)) for i in range(23)]
    with store.session() as tx:
        for s in seeds:
            tx.seeds.add(s)
    pages = _walk(lambda after, n: store.seeds.list_page(after=after, limit=n), 5)
    assert [len(p) for p in pages] == [5, 5, 5, 5, 3]
    order = sorted(seeds, key=lambda s: (s.created_at, s.id), reverse=True)
    assert [i for p in pages for i in p] == [s.id for s in order]
    assert _walk(lambda after, n: store.seeds.list_page(after=after, limit=n), 23) == [
        [s.id for s in order]
    ]


def test_seeds_added_during_a_walk_neither_repeat_nor_hide_the_others(store: Store) -> None:
    with store.session() as tx:
        for i in range(12):
            tx.seeds.add(_seed(i, T0 + timedelta(seconds=i)))
    seen: list[str] = []
    page = store.seeds.list_page(limit=4)
    added = 100
    while True:
        seen += [s.id for s in page.items]
        # a newer seed (before the walk's position) and one tied with the last seen
        store.seeds.add(_seed(added, T0 + timedelta(hours=1)))
        last = page.items[-1].created_at
        store.seeds.add(_seed(added + 1, last))
        added += 2
        if page.next_key is None:
            break
        page = store.seeds.list_page(limit=4, after=page.next_key)
    assert len(seen) == len(set(seen))
    assert {f"seed-{i:03d}" for i in range(12)} <= set(seen)


def test_a_seed_summary_counts_what_the_seed_holds_without_its_text(store: Store) -> None:
    seed = _seed(2, T0, description="é" * 5000)
    store.seeds.add(seed)
    (summary,) = store.seeds.list_page().items
    assert summary == SeedSummary(
        id=seed.id,
        title=seed.title,
        domain="data",
        attachments=2,
        attachment_bytes=300,
        description_chars=5000,
        created_at=T0,
    )
    assert store.seeds.list_page(domain="other").items == []


def test_a_seed_detail_leaves_its_description_in_the_database(store: Store) -> None:
    """Issue 46: the detail answer links a long description; the database drops it from
    the document (json_remove / jsonb -), so the row read is small whatever it holds."""
    seed = _seed(3, T0, description="é" * 300_000)
    store.seeds.add(seed)
    doc, chars = store.seeds.detail(seed.id)
    assert chars == 300_000 and "description" not in doc
    assert TaskSeed.model_validate(doc | {"description": "x"}) == seed.model_copy(
        update={"description": "x"}
    )
    assert store.seeds.description(seed.id) == seed.description
    for read in (store.seeds.detail, store.seeds.description):
        with pytest.raises(NotFound):
            read("seed-none")


def test_environment_pages_show_the_latest_version_by_id_and_filter_imported_tasks(
    store: Store,
) -> None:
    spec = samples()["environment"]
    assert spec.origin is not None  # the sample is an imported task (suite tb2)
    synthesized = spec.model_copy(update={"origin": None, "source": "research"})
    for i in range(7):
        base = spec if i % 2 else synthesized
        store.environments.add(base.model_copy(update={"id": f"env-{i}", "version": 1}))
    store.environments.add_version(spec.model_copy(update={"id": "env-3"}), EnvStatus.PUBLISHED)
    no_suite = spec.model_copy(update={"id": "env-7", "origin": TaskOrigin(path="t/x")})
    store.environments.add(no_suite)  # imported without a suite: still an imported task
    pages = _walk(lambda after, n: store.environments.list_page(after=after, limit=n), 3)
    assert pages == [["env-0", "env-1", "env-2"], ["env-3", "env-4", "env-5"], ["env-6", "env-7"]]
    page = store.environments.list_page(imported=True, limit=10)
    assert [e.id for e in page.items] == ["env-1", "env-3", "env-5", "env-7"]
    env3 = page.items[1]
    assert (env3.version, env3.status, env3.suite, env3.source) == (
        2,
        EnvStatus.PUBLISHED,
        "tb2",
        "manual",
    )
    published = store.environments.list_page(status=EnvStatus.PUBLISHED).items
    assert [e.id for e in published] == ["env-3"]
    assert store.environments.list_page(suite="tb2", limit=1).next_key == ("env-1",)


def test_review_pages_are_oldest_first_and_the_counts_cover_every_state(store: Store) -> None:
    finding = samples()["finding"]
    store.findings.add(finding)
    for i in range(5):
        store.reviews.add(
            ReviewItem(
                id=f"rev-{i}",
                finding_id=finding.id,
                env_id="env-a" if i < 4 else "env-b",
                comment="c" * 10_000,
                created_at=T0 + timedelta(minutes=i // 2),
            )
        )
    store.reviews.decide("rev-1", "ana", "confirm")
    pages = _walk(lambda after, n: store.reviews.list_page(after=after, limit=n, state=None), 2)
    assert pages == [["rev-0", "rev-1"], ["rev-2", "rev-3"], ["rev-4"]]
    page = store.reviews.list_page(state=ReviewState.OPEN, env_id="env-a")
    assert [r.id for r in page.items] == ["rev-0", "rev-2", "rev-3"]
    assert "comment" not in page.items[0].model_dump()
    assert store.reviews.count_by_state(env_id="env-a") == {
        ReviewState.OPEN: 3,
        ReviewState.CONFIRMED: 1,
        ReviewState.DISMISSED: 0,
    }


def test_a_pack_summary_counts_environments_members_and_bytes(store: Store) -> None:
    pack: PackManifest = samples()["pack"]  # type: ignore[assignment]
    members = tuple(PackMember(path=f"m{i}", sha256=K1, size=i) for i in range(40))
    store.packs.add(pack)
    store.packs.add(
        pack.model_copy(update={"id": "pack-2", "members": members, "created_at": T0}),
        archive_key=K1,
    )
    first, second = store.packs.list_page().items
    assert (first.id, first.environments, first.members, first.bytes, first.downloadable) == (
        "pack-2",
        1,
        40,
        sum(range(40)),
        True,
    )
    assert (second.id, second.format, second.members, second.downloadable) == (
        "pack-1",
        "envfactory",
        1,
        False,
    )


def test_a_page_needs_a_positive_limit_and_a_key_of_the_listing(store: Store) -> None:
    with pytest.raises(ValueError, match="at least one row"):
        store.seeds.list_page(limit=0)
    with pytest.raises(ValueError, match="2 values"):
        store.seeds.list_page(after=("seed-1",))
