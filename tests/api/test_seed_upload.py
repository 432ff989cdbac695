"""Seeds with attachments over HTTP (multipart), with the CLI's checks and limits; unknown
keys refused as a seed.yaml's are; a seed no configured model can run refused (issue 14:
the API dropped a seed's attachments without a word, and accepted seeds that then
stopped at research for want of a script)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from envfactory.api import create_app
from envfactory.api.app import store_only
from envfactory.core.errors import InvalidSeed
from envfactory.core.models import ReviewerRole
from envfactory.core.settings import SeedLimits, Settings
from envfactory.seeds import load_seed
from envfactory.store import ArtifactStore, Store

from .conftest import MODEL_CONFIGURED, Api

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "seeds" / "sqlite-wal-crash-recovery"
SEED_YAML = """\
title: Nightly ETL drops rows after a schema change
description: The partner changed the export format; the job keeps 0 rows and exits 0.
domain: data-engineering
attachments: [job.py, data]
"""
FILES = [("job.py", b"print('etl')\n"), ("data/orders.csv", b"id;amount\n1;2,50\n")]
LIMITS = SeedLimits(max_attachments=3, max_attachment_bytes=2_000, max_total_bytes=3_000)


def form(seed_yaml: str | bytes, files: list[tuple[str, bytes]]) -> list[tuple[str, tuple]]:
    text = seed_yaml.encode() if isinstance(seed_yaml, str) else seed_yaml
    return [("seed", ("seed.yaml", text, "application/yaml"))] + [
        ("files", (name, data, "application/octet-stream")) for name, data in files
    ]


def make_api(tmp_path: Path, store: Store, settings: Settings) -> Iterator[Api]:
    tokens = {
        "ana": store.reviewers.add("ana", ReviewerRole.REVIEWER),
        "vic": store.reviewers.add("vic", ReviewerRole.VIEWER),
    }
    app = create_app(
        settings,
        store=store,
        artifacts=ArtifactStore(tmp_path / "artifacts"),
        on_decision=store_only,
        on_seed=store_only,
    )
    with TestClient(app) as client:
        yield Api(client, store, None, tokens)  # type: ignore[arg-type]


@pytest.fixture
def small(tmp_path: Path, store: Store) -> Iterator[Api]:
    """A model configured (any seed may run) and small seed limits."""
    settings = Settings(home=tmp_path / "home", agents=MODEL_CONFIGURED, seeds=LIMITS)
    yield from make_api(tmp_path, store, settings)


@pytest.fixture
def scripted(tmp_path: Path, store: Store) -> Iterator[Api]:
    """The default agent settings: every role replays recorded scripts."""
    yield from make_api(tmp_path, store, Settings(home=tmp_path / "home"))


def upload(api: Api, seed_yaml: str | bytes, files: list[tuple[str, bytes]], who: str = "ana"):
    return api.client.post("/api/seeds/upload", files=form(seed_yaml, files), headers=api.auth(who))


def test_a_multipart_seed_stores_its_attachments(small: Api):
    res = upload(small, SEED_YAML, FILES)
    assert res.status_code == 201, res.text
    seed = res.json()["seed"]
    assert [(a["path"], a["size"]) for a in seed["attachments"]] == [
        ("data/orders.csv", len(FILES[1][1])),
        ("job.py", len(FILES[0][1])),
    ]
    artifacts = small.client.app.state.ctx.artifacts
    stored = {a["path"]: artifacts.get(a["key"]) for a in seed["attachments"]}
    assert stored == dict(FILES)
    assert small.store.seeds.get(seed["id"]).attachments[0].path == "data/orders.csv"
    assert upload(small, SEED_YAML, FILES, who="vic").status_code == 403


def test_an_example_seed_uploaded_is_the_same_seed_as_the_cli_reads(scripted: Api):
    """Same files, same content hash, and its recorded scripts are found (scripted API)."""
    files = [(p.name, p.read_bytes()) for p in sorted(EXAMPLE.iterdir()) if p.name != "seed.yaml"]
    res = upload(scripted, (EXAMPLE / "seed.yaml").read_bytes(), files)
    assert res.status_code == 201, res.text
    assert res.json()["seed"]["id"] == load_seed(EXAMPLE, SeedLimits()).seed_id


def test_an_oversize_attachment_is_refused_and_nothing_is_stored(small: Api):
    res = upload(small, SEED_YAML, [FILES[0], ("data/orders.csv", b"x" * 2_001)])
    assert res.status_code == 422
    body = res.json()
    assert (
        body["detail"]
        == "attachment 'data/orders.csv': is too large (2001 bytes; at most 2000 bytes)"
    )
    assert "ENVFACTORY_SEEDS__MAX_ATTACHMENT_BYTES" in body["hint"]
    too_many = upload(
        small, "title: t\ndescription: d\ndomain: x\n", [(f"f{i}.bin", b"1") for i in range(4)]
    )
    assert too_many.status_code == 422 and "too many files" in too_many.text
    together = upload(
        small,
        "title: t\ndescription: d\ndomain: x\n",
        [(f"f{i}.bin", b"1" * 1_500) for i in range(3)],
    )
    assert together.status_code == 422 and "too large together" in together.text
    assert small.store.seeds.count() == 0
    assert list(small.client.app.state.ctx.artifacts.keys()) == []


def test_every_upload_must_be_listed_and_every_listed_path_uploaded(small: Api):
    res = upload(small, SEED_YAML.replace("[job.py, data]", "[job.py, notes.md]"), FILES)
    assert res.status_code == 422
    text = res.json()["detail"]
    assert "attachment 'notes.md': is listed but was not uploaded" in text
    assert "attachment 'data/orders.csv': was uploaded but is not listed in 'attachments'" in text


def test_an_upload_named_outside_the_seed_is_refused(small: Api):
    for name, says in (
        ("../etc/passwd", "not a plain relative path"),
        ("/etc/passwd", "absolute path"),
        ("a\\\\b.txt", "backslashes"),
    ):
        res = upload(small, "title: t\ndescription: d\ndomain: x\n", [(name, b"1")])
        assert res.status_code == 422, name
        assert says in res.json()["detail"], res.text


def test_an_unknown_key_is_refused_as_the_yaml_path_refuses_it(small: Api, tmp_path: Path):
    json_res = small.client.post(
        "/api/seeds",
        headers=small.auth("ana"),
        json={"titel": "t", "title": "t", "description": "d", "domain": "x"},
    )
    assert json_res.status_code == 422
    assert json_res.json() == {
        "detail": "request body field 'titel': unknown key",
        "hint": "did you mean 'title'? allowed keys here: title, description, domain, "
        "attachments, repository, history, constraints, source",
    }
    null_extra = small.client.post(
        "/api/seeds",
        headers=small.auth("ana"),
        json={"title": "t", "description": "d", "domain": "x", "sauce": None},
    )
    assert null_extra.json()["detail"] == "request body field 'sauce': unknown key"
    form_res = upload(small, "titel: t\ntitle: t\ndescription: d\ndomain: x\n", [])
    assert form_res.status_code == 422
    assert form_res.json()["detail"] == "seed.yaml field 'titel': unknown key"
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "seed.yaml").write_text("titel: t\ntitle: t\ndescription: d\ndomain: x\n")
    with pytest.raises(InvalidSeed) as cli_err:
        load_seed(tmp_path / "s", SeedLimits())
    assert str(cli_err.value).startswith(
        f"{tmp_path / 's' / 'seed.yaml'} field 'titel': unknown key"
    )
    assert small.store.seeds.count() == 0


def test_attachments_in_a_json_body_are_refused_not_dropped(small: Api):
    res = small.client.post(
        "/api/seeds",
        headers=small.auth("ana"),
        json={"title": "t", "description": "d", "domain": "x", "attachments": ["job.py"]},
    )
    assert res.status_code == 422
    assert res.json()["detail"] == "request body field 'attachments': cannot be sent as JSON"
    assert "/api/seeds/upload" in res.json()["hint"]
    assert small.store.seeds.count() == 0


def test_a_seed_nobody_scripted_is_refused_while_the_roles_are_scripted(scripted: Api):
    body = {
        "title": "Rotate the relay's TLS certificate",
        "description": "renew it",
        "domain": "operations",
    }
    res = scripted.client.post("/api/seeds", json=body, headers=scripted.auth("ana"))
    assert res.status_code == 422
    detail = res.json()
    assert (
        "the research, judge, verifier, red_team role(s) use the scripted backend"
        in detail["detail"]
    )
    assert "ENVFACTORY_AGENTS__DEFAULT__MODEL" in detail["hint"]
    as_form = upload(scripted, "title: Rotate it\ndescription: renew it\ndomain: ops\n", [])
    assert as_form.status_code == 422 and "scripted backend" in as_form.text
    assert scripted.store.seeds.count() == 0


def test_an_upload_that_is_both_a_file_and_a_directory_is_refused(small: Api):
    res = upload(small, "title: t\ndescription: d\ndomain: x\n", [("a", b"1"), ("a/b", b"2")])
    assert res.status_code == 422, res.text
    assert "attachment 'a': is a file, and also the directory of 'a/b'" in res.json()["detail"]
    assert small.store.seeds.count() == 0


def test_a_seed_yaml_no_dict_can_hold_is_a_422_not_a_500(small: Api):
    for text, says in (
        ("? [a, b]\n: 1\ntitle: t\ndescription: d\ndomain: x\n", "mapping key must be a plain"),
        ("? {a: 1}\n: 1\ntitle: t\ndescription: d\ndomain: x\n", "mapping key must be a plain"),
    ):
        res = upload(small, text, [])
        assert res.status_code == 422, res.text
        assert says in res.json()["detail"]


def test_an_upload_nested_past_the_depth_limit_is_refused(small: Api):
    deep = "/".join(["d"] * 65) + "/leaf.txt"
    res = upload(small, "title: t\ndescription: d\ndomain: x\n", [(deep, b"1")])
    assert res.status_code == 422, res.text
    assert "nested deeper than 64 levels" in res.json()["detail"]


@pytest.fixture
def default_limits(tmp_path: Path, store: Store) -> Iterator[Api]:
    """A model configured and the default seed limits (5 MB a file, 20 MB a seed)."""
    yield from make_api(tmp_path, store, Settings(home=tmp_path / "home", agents=MODEL_CONFIGURED))


def test_an_upload_within_the_documented_file_limits_passes_the_body_cap(default_limits: Api):
    """5 MB per file, 20 MB a seed (the defaults) — not the JSON routes' 1 MiB."""
    api = default_limits
    big = b"x" * 4_900_000
    res = upload(api, "title: t\ndescription: d\ndomain: x\n", [("data.bin", big)])
    assert res.status_code == 201, res.text[:300]
    over = upload(api, "title: t\ndescription: d\ndomain: x\n", [("a.bin", b"x" * 22_000_000)])
    assert over.status_code == 413
    assert "ENVFACTORY_SEEDS__MAX_TOTAL_BYTES" in over.json()["detail"]
