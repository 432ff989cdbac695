"""What a list shows of each stored object: one small summary per row, never the model.

A list answers with summaries so that its size is bounded by the page size alone: each
field is an id, a name or title (bounded where it is written), a status, a time or a count.
Free text (a seed's description, a review comment) and nested collections (attachments,
pack members) stay in the full model, read one at a time (`GET /api/seeds/{id}`, …). The
store builds a summary from indexed columns, not by loading the document.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import Field

from .base import Model
from .environments import EnvStatus
from .packs import PackFormat
from .review import ReviewState


class SeedSummary(Model):
    id: str
    title: str
    domain: str
    attachments: int = Field(description="how many files the seed attaches")
    attachment_bytes: int = Field(description="their size together, in bytes")
    description_chars: int = Field(description="the description's length, in characters")
    created_at: datetime


class EnvSummary(Model):
    """The latest version of an environment."""

    id: str
    version: int
    name: str
    status: EnvStatus
    seed_id: str | None
    suite: str | None = Field(description="the suite of an imported task; null if synthesized")
    source: str = Field(description="research, harbor, terminal-bench or manual")
    updated_at: datetime


class ReviewSummary(Model):
    """A review item without its comment (`GET /api/reviews/{id}` has it)."""

    id: str
    finding_id: str
    env_id: str
    state: ReviewState
    reviewer: str | None
    decided_at: datetime | None
    created_at: datetime


class PackSummary(Model):
    id: str
    format: PackFormat
    created_by: str
    environments: int = Field(description="how many environments the pack holds")
    members: int = Field(description="how many files it lists")
    bytes: int = Field(description="their size together, in bytes")
    downloadable: bool = Field(description="whether its archive is stored (…/download)")
    created_at: datetime
