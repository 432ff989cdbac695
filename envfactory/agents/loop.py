"""The one agent loop: chat completions with tool calling until the finish tool accepts.

Every role (research, judge, verifier writer, red team) runs this loop with its own
prompt, tools and finish tool. Per turn: check the budgets, compact the history if it
nears the window, request a completion (with the retry policy), dispatch each tool call
and append its observation, record the step.

What real models do, and what the loop does about it (each recorded as a `StepCause` on
the turn, so a reader decides on types, not on observation text): tool arguments that are
not JSON or miss fields, unknown tools, a failing tool → an error observation; a reply
with text and no tool call → a nudge; a reply cut at max_tokens (finish_reason=length) →
its calls are not run (their arguments are cut too) and the model is told to send less;
the same failing turn again → a warning, and `stuck_after` identical failing turns (or
text-only turns) in a row end the run; a history near the window → compaction; a slow
endpoint, a dropped connection, 429/5xx → retries with backoff.

Invariants:
- the run ends only by an accepted finish call (`LoopResult`), an exhausted budget or a
  stuck model (`BudgetExhausted`, terminal) or a model failure the retries could not fix
  (`AgentRetryable` / `AgentError`); nothing a model sends crashes it; the trajectory's
  `stop_cause` says which;
- every outcome is recorded: the trajectory is stored in the artifact store before the
  loop returns or raises; a raised error carries `.trajectory` and `.trajectory_key`;
- settings arrive as an `AgentSettings`; nothing here reads the environment.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from envfactory.core.errors import AgentError, AgentRetryable, BudgetExhausted
from envfactory.core.models import AgentRole, FinishRefusal, StepCause, StopCause, Trajectory
from envfactory.core.settings import AgentSettings

from .compaction import compact
from .model import ChatModel, Completion, ContextTooLong, Message
from .prompts import load_prompt
from .recording import ArtifactSink, Recorder, put_model
from .retry import RetryPolicy
from .tokens import estimate_messages
from .tools import Toolbox, ToolResult

NUDGE = (
    "You answered without calling a tool. Continue the task with the tools, and call "
    "`finish` when you are done."
)
TRUNCATED = (
    "not executed: your reply was cut at the max_tokens limit ({limit} tokens), so this "
    "call's arguments are incomplete"
)
TRUNCATED_NOTE = (
    "Your last reply was cut at the max_tokens limit ({limit} tokens) and none of its tool "
    "calls ran. Send shorter calls: write large files in several parts, and keep any text "
    "before the calls brief."
)
REPEATED = (
    "You sent exactly the same failing call(s) as in your previous turn. Repeating them "
    "will fail again: read the error, then change the command, the arguments or the approach."
)


@dataclass
class Turn:
    """What dispatching one reply's calls came to."""

    done: Any = None  # the accepted finish payload
    observations: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    tool_s: list[float] = field(default_factory=list)
    causes: list[StepCause] = field(default_factory=list)
    refusal: FinishRefusal | None = None
    failed: bool = False  # some call failed (an error, or a shell command's non-zero exit)

    def add(self, name: str, res: ToolResult) -> None:
        self.observations.append(res.observation)
        if res.error:
            self.errors.append(f"{name}: {res.error[:300]}")
        if res.cause is not None and res.cause not in self.causes:
            self.causes.append(res.cause)
        self.refusal = res.refusal or self.refusal
        self.failed = self.failed or not res.ok


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
    _last_turn: tuple[Any, ...] | None = field(default=None, init=False)
    _streak: int = field(default=0, init=False)  # identical failing / text-only turns in a row

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
        except ContextTooLong as exc:
            raise self._fail(exc, "error", StopCause.CONTEXT_TOO_LONG) from None
        except AgentRetryable as exc:
            raise self._fail(exc, "error", StopCause.ENDPOINT_FAILED) from None
        except AgentError as exc:
            raise self._fail(exc, "error", StopCause.ENDPOINT_REFUSED) from None
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

    def _fail(self, exc: AgentError, reason: str, cause: StopCause | None = None) -> AgentError:
        cause = cause or getattr(exc, "stop_cause", None)
        traj = self.rec.build(stop_reason=reason, error=str(exc), stop_cause=cause)
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
            turn = await self._act(completion, messages)
            if turn.tool_s:
                meta["tool_s"] = turn.tool_s
            if meta.get("retries"):
                turn.causes.insert(0, StepCause.RETRIED)
            self._note_repeats(completion, turn, messages)
            self.rec.turn(
                completion,
                prompt_tokens=meta.pop("prompt_tokens"),
                completion_tokens=meta.pop("completion_tokens"),
                latency_s=latency,
                observations=turn.observations,
                errors=turn.errors,
                meta=meta,
                causes=tuple(turn.causes),
                refusal=turn.refusal,
            )
            if turn.done is not None:
                return turn.done
            self._stop_if_stuck()
            self._warn_if_low(messages)

    def _check_budgets(self) -> None:
        s = self.settings
        if self.rec.turns >= s.max_turns:
            raise _spent(
                StopCause.TURN_BUDGET,
                f"turn budget spent: {self.rec.turns} of {s.max_turns} turns",
                "raise max_turns for this role, or simplify the task",
            )
        if s.token_budget is not None and self.rec.total_tokens >= s.token_budget:
            raise _spent(
                StopCause.TOKEN_BUDGET,
                f"token budget spent: {self.rec.total_tokens} of {s.token_budget} tokens",
                "raise token_budget for this role",
            )
        if self.remaining_s() <= 0:
            raise _spent(
                StopCause.WALL_TIME,
                f"wall-time budget spent: {s.wall_time_s}s",
                "raise wall_time_s for this role",
            )

    def _note_repeats(self, c: Completion, turn: Turn, messages: list[Message]) -> None:
        """Count identical failing turns (and text-only turns) in a row; warn on a repeat."""
        if not c.tool_calls:
            key: tuple[Any, ...] | None = ("text-only",)
        elif turn.failed and turn.done is None:
            key = tuple((tc.name, tc.arguments) for tc in c.tool_calls)
        else:
            key = None
        self._streak = self._streak + 1 if key is not None and key == self._last_turn else 0
        self._last_turn = key
        if self._streak and c.tool_calls and c.finish_reason != "length":
            turn.causes.append(StepCause.REPEATED_FAILURE)
            messages.append({"role": "user", "content": REPEATED})

    def _stop_if_stuck(self) -> None:
        limit = self.settings.stuck_after
        if self._streak + 1 >= limit:
            what = (
                "text without a tool call"
                if self._last_turn == ("text-only",)
                else "the same failing call(s)"
            )
            raise _spent(
                StopCause.STUCK,
                f"the model sent {what} {limit} turns in a row",
                "a stronger model, a clearer prompt, or a higher stuck_after for this role",
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
            causes=(StepCause.COMPACTED,),
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

    async def _act(self, c: Completion, messages: list[Message]) -> Turn:
        turn = Turn()
        if not c.tool_calls:
            turn.causes.append(StepCause.NO_TOOL_CALL)
            if c.finish_reason == "length":
                turn.causes.append(StepCause.TRUNCATED)
                note = TRUNCATED_NOTE.format(limit=self.settings.max_tokens)
                messages.append({"role": "user", "content": note})
            else:
                messages.append({"role": "user", "content": NUDGE})
            return turn
        if c.finish_reason == "length":
            return self._truncated(c, messages, turn)
        for call in c.tool_calls:
            if turn.done is not None:
                turn.observations.append("(not executed: finish was already accepted)")
                messages.append(
                    {"role": "tool", "tool_call_id": call.id, "content": turn.observations[-1]}
                )
                continue
            t0 = self.clock()
            res = await self.toolbox.dispatch(call)
            turn.tool_s.append(round(self.clock() - t0, 4))
            messages.append({"role": "tool", "tool_call_id": call.id, "content": res.observation})
            turn.add(call.name, res)
            if res.finished:
                turn.done = res.payload
        return turn

    def _truncated(self, c: Completion, messages: list[Message], turn: Turn) -> Turn:
        """A reply cut at max_tokens: its calls' arguments are cut too; run none of them."""
        limit = self.settings.max_tokens
        for call in c.tool_calls:
            text = TRUNCATED.format(limit=limit)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": text})
            turn.observations.append(text)
        messages.append({"role": "user", "content": TRUNCATED_NOTE.format(limit=limit)})
        turn.causes.append(StepCause.TRUNCATED)
        turn.errors.append(f"reply cut at max_tokens={limit}; {len(c.tool_calls)} call(s) not run")
        turn.failed = True
        return turn

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


def _spent(cause: StopCause, message: str, hint: str) -> BudgetExhausted:
    exc = BudgetExhausted(message, hint=hint)
    exc.stop_cause = cause  # type: ignore[attr-defined]
    return exc


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
