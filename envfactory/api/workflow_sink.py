"""The seams from a stored decision or seed to the pipeline (Temporal).

The workflows package owns the delivery (`workflows.client.api_sinks`: a decision goes to
the waiting `synthesize-<seed>` workflow as an update, whose activity accepts a decision
that is already stored; a seed starts its pipeline). Where that package is not installed,
decisions and seeds are stored only, and the API says the pipeline was not told.
"""

from __future__ import annotations

from typing import Any

from envfactory.core.settings import Settings

from .app import DecisionSink, SeedSink, ValidateSink, no_pipeline, store_only


def default_sinks(settings: Settings, store: Any) -> tuple[DecisionSink, SeedSink]:
    try:
        from workflows.client import api_sinks
    except ImportError:
        return store_only, store_only
    on_decision, on_seed = api_sinks(settings, store)
    return on_decision, on_seed


def default_validate_sink(settings: Settings) -> ValidateSink:
    """Starts `ValidateTasks` (`workflows.client.api_validate_sink`); without the
    workflows package, a validation request is refused with the reason."""
    try:
        from workflows.client import api_validate_sink
    except ImportError:
        return no_pipeline
    return api_validate_sink(settings)  # type: ignore[no-any-return]
