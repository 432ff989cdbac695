"""Task seeds: what a user submits — a description of real expert work."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from .base import ArtifactKey, Model, NonEmpty, UserText, utcnow

BaseFlavour = Literal["debian", "python"]


class Attachment(Model):
    """A file that came with the seed, stored in the artifact store."""

    path: NonEmpty  # relative to the seed directory, POSIX separators
    key: ArtifactKey
    size: int = Field(ge=0)


class Constraints(Model):
    max_turns: int = Field(default=60, ge=1, le=1000)
    time_budget_s: int = Field(default=1800, ge=10, le=86400)
    base_image: BaseFlavour = "python"


class TaskSeed(Model):
    """A submitted seed. `id` is derived from its content, so duplicates are detectable."""

    id: str
    title: NonEmpty
    description: NonEmpty  # markdown
    domain: NonEmpty
    attachments: tuple[Attachment, ...] = ()
    repository: UserText | None = None
    constraints: Constraints = Constraints()
    source: UserText | None = None
    content_hash: ArtifactKey
    created_at: datetime = Field(default_factory=utcnow)
