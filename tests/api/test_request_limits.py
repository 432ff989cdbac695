"""Request bodies are bounded and NUL is refused (issue 15, item 1): a 10 MB review comment
was stored, and nothing capped what a client could make the API read."""

from __future__ import annotations

import json
from pathlib import Path

from fastapi.testclient import TestClient

from envfactory.api import create_app
from envfactory.api.app import store_only
from envfactory.core.models import ReviewerRole, ReviewState
from envfactory.core.settings import ApiSettings, Settings
from envfactory.store import ArtifactStore, Store

from .conftest import MODEL_CONFIGURED, Api, add_item

SEED = {"title": "Fix the ETL job", "description": "Rows are dropped.", "domain": "data"}


def test_a_10_mb_review_comment_is_413_and_not_stored(api: Api):
    """Regression (issue 15): a 10 MB comment was stored."""
    item = add_item(api.store)
    res = api.client.post(
        f"/api/reviews/{item.id}/decision",
        json={"decision": "confirm", "comment": "x" * 10_000_000},
        headers=api.auth("ana"),
    )
    assert res.status_code == 413
    assert res.json()["detail"] == (
        "request body is larger than 1048576 bytes, the API's limit "
        "(raise ENVFACTORY_API__MAX_REQUEST_BYTES)"
    )
    assert api.store.reviews.get(item.id).state == ReviewState.OPEN
    assert api.sink.told == []


def test_a_chunked_body_without_a_length_is_cut_off_at_the_limit(api: Api):
    item = add_item(api.store)
    body = json.dumps({"decision": "confirm", "comment": "x" * 2_000_000}).encode()
    chunks = (body[i : i + 65536] for i in range(0, len(body), 65536))
    res = api.client.post(
        f"/api/reviews/{item.id}/decision",
        content=chunks,
        headers=api.auth("ana") | {"content-type": "application/json"},
    )
    assert res.status_code == 413 and "larger than 1048576 bytes" in res.text
    assert api.store.reviews.get(item.id).state == ReviewState.OPEN


def test_a_form_post_over_the_limit_is_413(api: Api):
    res = api.client.post("/ui/login", data={"token": "t" * 2_000_000})
    assert res.status_code == 413


def test_a_comment_under_the_limit_is_stored(api: Api):
    item = add_item(api.store)
    res = api.client.post(
        f"/api/reviews/{item.id}/decision",
        json={"decision": "confirm", "comment": "y" * 500_000},
        headers=api.auth("ana"),
    )
    assert res.status_code == 200, res.text
    assert len(api.store.reviews.get(item.id).comment) == 500_000


def test_a_nul_in_a_review_comment_is_422_and_not_stored(api: Api):
    item = add_item(api.store)
    res = api.client.post(
        f"/api/reviews/{item.id}/decision",
        json={"decision": "confirm", "comment": "ok\x00"},
        headers=api.auth("ana"),
    )
    assert res.status_code == 422 and "NUL" in res.text
    assert api.store.reviews.get(item.id).state == ReviewState.OPEN


def test_a_nul_in_a_seed_field_is_422_and_not_stored(api: Api):
    for field in ("title", "description", "domain", "repository", "source"):
        res = api.client.post("/api/seeds", json=SEED | {field: "a\x00b"}, headers=api.auth("ana"))
        assert res.status_code == 422 and "NUL" in res.text, (field, res.text)
    assert api.store.seeds.list() == []


def test_the_limit_is_a_setting(tmp_path: Path, store: Store):
    settings = Settings(
        home=tmp_path / "home", api=ApiSettings(max_request_bytes=2048), agents=MODEL_CONFIGURED
    )  # any seed may run: the limit is under test
    token = store.reviewers.add("ana", ReviewerRole.REVIEWER)
    app = create_app(
        settings, store=store, artifacts=ArtifactStore(tmp_path / "artifacts"), on_seed=store_only
    )
    with TestClient(app) as client:
        auth = {"Authorization": f"Bearer {token}"}
        big = client.post("/api/seeds", json=SEED | {"description": "d" * 3000}, headers=auth)
        assert big.status_code == 413 and "larger than 2048 bytes" in big.text
        assert client.post("/api/seeds", json=SEED, headers=auth).status_code == 201
