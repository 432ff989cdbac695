"""Shortcut findings and the human review queue."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Literal

from pydantic import Field

from .base import Model, UserText, utcnow
from .sandbox import PathChange, StateRef

FindingSource = Literal["probe", "trajectory", "tamper", "mutation"]


class Evidence(Model):
    summary: str
    diff: tuple[PathChange, ...] = ()
    commands: tuple[str, ...] = ()
    trajectory_id: str | None = None
    step_indexes: tuple[int, ...] = ()
    verifier_output: str = ""


class ShortcutFinding(Model):
    id: str
    env_id: str
    source: FindingSource
    rule: str  # "probe:conftest-pass", "writes-reward-file", ...
    evidence: Evidence
    state: StateRef | None = None
    created_at: datetime = Field(default_factory=utcnow)


class ReviewState(StrEnum):
    OPEN = "open"
    CONFIRMED = "confirmed"
    DISMISSED = "dismissed"


class Decision(StrEnum):
    CONFIRM = "confirm"
    DISMISS = "dismiss"


class ReviewItem(Model):
    id: str
    finding_id: str
    env_id: str
    state: ReviewState = ReviewState.OPEN
    reviewer: str | None = None
    comment: UserText = ""
    decided_at: datetime | None = None
    created_at: datetime = Field(default_factory=utcnow)


class ReviewAudit(Model):
    """One decision on a review item as the audit trail keeps it: who, when, before/after."""

    review_id: str
    reviewer: str
    decision: Decision
    at: datetime
    before: ReviewItem
    after: ReviewItem
