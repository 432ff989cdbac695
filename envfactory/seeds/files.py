"""Attachments: resolve the paths a seed lists, refusing anything unsafe or oversize.

Invariants: every attachment is a regular file inside the seed directory, reached without
following a symlink (a symlink anywhere on the path is refused, so nothing outside the
directory can be smuggled in); at most ``max_attachments`` files, each at most
``max_attachment_bytes``, together at most ``max_total_bytes``; text files (by extension)
are UTF-8. Nothing here writes anywhere.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from envfactory.core.models import CONTROL_MESSAGE, control_characters, shown
from envfactory.core.settings import SeedLimits

from .format import decode_utf8
from .problems import Problem

#: Extensions read as text: they must be UTF-8 so agents and reviewers can read them.
TEXT_SUFFIXES = frozenset(
    ".md .txt .rst .py .sh .sql .csv .tsv .json .yaml .yml .toml .ini .cfg .conf .log .js .ts "
    ".go .rs .java .c .h .cpp .rb .pl .r .html .xml .lock .env .dockerfile .mk".split()
)
_TEXT_NAMES = frozenset({"Dockerfile", "Makefile", "README", "LICENSE", "requirements.txt"})


@dataclass(frozen=True)
class LoadedFile:
    path: str  # relative POSIX path inside the seed directory
    data: bytes


def readable(name: str) -> str:
    """`name` as UTF-8 can print it: a byte of a file name that is not UTF-8 (Python holds
    it as a lone surrogate) shown as its escape."""
    return name.encode("utf-8", "backslashreplace").decode("utf-8")


def name_problem(rel: str) -> tuple[str, str] | None:
    """What is wrong with an attachment's relative path as a name (not as a place), with
    how to fix it, or None: it must be UTF-8 and may not begin or end with whitespace (a
    stored attachment's path is trimmed: ' a.txt' would become another file's name)."""
    if readable(rel) != rel:
        return "has a name that is not UTF-8", "rename it, e.g. `convmv -f latin1 -t utf-8`"
    if rel != rel.strip():
        return "has a name that begins or ends with whitespace", "rename it without it"
    return None


def _mb(n: int) -> str:
    return f"{n / 1_000_000:.1f} MB" if n >= 100_000 else f"{n} bytes"


def entries(spec: Any, label: str) -> tuple[list[str], list[Problem]]:
    """The listed paths: one string or a list of strings."""
    where = f"{label} field 'attachments'"
    hint = "a path relative to the seed directory, or a list of them"
    if isinstance(spec, str):
        spec = [spec]
    if not isinstance(spec, list):
        return [], [
            Problem(where, f"must be a path or a list of paths, got {type(spec).__name__}", hint)
        ]
    out, problems = [], []
    for i, item in enumerate(spec):
        if not isinstance(item, str) or not item.strip():
            got = "an empty entry" if isinstance(item, str) or item is None else type(item).__name__
            where_i = f"{label} field 'attachments[{i}]'"
            problems.append(Problem(where_i, f"must be a non-empty path, got {got}", hint))
        else:
            out.append(item.strip())
    return out, problems


def resolve(
    seed_dir: Path, listed: list[str], skip: Path, limits: SeedLimits
) -> tuple[list[Path], list[Problem]]:
    """Expand the listed paths (directories recursively) into files, checking safety."""
    files: dict[str, Path] = {}
    problems: list[Problem] = []
    for entry in listed:
        where = "attachment '" + shown(entry.replace("\x00", "\\0")) + "'"
        unsafe = _unsafe(seed_dir, entry)
        if unsafe:
            problems.append(Problem(where, unsafe[0], unsafe[1]))
            continue
        target = seed_dir / entry
        if target.is_dir():
            problems += _walk(seed_dir, target, files, skip, limits)
        elif target.is_file():
            files.setdefault(_rel(seed_dir, target), target)
        else:
            problems.append(
                Problem(where, "is not a regular file or directory", "attach regular files only")
            )
        if len(files) > limits.max_attachments:
            break
    files.pop(_rel(seed_dir, skip), None)
    if len(files) > limits.max_attachments:
        problems.append(too_many(limits))
    return list(files.values()), problems + _linked_outside(seed_dir, files)


def _linked_outside(seed_dir: Path, files: dict[str, Path]) -> list[Problem]:
    """Attachments that are hard links to a file with a name outside the attachments
    (symlinks are refused by name; a hard link would be stored as that file's content)."""
    names: dict[tuple[int, int], int] = {}
    for p in files.values():
        names[_inode(p)] = names.get(_inode(p), 0) + 1
    return [
        Problem(
            f"attachment '{shown(rel)}'",
            "is a hard link to a file that has a name outside the attachments",
            "copy the real file in instead (cp, not ln)",
        )
        for rel, p in sorted(files.items())
        if _links(p) > names[_inode(p)]
    ]


def _inode(p: Path) -> tuple[int, int]:
    st = p.stat()
    return st.st_dev, st.st_ino


def _links(p: Path) -> int:
    return p.stat().st_nlink


def all_files(seed_dir: Path, skip: Path, limits: SeedLimits) -> tuple[list[Path], list[Problem]]:
    """No ``attachments`` key in a seed directory: everything beside seed.yaml is attached."""
    files: dict[str, Path] = {}
    problems = _walk(seed_dir, seed_dir, files, skip, limits)
    files.pop(_rel(seed_dir, skip), None)
    if len(files) > limits.max_attachments:
        problems.append(too_many(limits))
    return list(files.values()), problems + _linked_outside(seed_dir, files)


def too_many(limits: SeedLimits) -> Problem:
    return Problem(
        "attachments",
        f"too many files (more than {limits.max_attachments}, the limit)",
        "bundle them into one archive (tar.gz) or raise ENVFACTORY_SEEDS__MAX_ATTACHMENTS",
    )


def _rel(seed_dir: Path, p: Path) -> str:
    return p.relative_to(seed_dir).as_posix()


def _unsafe(seed_dir: Path, entry: str) -> tuple[str, str] | None:
    """Why ``entry`` may not be used, or None. Checks the text, then each path component."""
    if "\x00" in entry:
        return "contains a NUL character (\\0)", "remove it from the path"
    if control_characters(entry):
        return CONTROL_MESSAGE, "rename the file without them"
    if "\\" in entry:
        return "uses backslashes", "write paths with forward slashes: data/input.csv"
    pure = PurePosixPath(entry)
    if pure.is_absolute():
        return "is an absolute path", "give a path relative to the seed directory"
    if ".." in pure.parts:
        return "escapes the seed directory ('..')", "copy the file into the seed directory"
    current = seed_dir
    for i, part in enumerate(pure.parts):
        current = current / part
        try:
            mode = current.lstat().st_mode
        except (FileNotFoundError, NotADirectoryError):
            return "not found in the seed directory", f"check the spelling; looked for {current}"
        except OSError as exc:  # e.g. a name past the filesystem's length limit
            return f"cannot be read ({exc.strerror})", "shorten the path"
        if stat.S_ISLNK(mode):
            last = i == len(pure.parts) - 1
            what = "is a symlink" if last else f"passes through a symlink ({part})"
            return what, "copy the real file in instead"
    return None


#: directories an attachment may nest (os.walk recurses: 1,000 levels overflow its stack)
MAX_DEPTH = 64


def _too_deep(seed_dir: Path, top: Path, deep: Path) -> Problem:
    """`deep` (under `top`) is too deep: named by the attached directory, or with none
    listed (`top` is the seed directory), by the one at the top of `deep`'s path."""
    named = top if top != seed_dir else seed_dir / deep.relative_to(seed_dir).parts[0]
    return Problem(
        f"attachment '{readable(_rel(seed_dir, named))}'",
        f"has directories nested deeper than {MAX_DEPTH} levels",
        "flatten it, or attach it as one archive (tar.gz)",
    )


def _unreadable(seed_dir: Path, error: OSError) -> Problem:
    """A directory or file the walk cannot read (say a path past PATH_MAX): named, never
    skipped without a word."""
    where = Path(str(error.filename or seed_dir))
    rel = _rel(seed_dir, where) if where.is_relative_to(seed_dir) else str(where)
    return Problem(
        f"attachment '{readable(shown(rel))}'",
        f"cannot be read ({error.strerror})",
        "shorten the path, or attach it as one archive (tar.gz)",
    )


def _walk(
    seed_dir: Path, top: Path, files: dict[str, Path], skip: Path, limits: SeedLimits
) -> list[Problem]:
    problems: list[Problem] = []
    errors: list[OSError] = []
    # does not follow symlinked dirs; a directory it cannot list is named, not skipped
    for dirpath, dirnames, filenames in os.walk(top, onerror=errors.append):
        if len(Path(dirpath).relative_to(top).parts) >= MAX_DEPTH:
            dirnames[:] = []  # top-down: nothing below is walked (os.walk recurses)
            problems.append(_too_deep(seed_dir, top, Path(dirpath)))
            break
        for name in sorted(dirnames + filenames):
            p = Path(dirpath) / name
            try:
                mode = p.lstat().st_mode
                problem = _entry_problem(_rel(seed_dir, p), name, mode)
            except OSError as exc:
                problem = _unreadable(seed_dir, exc)
            if problem:
                problems.append(problem)
                if name in dirnames:
                    dirnames.remove(name)  # named once; what is under it is not walked
            elif stat.S_ISREG(mode) and p != skip:
                files.setdefault(_rel(seed_dir, p), p)
        if len(files) > limits.max_attachments:
            break  # enough to say "too many"; do not walk a huge tree to the end
    return problems + [_unreadable(seed_dir, e) for e in errors]


def _entry_problem(rel: str, name: str, mode: int) -> Problem | None:
    """Why a file or directory met in a walk cannot be attached, or None."""
    where = f"attachment '{readable(shown(rel))}'"
    bad_name = name_problem(rel)
    if bad_name:
        return Problem(where, *bad_name)
    if control_characters(name):
        return Problem(where, CONTROL_MESSAGE, "rename the file without them")
    if stat.S_ISLNK(mode):
        return Problem(where, "is a symlink", "copy the real file in instead")
    if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
        return Problem(where, "is not a regular file", "attach regular files only")
    return None


def read_all(
    seed_dir: Path, paths: list[Path], limits: SeedLimits
) -> tuple[list[LoadedFile], list[Problem]]:
    """Read the files, enforcing the size limits and UTF-8 for text files."""
    loaded, problems, total = [], [], 0
    for p in sorted(paths, key=lambda q: _rel(seed_dir, q)):
        rel, size = _rel(seed_dir, p), p.stat().st_size
        if size > limits.max_attachment_bytes:
            problems.append(too_large(rel, size, limits))
            continue
        total += size
        data = p.read_bytes()
        bad = not_text(rel, data)
        if bad:
            problems.append(bad)
            continue
        loaded.append(LoadedFile(rel, data))
    if total > limits.max_total_bytes:
        problems.append(too_large_together(total, limits))
    return loaded, problems


def too_large(rel: str, size: int, limits: SeedLimits) -> Problem:
    return Problem(
        f"attachment '{rel}'",
        f"is too large ({_mb(size)}; at most {_mb(limits.max_attachment_bytes)})",
        "attach a smaller sample, or raise ENVFACTORY_SEEDS__MAX_ATTACHMENT_BYTES",
    )


def too_large_together(total: int, limits: SeedLimits) -> Problem:
    return Problem(
        "attachments",
        f"are too large together ({_mb(total)}; at most {_mb(limits.max_total_bytes)})",
        "attach less, or raise ENVFACTORY_SEEDS__MAX_TOTAL_BYTES",
    )


def not_text(rel: str, data: bytes) -> Problem | None:
    """A text file (by extension or name) that is not UTF-8, named; None otherwise."""
    name = PurePosixPath(rel)
    if name.suffix.lower() in TEXT_SUFFIXES or name.name in _TEXT_NAMES:
        _, bad = decode_utf8(data, f"attachment '{rel}'", rel)
        return bad
    return None
