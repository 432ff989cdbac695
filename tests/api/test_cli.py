"""`envfactory reviewer …` and `envfactory review …` against a store under a temp home."""

from __future__ import annotations

import json
import os
import pwd
import socket

from sqlalchemy import text
from typer.testing import CliRunner

from envfactory.cli import app
from envfactory.core.models import AuthMethod, ReviewerRole, ReviewState
from envfactory.core.settings import Settings
from envfactory.store import Store

from .conftest import add_item


def _run(home, *args: str, token: str | None = None, env: dict[str, str] | None = None):
    env = {"ENVFACTORY_HOME": str(home), **(env or {})}
    if token is not None:
        env["ENVFACTORY_REVIEWER_TOKEN"] = token
    return CliRunner().invoke(app, list(args), env=env)


def _store(home) -> Store:
    return Store.from_settings(Settings(home=home, database_url=None))


def test_reviewer_add_prints_the_token_once_and_stores_only_its_hash(tmp_path):
    res = _run(tmp_path, "reviewer", "add", "ana", "--role", "viewer")
    assert res.exit_code == 0, res.output
    token = res.stdout.strip().splitlines()[0]
    store = _store(tmp_path)
    with store.engine.connect() as conn:
        rows = [tuple(r) for r in conn.execute(text("SELECT * FROM reviewers"))]
    assert token.startswith("efr_") and token not in repr(rows) and len(rows) == 1
    who = store.reviewers.find_by_token(token)
    assert who is not None and (who.name, who.role) == ("ana", ReviewerRole.VIEWER)
    listed = _run(tmp_path, "reviewer", "list", "--json")
    assert json.loads(listed.stdout)[0]["name"] == "ana" and token not in listed.stdout
    assert _run(tmp_path, "reviewer", "add", "ana").exit_code == 2


def test_a_removed_reviewer_token_stops_working(tmp_path):
    token = _run(tmp_path, "reviewer", "add", "bo").stdout.strip().splitlines()[0]
    assert _run(tmp_path, "reviewer", "remove", "bo").exit_code == 0
    assert _store(tmp_path).reviewers.find_by_token(token) is None


def test_review_decide_with_a_token_is_stored_once_as_its_reviewer_and_says_who_won(tmp_path):
    store = _store(tmp_path)
    ana = store.reviewers.add("ana", ReviewerRole.REVIEWER)
    bo = store.reviewers.add("bo", ReviewerRole.REVIEWER)
    item = add_item(store, traj=False)
    listed = _run(tmp_path, "review", "list", "--json")
    assert [i["id"] for i in json.loads(listed.stdout)["items"]] == [item.id]
    res = _run(
        tmp_path, "review", "decide", item.id, "confirm", "-m", "edits tests", "--json", token=ana
    )
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["item"]["state"] == "confirmed" and out["workflow_notified"] is False
    assert out["item"]["reviewer"] == "ana" and out["auth"] == "cli-token"
    assert store.reviews.get(item.id).state == ReviewState.CONFIRMED
    again = _run(tmp_path, "review", "decide", item.id, "dismiss", token=bo)
    assert again.exit_code == 2 and "already confirmed by ana" in again.output
    [audit] = store.reviews.audit(item.id)
    assert (audit.reviewer, audit.auth, audit.note) == ("ana", AuthMethod.CLI_TOKEN, "")
    shown = _run(tmp_path, "review", "show", item.id)
    assert "audit:" in shown.stdout and "ana confirm (cli-token)" in shown.stdout


def test_review_decide_without_a_token_records_the_local_operator_and_keeps_as_as_a_note(
    tmp_path,
):
    store = _store(tmp_path)
    item = add_item(store, traj=False)
    res = _run(
        tmp_path,
        "review",
        "decide",
        item.id,
        "dismiss",
        "--as",
        "ana",
        "--json",
        env={"USER": "ana", "LOGNAME": "ana"},
    )  # the name is the real uid's, not $USER
    assert res.exit_code == 0, res.output
    operator = f"operator:{pwd.getpwuid(os.getuid()).pw_name}@{socket.gethostname()}"
    assert json.loads(res.stdout)["auth"] == "local-operator"
    assert "not a verified reviewer" in res.stderr and operator in res.stderr
    [audit] = store.reviews.audit(item.id)
    assert (audit.reviewer, audit.auth) == (operator, AuthMethod.LOCAL_OPERATOR)
    assert audit.note == "claimed --as ana (not verified)"
    assert store.reviews.get(item.id).reviewer == operator


def test_review_decide_refuses_a_bad_token_a_viewer_and_a_mismatched_as(tmp_path):
    store = _store(tmp_path)
    vic = store.reviewers.add("vic", ReviewerRole.VIEWER)
    ana = store.reviewers.add("ana", ReviewerRole.REVIEWER)
    item = add_item(store, traj=False)
    bad = _run(tmp_path, "review", "decide", item.id, "confirm", token="efr_forged")
    assert bad.exit_code == 2 and "ENVFACTORY_REVIEWER_TOKEN is not a valid" in bad.output
    viewer = _run(tmp_path, "review", "decide", item.id, "confirm", token=vic)
    assert viewer.exit_code == 2 and "vic is a viewer" in viewer.output
    other = _run(tmp_path, "review", "decide", item.id, "confirm", "--as", "bo", token=ana)
    assert other.exit_code == 2 and "--as bo is not the token's reviewer (ana)" in other.output
    assert store.reviews.get(item.id).state == ReviewState.OPEN and not store.reviews.audit(item.id)
