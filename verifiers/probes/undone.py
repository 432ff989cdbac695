"""One file of the reference's result left undone: a solution that did everything but
that file.

A task's result is often several files written together (a merge: the code from one
branch, the changelog from both; a fix in one module and its export in another; a report
and its data). A verifier that checks some of them — that a file exists, that the
changelog has its entries — accepts a state where one file was never done. The probes
that change every output at once (truncated, placeholders) cannot show it: the first
checked file they change earns the 0. Each `UndoneFile` undoes one file and keeps the
rest of the result: a file the reference changed gets back the bytes the task started
with, a file it created is left empty (created, nothing written) — through the history
where the reference committed (`history.OracleEdit`). Only files the instruction names
(or a directory it names holds): those are the result it asks for, while a helper script
the reference wrote and ran is a by-product a sound verifier rightly ignores. SQLite
databases are left to their row probes, ungraded paths to no probe; at most `MAX_FILES`
files, in path order, one state each.
"""

from __future__ import annotations

from envfactory.core.models import EnvironmentSpec

from .history import OracleEdit
from .numbers import (
    MAX_FILE_BYTES,
    _Entry,
    embedded_writes,
    file_entries,
    named,
    program_language,
    within_budget,
    written,
)
from .workspace import SQLITE_MAGIC, Workspace, mentioned_paths

#: at most this many files get a state of their own
MAX_FILES = 4


class UndoneFile(OracleEdit):
    """Applied to the oracle state: one file of the reference solution's result is left
    undone — a file it changed gets back the content the task started with, a file it
    created is left empty — the rest of the result kept (committed where the reference
    committed). Fools a verifier that checks some of the files the task writes (that one
    exists, that another has the right entries) and never this one's content. Built per
    gate run, one row per written file (`undone_files`); never in the default battery."""

    name = "undone-file"

    def __init__(
        self, path: str = "", data: bytes = b"", number: int = 1, product: bool = False
    ) -> None:
        self.path, self.data, self.product = path, data, product
        self.name = f"undone-file-{number}"  # type: ignore[misc]

    @property
    def unread_finding(self) -> str | None:
        """A program the instruction names is what the task asks for: a verifier whose
        traced run never ran or read it checks only what the program left behind, so a
        solver may write those results by hand (a finding, not a row that cannot judge)."""
        if not self.product:
            return None
        return f"the verifier never runs or reads {self.path}, a program the task asks for"

    @property
    def detail(self) -> str:
        how = "as the task started it" if self.data else "empty"
        return f"{self.path} {how}"

    @property
    def touched(self) -> tuple[str, ...]:
        return (self.path,)

    def edits(self, spec: EnvironmentSpec) -> str:
        return embedded_writes({self.path: self.data})


def undone_files(
    oracle: Workspace, pristine: Workspace, instruction: str, workdir: str
) -> tuple[UndoneFile, ...]:
    """One probe per file the oracle wrote that the instruction names (module docstring);
    none for a file it left empty (undone already)."""
    before = file_entries(pristine)
    names = mentioned_paths(instruction, workdir)
    wrote = written(oracle, pristine)
    undone = {
        p: before[p].data if p in before else b""
        for p, entry in wrote.items()
        if entry.data
        and named(p, names)
        and not entry.data.startswith(SQLITE_MAGIC)
        and not (p in before and before[p].data.startswith(SQLITE_MAGIC))
        and len(before[p].data if p in before else b"") <= MAX_FILE_BYTES
    }
    fits = within_budget(undone)
    chosen = [p for p in undone if p in fits][:MAX_FILES]
    return tuple(
        UndoneFile(p, fits[p], i + 1, product=_named_program(p, wrote[p], names))
        for i, p in enumerate(chosen)
    )


def named_programs(oracle: Workspace, pristine: Workspace, names: list[str]) -> list[str]:
    """The programs the oracle wrote that the instruction names by their own path."""
    return [p for p, e in written(oracle, pristine).items() if _named_program(p, e, names)]


def _named_program(path: str, entry: _Entry, names: list[str]) -> bool:
    """Whether the instruction names `path` itself (not only a directory holding it) and
    the reference wrote a program there (by extension, shebang or executable bit)."""
    return path in names and program_language(path, entry) is not None
