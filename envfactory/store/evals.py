"""Agent eval runs (`EvalRun`): stored whole, listed newest first."""

from __future__ import annotations

from sqlalchemy import select

from envfactory.core.errors import NotFound
from envfactory.core.models import AgentRole, EvalRun

from .repositories import _Repo, dump
from .schema import AgentEvalRow


class AgentEvalRepo(_Repo):
    def add(self, run: EvalRun) -> None:
        row = AgentEvalRow(
            id=run.id,
            role=run.role.value,
            model=run.model,
            created_at=run.created_at,
            doc=dump(run),
        )
        self._insert(row, f"agent eval {run.id}")

    def get(self, eval_id: str) -> EvalRun:
        row = self.s.get(AgentEvalRow, eval_id)
        if row is None:
            raise NotFound(
                f"no agent eval {eval_id!r}", hint="`envfactory agents eval list` shows the ids"
            )
        return EvalRun.model_validate(row.doc)

    def list(self, *, role: AgentRole | None = None, limit: int = 50) -> list[EvalRun]:
        q = select(AgentEvalRow).order_by(AgentEvalRow.created_at.desc(), AgentEvalRow.id)
        if role is not None:
            q = q.where(AgentEvalRow.role == role.value)
        return [EvalRun.model_validate(r.doc) for r in self.s.scalars(q.limit(limit))]
