"""A decision made over HTTP reaches the pipeline waiting on it, through Temporal.

A stand-in workflow (`pipeline_standin`) waits for one decision and then finishes: the
pipeline's decision sink (`envfactory.api.pipeline`, through `workflows.client.api_sinks`)
must find it by the seed's workflow id and deliver the stored decision, so the workflow
resumes and returns it.
"""

from __future__ import annotations

import asyncio

import pytest
from fastapi.testclient import TestClient

from envfactory.api import create_app
from envfactory.api.app import store_only
from envfactory.api.pipeline import pipeline_sinks
from envfactory.core.models import ReviewerRole, ReviewState
from envfactory.core.settings import Settings, TemporalSettings
from envfactory.store import ArtifactStore
from tests.packs.conftest import DictArtifacts, make_item
from workflows.client import connect
from workflows.devserver import DevServer, free_port

from .conftest import add_item
from .pipeline_standin import waiting_pipeline

pytestmark = pytest.mark.temporal


def test_a_decision_over_http_resumes_the_waiting_pipeline(tmp_path, store):
    item_spec = make_item(DictArtifacts(), "env-w").spec.model_copy(update={"seed_id": "seed-w1"})
    store.environments.add(item_spec)
    item = add_item(store, "env-w", traj=False)
    token = store.reviewers.add("ana", ReviewerRole.REVIEWER)

    with DevServer(free_port(), tmp_path / "temporal.db") as srv:
        settings = Settings(home=tmp_path / "home", temporal=TemporalSettings(address=srv.address))
        app = create_app(
            settings,
            store=store,
            artifacts=ArtifactStore(tmp_path / "a"),
            on_decision=pipeline_sinks(settings, store).on_decision,  # through Temporal
            on_seed=store_only,
        )

        async def main() -> tuple[dict, str]:
            client = await connect(settings.temporal)
            async with waiting_pipeline(client, "seed-w1") as handle:
                with TestClient(app) as http:
                    res = await asyncio.to_thread(
                        http.post,
                        f"/api/reviews/{item.id}/decision",
                        json={"decision": "confirm", "comment": "edits tests"},
                        headers={"Authorization": f"Bearer {token}"},
                    )
                return res.json(), await asyncio.wait_for(handle.result(), 60)

        body, result = asyncio.run(main())
    assert body["workflow_notified"] is True, body
    assert result == f"{item.id}:confirm:ana"
    assert store.reviews.get(item.id).state == ReviewState.CONFIRMED
