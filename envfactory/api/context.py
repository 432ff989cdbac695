"""What every part of the API shares: the request context and the sink types.

A leaf of `envfactory.api`: it imports no other module of the package except `auth` (the
registry protocol), so routes, pages and actions can all depend on it while `app.py`, the
composition root, imports them.

The sinks are the seams to the pipeline, injected by whoever builds the app
(`envfactory.api.pipeline` connects them to Temporal). Without one, a decision or a seed is
stored only and the answer says the pipeline was not told; a validation is refused.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
from fastapi.templating import Jinja2Templates

from envfactory.core.errors import ConfigError
from envfactory.core.models import ReviewItem
from envfactory.core.settings import Settings
from envfactory.store import ArtifactStore, Store

from .auth import ReviewerRegistry

#: Called after a decision is stored, with the decided item (the workflow seam).
DecisionSink = Callable[[ReviewItem], Awaitable[None]]
#: Called after a seed is stored, with its id (the seam that starts the pipeline).
SeedSink = Callable[[str], Awaitable[None]]
#: Starts the durable validation of stored tasks: (env ids, repeats, label) → workflow id.
ValidateSink = Callable[[list[str], int | None, str | None], Awaitable[str]]

NO_PIPELINE = (
    "no pipeline connection: this API was started without one "
    "(`envfactory review serve` and `envfactory up` connect it to Temporal)"
)


async def store_only(_: Any) -> None:
    """The decision and seed sink without a pipeline: the record is in the store; nobody
    else is told, and the answer says so (`workflow_notified: false`)."""
    raise ConfigError(NO_PIPELINE)


async def no_pipeline(*_: Any) -> str:
    """The validation starter without a pipeline: nothing can be started (503)."""
    raise ConfigError(NO_PIPELINE)


@dataclass(frozen=True)
class ApiContext:
    settings: Settings
    store: Store
    artifacts: ArtifactStore
    reviewers: ReviewerRegistry
    on_decision: DecisionSink
    on_seed: SeedSink
    on_validate: ValidateSink
    templates: Jinja2Templates
    #: large seed bodies are checked one at a time, a JSON one in a worker process, a
    #: seed.yaml in a worker thread (`actions.seed_draft`, `routes.upload_seed`)
    seed_checks: anyio.CapacityLimiter = field(default_factory=lambda: anyio.CapacityLimiter(1))
