"""`envfactory reviewer …` and `envfactory review …` against a store under a temp home."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from envfactory.api.auth import FileReviewers, Role
from envfactory.cli import app
from envfactory.core.models import ReviewState
from envfactory.core.settings import Settings
from envfactory.store import Store

from .conftest import add_item


def _run(home, *args: str):
    return CliRunner().invoke(app, list(args), env={"ENVFACTORY_HOME": str(home)})


def test_reviewer_add_prints_the_token_once_and_stores_only_its_hash(tmp_path):
    res = _run(tmp_path, "reviewer", "add", "ana", "--role", "viewer")
    assert res.exit_code == 0, res.output
    token = res.stdout.strip().splitlines()[0]
    registry_text = (tmp_path / "reviewers.json").read_text()
    assert token.startswith("efr_") and token not in registry_text
    who = FileReviewers(tmp_path / "reviewers.json").authenticate(token)
    assert who is not None and (who.name, who.role) == ("ana", Role.VIEWER)
    listed = _run(tmp_path, "reviewer", "list", "--json")
    assert json.loads(listed.stdout)[0]["name"] == "ana" and token not in listed.stdout
    assert _run(tmp_path, "reviewer", "add", "ana").exit_code == 2


def test_a_removed_reviewer_token_stops_working(tmp_path):
    token = _run(tmp_path, "reviewer", "add", "bo").stdout.strip().splitlines()[0]
    assert _run(tmp_path, "reviewer", "remove", "bo").exit_code == 0
    assert FileReviewers(tmp_path / "reviewers.json").authenticate(token) is None


def test_review_decide_from_the_cli_is_stored_once_and_says_who_won(tmp_path):
    store = Store.from_settings(Settings(home=tmp_path, database_url=None))
    item = add_item(store, traj=False)
    listed = _run(tmp_path, "review", "list", "--json")
    assert [i["id"] for i in json.loads(listed.stdout)["items"]] == [item.id]
    res = _run(
        tmp_path,
        "review",
        "decide",
        item.id,
        "confirm",
        "--as",
        "ana",
        "-m",
        "edits tests",
        "--json",
    )
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["item"]["state"] == "confirmed" and out["workflow_notified"] is False
    assert store.reviews.get(item.id).state == ReviewState.CONFIRMED
    again = _run(tmp_path, "review", "decide", item.id, "dismiss", "--as", "bo")
    assert again.exit_code == 2 and "already confirmed by ana" in again.output
    shown = _run(tmp_path, "review", "show", item.id)
    assert "audit:" in shown.stdout and "ana confirm" in shown.stdout
