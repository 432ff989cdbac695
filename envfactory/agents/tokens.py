"""Token estimates when the server reports no usage: about four characters per token.

Deliberately crude and deterministic; the loop prefers the server's own `usage` numbers
and falls back to this only for text the server has not counted yet.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

#: Per-message overhead of the chat format (role markers, separators).
MESSAGE_OVERHEAD = 4


def estimate_text(text: str) -> int:
    return (len(text) + 3) // 4


def estimate_message(message: dict[str, Any]) -> int:
    n = MESSAGE_OVERHEAD + estimate_text(str(message.get("content") or ""))
    for tc in message.get("tool_calls") or ():
        n += estimate_text(json.dumps(tc.get("function", {})))
    return n


def estimate_messages(messages: Sequence[dict[str, Any]]) -> int:
    return sum(estimate_message(m) for m in messages)
