"""The fix as hunks: parse a per-file git diff and put any subset of its hunks back together.

A hunk is the unit of a partial state. A file diff without `@@` hunks (a binary file, a
mode change) is one unit of its own. Numbers are 1-based, overall and within the file, in
the order the files were given.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass

from envfactory.core.models.repos import HunkRef, PartialState


@dataclass(frozen=True)
class FilePatch:
    path: str
    header: str  # "diff --git …" up to the first "@@"
    hunks: tuple[str, ...]  # each from its "@@" line; () for a binary or mode-only diff

    @property
    def units(self) -> int:
        return max(1, len(self.hunks))


def parse_file_patch(path: str, diff: str) -> FilePatch:
    """One file's `git diff` output → header and hunks."""
    lines = diff.splitlines(keepends=True)
    first = next((i for i, line in enumerate(lines) if line.startswith("@@ ")), len(lines))
    hunks: list[list[str]] = []
    for line in lines[first:]:
        if line.startswith("@@ "):
            hunks.append([])
        hunks[-1].append(line)
    return FilePatch(path, "".join(lines[:first]), tuple("".join(h) for h in hunks))


def hunk_refs(files: Iterable[FilePatch]) -> list[HunkRef]:
    refs: list[HunkRef] = []
    for f in files:
        for i in range(f.units):
            refs.append(HunkRef(number=len(refs) + 1, file=f.path, index_in_file=i + 1))
    return refs


def subset_patch(files: list[FilePatch], keep: set[int]) -> str:
    """The patch made of the hunks numbered in `keep` (overall numbers)."""
    out: list[str] = []
    n = 0
    for f in files:
        if not f.hunks:
            n += 1
            if n in keep:
                out.append(f.header)
            continue
        chosen = [h for i, h in enumerate(f.hunks, start=n + 1) if i in keep]
        n += len(f.hunks)
        if chosen:
            out.append(f.header + "".join(chosen))
    return "".join(out)


def partial_states(units: int, seed: str, hunk_max: int) -> list[PartialState]:
    """Each hunk alone and the patch without each hunk, for patches of two or more units;
    a state equal to another, to the whole patch or to nothing is left out. Past
    `hunk_max` units, `hunk_max` hunks are drawn (seeded by `seed`, so a rerun draws the
    same)."""
    if units < 2 or hunk_max <= 0:
        return []
    every = list(range(1, units + 1))
    chosen = every if units <= hunk_max else sorted(random.Random(seed).sample(every, hunk_max))
    states: dict[frozenset[int], PartialState] = {}
    for i in chosen:
        for name, keep in ((f"hunk-{i}-only", {i}), (f"without-hunk-{i}", set(every) - {i})):
            key = frozenset(keep)
            if key and len(key) < units and key not in states:
                missing = tuple(sorted(set(every) - key))
                states[key] = PartialState(name=name, hunks=tuple(sorted(key)), missing=missing)
    return list(states.values())
