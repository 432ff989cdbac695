"""The one agent loop: chat completions with tool calling until the finish tool accepts.

Every role (research, judge, verifier writer, red team) runs this loop with its own
prompt, tools and finish tool. Per turn: check the budgets, compact the history if it
nears the window, request a completion (with the retry policy), dispatch each tool call
and append its observation, record the step.

Invariants:
- the run ends only by an accepted finish call (`LoopResult`), an exhausted budget
  (`BudgetExhausted`, terminal) or a model failure the retries could not fix
  (`AgentRetryable` / `AgentError`); nothing a model sends crashes it;
- every outcome is recorded: the trajectory is stored in the artifact store before the
  loop returns or raises; a raised error carries `.trajectory` and `.trajectory_key`;
- settings arrive as an `AgentSettings`; nothing here reads the environment.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from envfactory.core.errors import AgentError, BudgetExhausted
from envfactory.core.models import AgentRole, Trajectory
from envfactory.core.settings import AgentSettings

from .compaction import compact
from .model import ChatModel, Completion, ContextTooLong, Message
from .prompts import load_prompt
from .recording import ArtifactSink, Recorder, put_model
from .retry import RetryPolicy
from .tokens import estimate_messages
from .tools import Toolbox

NUDGE = (
    "You answered without calling a tool. Continue the task with the tools, and call "
    "`finish` when you are done."
)


@dataclass(frozen=True)
class LoopResult:
    payload: Any  # what the finish tool accepted (role-specific)
    trajectory: Trajectory
    trajectory_key: str | None


@dataclass
class AgentLoop:
    model: ChatModel
    toolbox: Toolbox
    settings: AgentSettings
    role: AgentRole
    store: ArtifactSink | None = None
    env_id: str | None = None
    prompt_version: str | None = None
    retry: RetryPolicy | None = None
    clock: Callable[[], float] = time.monotonic
    keep_recent: int = 4
    _last_prompt: int | None = field(default=None, init=False)
    _counted_upto: int = field(default=0, init=False)
    _warned: bool = field(default=False, init=False)

    def __post_init__(self) -> None:
        if self.retry is None:
            self.retry = RetryPolicy(max_retries=self.settings.max_retries)
        self.rec = Recorder(
            role=self.role,
            model=self.model.name,
            env_id=self.env_id,
            prompt_version=self.prompt_version,
            clock=self.clock,
        )

    def remaining_s(self) -> float:
        return self.settings.wall_time_s - (self.clock() - self.rec.started)

    async def run(self, system: str, task: str) -> LoopResult:
        self.rec.system_prompt, self.rec.task_prompt = system, task
        messages: list[Message] = [
            {"role": "system", "content": system},
            {"role": "user", "content": task},
        ]
        try:
            payload = await self._drive(messages)
        except BudgetExhausted as exc:
            raise self._fail(exc, "budget") from None
        except AgentError as exc:
            raise self._fail(exc, "error") from None
        summary = str(getattr(payload, "summary", "") or "")
        solved = getattr(payload, "solved", None)
        traj = self.rec.build(
            stop_reason="finished",
            summary=summary,
            claimed_solved=solved if isinstance(solved, bool) else None,
        )
        return LoopResult(payload, traj, self._store(traj))

    def _store(self, traj: Trajectory) -> str | None:
        return put_model(self.store, traj) if self.store is not None else None

    def _fail(self, exc: AgentError, reason: str) -> AgentError:
        traj = self.rec.build(stop_reason=reason, error=str(exc))
        exc.trajectory = traj  # type: ignore[attr-defined]
        exc.trajectory_key = self._store(traj)  # type: ignore[attr-defined]
        return exc

    async def _drive(self, messages: list[Message]) -> Any:
        while True:
            self._check_budgets()
            await self._maybe_compact(messages)
            completion, latency, meta = await self._request(messages)
            messages.append(_assistant_message(completion))
            self._counted_upto = len(messages)
            done, observations, errors, tool_s = await self._act(completion, messages)
            if tool_s:
                meta["tool_s"] = tool_s
            self.rec.turn(
                completion,
                prompt_tokens=meta.pop("prompt_tokens"),
                completion_tokens=meta.pop("completion_tokens"),
                latency_s=latency,
                observations=observations,
                errors=errors,
                meta=meta,
            )
            if done is not None:
                return done
            self._warn_if_low(messages)

    def _check_budgets(self) -> None:
        s = self.settings
        if self.rec.turns >= s.max_turns:
            raise BudgetExhausted(
                f"turn budget spent: {self.rec.turns} of {s.max_turns} turns",
                hint="raise max_turns for this role, or simplify the task",
            )
        if s.token_budget is not None and self.rec.total_tokens >= s.token_budget:
            raise BudgetExhausted(
                f"token budget spent: {self.rec.total_tokens} of {s.token_budget} tokens",
                hint="raise token_budget for this role",
            )
        if self.remaining_s() <= 0:
            raise BudgetExhausted(
                f"wall-time budget spent: {s.wall_time_s}s", hint="raise wall_time_s for this role"
            )

    def _context_estimate(self, messages: list[Message]) -> int:
        if self._last_prompt is None:
            return estimate_messages(messages)
        return self._last_prompt + estimate_messages(messages[self._counted_upto :])

    async def _maybe_compact(self, messages: list[Message], *, force: bool = False) -> bool:
        s = self.settings
        before = self._context_estimate(messages)
        if not force and before + s.max_tokens <= s.compact_at * s.context_window:
            return False
        t0 = self.clock()
        done = await compact(
            messages,
            self.model,
            instructions=load_prompt("compaction.v1"),
            keep_recent=self.keep_recent,
            max_tokens=min(s.max_tokens, 2048),
            timeout_s=max(1.0, min(s.request_timeout_s, self.remaining_s())),
            context_window=s.context_window,
        )
        if done is None:
            return False
        messages[:] = done.messages
        self._last_prompt, self._counted_upto = None, len(messages)
        self.rec.add_usage(done.prompt_tokens, done.completion_tokens)
        self.rec.note(
            done.summary,
            prompt_tokens=done.prompt_tokens,
            completion_tokens=done.completion_tokens,
            latency_s=self.clock() - t0,
            meta={
                "kind": "compaction",
                "dropped_messages": done.dropped,
                "estimate_before": before,
                "estimate_after": estimate_messages(messages),
                "fallback": done.fallback,
            },
        )
        return True

    async def _request(self, messages: list[Message]) -> tuple[Completion, float, dict[str, Any]]:
        s, retries = self.settings, []
        tools = self.toolbox.schemas()

        async def call() -> Completion:
            timeout = max(0.5, min(s.request_timeout_s, self.remaining_s()))
            return await self.model.complete(
                messages,
                tools,
                max_tokens=s.max_tokens,
                temperature=s.temperature,
                timeout_s=timeout,
            )

        def on_retry(attempt: int, exc: AgentError, wait: float) -> None:
            retries.append(f"attempt {attempt}: {exc.message} (waited {wait:.2f}s)")

        t0 = self.clock()
        assert self.retry is not None
        try:
            c = await self.retry.run(call, remaining_s=self.remaining_s, on_retry=on_retry)
        except ContextTooLong:
            if not await self._maybe_compact(messages, force=True):
                raise
            c = await self.retry.run(call, remaining_s=self.remaining_s, on_retry=on_retry)
        latency = self.clock() - t0
        p = c.prompt_tokens if c.prompt_tokens is not None else estimate_messages(messages)
        o = (
            c.completion_tokens
            if c.completion_tokens is not None
            else estimate_messages([_assistant_message(c)])
        )
        self._last_prompt = p + o
        self.rec.add_usage(p, o)
        meta: dict[str, Any] = {
            "prompt_tokens": p,
            "completion_tokens": o,
            "finish_reason": c.finish_reason,
            "usage_reported": c.prompt_tokens is not None,
        }
        if retries:
            meta["retries"] = retries
        return c, latency, meta

    async def _act(
        self, c: Completion, messages: list[Message]
    ) -> tuple[Any, list[str], list[str], list[float]]:
        if not c.tool_calls:
            messages.append({"role": "user", "content": NUDGE})
            return None, [], [], []
        observations: list[str] = []
        errors: list[str] = []
        tool_s: list[float] = []
        done = None
        for call in c.tool_calls:
            if done is not None:
                observations.append("(not executed: finish was already accepted)")
                continue
            t0 = self.clock()
            res = await self.toolbox.dispatch(call)
            tool_s.append(round(self.clock() - t0, 4))
            messages.append({"role": "tool", "tool_call_id": call.id, "content": res.observation})
            observations.append(res.observation)
            if res.error:
                errors.append(f"{call.name}: {res.error[:300]}")
            if res.finished:
                done = res.payload
        return done, observations, errors, tool_s

    def _warn_if_low(self, messages: list[Message]) -> None:
        left = self.settings.max_turns - self.rec.turns
        if not self._warned and 0 < left <= 2:
            self._warned = True
            messages.append(
                {
                    "role": "user",
                    "content": f"Budget notice: {left} turn(s) left. "
                    "Call `finish` now with your best result.",
                }
            )


def _assistant_message(c: Completion) -> Message:
    # content may be null only beside tool calls; some servers refuse a null otherwise
    msg: Message = {
        "role": "assistant",
        "content": c.text if (c.text or not c.tool_calls) else None,
    }
    if c.tool_calls:
        msg["tool_calls"] = [
            {
                "id": tc.id,
                "type": "function",
                "function": {"name": tc.name, "arguments": tc.arguments},
            }
            for tc in c.tool_calls
        ]
    return msg
