"""Task seeds: what a user submits — a description of real expert work."""

from __future__ import annotations

from datetime import datetime
from typing import Literal, Self

from pydantic import Field, model_validator

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
    #: judges k for this seed (None: the `gates.judges` setting)
    judges: int | None = Field(default=None, ge=1, le=32)
    #: the accepted judge solve-rate band for this seed (None: the settings' band); setting
    #: either bound sets the band (see `SolveRateBand.for_seed`)
    min_solve_rate: float | None = Field(default=None, ge=0.0, le=1.0)
    max_solve_rate: float | None = Field(default=None, ge=0.0, le=1.0)

    @model_validator(mode="after")
    def _band_ordered(self) -> Self:
        lo, hi = self.min_solve_rate, self.max_solve_rate
        if lo is not None and hi is not None and lo > hi:
            raise ValueError(
                f"min_solve_rate {lo} is above max_solve_rate {hi}: the band would be empty; "
                "make min_solve_rate <= max_solve_rate"
            )
        return self


class SeedHistory(Model):
    """A seed that asks for its repository's history to be mined (docs/repositories.md):
    `revisions` — none (HEAD's first-parent history), one `A..B` range, or commits, tags
    or merge commits; `paths` — only commits touching one of them; `limit` — the newest N."""

    revisions: tuple[UserText, ...] = ()
    paths: tuple[UserText, ...] = ()
    limit: int | None = Field(default=None, ge=1)


class TaskSeed(Model):
    """A submitted seed. `id` is derived from its content, so duplicates are detectable."""

    id: str
    title: NonEmpty
    description: NonEmpty  # markdown
    domain: NonEmpty
    attachments: tuple[Attachment, ...] = ()
    repository: UserText | None = None
    #: set: the repository's fix commits are mined (no research agent); None: a task to research
    history: SeedHistory | None = None
    constraints: Constraints = Constraints()
    source: UserText | None = None
    content_hash: ArtifactKey
    created_at: datetime = Field(default_factory=utcnow)
