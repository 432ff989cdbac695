"""The API connected to the pipeline (Temporal): what `envfactory review serve` and
`envfactory up` run.

    app = pipeline_app(settings)        # store from settings, sinks to Temporal

The only module of `envfactory.api` that imports the workflow client. `workflows.client`
owns the delivery: a stored decision goes to the waiting `synthesize-<seed>` workflow as
an update (its activity accepts a decision that is already stored), a stored seed starts
its pipeline, a validation request starts `ValidateTasks`. The client connects on first
use, on the caller's loop.
"""

from __future__ import annotations

from typing import NamedTuple

from fastapi import FastAPI

from envfactory.core.settings import Settings
from envfactory.store import Store
from workflows.client import api_sinks, api_validate_sink

from .app import create_app
from .context import DecisionSink, SeedSink, ValidateSink


class PipelineSinks(NamedTuple):
    on_decision: DecisionSink
    on_seed: SeedSink
    on_validate: ValidateSink


def pipeline_sinks(settings: Settings, store: Store) -> PipelineSinks:
    """The three seams, delivering to the Temporal server of `settings.temporal`."""
    on_decision, on_seed = api_sinks(settings, store)
    return PipelineSinks(on_decision, on_seed, api_validate_sink(settings))


def pipeline_app(settings: Settings, store: Store | None = None) -> FastAPI:
    """`create_app` with the pipeline sinks."""
    store = store if store is not None else Store.from_settings(settings)
    sinks = pipeline_sinks(settings, store)
    return create_app(
        settings,
        store=store,
        on_decision=sinks.on_decision,
        on_seed=sinks.on_seed,
        on_validate=sinks.on_validate,
    )
