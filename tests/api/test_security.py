"""Issue 15 (items 4–5): the review pages refuse cross-site posts, the JSON API takes only
bearer tokens, and reviewers and sessions live in the database so every instance agrees.

Each test drives the real app over a real store (SQLite, and PostgreSQL when
ENVFACTORY_TEST_POSTGRES_URL is set)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from envfactory.api import create_app
from envfactory.api.app import store_only
from envfactory.core.models import AuthMethod, ReviewerRole, ReviewState
from envfactory.core.settings import ApiSettings, Settings
from envfactory.store import ArtifactStore, Store

from .conftest import Api, add_item, form_token, sign_in

EVIL = "https://evil.example"


def _decide(api: Api, item_id: str, csrf: str | None, **headers: str):
    data = {"decision": "confirm", "comment": "looks like a shortcut"}
    if csrf is not None:
        data["csrf_token"] = csrf
    return api.client.post(f"/ui/items/{item_id}/decide", data=data, headers=headers)


def test_a_cross_origin_form_post_with_a_valid_cookie_is_refused(api: Api):
    item = add_item(api.store, traj=False)
    csrf = api.sign_in("ana")
    res = _decide(api, item.id, csrf, origin=EVIL)  # even with the right token
    assert res.status_code == 403
    assert "cross-origin request refused" in res.json()["detail"] and EVIL in res.json()["detail"]
    res = _decide(api, item.id, csrf, referer=f"{EVIL}/attack.html")  # no Origin: Referer counts
    assert res.status_code == 403
    assert _decide(api, item.id, csrf, origin="null").status_code == 403  # sandboxed frame
    assert api.store.reviews.get(item.id).state == ReviewState.OPEN
    assert api.sink.told == []


def test_a_form_post_without_the_csrf_token_is_refused(api: Api):
    item = add_item(api.store, traj=False)
    api.sign_in("ana")
    res = _decide(api, item.id, None, origin="http://testserver")
    assert res.status_code == 403 and "security token is missing or out of date" in res.text
    res = _decide(api, item.id, "0" * 64, origin="http://testserver")
    assert res.status_code == 403
    res = api.client.post("/ui/claim", data={}, follow_redirects=False)
    assert res.status_code == 403
    assert api.store.reviews.get(item.id).state == ReviewState.OPEN


def test_a_csrf_token_belongs_to_its_session(api: Api):
    """A token scraped from one session (bo's) does not carry another's (ana's) post."""
    item = add_item(api.store, traj=False)
    bo_csrf = sign_in(TestClient(api.client.app), api.tokens["bo"])
    api.sign_in("ana")
    assert _decide(api, item.id, bo_csrf).status_code == 403
    assert api.store.reviews.get(item.id).state == ReviewState.OPEN


def test_a_same_origin_post_with_the_token_records_the_decision(api: Api):
    item = add_item(api.store, traj=False)
    csrf = api.sign_in("ana")
    res = _decide(api, item.id, csrf, origin="http://testserver")
    assert res.status_code == 200 and "Decision recorded." in res.text
    assert api.store.reviews.get(item.id).state == ReviewState.CONFIRMED
    [audit] = api.store.reviews.audit(item.id)
    assert (audit.reviewer, audit.auth) == ("ana", AuthMethod.UI_SESSION)


def test_the_sign_in_form_needs_its_own_token_and_this_origin(api: Api):
    """Login CSRF: another site cannot sign a reviewer's browser in as someone else."""
    res = api.client.post("/ui/login", data={"token": api.tokens["ana"]}, follow_redirects=False)
    assert res.status_code == 403 and "envfactory_session" not in res.headers.get("set-cookie", "")
    login = form_token(api.client.get("/ui/login").text)
    res = api.client.post(
        "/ui/login",
        data={"token": api.tokens["ana"], "csrf_token": login},
        headers={"origin": EVIL},
        follow_redirects=False,
    )
    assert res.status_code == 403 and "envfactory_session" not in res.headers.get("set-cookie", "")
    assert api.client.get("/ui/queue", follow_redirects=False).status_code == 303


def test_a_cookie_only_json_api_call_is_refused_and_a_bearer_call_works(api: Api):
    item = add_item(api.store, traj=False)
    api.sign_in("ana")
    session = api.client.cookies["envfactory_session"]
    cookie = {"cookie": f"envfactory_session={session}"}
    res = api.client.post(
        f"/api/reviews/{item.id}/decision", json={"decision": "confirm"}, headers=cookie
    )
    assert res.status_code == 401 and "Authorization: Bearer" in res.json()["detail"]
    assert api.client.get("/api/me", headers=cookie).status_code == 401
    as_bearer = {"Authorization": f"Bearer {session}"}  # a session token is not a reviewer token
    assert api.client.get("/api/me", headers=as_bearer).status_code == 401
    assert api.store.reviews.get(item.id).state == ReviewState.OPEN
    res = api.client.post(
        f"/api/reviews/{item.id}/decision", json={"decision": "confirm"}, headers=api.auth("ana")
    )
    assert res.status_code == 200 and res.json()["item"]["reviewer"] == "ana"
    [audit] = api.store.reviews.audit(item.id)
    assert audit.auth == AuthMethod.BEARER_TOKEN


def test_a_reviewer_token_is_not_a_session_cookie(api: Api):
    api.client.cookies.set("envfactory_session", api.tokens["ana"], path="/ui")
    assert api.client.get("/ui/queue", follow_redirects=False).status_code == 303


def test_a_proxy_origin_listed_in_the_settings_is_accepted(tmp_path: Path, store: Store):
    token = store.reviewers.add("ana", ReviewerRole.REVIEWER)
    item = add_item(store, traj=False)
    settings = Settings(home=tmp_path / "home", api=ApiSettings(allowed_origins=(EVIL,)))
    app = create_app(
        settings,
        store=store,
        artifacts=ArtifactStore(tmp_path / "a"),
        on_decision=store_only,
        on_seed=store_only,
    )
    with TestClient(app) as client:
        csrf = sign_in(client, token)
        res = client.post(
            f"/ui/items/{item.id}/decide",
            headers={"origin": EVIL},
            data={"decision": "dismiss", "csrf_token": csrf},
        )
    assert res.status_code == 200 and store.reviews.get(item.id).state == ReviewState.DISMISSED


@pytest.fixture
def two_instances(tmp_path: Path, db_url: str, store: Store) -> Iterator[tuple[TestClient, ...]]:
    """Two API instances: each its own home, engine and store, over one database."""
    clients = []
    for name in ("a", "b"):
        own = Store.open(db_url)
        settings = Settings(home=tmp_path / name, database_url=db_url)
        app = create_app(
            settings,
            store=own,
            artifacts=ArtifactStore(tmp_path / "arts"),
            on_decision=store_only,
            on_seed=store_only,
        )
        clients.append(TestClient(app))
    yield tuple(clients)
    for c in clients:
        c.app.state.ctx.store.close()


def test_two_instances_over_one_database_agree_on_tokens_and_sessions(two_instances, store):
    a, b = two_instances
    token = store.reviewers.add("ana", ReviewerRole.REVIEWER)  # e.g. `envfactory reviewer add`
    for client in (a, b):
        assert client.get("/api/me", headers={"Authorization": f"Bearer {token}"}).json() == {
            "name": "ana",
            "role": "reviewer",
        }
    sign_in(a, token)  # a session opened on one instance works on the other
    b.cookies.set("envfactory_session", a.cookies["envfactory_session"], path="/ui")
    assert b.get("/ui/queue", follow_redirects=False).status_code == 200
    store.reviewers.remove("ana")  # revoked once, refused everywhere at once
    assert b.get("/api/me", headers={"Authorization": f"Bearer {token}"}).status_code == 401
    assert a.get("/ui/queue", follow_redirects=False).status_code == 303


def test_an_old_reviewers_json_is_imported_once_and_its_tokens_keep_working(tmp_path, store):
    home = tmp_path / "home"
    home.mkdir()
    old = "efr_" + "x" * 43
    entry = {
        "role": "reviewer",
        "created_at": "2026-11-01T10:00:00+00:00",
        "token_sha256": hashlib.sha256(old.encode()).hexdigest(),
    }
    (home / "reviewers.json").write_text(json.dumps({"ana": entry}))

    def start() -> TestClient:
        settings = Settings(home=home)
        return TestClient(
            create_app(
                settings,
                store=store,
                artifacts=ArtifactStore(tmp_path / "a"),
                on_decision=store_only,
                on_seed=store_only,
            )
        )

    client = start()
    assert client.get("/api/me", headers={"Authorization": f"Bearer {old}"}).status_code == 200
    assert not (home / "reviewers.json").exists() and (home / "reviewers.json.imported").exists()
    store.reviewers.remove("ana")
    start()  # a restart does not bring a removed reviewer back
    assert store.reviewers.find_by_token(old) is None


def test_a_broken_old_reviewers_json_is_refused_naming_the_file(tmp_path, store):
    from envfactory.core.errors import InvalidInput

    home = tmp_path / "home"
    home.mkdir()
    (home / "reviewers.json").write_text('{"ana": {"role": "boss"}}')
    with pytest.raises(InvalidInput, match="reviewers.json: not a reviewers file"):
        create_app(
            Settings(home=home),
            store=store,
            artifacts=ArtifactStore(tmp_path / "a"),
            on_decision=store_only,
            on_seed=store_only,
        )
    assert store.reviewers.list() == []


def test_a_review_page_runs_only_its_own_script_and_no_site_may_frame_it(api: Api):
    item = add_item(api.store, traj=False)
    api.sign_in("ana")
    first = api.client.get(f"/ui/items/{item.id}")
    second = api.client.get(f"/ui/items/{item.id}")
    assert first.status_code == 200
    policy = first.headers["content-security-policy"]
    nonce = policy.split("'nonce-", 1)[1].split("'", 1)[0]
    assert f'<script nonce="{nonce}">' in first.text and f'<style nonce="{nonce}">' in first.text
    assert "frame-ancestors 'none'" in policy and "form-action 'self'" in policy
    assert "unsafe-inline" not in policy and "style=" not in first.text
    assert nonce not in second.headers["content-security-policy"]  # one per response
    assert first.headers["x-frame-options"] == "DENY"
    assert first.headers["x-content-type-options"] == "nosniff"


def test_json_responses_carry_the_security_headers_too(api: Api):
    res = api.client.get("/api/seeds", headers=api.auth("ana"))
    assert res.headers["x-frame-options"] == "DENY"
    assert res.headers["referrer-policy"] == "same-origin"
