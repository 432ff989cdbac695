"""Every list route answers one bounded page of summaries: `limit` (default 50, at most
200, a 422 naming it past that), an opaque `cursor` and `next_cursor` (null at the end).
Walking the pages returns every item once, in one order, while items are added; a cursor
that was not given out by that list with those filters is a 422 naming `cursor`."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from envfactory.api.paging import DEFAULT_LIMIT, MAX_LIMIT
from envfactory.core.models import (
    EnvStatus,
    PackManifest,
    ReviewItem,
    ShortcutFinding,
    TaskOrigin,
    TaskSeed,
)
from envfactory.store import Store
from tests.store.test_roundtrip import samples

from .conftest import Api

T0 = datetime(2026, 12, 1, 9, tzinfo=UTC)
LISTS = ["/api/seeds", "/api/environments", "/api/reviews", "/api/packs", "/api/tasks"]


def _seed(store: Store, i: int) -> str:
    store.seeds.add(
        TaskSeed(
            id=f"seed-{i:03d}",
            title=f"seed {i}",
            description=f"the long description of seed {i} " * 50,
            domain="data",
            content_hash=f"{i:064x}",
            created_at=T0 + timedelta(seconds=i // 3),  # ties: the id orders them
        )
    )
    return f"seed-{i:03d}"


def _env(store: Store, i: int) -> str:
    spec = samples()["environment"]
    origin = TaskOrigin(suite="s", path=f"tasks/{i}")
    store.environments.add(spec.model_copy(update={"id": f"env-{i:03d}", "origin": origin}))
    return f"env-{i:03d}"


def _review(store: Store, i: int) -> str:
    finding: ShortcutFinding = samples()["finding"]  # type: ignore[assignment]
    if not store.findings.list(env_id=finding.env_id):
        store.findings.add(finding)
    store.reviews.add(
        ReviewItem(
            id=f"rev-{i:03d}",
            finding_id=finding.id,
            env_id="env-a",
            comment="a long comment " * 100,
            created_at=T0 + timedelta(seconds=i // 3),
        )
    )
    return f"rev-{i:03d}"


def _pack(store: Store, i: int) -> str:
    pack: PackManifest = samples()["pack"]  # type: ignore[assignment]
    store.packs.add(pack.model_copy(update={"id": f"pack-{i:03d}", "created_at": T0}))
    return f"pack-{i:03d}"


ADD: dict[str, Callable[[Store, int], str]] = {
    "/api/seeds": _seed,
    "/api/environments": _env,
    "/api/reviews": _review,
    "/api/packs": _pack,
    "/api/tasks": _env,
}


def _id(item: dict[str, Any]) -> str:
    return str(item.get("id") or item["env_id"])


def _walk(
    api: Api,
    path: str,
    limit: int,
    between: Callable[[], None] = lambda: None,
    **filters: str,
) -> list[list[str]]:
    """Every page's ids, following next_cursor; `between` runs after each page."""
    pages: list[list[str]] = []
    cursor = None
    while len(pages) < 100:  # a walk that never ends is a failure, not a hang
        params = {"limit": limit, **filters} | ({"cursor": cursor} if cursor else {})
        res = api.client.get(path, params=params, headers=api.auth("vic"))
        assert res.status_code == 200, res.text
        body = res.json()
        pages.append([_id(i) for i in body["items"]])
        cursor = body["next_cursor"]
        if cursor is None:
            return pages
        between()
    raise AssertionError(f"still walking after 100 pages: {pages[:3]} …")


@pytest.mark.parametrize("path", LISTS)
def test_walking_every_page_returns_each_item_once_while_items_are_added(
    api: Api, path: str
) -> None:
    existing = {ADD[path](api.store, i) for i in range(11)}
    counter = iter(range(100, 200))
    added: set[str] = set()

    def add_one() -> None:
        added.add(ADD[path](api.store, next(counter)))

    pages = _walk(api, path, 4, add_one)
    seen = [i for p in pages for i in p]
    assert len(seen) == len(set(seen)), f"an item came twice: {seen}"
    assert existing <= set(seen) <= existing | added
    assert all(len(p) <= 4 for p in pages)
    # a second walk sees the same order
    again = [i for p in _walk(api, path, 4) for i in p]
    assert [i for i in again if i in set(seen)] == seen


@pytest.mark.parametrize("path", LISTS)
def test_limit_defaults_to_50_and_more_than_200_is_a_422_naming_it(api: Api, path: str) -> None:
    for i in range(DEFAULT_LIMIT + 3):
        ADD[path](api.store, i)
    body = api.client.get(path, headers=api.auth("vic")).json()
    assert len(body["items"]) == DEFAULT_LIMIT and body["next_cursor"]
    ok = api.client.get(path, params={"limit": MAX_LIMIT}, headers=api.auth("vic"))
    assert ok.status_code == 200 and len(ok.json()["items"]) == DEFAULT_LIMIT + 3
    assert ok.json()["next_cursor"] is None
    for bad in (MAX_LIMIT + 1, 0, 1_000_000):
        res = api.client.get(path, params={"limit": bad}, headers=api.auth("vic"))
        assert res.status_code == 422
        (error,) = res.json()["detail"]
        assert error["loc"] == ["query", "limit"], error


def _cursor(payload: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(payload).encode()).decode().rstrip("=")


def _real_cursor(api: Api, path: str, **params: str) -> str:
    for i in range(3):
        ADD[path](api.store, i)
    res = api.client.get(path, params={"limit": 1, **params}, headers=api.auth("vic"))
    cursor = res.json()["next_cursor"]
    assert cursor
    return str(cursor)


@pytest.mark.parametrize("path", LISTS)
def test_a_malformed_or_tampered_cursor_is_a_422_naming_cursor(api: Api, path: str) -> None:
    good = _real_cursor(api, path)
    payload = json.loads(base64.urlsafe_b64decode(good + "=" * (-len(good) % 4)))
    wrong_type = payload | {"k": [7] * len(payload["k"])}
    nul_id = payload | {"k": [*payload["k"][:-1], "a\x00b"]}
    naive = payload | {"k": ["2026-12-01T09:00:00", "x"]}
    bad = [
        "not a cursor",
        "%%%",
        good[:-3],
        good + "AAAA",
        _cursor([1, 2, 3]),
        _cursor({"l": "seeds"}),
        _cursor(payload | {"l": "packs" if "seeds" in path else "seeds"}),  # another list
        _cursor(payload | {"f": "0" * 16}),  # other filters
        _cursor(payload | {"k": []}),
        _cursor(wrong_type),
        _cursor(nul_id),
        _cursor(naive),
        _cursor(payload | {"k": ["y" * 300] * len(payload["k"])}),
        "A" * 600,
    ]
    for cursor in bad:
        res = api.client.get(path, params={"cursor": cursor}, headers=api.auth("vic"))
        assert res.status_code == 422, (cursor, res.status_code, res.text)
        (error,) = res.json()["detail"]
        assert error["loc"] == ["query", "cursor"], (cursor, error)
    ok = api.client.get(path, params={"cursor": good}, headers=api.auth("vic"))
    assert ok.status_code == 200


def test_a_cursor_belongs_to_its_list_and_filters(api: Api) -> None:
    seeds = _real_cursor(api, "/api/seeds")
    res = api.client.get("/api/packs", params={"cursor": seeds}, headers=api.auth("vic"))
    assert res.status_code == 422 and "another list" in res.text
    opened = _real_cursor(api, "/api/reviews", state="open")
    res = api.client.get(
        "/api/reviews", params={"cursor": opened, "state": "confirmed"}, headers=api.auth("vic")
    )
    assert res.status_code == 422 and "other filters" in res.text
    res = api.client.get(
        "/api/reviews", params={"cursor": opened, "state": "open"}, headers=api.auth("vic")
    )
    assert res.status_code == 200


def test_list_items_are_summaries_and_the_full_model_is_one_call_away(api: Api) -> None:
    seed_id = _seed(api.store, 1)
    (summary,) = api.client.get("/api/seeds", headers=api.auth("vic")).json()["items"]
    assert set(summary) == {
        "id",
        "title",
        "domain",
        "attachments",
        "attachment_bytes",
        "description_chars",
        "created_at",
    }
    full = api.client.get(f"/api/seeds/{seed_id}", headers=api.auth("vic")).json()
    assert summary["description_chars"] == len(full["description"]) > 0
    review_id = _review(api.store, 1)
    (item,) = api.client.get("/api/reviews", headers=api.auth("vic")).json()["items"]
    assert item["id"] == review_id and "comment" not in item
    assert api.client.get(f"/api/reviews/{review_id}", headers=api.auth("vic")).json()["item"][
        "comment"
    ]
    _pack(api.store, 1)
    (pack,) = api.client.get("/api/packs", headers=api.auth("vic")).json()["items"]
    assert pack["environments"] == 1 and "members" in pack and not isinstance(pack["members"], list)
    _env(api.store, 1)
    (env,) = api.client.get("/api/environments", headers=api.auth("vic")).json()["items"]
    assert (env["suite"], env["source"]) == ("s", "manual") and "instruction" not in env


def test_the_queue_counts_every_page_not_just_this_one(api: Api) -> None:
    for i in range(5):
        _review(api.store, i)
    api.store.reviews.decide("rev-000", "ana", "confirm")
    body = api.client.get("/api/reviews?limit=2", headers=api.auth("vic")).json()
    assert [i["id"] for i in body["items"]] == ["rev-001", "rev-002"]
    assert body["counts"] == {"open": 4, "confirmed": 1, "dismissed": 0}


def test_the_openapi_spec_documents_pages_and_summaries(api: Api) -> None:
    spec = api.client.get("/openapi.json").json()
    for path, summary in (
        ("/api/seeds", "SeedSummary"),
        ("/api/environments", "EnvSummary"),
        ("/api/packs", "PackSummary"),
        ("/api/tasks", "TaskSummary"),
        ("/api/reviews", "ReviewSummary"),
    ):
        op = spec["paths"][path]["get"]
        params = {p["name"]: p for p in op["parameters"]}
        assert params["limit"]["schema"]["maximum"] == MAX_LIMIT
        assert params["limit"]["schema"]["default"] == DEFAULT_LIMIT
        assert "cursor" in params
        ref = op["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
        page = spec["components"]["schemas"][ref.rsplit("/", 1)[1]]
        assert page["properties"]["items"]["items"]["$ref"].endswith(f"/{summary}")
        assert "next_cursor" in page["properties"]
    assert "description" not in spec["components"]["schemas"]["SeedSummary"]["properties"]


def test_the_pages_link_to_the_next_page_and_refuse_an_edited_cursor(api: Api) -> None:
    for i in range(DEFAULT_LIMIT + 2):
        _review(api.store, i)
        _env(api.store, i)
        _pack(api.store, i)
    api.sign_in("vic")
    for page, marker in (
        ("/ui/queue", "rev-"),
        ("/ui/environments", "env-"),
        ("/ui/packs", "pack-"),
    ):
        first = api.client.get(page).text
        assert first.count(f">{marker}") == DEFAULT_LIMIT, page
        link = first.split('rel="next"')[0].rsplit('href="', 1)[1].split('"', 1)[0]
        second = api.client.get(link.replace("&amp;", "&")).text
        assert second.count(f">{marker}") == 2 and 'rel="next"' not in second, page
        res = api.client.get(page, params={"cursor": "edited"})
        assert res.status_code == 422 and "cursor" in res.text, page


def test_an_environment_list_filtered_by_status_pages_within_it(api: Api) -> None:
    spec = samples()["environment"]
    for i in range(5):
        status = EnvStatus.PUBLISHED if i % 2 else EnvStatus.DRAFT
        api.store.environments.add(spec.model_copy(update={"id": f"env-{i}"}), status)
    pages = _walk(api, "/api/environments", 1, status="published")
    assert pages == [["env-1"], ["env-3"]]


def test_environments_grown_from_one_seed_are_listed_by_seed_id(api: Api) -> None:
    spec = samples()["environment"]
    for i, seed in enumerate(("seed-a", "seed-b", "seed-a")):
        api.store.environments.add(spec.model_copy(update={"id": f"env-{i}", "seed_id": seed}))
    body = api.client.get("/api/environments?seed_id=seed-a", headers=api.auth("vic")).json()
    assert [e["id"] for e in body["items"]] == ["env-0", "env-2"]
