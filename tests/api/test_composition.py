"""How the API is put together (issue 17, item 5): `create_app` takes the pipeline sinks
from its caller and never imports the workflow client itself; `pipeline_app`, what
`envfactory review serve` and `envfactory up` run, connects all three sinks to Temporal.

Before: app.py was both the shared-types module and the composition root (a cycle through
every router, hidden by imports inside functions), and `create_app` imported the workflow
client even when it was handed its own sinks.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from fastapi.testclient import TestClient

from envfactory.api import no_pipeline, store_only
from envfactory.api.pipeline import pipeline_app
from envfactory.core.models import ReviewerRole
from envfactory.core.settings import Settings, TemporalSettings
from envfactory.store import ArtifactStore, Store
from envfactory.suites import import_tasks
from workflows.devserver import free_port

ROOT = Path(__file__).resolve().parents[2]
TASKS = ROOT / "examples" / "tasks"


def test_an_app_given_its_own_sinks_never_imports_the_workflow_client(tmp_path: Path) -> None:
    code = textwrap.dedent(f"""
        import sys
        from pathlib import Path

        from envfactory.api import create_app, no_pipeline, store_only
        from envfactory.core.settings import Settings
        from envfactory.store import ArtifactStore, Store
        from envfactory.store.migrate import upgrade

        url = "sqlite:///{tmp_path}/store.db"
        upgrade(url)
        create_app(Settings(home=Path("{tmp_path}/home")), store=Store.open(url),
                   artifacts=ArtifactStore(Path("{tmp_path}/artifacts")),
                   on_decision=store_only, on_seed=store_only, on_validate=no_pipeline)
        print(sorted(m for m in sys.modules if m.split(".")[0] in ("workflows", "temporalio")))
    """)
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"


def test_the_pipeline_app_sends_a_validation_to_temporal(tmp_path: Path, store: Store) -> None:
    """Nothing listens at the address: the 503 names it (a store-only app would say it has
    no pipeline connection)."""
    artifacts = ArtifactStore(tmp_path / "artifacts")
    [task] = import_tasks([TASKS / "csv-report"], store, artifacts, suite="one").imported
    token = store.reviewers.add("ana", ReviewerRole.REVIEWER)
    address = f"127.0.0.1:{free_port()}"
    settings = Settings(home=tmp_path / "home", temporal=TemporalSettings(address=address))
    app = pipeline_app(settings, store)
    ctx = app.state.ctx
    assert store_only not in (ctx.on_decision, ctx.on_seed) and ctx.on_validate is not no_pipeline
    with TestClient(app) as client:
        auth = {"Authorization": f"Bearer {token}"}
        r = client.post("/api/tasks/validate", json={"env_ids": [task.env_id]}, headers=auth)
    assert r.status_code == 503
    assert f"cannot reach Temporal at {address}" in r.json()["detail"]
