"""Instructions a model writes for a mined commit, when a research model is configured.

The model is shown the commit message and the paths the fix touches, never the diff, and
asked for a task statement a developer could act on. What it answers is refused — and the
template's instruction used instead — when it is empty, too long, or quotes the fix: a
line the diff adds or removes (16 characters or more, whitespace ignored) or diff syntax.
Without a configured model nothing here runs: the template (taskdir.instruction) writes it.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from envfactory.agents.model import ChatModel

SYSTEM = (
    "You turn the message of a commit that fixed a bug or added a feature into the task "
    "statement a developer gets before the work is done. Say what is wrong or missing and "
    "what must be true when it is done, in plain prose: observable behaviour, names of the "
    "functions or commands involved where the message gives them. Never write code, a "
    "patch or a diff, and never say how the commit did it. At most 250 words."
)
MAX_CHARS = 4000
_MIN_QUOTED = 16
_DIFF_SYNTAX = re.compile(r"^(diff --git |@@ -\d|\+\+\+ |--- a/)", re.MULTILINE)


@dataclass(frozen=True)
class Written:
    text: str
    tokens: int
    model: str


#: (commit, message, fix paths, the fix's patch for the leak check) → Written, or None
InstructionWriter = Callable[[str, str, Sequence[str], str], Written | None]


def quoted_fix(text: str, patch: str) -> str | None:
    """A line of `patch` (added or removed) that `text` quotes, or diff syntax in `text`."""
    if _DIFF_SYNTAX.search(text):
        return "diff syntax"
    flat = _squash(text)
    for line in patch.splitlines():
        if line[:1] not in "+-" or line.startswith(("+++", "---")):
            continue
        body = _squash(line[1:])
        if len(body) >= _MIN_QUOTED and body in flat:
            return line[1:].strip()
    return None


def _squash(s: str) -> str:
    return re.sub(r"\s+", "", s)


def model_writer(model: ChatModel, *, timeout_s: float = 120.0) -> InstructionWriter:
    """A writer asking `model` (see module docstring); its refusals return None."""

    def write(commit: str, message: str, paths: Sequence[str], patch: str) -> Written | None:
        task = (
            f"Commit {commit[:12]} message:\n\n{message.strip()}\n\n"
            f"Files the work touches (tests excluded): {', '.join(paths) or 'none'}\n\n"
            "Write the task statement."
        )
        messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": task}]
        done = asyncio.run(
            model.complete(messages, None, max_tokens=600, temperature=0.0, timeout_s=timeout_s)
        )
        text = done.text.strip()
        if not text or len(text) > MAX_CHARS or quoted_fix(text, patch):
            return None
        tokens = (done.prompt_tokens or 0) + (done.completion_tokens or 0)
        return Written(text=text, tokens=tokens, model=model.name)

    return write
