"""A status query that fails once (a starved worker trips Temporal's deadlock detector)
is asked again instead of ending `envfactory demo` / `status` with a traceback; one that
keeps failing still raises."""

from __future__ import annotations

import asyncio

import pytest
from temporalio.client import WorkflowQueryFailedError

from workflows import client


def test_a_query_that_fails_once_is_asked_again(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(client, "QUERY_RETRY_S", (0.0, 0.0))
    calls: list[int] = []

    async def ask() -> str:
        calls.append(1)
        if len(calls) == 1:
            raise WorkflowQueryFailedError("Potential deadlock detected")
        return "status"

    assert asyncio.run(client._query(ask)) == "status"
    assert len(calls) == 2


def test_a_query_that_keeps_failing_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(client, "QUERY_RETRY_S", (0.0, 0.0))
    calls: list[int] = []

    async def ask() -> str:
        calls.append(1)
        raise WorkflowQueryFailedError("query handler raised")

    with pytest.raises(WorkflowQueryFailedError):
        asyncio.run(client._query(ask))
    assert len(calls) == 3
