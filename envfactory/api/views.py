"""Read models shared by the JSON API and the HTML pages, built from the store.

Invariants: read-only (one read transaction per view); the reference solution and the
verifier's files are never part of a view (the API serves reviewers, but a page is easy
to share, and neither is needed to judge a shortcut); a list the API or a page serves is
one bounded page of summaries (`paging.py`). Only `queue_view`, the CLI's `review list`,
reads the whole queue. A seed's detail holds what can be megabytes by reference: its
files as download links, its description inline only up to `DESCRIPTION_INLINE_CHARS`
(a link always), so no detail answer is larger than a few KiB plus that.
"""

from __future__ import annotations

from datetime import datetime
from urllib.parse import quote

from pydantic import BaseModel, Field

from envfactory.core.errors import NotFound
from envfactory.core.models import (
    AgentRole,
    Constraints,
    EnvStatus,
    EnvSummary,
    Evidence,
    GateReport,
    PackSummary,
    PathChange,
    ReviewAudit,
    ReviewItem,
    ReviewState,
    ReviewSummary,
    SeedHistory,
    ShortcutFinding,
)
from envfactory.store import Store, Tx

from . import paging
from .paging import ListPage

EXCERPT_CONTEXT = 2  # steps shown either side of each suspicious step
#: a longer description is not inlined in a seed's detail, only linked
DESCRIPTION_INLINE_CHARS = 64 * 1024


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
    #: what a probe changed in the state it was applied to (the evidence's "changed:" lines)
    changes: list[str]
    excerpt: list[ExcerptStep]
    trajectory_id: str | None
    claimed_by: str | None
    lease_until: datetime | None
    audit: list[ReviewAudit]


class QueueView(BaseModel):
    """The whole queue with its items in full (the CLI's `review list`)."""

    items: list[ReviewItem]
    counts: dict[str, int]


class QueuePage(ListPage[ReviewSummary]):
    """One page of the queue, and how many items are in each state (all pages)."""

    counts: dict[str, int]


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


class AttachmentLink(BaseModel):
    """A seed's file, by reference: GET `url` (same bearer token) streams its bytes."""

    path: str
    key: str
    size: int
    url: str


class SeedDetail(BaseModel):
    """A seed as `GET /api/seeds/{id}` answers it: its fields, and what can be large (the
    files, a long description) as links to their own streamed downloads."""

    id: str
    title: str
    domain: str
    #: the description itself when it has at most DESCRIPTION_INLINE_CHARS characters,
    #: else null: read it from `description_url`
    description: str | None
    description_chars: int
    description_url: str
    attachments: list[AttachmentLink]
    repository: str | None = None
    history: SeedHistory | None = None
    constraints: Constraints
    source: str | None = None
    content_hash: str
    created_at: datetime


def seed_url(seed_id: str, tail: str) -> str:
    return f"/api/seeds/{quote(seed_id, safe='')}/{tail}"


def seed_detail(store: Store, seed_id: str) -> SeedDetail:
    with store.session(readonly=True) as tx:
        doc, chars = tx.seeds.detail(seed_id)
        inline = tx.seeds.description(seed_id) if chars <= DESCRIPTION_INLINE_CHARS else None
    links = [
        AttachmentLink(**a, url=seed_url(seed_id, "files/" + quote(a["path"])))
        for a in doc.pop("attachments", [])
    ]
    return SeedDetail(
        **doc,
        description=inline,
        description_chars=chars,
        description_url=seed_url(seed_id, "description"),
        attachments=links,
    )


def seed_file(store: Store, seed_id: str, path: str) -> AttachmentLink:
    """The seed's attachment at `path`; NotFound naming the seed's files if none is."""
    for link in seed_detail(store, seed_id).attachments:
        if link.path == path:
            return link
    raise NotFound(
        f"seed {seed_id} has no file {path!r}",
        hint="`GET /api/seeds/{id}` lists its files and their download links",
    )


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


def _changed_lines(evidence: Evidence | None) -> list[str]:
    """The evidence's lines saying what a probe changed (`verifiers.evidence.state_changes`)."""
    text = evidence.verifier_output if evidence else ""
    prefix = "changed: "
    return [line[len(prefix) :] for line in (text or "").splitlines() if line.startswith(prefix)]


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
            changes=_changed_lines(evidence),
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


def queue_page(
    store: Store, state: ReviewState | None, env_id: str | None, cursor: str | None, limit: int
) -> QueuePage:
    filters = {"state": state.value if state else None, "env_id": env_id}
    with store.session(readonly=True) as tx:
        page = paging.listed(
            paging.REVIEWS,
            filters,
            cursor,
            lambda after: tx.reviews.list_page(
                state=state, env_id=env_id, after=after, limit=limit
            ),
        )
        counts = tx.reviews.count_by_state(env_id=env_id)
    return QueuePage(
        items=page.items,
        next_cursor=page.next_cursor,
        counts={s.value: n for s, n in counts.items()},
    )


def env_page(
    store: Store,
    status: EnvStatus | None,
    cursor: str | None,
    limit: int,
    seed_id: str | None = None,
) -> ListPage[EnvSummary]:
    return paging.listed(
        paging.ENVIRONMENTS,
        {"status": status.value if status else None, "seed_id": seed_id},
        cursor,
        lambda after: store.environments.list_page(
            status=status, seed_id=seed_id, after=after, limit=limit
        ),
    )


def pack_page(store: Store, cursor: str | None, limit: int) -> ListPage[PackSummary]:
    return paging.listed(
        paging.PACKS, {}, cursor, lambda after: store.packs.list_page(after=after, limit=limit)
    )


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
            suite=spec.origin.suite if spec.origin else None,
            source=spec.source,
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
