"""Read models shared by the JSON API and the HTML pages, built from the store.

Invariants: read-only (one read transaction per view); the reference solution and the
verifier's files are never part of a view (the API serves reviewers, but a page is easy
to share, and neither is needed to judge a shortcut).
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from envfactory.core.errors import NotFound
from envfactory.core.models import (
    AgentRole,
    EnvStatus,
    Evidence,
    GateReport,
    PathChange,
    ReviewAudit,
    ReviewItem,
    ReviewState,
    ShortcutFinding,
)
from envfactory.store import Store, Tx

EXCERPT_CONTEXT = 2  # steps shown either side of each suspicious step


class DiffRow(BaseModel):
    """One changed path, laid out for a side-by-side view: before | after."""

    path: str
    kind: str  # A, C, D
    before: str  # "" (absent), "present"
    after: str  # "" (deleted), "added", "changed"


class ExcerptStep(BaseModel):
    index: int
    suspicious: bool
    assistant_text: str
    calls: list[str]
    observations: list[str]


class ItemView(BaseModel):
    item: ReviewItem
    finding: ShortcutFinding | None
    evidence: Evidence | None
    diff: list[DiffRow]
    excerpt: list[ExcerptStep]
    trajectory_id: str | None
    claimed_by: str | None
    lease_until: datetime | None
    audit: list[ReviewAudit]


class QueueView(BaseModel):
    items: list[ReviewItem]
    counts: dict[str, int]


class EnvSummary(BaseModel):
    id: str
    version: int
    name: str
    status: EnvStatus
    seed_id: str | None
    updated_at: datetime


class EnvView(BaseModel):
    summary: EnvSummary
    instruction: str
    success_criteria: str
    gate_report: GateReport | None
    verifier_version: int | None
    verifier_author: str | None
    judge_runs: int
    judge_solved: int
    judge_solve_rate: float | None = Field(description="solved / runs over judge trajectories")


def diff_rows(changes: tuple[PathChange, ...]) -> list[DiffRow]:
    out = []
    for c in sorted(changes, key=lambda c: c.path):
        before = "" if c.kind == "A" else "present"
        after = {"A": "added", "C": "changed", "D": ""}[c.kind]
        out.append(DiffRow(path=c.path, kind=c.kind, before=before, after=after))
    return out


def _excerpt(tx: Tx, evidence: Evidence | None) -> list[ExcerptStep]:
    if evidence is None or evidence.trajectory_id is None:
        return []
    try:
        traj = tx.trajectories.get(evidence.trajectory_id)
    except NotFound:
        return []
    marks = set(evidence.step_indexes)
    lo = min(marks, default=0) - EXCERPT_CONTEXT
    hi = max(marks, default=len(traj.steps)) + EXCERPT_CONTEXT
    return [
        ExcerptStep(
            index=s.index,
            suspicious=s.index in marks,
            assistant_text=s.assistant_text,
            calls=[f"{c.name}({c.arguments})" for c in s.tool_calls],
            observations=list(s.observations),
        )
        for s in traj.steps
        if lo <= s.index <= hi
    ]


def item_view(store: Store, item_id: str) -> ItemView:
    with store.session(readonly=True) as tx:
        item = tx.reviews.get(item_id)
        try:
            finding = tx.findings.get(item.finding_id)
        except NotFound:
            finding = None
        evidence = finding.evidence if finding else None
        claimed_by, lease = tx.reviews.claim_of(item_id)
        return ItemView(
            item=item,
            finding=finding,
            evidence=evidence,
            diff=diff_rows(evidence.diff if evidence else ()),
            excerpt=_excerpt(tx, evidence),
            trajectory_id=evidence.trajectory_id if evidence else None,
            claimed_by=claimed_by,
            lease_until=lease,
            audit=tx.reviews.audit(item_id),
        )


def queue_view(store: Store, state: ReviewState | None, env_id: str | None) -> QueueView:
    with store.session(readonly=True) as tx:
        every = tx.reviews.list(env_id=env_id)
    counts = {s.value: sum(1 for i in every if i.state == s) for s in ReviewState}
    items = [i for i in every if state is None or i.state == state]
    return QueueView(items=items, counts=counts)


def env_summaries(store: Store, status: EnvStatus | None) -> list[EnvSummary]:
    return [
        EnvSummary(
            id=r.spec.id,
            version=r.spec.version,
            name=r.spec.name,
            status=r.status,
            seed_id=r.spec.seed_id,
            updated_at=r.updated_at,
        )
        for r in store.environments.list(status=status)
    ]


def env_view(store: Store, env_id: str) -> EnvView:
    with store.session(readonly=True) as tx:
        rec = tx.environments.record(env_id)
        versions = tx.verifiers.versions(env_id)
        verifier = tx.verifiers.get(env_id) if versions else None
        report = tx.gate_reports.latest(env_id, verifier.version if verifier else None)
        judges = tx.trajectories.list(env_id=env_id, role=AgentRole.JUDGE.value)
    rewarded = [t for t in judges if t.reward is not None]
    solved = sum(1 for t in rewarded if t.reward == 1)
    spec = rec.spec
    return EnvView(
        summary=EnvSummary(
            id=spec.id,
            version=spec.version,
            name=spec.name,
            status=rec.status,
            seed_id=spec.seed_id,
            updated_at=rec.updated_at,
        ),
        instruction=spec.instruction,
        success_criteria=spec.success_criteria,
        gate_report=report,
        verifier_version=verifier.version if verifier else None,
        verifier_author=verifier.provenance.author if verifier else None,
        judge_runs=len(rewarded),
        judge_solved=solved,
        judge_solve_rate=round(solved / len(rewarded), 3) if rewarded else None,
    )
