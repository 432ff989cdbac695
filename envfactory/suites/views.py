"""What `envfactory task list / show` and `GET /api/tasks` show of a stored task.

Read-only, one transaction per call. `outcome` is the latest gate report's `outcome`
(`TaskVerdict`: passed, rejected, reference-failed, verifier-unrunnable), None before the
first validation. Like the review views, a task view never holds the reference solution
or the verifier's files. `task_page` (the API's) is one keyset page from the store's
summary columns plus each task's latest report; `task_summaries` (the CLI's) is every task.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel

from envfactory.core.errors import InvalidInput
from envfactory.core.models import EnvStatus, ReviewState, TaskOrigin, TaskVerdict
from envfactory.store import Key, Page


class TaskSummary(BaseModel):
    env_id: str
    name: str
    suite: str | None
    status: EnvStatus
    source: str
    outcome: TaskVerdict | None
    updated_at: datetime


class TaskDetail(BaseModel):
    summary: TaskSummary
    origin: TaskOrigin | None
    instruction: str
    verifier_entry: str | None
    verifier_author: str | None
    gate_reasons: list[str]
    gate_report_at: datetime | None
    findings: int
    open_review_items: list[str]


def _summary(tx: Any, record: Any) -> TaskSummary:
    spec = record.spec
    report = tx.gate_reports.latest(spec.id)
    return TaskSummary(
        env_id=spec.id,
        name=spec.name,
        suite=spec.origin.suite if spec.origin else None,
        status=record.status,
        source=spec.source,
        outcome=report.outcome if report else None,
        updated_at=record.updated_at,
    )


def task_summaries(
    store: Any, *, suite: str | None = None, status: EnvStatus | None = None
) -> list[TaskSummary]:
    """Imported tasks (environments with an origin), optionally of one suite / status."""
    with store.session(readonly=True) as tx:
        records = tx.environments.list(suite=suite, status=status)
        return [_summary(tx, r) for r in records if r.spec.origin is not None]


def task_page(
    store: Any,
    *,
    suite: str | None = None,
    status: EnvStatus | None = None,
    after: Key | None = None,
    limit: int = 50,
) -> Page[TaskSummary]:
    """One page of imported tasks, by env id (`after`: the previous page's `next_key`)."""
    with store.session(readonly=True) as tx:
        envs = tx.environments.list_page(
            suite=suite, status=status, imported=True, after=after, limit=limit
        )
        items = []
        for e in envs.items:
            report = tx.gate_reports.latest(e.id)
            items.append(
                TaskSummary(
                    env_id=e.id,
                    name=e.name,
                    suite=e.suite,
                    status=e.status,
                    source=e.source,
                    outcome=report.outcome if report else None,
                    updated_at=e.updated_at,
                )
            )
    return Page(items, envs.next_key)


def task_detail(store: Any, env_id: str) -> TaskDetail:
    """One task (any stored environment); `NotFound` for an unknown id."""
    with store.session(readonly=True) as tx:
        record = tx.environments.record(env_id)
        verifier = tx.verifiers.get(env_id) if tx.verifiers.versions(env_id) else None
        report = tx.gate_reports.latest(env_id)
        findings = tx.findings.list(env_id=env_id)
        still_open = tx.reviews.list(state=ReviewState.OPEN, env_id=env_id)
        summary = _summary(tx, record)
    return TaskDetail(
        summary=summary,
        origin=record.spec.origin,
        instruction=record.spec.instruction,
        verifier_entry=verifier.entry if verifier else None,
        verifier_author=verifier.provenance.author if verifier else None,
        gate_reasons=list(report.reasons) if report else [],
        gate_report_at=report.created_at if report else None,
        findings=len(findings),
        open_review_items=[i.id for i in still_open],
    )


def resolve_env_ids(store: Any, env_ids: list[str], suite: str | None) -> list[str]:
    """The tasks a validation is asked for: every task of `suite`, or `env_ids`, each
    checked to be stored (`NotFound` names a missing one; `InvalidInput` for neither/both
    or an empty suite)."""
    if bool(env_ids) == bool(suite):
        raise InvalidInput(
            "name the tasks: either --suite NAME or one or more ENV_IDs",
            hint="`envfactory task list` shows suites and ids",
        )
    if suite:
        ids = [r.env_id for r in task_summaries(store, suite=suite)]
        if not ids:
            raise InvalidInput(
                f"suite {suite!r} has no stored tasks",
                hint="envfactory task import DIR --suite NAME",
            )
        return ids
    with store.session(readonly=True) as tx:
        for env_id in env_ids:
            tx.environments.record(env_id)
    return list(dict.fromkeys(env_ids))
