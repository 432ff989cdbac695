"""The model interface the agent loop talks to, and its chat-completions implementation.

`ChatModel.complete` takes OpenAI-format messages and tool schemas and returns one
`Completion`. Two implementations sit behind it: `OpenAIChatModel` (any server that
speaks chat completions: OpenAI, SGLang, vLLM, or the local replay server in tests) and
`ScriptedModel` (replays recorded tool calls offline).

Invariants:
- the SDK's own retries are off (`max_retries=0`): the retry policy lives in one place,
  `envfactory.agents.retry`, so the count and the backoff are ours and testable;
- every transport failure leaves this module as `AgentRetryable` (429, 5xx, timeouts,
  connection errors) or `AgentError` (anything a retry cannot fix, e.g. 400/401/404);
- the API key is passed in; this module never reads the environment.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from envfactory.core.errors import AgentError, AgentRetryable, raise_as

Message = dict[str, Any]
ToolSchema = dict[str, Any]

#: Status codes a retry can fix: request timeout, conflict, rate limit, server errors.
RETRYABLE_STATUS = frozenset({408, 409, 429}) | frozenset(range(500, 600))


@dataclass(frozen=True)
class CallSpec:
    """One tool call as the model emitted it; `arguments` is raw text (may be malformed)."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class Completion:
    text: str = ""
    tool_calls: tuple[CallSpec, ...] = ()
    prompt_tokens: int | None = None  # None when the server reported no usage
    completion_tokens: int | None = None
    finish_reason: str | None = None


class ContextTooLong(AgentError):
    """The server refused the request because the prompt exceeds the model's window."""


class ChatModel(Protocol):
    name: str

    async def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSchema] | None,
        *,
        max_tokens: int,
        temperature: float,
        timeout_s: float,
    ) -> Completion:
        """One chat-completions request. `tools=None` asks for plain text (summaries)."""
        ...


@dataclass
class OpenAIChatModel:
    """Chat completions through the `openai` package against `base_url`."""

    name: str
    api_key: str
    base_url: str | None = None
    _client: Any = field(default=None, init=False, repr=False)

    def _get_client(self) -> Any:
        if self._client is None:
            from openai import AsyncOpenAI  # deferred: importing openai costs ~0.5 s

            self._client = AsyncOpenAI(
                api_key=self.api_key or "unused", base_url=self.base_url, max_retries=0
            )
        return self._client

    async def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSchema] | None,
        *,
        max_tokens: int,
        temperature: float,
        timeout_s: float,
    ) -> Completion:
        body: dict[str, Any] = {
            "model": self.name,
            "messages": list(messages),
            "max_tokens": max_tokens,
            "temperature": temperature,
        }
        if tools:
            body["tools"] = list(tools)
            body["tool_choice"] = "auto"
        from openai.types.chat import ChatCompletion

        try:
            # The raw `post` (the SDK's documented way to send a body as-is) rather than
            # `chat.completions.create`: our messages are already wire-format dicts, and the
            # SDK's typed transform of them cost ~150 ms per turn on an 8 kB history.
            resp = await self._get_client().post(
                "/chat/completions",
                cast_to=ChatCompletion,
                body=body,
                options={"timeout": timeout_s},
            )
        except Exception as exc:  # translated, never swallowed
            raise_as(translate_error(exc), exc)
        return _to_completion(resp)

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None


def _to_completion(resp: Any) -> Completion:
    if not getattr(resp, "choices", None):
        raise AgentRetryable("the server answered with no choices", hint="check the model server")
    choice = resp.choices[0]
    msg = choice.message
    calls = []
    for i, tc in enumerate(msg.tool_calls or ()):
        fn = getattr(tc, "function", None)
        if fn is None:
            continue
        calls.append(
            CallSpec(id=tc.id or f"call_{i}", name=fn.name or "", arguments=fn.arguments or "")
        )
    usage = getattr(resp, "usage", None)
    return Completion(
        text=msg.content or "",
        tool_calls=tuple(calls),
        prompt_tokens=getattr(usage, "prompt_tokens", None) if usage else None,
        completion_tokens=getattr(usage, "completion_tokens", None) if usage else None,
        finish_reason=choice.finish_reason,
    )


def translate_error(exc: Exception) -> AgentError:
    """Map an SDK exception to our tree; the result carries `retry_after_s` when known."""
    import openai

    if isinstance(exc, AgentError):
        return exc
    if isinstance(exc, openai.APITimeoutError):
        return AgentRetryable(f"model request timed out: {exc}")
    if isinstance(exc, openai.APIConnectionError):
        return AgentRetryable(f"cannot reach the model server: {exc}")
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        text = _status_text(exc)
        if status in RETRYABLE_STATUS:
            err: AgentError = AgentRetryable(f"model server answered {status}: {text}")
            err.retry_after_s = _retry_after(exc)  # type: ignore[attr-defined]
            return err
        if status == 400 and _looks_like_context_overflow(text):
            return ContextTooLong(f"model server answered 400: {text}")
        return AgentError(
            f"model server answered {status}: {text}",
            hint="check the model name, base_url and API key in the agent settings",
        )
    if isinstance(exc, openai.APIResponseValidationError | ValueError):
        return AgentRetryable(f"malformed response from the model server: {exc}")
    return AgentError(f"model request failed: {type(exc).__name__}: {exc}")


def _status_text(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])[:500]
    return str(getattr(exc, "message", exc))[:500]


def _retry_after(exc: Any) -> float | None:
    resp = getattr(exc, "response", None)
    headers = getattr(resp, "headers", None)
    if headers is None:
        return None
    raw = headers.get("retry-after")
    try:
        return float(raw) if raw is not None else None
    except ValueError:
        return None


def _looks_like_context_overflow(text: str) -> bool:
    low = text.lower()
    return "context" in low and ("length" in low or "window" in low or "too long" in low)
