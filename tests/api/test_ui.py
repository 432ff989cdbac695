"""The server-rendered pages: sign in, queue, item with side-by-side diff, decide, 409."""

from __future__ import annotations

from envfactory.core.models import ReviewState

from .conftest import Api, add_item, form_token


def _sign_in(api: Api, who: str) -> str:
    """Sign in as `who`; the CSRF token the session's forms carry."""
    return api.sign_in(who)


def test_signing_in_sets_a_strict_httponly_session_cookie_not_the_token(api: Api):
    login = form_token(api.client.get("/ui/login").text)
    res = api.client.post(
        "/ui/login", data={"token": api.tokens["ana"], "csrf_token": login}, follow_redirects=False
    )
    assert res.status_code == 303 and res.headers["location"] == "/ui/queue"
    cookie = next(c for c in res.headers.get_list("set-cookie") if "envfactory_session=" in c)
    assert "samesite=strict" in cookie.lower() and "httponly" in cookie.lower()
    assert api.tokens["ana"] not in cookie and "efs_" in cookie


def test_pages_send_strangers_to_the_sign_in_page(api: Api):
    res = api.client.get("/ui/queue", follow_redirects=False)
    assert res.status_code == 303 and res.headers["location"].startswith("/ui/login")
    login = form_token(api.client.get("/ui/login").text)
    res = api.client.post("/ui/login", data={"token": "efr_wrong", "csrf_token": login})
    assert res.status_code == 401 and "not valid" in res.text


def test_the_queue_lists_open_items_with_counts_and_filters(api: Api):
    a, b = add_item(api.store, "env-a", traj=False), add_item(api.store, "env-b", traj=False)
    _sign_in(api, "vic")
    page = api.client.get("/ui/queue").text
    assert a.id in page and b.id in page and 'data-count="open">2<' in page
    page = api.client.get("/ui/queue?env_id=env-b").text
    assert b.id in page and a.id not in page


def test_an_item_page_shows_the_diff_side_by_side_and_the_suspicious_step(api: Api):
    item = add_item(api.store)
    _sign_in(api, "ana")
    page = api.client.get(f"/ui/items/{item.id}").text
    assert "Before (pristine environment)" in page and "After (suspicious state)" in page
    assert "/workspace/conftest.py" in page and "(absent)" in page and "(deleted)" in page
    assert 'Step 4 <span class="badge">suspicious</span>' in page
    assert 'id="decide"' in page and 'accesskey="q"' in page


def test_deciding_from_the_page_records_it_and_a_second_decision_shows_409(api: Api):
    item = add_item(api.store, traj=False)
    csrf = _sign_in(api, "ana")
    res = api.client.post(
        f"/ui/items/{item.id}/decide",
        data={"decision": "confirm", "comment": "rewrites tests", "csrf_token": csrf},
    )
    assert res.status_code == 200 and "Decision recorded." in res.text
    assert api.store.reviews.get(item.id).state == ReviewState.CONFIRMED
    assert 'id="decide"' not in res.text and "rewrites tests" in res.text
    assert "ui-session" in res.text  # the audit says how ana was identified
    res = api.client.post(
        f"/ui/items/{item.id}/decide", data={"decision": "dismiss", "csrf_token": csrf}
    )
    assert res.status_code == 409 and "already confirmed by ana" in res.text


def test_a_viewer_sees_no_decision_form_and_cannot_post_one(api: Api):
    item = add_item(api.store, traj=False)
    csrf = _sign_in(api, "vic")
    assert 'id="decide"' not in api.client.get(f"/ui/items/{item.id}").text
    res = api.client.post(
        f"/ui/items/{item.id}/decide", data={"decision": "confirm", "csrf_token": csrf}
    )
    assert res.status_code == 403
    assert api.store.reviews.get(item.id).state == ReviewState.OPEN


def test_signing_out_ends_the_session_on_the_server_too(api: Api):
    csrf = _sign_in(api, "vic")
    session = api.client.cookies["envfactory_session"]
    api.client.post("/ui/logout", data={"csrf_token": csrf})
    assert api.client.get("/ui/queue", follow_redirects=False).status_code == 303
    api.client.cookies.set("envfactory_session", session, path="/ui")  # a copy kept elsewhere
    assert api.client.get("/ui/queue", follow_redirects=False).status_code == 303


def test_the_environments_page_filters_by_status(api: Api):
    """Regression: the status filter was passed as the HTTP status of the page."""
    from envfactory.core.models import EnvStatus
    from tests.packs.conftest import DictArtifacts, make_item

    api.store.environments.add(make_item(DictArtifacts(), "env-pub").spec, EnvStatus.PUBLISHED)
    api.store.environments.add(make_item(DictArtifacts(), "env-draft").spec)
    _sign_in(api, "vic")
    res = api.client.get("/ui/environments?status=published")
    assert res.status_code == 200
    assert "env-pub" in res.text and "env-draft" not in res.text
    assert '<option value="published" selected>' in res.text


def test_claiming_from_the_queue_opens_a_different_item_for_each_reviewer(api: Api):
    a, b = add_item(api.store, traj=False), add_item(api.store, traj=False)
    csrf = _sign_in(api, "ana")
    claim = {"csrf_token": csrf}
    first = api.client.post("/ui/claim", data=claim, follow_redirects=False).headers["location"]
    api.client.post("/ui/logout", data=claim)
    claim = {"csrf_token": _sign_in(api, "bo")}
    second = api.client.post("/ui/claim", data=claim, follow_redirects=False).headers["location"]
    assert {first, second} == {f"/ui/items/{a.id}", f"/ui/items/{b.id}"}
    page = api.client.get(second).text
    assert "claimed by bo" in page


def test_an_item_page_says_who_found_it_and_the_weakness_a_model_named(api: Api):
    rules = add_item(api.store, traj=False)
    _sign_in(api, "ana")
    page = api.client.get(f"/ui/items/{rules.id}").text
    assert '<span class="badge" id="found-by">rules</span>' in page and 'id="weakness"' not in page
    model = add_item(api.store, traj=False)
    finding = api.store.findings.get(model.finding_id)
    with api.store.session() as tx:  # the same item, as the shortcut analyst would file it
        tx.findings.add(
            finding.model_copy(
                update={
                    "id": finding.id + "-m",
                    "found_by": "model",
                    "weakness": "the check runs the tests the solver may edit",
                }
            )
        )
        tx.reviews.add(
            model.model_copy(update={"id": model.id + "-m", "finding_id": finding.id + "-m"})
        )
    page = api.client.get(f"/ui/items/{model.id}-m").text
    assert '<span class="badge" id="found-by">model</span>' in page
    assert "the check runs the tests the solver may edit" in page
