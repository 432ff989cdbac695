"""Context compaction: when the history nears the window, summarise the older turns.

The history is `[system, task, block, block, ...]` where a block is one assistant
message and the tool / user messages that answer it. Compaction keeps the system and
task messages and the most recent blocks verbatim, asks the model (without tools) to
summarise the older blocks, and puts that summary in their place. Cuts fall only on
block boundaries, so every tool message still follows the assistant call it answers.
If the summary request fails, a mechanical summary (the calls made) is used instead:
compaction never ends a run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from envfactory.core.errors import AgentError

from .model import ChatModel, Message
from .scripted import mechanical_summary
from .tokens import estimate_messages

SUMMARY_PREFIX = "[Summary of the earlier steps of this task]\n"


@dataclass(frozen=True)
class Compacted:
    messages: list[Message]
    summary: str
    dropped: int  # messages replaced by the summary
    prompt_tokens: int
    completion_tokens: int
    fallback: bool  # the model's summary failed; a mechanical one was used


def blocks(history: Sequence[Message]) -> list[list[Message]]:
    """Group messages after system+task into blocks that start at assistant messages."""
    out: list[list[Message]] = []
    for m in history:
        if m.get("role") == "assistant" or not out:
            out.append([m])
        else:
            out[-1].append(m)
    return out


def render(messages: Sequence[Message], per_message: int = 2000, total: int = 60_000) -> str:
    lines: list[str] = []
    for m in messages:
        content = str(m.get("content") or "")
        if len(content) > per_message:
            content = content[: per_message // 2] + " [...] " + content[-per_message // 2 :]
        calls = [
            f"{tc['function']['name']}({tc['function']['arguments'][:per_message]})"
            for tc in m.get("tool_calls") or ()
        ]
        lines.append(
            f"{m.get('role', '?').upper()}: {content}" + (f" CALLS {calls}" if calls else "")
        )
    text = "\n".join(lines)
    return (
        text if len(text) <= total else text[: total // 4] + "\n[...]\n" + text[-3 * total // 4 :]
    )


async def compact(
    messages: list[Message],
    model: ChatModel,
    *,
    instructions: str,
    keep_recent: int = 4,
    max_tokens: int = 1024,
    timeout_s: float = 60.0,
    context_window: int = 128_000,
) -> Compacted | None:
    """A shorter history, or None when there is nothing older than the recent blocks."""
    head, rest = messages[:2], messages[2:]
    groups = blocks(rest)
    keep = max(1, min(keep_recent, len(groups) - 1))
    old_groups, recent_groups = groups[:-keep], groups[-keep:]
    if not old_groups:
        return None
    old = [m for g in old_groups for m in g]
    recent = [m for g in recent_groups for m in g]
    task = str(head[-1].get("content") or "")
    request = [
        {"role": "system", "content": instructions},
        {
            "role": "user",
            "content": f"TASK:\n{task}\n\nTRANSCRIPT TO SUMMARISE:\n"
            f"{render(old, total=context_window * 2)}",
        },
    ]
    fallback = False
    p_tok = c_tok = 0
    try:
        done = await model.complete(
            request, None, max_tokens=max_tokens, temperature=0.0, timeout_s=timeout_s
        )
        summary = done.text.strip()
        p_tok = done.prompt_tokens or estimate_messages(request)
        c_tok = done.completion_tokens or 0
        if not summary:
            raise AgentError("the model returned an empty summary")
    except AgentError:
        summary, fallback = mechanical_summary(old), True
    new = head + [{"role": "user", "content": SUMMARY_PREFIX + summary}] + recent
    return Compacted(new, summary, len(old), p_tok, c_tok, fallback)
