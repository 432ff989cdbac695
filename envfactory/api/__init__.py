"""The review-queue HTTP API and web UI: `create_app(settings)`.

app.py      the factory, the context (store, registry, sinks), error mapping
auth.py     reviewer tokens (hashed), roles viewer < reviewer
deps.py     request dependencies: 401 / 403
routes.py   JSON API under /api (OpenAPI at /openapi.json, docs at /docs)
ui.py       server-rendered pages under /ui (templates/)
views.py    read models shared by both
actions.py  writes shared by both: decide, claim, submit a seed
"""

from .app import ApiContext, DecisionSink, create_app

__all__ = ["ApiContext", "DecisionSink", "create_app"]
