"""Shortcut findings, the human review queue, and who may decide on it.

Every decision's audit row says who decided and how that identity was established
(`AuthMethod`): a reviewer token checked against the store, or a local operator whose name
is only what the operating system says.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Literal

from pydantic import Field

from .base import Model, UserText, utcnow
from .sandbox import PathChange, StateRef

#: what kind of evidence a finding rests on
FindingSource = Literal["probe", "trajectory", "tamper", "mutation", "solve-rate", "alternative"]
#: who found it: the model-free rules (probes, regex mining, mutation, the solve-rate band)
#: or the shortcut-analyst model (`source: model` in the review queue)
FoundBy = Literal["rules", "model"]


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
    #: findings stored before the analyst existed were all found by the rules
    found_by: FoundBy = "rules"
    #: the analyst's account (model findings only): why it thinks the reward was not earned
    rationale: str = ""
    #: the verifier weakness the trajectory exploited, in the analyst's words
    weakness: str = ""


class ReviewState(StrEnum):
    OPEN = "open"
    CONFIRMED = "confirmed"
    DISMISSED = "dismissed"

    @property
    def decision(self) -> Decision:
        """The decision that put an item in this state (an open item has none)."""
        for decision, state in _DECIDED.items():
            if state == self:
                return decision
        raise ValueError(f"a review item in state {self.value!r} has no decision")


class Decision(StrEnum):
    CONFIRM = "confirm"
    DISMISS = "dismiss"

    @property
    def state(self) -> ReviewState:
        """The state an item is in once this decision is recorded."""
        return _DECIDED[self]


#: the one mapping between a decision and the state it leaves an item in
_DECIDED = {Decision.CONFIRM: ReviewState.CONFIRMED, Decision.DISMISS: ReviewState.DISMISSED}


class ReviewItem(Model):
    id: str
    finding_id: str
    env_id: str
    state: ReviewState = ReviewState.OPEN
    reviewer: str | None = None
    comment: UserText = ""
    decided_at: datetime | None = None
    created_at: datetime = Field(default_factory=utcnow)


class AuthMethod(StrEnum):
    """How the identity on a decision was established (kept in its audit row)."""

    #: the JSON API, `Authorization: Bearer <reviewer token>`
    BEARER_TOKEN = "bearer-token"
    #: the review pages: a session opened by signing in with a reviewer token
    UI_SESSION = "ui-session"
    #: `envfactory review decide` with ENVFACTORY_REVIEWER_TOKEN
    CLI_TOKEN = "cli-token"
    #: `envfactory review decide` without a token: `operator:<unix user>@<host>`, which
    #: only says who ran the command with access to the database, not a reviewer
    LOCAL_OPERATOR = "local-operator"
    #: a decision sent straight to the pipeline as a Temporal update (the demo reviewer)
    WORKFLOW_UPDATE = "workflow-update"
    #: recorded before identities were audited (migration 0003)
    UNRECORDED = "unrecorded"


class ReviewAudit(Model):
    """One decision on a review item as the audit trail keeps it: who, how they were
    identified, when, before/after. `note` holds what was claimed but not verified
    (e.g. the `--as` name of a local operator)."""

    review_id: str
    reviewer: str
    decision: Decision
    at: datetime
    before: ReviewItem
    after: ReviewItem
    auth: AuthMethod = AuthMethod.UNRECORDED
    note: str = ""


class ReviewerRole(StrEnum):
    VIEWER = "viewer"
    REVIEWER = "reviewer"

    def allows(self, needed: ReviewerRole) -> bool:
        return needed == ReviewerRole.VIEWER or self == ReviewerRole.REVIEWER


class Reviewer(Model):
    """Someone who may use the review API and pages (their token is stored only hashed)."""

    name: str
    role: ReviewerRole
    created_at: datetime
