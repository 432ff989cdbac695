"""The review-queue HTTP API and web UI: `create_app(settings)`.

Layers, lowest first (the `api-layers` contract in .importlinter):

auth.py, body_limit.py   reviewer tokens (hashed), roles viewer < reviewer; the body cap
token_limit.py  at most N requests in flight per token (429 + Retry-After)
error_bodies.py error answers of bounded size: the first problems and their count
context.py  what all share: the app context and the sink types (the pipeline seams)
paging.py   every list's `limit` and opaque `cursor` → one page of summaries, `next_cursor`
deps.py     request dependencies: 401 / 403
views.py    read models shared by the JSON API and the pages
actions.py  writes shared by both: decide, claim, submit a seed
sessions.py the pages' sign-in sessions and CSRF defences
routes.py   JSON API under /api (OpenAPI at /openapi.json, docs at /docs); tasks.py /api/tasks
ui.py       server-rendered pages under /ui (templates/)
app.py      the composition root: `create_app(settings, store=…, on_decision=…, …)`;
            `freeze_heap()` for a serving process, once the app is built
pipeline.py `pipeline_app(settings)`: the app with sinks to Temporal (workflows.client)
"""

from .app import create_app
from .context import ApiContext, DecisionSink, SeedSink, ValidateSink, no_pipeline, store_only

__all__ = [
    "ApiContext",
    "DecisionSink",
    "SeedSink",
    "ValidateSink",
    "create_app",
    "no_pipeline",
    "store_only",
]
