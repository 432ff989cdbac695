"""Split a solution script into ordered steps.

Rules (docs/task-formats.md):
- With markers: every line that starts with `# step` (any case, e.g. `# step 2: migrate
  the schema`) opens a step; the rest of the marker line is the step's title. Lines
  before the first marker (the shebang dropped) are a *preamble* (`set -euo pipefail`,
  `cd /app`, variables) that is prepended to every step, because each step runs as a
  shell of its own and must stand alone.
- Without markers: the script's blank-line-separated blocks are the steps. A blank line
  never splits a here-document or an unfinished compound command (`if`…`fi`, a
  function body): blocks are merged until `bash -n` accepts them. Blocks that hold only
  comments become the heading of the next block.
- Markers or not, every step runs in a shell of its own, so what a script sets up for the
  lines after it is carried into every later step: top-level shell options (`set -euo
  pipefail`, `shopt`), `cd DIR`, `export`s, plain assignments (no command substitution),
  `source`/`.` lines, `umask`, and function definitions. A block made only of such lines
  is set-up, not a step of its own (it would leave the state unchanged). Without this, a
  script without markers ran its later steps without `set -e` and in the wrong directory.
  What only exists at run time (``work=$(mktemp -d)``, a function's definition) is
  carried by the chain that runs the steps instead (`verifiers.states.carried`).

A script that yields one step gives no prefix states; the importer records that fact.
"""

from __future__ import annotations

import re
import shutil
import subprocess

from envfactory.core.errors import InvalidTask
from envfactory.core.models import Step

MARKER_RE = re.compile(r"^\s*#\s*step\b[ \t]*(?:\d+\b)?[ \t]*[:.)\-]?[ \t]*(.*)$", re.IGNORECASE)
HEREDOC_RE = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1")


def split_steps(text: str, *, where: str) -> tuple[Step, ...]:
    """Ordered steps of a shell script; `where` names the file in errors."""
    if "\0" in text:  # no step could hold it (a stored script is text without NULs)
        line = text[: text.index("\0")].count("\n") + 1
        raise InvalidTask(
            f"{where}: line {line} holds a NUL character", hint="remove it: a script is text"
        )
    lines = text.splitlines()
    first = 1
    if lines and lines[0].startswith("#!"):
        lines, first = lines[1:], 2
    if any(MARKER_RE.match(line) for line in lines):
        head, bodies = _by_markers(lines, where, first)
        steps = _carry_setup(bodies, head.splitlines())
    else:
        steps = _carry_setup(tuple(Step(script=block) for block in _by_blank_lines(lines)), [])
    if not steps:
        raise InvalidTask(
            f"{where}: the script has no commands",
            hint="write the solution's commands, one `# step` block per step",
        )
    return steps


def _by_markers(lines: list[str], where: str, first: int) -> tuple[str, tuple[Step, ...]]:
    """The preamble before the first marker, and the marked steps (without it)."""
    preamble: list[str] = []
    blocks: list[tuple[str, int, list[str]]] = []  # (title, line number, body)
    for number, line in enumerate(lines, start=first):
        match = MARKER_RE.match(line)
        if match:
            blocks.append((match.group(1).strip(), number, []))
        elif blocks:
            blocks[-1][2].append(line)
        else:
            preamble.append(line)
    head = "\n".join(preamble).strip() if _has_commands(preamble) else ""
    steps = []
    for index, (title, number, body) in enumerate(blocks, start=1):
        if not _has_commands(body):
            raise InvalidTask(
                f"{where}: step {index} (line {number}) has no commands",
                hint="remove the empty `# step` marker or put the step's commands under it",
            )
        script = "\n".join(body).strip()
        steps.append(Step(title=title, script=script))
    return head, tuple(steps)


_ASSIGNMENT = r"""[A-Za-z_][A-Za-z0-9_]*=(?:'[^']*'|"[^"`$]*"|[^\s;&|`$()'"]*)"""
_SETUP_RE = re.compile(
    r"^(?:set\s+[-+][^;&|]*|shopt\s[^;&|]*|cd(?:\s+[^;&|]*)?|export\s+[^;&|`]*|umask\s+\d+"
    r"|(?:source|\.)\s+[^;&|`]+|" + _ASSIGNMENT + r")\s*$"
)
_FUNCTION_RE = re.compile(r"^(function\s+[A-Za-z_][\w-]*|[A-Za-z_][\w-]*\s*\(\s*\))\s*\{?\s*$")


def _carry_setup(steps: tuple[Step, ...], head: list[str]) -> tuple[Step, ...]:
    """Prepend to each step the preamble and the set-up lines of the steps before it
    (module docstring); steps that are nothing but set-up fold into the later ones'."""
    carried = [line for line in head if line.strip()]
    out: list[Step] = []
    for step in steps:
        setup, only_setup = _setup_lines(step.script)
        if only_setup:
            carried += [line for line in step.script.splitlines() if line.strip()]
            continue
        present = [line for line in step.script.splitlines() if line.strip()]
        if present[: len(carried)] == carried:  # written out already (an exported step)
            out.append(step)
            carried = setup
            continue
        script = "\n".join([*carried, step.script]) if carried else step.script
        out.append(step.model_copy(update={"script": script}))
        carried = carried + setup
    if not out and steps:  # nothing but set-up: keep the script as one step
        return (Step(title=steps[0].title, script="\n".join(s.script for s in steps)),)
    return tuple(out)


def _setup_lines(script: str) -> tuple[list[str], bool]:
    """(top-level set-up lines of a step, whether the step holds nothing else)."""
    lines = script.splitlines()
    if _FUNCTION_RE.match(lines[0].strip()) and _complete(lines):
        return lines, True  # a function definition: needed later, changes nothing now
    setup, other = [], False
    pending: list[str] = []
    for line in lines:
        if pending:
            if line.strip() == pending[0] or line.lstrip("\t") == pending[0]:
                pending.pop(0)
            continue
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        pending.extend(m.group(2) for m in HEREDOC_RE.finditer(line))
        if line == line.lstrip() and _SETUP_RE.match(stripped):
            setup.append(line)
        else:
            other = True
    return setup, not other and bool(setup)


def _has_commands(lines: list[str]) -> bool:
    return any(line.strip() and not line.lstrip().startswith("#") for line in lines)


def _paragraphs(lines: list[str]) -> list[list[str]]:
    """Blank-line-separated paragraphs; a here-document body is never split."""
    out: list[list[str]] = [[]]
    pending: list[str] = []  # here-document terminators still open
    for line in lines:
        if pending:
            out[-1].append(line)
            if line.strip() == pending[0] or line.lstrip("\t") == pending[0]:
                pending.pop(0)
            continue
        if not line.strip():
            if out[-1]:
                out.append([])
            continue
        out[-1].append(line)
        if not line.lstrip().startswith("#"):
            pending.extend(m.group(2) for m in HEREDOC_RE.finditer(line))
    return [p for p in out if p]


def _by_blank_lines(lines: list[str]) -> list[str]:
    blocks: list[str] = []
    heading: list[str] = []
    current: list[str] = []
    for para in _paragraphs(lines):
        if not current and not _has_commands(para):
            heading += para  # comments only: the heading of the next block
            continue
        current = current + ([""] if current else []) + para
        if _complete(current):
            blocks.append("\n".join(heading + current).strip())
            heading, current = [], []
    if current:  # unfinished at the end: keep it whole, bash will report the error
        blocks.append("\n".join(heading + current).strip())
    return blocks


def _complete(lines: list[str]) -> bool:
    """True when bash parses `lines` as complete commands (no open `if`, `{`, quote)."""
    text = "\n".join(lines)
    if text.rstrip().endswith("\\"):
        return False
    bash = shutil.which("bash")
    if bash is None:  # without bash we cannot tell: every paragraph is its own block
        return True
    proc = subprocess.run([bash, "-n"], input=text, capture_output=True, text=True, timeout=10)
    return proc.returncode == 0
