"""Seeds, environments (with gate report and judge solve rate) and packs over HTTP."""

from __future__ import annotations

from envfactory.core.models import AgentRole, CheckKind, EnvStatus, Trajectory
from envfactory.packs import export_pack
from envfactory.packs.registry import items_from_store
from tests.packs.conftest import make_item

from .conftest import Api

SEED = {
    "title": "Fix the ETL job",
    "description": "Rows are dropped when the CSV has quotes.",
    "domain": "data-engineering",
}


def test_a_reviewer_submits_a_seed_and_a_viewer_reads_it(api: Api):
    res = api.client.post("/api/seeds", json=SEED, headers=api.auth("ana"))
    assert res.status_code == 201, res.text
    seed_id = res.json()["seed"]["id"]
    assert (
        api.client.get(f"/api/seeds/{seed_id}", headers=api.auth("vic")).json()["title"]
        == SEED["title"]
    )
    listed = api.client.get("/api/seeds", headers=api.auth("vic")).json()
    assert [s["id"] for s in listed["items"]] == [seed_id] and listed["next_cursor"] is None
    assert api.client.post("/api/seeds", json=SEED, headers=api.auth("vic")).status_code == 403


def test_a_bad_or_duplicate_seed_is_422_naming_the_problem(api: Api):
    res = api.client.post("/api/seeds", json=SEED | {"title": ""}, headers=api.auth("ana"))
    assert res.status_code == 422 and "title" in res.text
    api.client.post("/api/seeds", json=SEED, headers=api.auth("ana"))
    res = api.client.post("/api/seeds", json=SEED, headers=api.auth("ana"))
    assert res.status_code == 422 and "duplicate" in res.json()["detail"]


def test_a_seed_body_with_a_key_given_twice_is_422_naming_the_key_and_nothing_is_stored(
    api: Api,
):
    body = (
        '{"title": "Fix the ETL job", "description": "Rows are dropped.", '
        '"domain": "data-engineering", "title": "Something else"}'
    )
    headers = api.auth("ana") | {"content-type": "application/json"}
    res = api.client.post("/api/seeds", content=body, headers=headers)
    assert res.status_code == 422, res.text
    assert "'title' appears twice" in res.text
    assert api.client.get("/api/seeds", headers=api.auth("vic")).json()["items"] == []
    anonymous = api.client.post(
        "/api/seeds", content=body, headers={"content-type": "application/json"}
    )
    assert anonymous.status_code == 401  # who asks is checked first


def test_an_environment_shows_its_gate_report_and_judge_solve_rate(api: Api, tmp_path):
    item = make_item(api.client.app.state.ctx.artifacts, "env-a")
    api.store.environments.add(item.spec, EnvStatus.PUBLISHED)
    api.store.verifiers.add(item.verifier)
    api.store.gate_reports.add(item.gate_report)
    for i, reward in enumerate((1, 0, 1, None)):
        api.store.trajectories.add(
            Trajectory(id=f"j{i}", role=AgentRole.JUDGE, env_id="env-a", reward=reward)
        )
    listed = api.client.get("/api/environments?status=published", headers=api.auth("vic")).json()
    assert [e["id"] for e in listed["items"]] == ["env-a"]
    view = api.client.get("/api/environments/env-a", headers=api.auth("vic")).json()
    assert view["gate_report"]["verdict"] == "passed"
    assert (view["judge_runs"], view["judge_solved"], view["judge_solve_rate"]) == (3, 2, 0.667)
    assert "reference_solution" not in str(view)
    api.sign_in("vic")
    page = api.client.get("/ui/environments/env-a").text
    assert "2 of 3 judge runs solved it" in page


def test_packs_are_listed_and_a_stored_archive_downloads(api: Api, tmp_path):
    arts = api.client.app.state.ctx.artifacts
    item = make_item(arts, "env-a")
    api.store.environments.add(item.spec, EnvStatus.PUBLISHED)
    api.store.verifiers.add(item.verifier)
    api.store.gate_reports.add(item.gate_report)
    manifest = export_pack(
        items_from_store(api.store, ["env-a"]), tmp_path / "p.tar", artifacts=arts, created_by="t"
    )
    api.store.packs.add(manifest, archive_key=arts.put_file(tmp_path / "p.tar"))
    listed = api.client.get("/api/packs", headers=api.auth("vic")).json()["items"]
    assert [(p["id"], p["environments"], p["downloadable"]) for p in listed] == [
        (manifest.id, 1, True)
    ]
    assert listed[0]["members"] == len(manifest.members)
    assert listed[0]["bytes"] == sum(m.size for m in manifest.members)
    res = api.client.get(f"/api/packs/{manifest.id}/download", headers=api.auth("vic"))
    assert res.status_code == 200 and res.content == (tmp_path / "p.tar").read_bytes()
    assert (
        api.client.get(f"/api/packs/{manifest.id}", headers=api.auth("vic")).json()["id"]
        == manifest.id
    )


def test_a_nul_character_is_a_422_not_a_database_error(api: Api):
    """Regression: schemathesis found POST /api/seeds with a NUL in a field answered 503
    on PostgreSQL ("text fields cannot contain NUL")."""
    res = api.client.post("/api/seeds", json=SEED | {"title": "a\x00b"}, headers=api.auth("ana"))
    assert res.status_code == 422 and "NUL" in res.text
    res = api.client.get("/api/reviews?env_id=a%00b", headers=api.auth("vic"))
    assert res.status_code == 422
    res = api.client.get("/api/reviews/rev%00x", headers=api.auth("vic"))
    assert res.status_code == 422


def test_the_environment_page_shows_tolerances_and_rows_not_applicable(api: Api):
    item = make_item(api.client.app.state.ctx.artifacts, "env-t")
    report = item.gate_report
    base = report.checks[0]
    tolerated = base.model_copy(
        update={
            "kind": CheckKind.TOLERANCE,
            "name": "probe:records-reordered@oracle",
            "expected": 0,
            "observed": (1,),
        }
    )
    unread = base.model_copy(
        update={
            "kind": CheckKind.PROBE,
            "name": "probe:truncated-outputs@oracle",
            "expected": 0,
            "observed": (1,),
            "not_applicable": "the verifier never read what it changed",
        }
    )
    report = report.model_copy(update={"checks": (*report.checks, tolerated, unread)})
    api.store.environments.add(item.spec, EnvStatus.PUBLISHED)
    api.store.verifiers.add(item.verifier)
    api.store.gate_reports.add(report)
    api.sign_in("vic")
    page = api.client.get("/ui/environments/env-t").text
    assert "tolerates probe:records-reordered@oracle" in page
    assert "probe:truncated-outputs@oracle: the verifier never read what it changed" in page
