"""The reference solution with one step left out: the partial states nobody listed.

The prefixes of the reference solution are unsolved states the gates always check, but a
verifier that checks only what the *last* steps do passes every prefix (each prefix lacks
a late step, and the verifier looks at that one). Leaving out step k (k before the last)
gives the state where everything but step k is done: a verifier that never looks at what
step k does accepts it (`partial-check--mean-only` in the integrity corpus: the
reference fixes the median, then the mean; the verifier checks only the mean).

Not every step is part of the answer: a backup copy, a scratch file or a build artefact
is incidental, and leaving it out leaves a state the verifier is right to accept. A
left-out state is therefore checked only when it differs from the oracle's in a file
that decides the task (`decisive_changes`): a file the task started with, or one the
instruction names. Otherwise its row is noted and skipped, never failed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from envfactory.core.models import Step
from envfactory.core.models.rows import RowId

from .probes.workspace import Workspace, file_hashes, mentioned_paths


def omission_chains(steps: Sequence[Step]) -> list[tuple[RowId, tuple[Step, ...]]]:
    """(row, steps) for every step but the last left out (leaving out the last step is
    the longest prefix, checked already). A one-step solution has none."""
    return [
        (RowId.omission(k + 1), (*steps[:k], *steps[k + 1 :]))
        for k in range(len(steps) - 1)
        if len(steps) > 1
    ]


def incidental_note(row: RowId) -> str:
    """What the report says of an omission row left unchecked."""
    return (
        f"{row} not checked: leaving that step out changes no file the task started "
        "with or the instruction names (the step looks incidental)"
    )


def changed_files(state: Workspace, oracle: Workspace) -> list[str]:
    """Files whose content differs between the two workspaces (or exists in one only)."""
    got, want = file_hashes(state), file_hashes(oracle)
    return sorted(p for p in set(got) | set(want) if got.get(p) != want.get(p))


def decisive_changes(
    state: Workspace, oracle: Workspace, pristine: Workspace, instruction: str, workdir: str
) -> list[str]:
    """The files in which `state` differs from the oracle's state and that decide the task:
    files the task started with (in the pristine workspace), or files the instruction names
    (a named directory covers what is under it). Empty: the left-out step is incidental."""
    started = set(file_hashes(pristine))
    named = mentioned_paths(instruction, workdir)
    return [
        p
        for p in changed_files(state, oracle)
        if not _is_bytecode(p) and (p in started or _named(p, named))
    ]


def _named(path: str, named: Iterable[str]) -> bool:
    return any(path == n or path.startswith(n.rstrip("/") + "/") for n in named)


def _is_bytecode(path: str) -> bool:
    return path.endswith((".pyc", ".pyo")) or "/__pycache__/" in path
