"""Agent eval runs round-trip through the store and list newest first, per role."""

from __future__ import annotations

from datetime import timedelta

import pytest

from envfactory.core.errors import Conflict, NotFound
from envfactory.core.models import AgentRole, EvalAttempt, EvalRun, FailureCause, utcnow


def _run(eval_id: str, role: AgentRole, minutes_ago: int) -> EvalRun:
    return EvalRun(
        id=eval_id,
        role=role,
        model="local-test",
        k=2,
        source="examples/seeds",
        created_at=utcnow() - timedelta(minutes=minutes_ago),
        attempts=(
            EvalAttempt(target="a", index=0, success=True, turns=3, prompt_tokens=10),
            EvalAttempt(
                target="a", index=1, success=False, cause=FailureCause.BUILD_FAILED, detail="x"
            ),
        ),
    )


def test_an_eval_run_round_trips_and_lists_newest_first(store):
    old, new = _run("eval-old", AgentRole.JUDGE, 5), _run("eval-new", AgentRole.RESEARCH, 1)
    store.agent_evals.add(old)
    store.agent_evals.add(new)
    assert store.agent_evals.get("eval-old") == old
    assert [r.id for r in store.agent_evals.list()] == ["eval-new", "eval-old"]
    assert [r.id for r in store.agent_evals.list(role=AgentRole.JUDGE)] == ["eval-old"]
    assert store.agent_evals.get("eval-new").totals().causes == {"build_failed": 1}


def test_a_missing_or_repeated_eval_id_is_a_clear_error(store):
    with pytest.raises(NotFound, match="agents eval list"):
        store.agent_evals.get("eval-nope")
    store.agent_evals.add(_run("eval-1", AgentRole.JUDGE, 0))
    with pytest.raises(Conflict):
        store.agent_evals.add(_run("eval-1", AgentRole.JUDGE, 0))
