"""The one retry policy for model requests: bounded attempts, exponential backoff, jitter.

Only `AgentRetryable` is retried (429, 5xx, timeouts, connection errors); anything else
propagates at once. A server's `Retry-After` is honoured up to `max_delay_s`. No delay
ever runs past the caller's deadline: when the next sleep would, the last error is raised.
`sleep` is injectable so tests observe the schedule without waiting for it.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TypeVar

from envfactory.core.errors import AgentRetryable

T = TypeVar("T")
Sleep = Callable[[float], Awaitable[None]]


@dataclass
class RetryPolicy:
    max_retries: int = 4
    base_delay_s: float = 0.5
    max_delay_s: float = 20.0
    jitter: float = 0.25  # fraction of the delay, added at random
    sleep: Sleep = asyncio.sleep
    rng: random.Random = field(default_factory=random.Random)

    def delay(self, attempt: int, retry_after_s: float | None = None) -> float:
        """Seconds to wait before retry number `attempt` (1-based)."""
        if retry_after_s is not None and retry_after_s >= 0:
            return min(retry_after_s, self.max_delay_s)
        raw = min(self.base_delay_s * 2.0 ** (attempt - 1), self.max_delay_s)
        return raw * (1 + self.jitter * self.rng.random())

    async def run(
        self,
        call: Callable[[], Awaitable[T]],
        *,
        remaining_s: Callable[[], float] | None = None,
        on_retry: Callable[[int, AgentRetryable, float], None] | None = None,
    ) -> T:
        """Call `call` until it succeeds, a non-retryable error, or the retries run out."""
        attempt = 0
        while True:
            try:
                return await call()
            except AgentRetryable as exc:
                attempt += 1
                if attempt > self.max_retries:
                    raise AgentRetryable(
                        f"gave up after {attempt} attempts: {exc.message}",
                        hint="the model server kept failing; check it, or raise max_retries",
                    ) from exc
                wait = self.delay(attempt, getattr(exc, "retry_after_s", None))
                if remaining_s is not None and wait >= remaining_s():
                    raise
                if on_retry is not None:
                    on_retry(attempt, exc, wait)
                await self.sleep(wait)
