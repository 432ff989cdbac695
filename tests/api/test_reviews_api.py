"""The review queue over HTTP: auth, decisions, conflicts, audit, the workflow seam."""

from __future__ import annotations

import threading

import pytest

from envfactory.core.models import ReviewState

from .conftest import Api, add_item


def test_requests_without_a_valid_token_are_401(api: Api):
    assert api.client.get("/api/reviews").status_code == 401
    res = api.client.get("/api/reviews", headers={"Authorization": "Bearer efr_nope"})
    assert res.status_code == 401 and res.headers["www-authenticate"] == "Bearer"
    assert api.client.get("/api/health").json() == {"ok": True}


def test_a_viewer_reads_the_queue_but_may_not_decide(api: Api):
    item = add_item(api.store)
    res = api.client.get("/api/reviews", headers=api.auth("vic"))
    assert res.status_code == 200 and [i["id"] for i in res.json()["items"]] == [item.id]
    res = api.client.post(
        f"/api/reviews/{item.id}/decision", json={"decision": "confirm"}, headers=api.auth("vic")
    )
    assert res.status_code == 403 and "viewer" in res.json()["detail"]
    assert api.store.reviews.get(item.id).state == ReviewState.OPEN


def test_a_decision_is_stored_audited_and_handed_to_the_workflow(api: Api):
    item = add_item(api.store)
    res = api.client.post(
        f"/api/reviews/{item.id}/decision",
        json={"decision": "confirm", "comment": "edits the tests"},
        headers=api.auth("ana"),
    )
    assert res.status_code == 200, res.text
    body = res.json()
    assert body["item"]["state"] == "confirmed" and body["workflow_notified"] is True
    assert [(i.id, i.state, i.reviewer) for i in api.sink.told] == [
        (item.id, ReviewState.CONFIRMED, "ana")
    ]
    audit = api.client.get(f"/api/reviews/{item.id}/audit", headers=api.auth("vic")).json()
    assert [
        (a["reviewer"], a["decision"], a["before"]["state"], a["after"]["state"]) for a in audit
    ] == [("ana", "confirm", "open", "confirmed")]


def test_deciding_an_item_twice_is_a_conflict_and_the_first_decision_stands(api: Api):
    item = add_item(api.store)
    first = api.client.post(
        f"/api/reviews/{item.id}/decision", json={"decision": "dismiss"}, headers=api.auth("ana")
    )
    second = api.client.post(
        f"/api/reviews/{item.id}/decision", json={"decision": "confirm"}, headers=api.auth("bo")
    )
    assert (first.status_code, second.status_code) == (200, 409)
    assert "already dismissed by ana" in second.json()["detail"]
    assert api.store.reviews.get(item.id).state == ReviewState.DISMISSED
    assert len(api.sink.told) == 1


def _race(api: Api, item_id: str) -> dict[str, int]:
    codes: dict[str, int] = {}
    barrier = threading.Barrier(2)

    def go(who: str, decision: str) -> None:
        barrier.wait()
        r = api.client.post(
            f"/api/reviews/{item_id}/decision", json={"decision": decision}, headers=api.auth(who)
        )
        codes[who] = r.status_code

    threads = [threading.Thread(target=go, args=a) for a in (("ana", "confirm"), ("bo", "dismiss"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return codes


def test_two_reviewers_deciding_at_once_one_wins_and_one_gets_409(api: Api):
    for _ in range(5):
        item = add_item(api.store, traj=False)
        assert sorted(_race(api, item.id).values()) == [200, 409]
        assert len(api.store.reviews.audit(item.id)) == 1
        assert len([t for t in api.sink.told if t.id == item.id]) == 1


def test_a_decision_survives_a_workflow_that_cannot_be_told(api: Api):
    item = add_item(api.store)
    api.sink.fail = True
    res = api.client.post(
        f"/api/reviews/{item.id}/decision", json={"decision": "confirm"}, headers=api.auth("ana")
    )
    assert res.status_code == 200
    assert (
        res.json()["workflow_notified"] is False
        and "temporal is down" in res.json()["notify_error"]
    )
    assert api.store.reviews.get(item.id).state == ReviewState.CONFIRMED


def test_claims_hand_two_reviewers_different_items(api: Api):
    a, b = add_item(api.store, traj=False), add_item(api.store, traj=False)
    got_a = api.client.post("/api/reviews/claim", headers=api.auth("ana")).json()
    got_b = api.client.post("/api/reviews/claim", headers=api.auth("bo")).json()
    assert {got_a["id"], got_b["id"]} == {a.id, b.id}
    res = api.client.post(
        f"/api/reviews/{got_a['id']}/decision", json={"decision": "confirm"}, headers=api.auth("bo")
    )
    assert res.status_code == 409 and "claimed by ana" in res.json()["detail"]
    assert api.client.post("/api/reviews/claim", headers=api.auth("vic")).status_code == 403


def test_an_item_shows_evidence_a_side_by_side_diff_and_the_trajectory_excerpt(api: Api):
    item = add_item(api.store)
    view = api.client.get(f"/api/reviews/{item.id}", headers=api.auth("vic")).json()
    assert view["finding"]["rule"] == "edits-tests"
    assert [(r["path"], r["before"], r["after"]) for r in view["diff"]] == [
        ("/workspace/conftest.py", "", "added"),
        ("/workspace/data.csv", "present", ""),
        ("/workspace/tests/test_app.py", "present", "changed"),
    ]
    assert [(s["index"], s["suspicious"]) for s in view["excerpt"]] == [
        (2, False),
        (3, False),
        (4, True),
        (5, False),
        (6, False),
    ]


@pytest.mark.parametrize(
    "path",
    [
        "/api/reviews/rev-missing",
        "/api/reviews/rev-missing/audit",
        "/api/environments/env-missing",
        "/api/packs/pack-missing",
    ],
)
def test_unknown_ids_are_404(api: Api, path: str):
    res = api.client.get(path, headers=api.auth("vic"))
    assert res.status_code == 404 and "missing" in res.json()["detail"]


def test_the_queue_counts_every_state_and_filters(api: Api):
    a, b = add_item(api.store, "env-a", traj=False), add_item(api.store, "env-b", traj=False)
    api.client.post(
        f"/api/reviews/{a.id}/decision", json={"decision": "confirm"}, headers=api.auth("ana")
    )
    q = api.client.get("/api/reviews", headers=api.auth("vic")).json()
    assert q["counts"] == {"open": 1, "confirmed": 1, "dismissed": 0}
    assert [i["id"] for i in q["items"]] == [b.id]
    q = api.client.get("/api/reviews?state=confirmed&env_id=env-a", headers=api.auth("vic")).json()
    assert [i["id"] for i in q["items"]] == [a.id]


def test_the_openapi_spec_is_served(api: Api):
    spec = api.client.get("/openapi.json").json()
    assert "/api/reviews/{item_id}/decision" in spec["paths"]
    assert "409" in spec["paths"]["/api/reviews/{item_id}/decision"]["post"]["responses"]
