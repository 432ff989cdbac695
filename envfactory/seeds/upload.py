"""A seed sent as a seed.yaml text plus uploaded files (the API's multipart form).

The same rules as a seed directory on disk (`load_seed`): the same YAML checks (unknown
keys, duplicate keys, strict types), the same limits (`SeedLimits`: how many files, each
file's size, the total) and UTF-8 for text files, every problem reported at once. An
upload's file name is its path inside the seed (`data/input.csv`): relative, forward
slashes, no `..`. With an `attachments:` list, every listed path must be uploaded (a
listed directory covers the files under it) and every uploaded file must be listed — a
file is never dropped without a word. Without one, every uploaded file is attached.
Nothing here writes anywhere.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from envfactory.core.models import CONTROL_MESSAGE, control_characters, shown
from envfactory.core.settings import SeedLimits

from . import files
from .format import decode_utf8, parse_yaml, validate_fields
from .intake import SeedDraft, content_hash
from .problems import Problem, raise_if_any

LABEL = "seed.yaml"


@dataclass(frozen=True)
class Upload:
    """One uploaded file: its name, its size, and its bytes (None when over the limit,
    so an oversize upload is never held in memory)."""

    name: str
    size: int
    data: bytes | None


def draft_from_upload(
    seed_yaml: bytes, uploads: Sequence[Upload], limits: SeedLimits, label: str = LABEL
) -> SeedDraft:
    """Validate a seed.yaml and its uploaded files; InvalidSeed listing every problem."""
    if len(seed_yaml) > limits.max_attachment_bytes:
        raise_if_any(
            [
                Problem(
                    label,
                    f"is too large ({len(seed_yaml)} bytes, at most {limits.max_attachment_bytes})",
                    "move long material into an attached file",
                )
            ],
            label,
        )
    text, bad = decode_utf8(seed_yaml, label, label)
    raise_if_any([bad] if bad else [], label)
    data, bad = parse_yaml(text or "", label)
    raise_if_any([bad] if bad else [], label)
    assert data is not None
    fields, problems = validate_fields(data, label)
    chosen, name_problems = _chosen(data, uploads, label, limits)
    loaded, file_problems = _checked(chosen, limits) if not name_problems else ([], [])
    raise_if_any(problems + name_problems + file_problems, label)
    assert fields is not None
    return SeedDraft(fields, tuple(loaded), content_hash(fields, loaded), label)


def _chosen(
    data: dict[str, object], uploads: Sequence[Upload], label: str, limits: SeedLimits
) -> tuple[list[Upload], list[Problem]]:
    """The uploads to attach: safe distinct names, matching `attachments:` when given."""
    problems = [p for u in uploads if (p := _bad_name(u.name))]
    names = [u.name for u in uploads]
    problems += [
        Problem(f"attachment '{files.readable(n)}'", "was uploaded twice", "upload each file once")
        for n in sorted({n for n in names if names.count(n) > 1})
    ]
    problems += _file_and_directory(names)
    if len(uploads) > limits.max_attachments:
        problems.append(files.too_many(limits))
    if problems or "attachments" not in data:
        return list(uploads), problems
    listed, problems = files.entries(data["attachments"], label)
    if problems:
        return [], problems
    return _match(listed, uploads)


def _match(listed: list[str], uploads: Sequence[Upload]) -> tuple[list[Upload], list[Problem]]:
    problems = []
    for entry in listed:
        if not any(_covers(entry, u.name) for u in uploads):
            problems.append(
                Problem(
                    f"attachment '{files.readable(entry)}'",
                    "is listed but was not uploaded",
                    "upload it as a `files` part named by this path",
                )
            )
    for u in uploads:
        if not any(_covers(entry, u.name) for entry in listed):
            problems.append(
                Problem(
                    f"attachment '{files.readable(u.name)}'",
                    "was uploaded but is not listed in 'attachments'",
                    "list it, or leave it out of the upload",
                )
            )
    return list(uploads), problems


def _file_and_directory(names: Sequence[str]) -> list[Problem]:
    """Names that are a file and, in another upload, a directory (``a`` and ``a/b``): no
    directory tree holds both."""
    given = set(names)
    clashes: dict[str, str] = {}  # the file → a path inside it
    for m in sorted(given):
        parts = m.split("/")
        for i in range(1, len(parts)):
            directory = "/".join(parts[:i])
            if directory in given:
                clashes.setdefault(directory, m)
    return [
        Problem(
            f"attachment '{files.readable(n)}'",
            f"is a file, and also the directory of '{files.readable(m)}'",
            "rename one of them: a path cannot be both a file and a directory",
        )
        for n, m in sorted(clashes.items())
    ]


def _covers(entry: str, name: str) -> bool:
    entry = entry.rstrip("/")
    return name == entry or name.startswith(entry + "/")


def _bad_name(name: str) -> Problem | None:
    where = f"attachment '{files.readable(name)}'"
    hint = "name each uploaded file by its path inside the seed, e.g. data/input.csv"
    pure = PurePosixPath(name)
    if files.readable(name) != name:
        return Problem(where, "has a name that is not UTF-8", hint)
    if not name.strip() or name != name.strip():
        return Problem(where, "has an empty or padded file name", hint)
    if "\\" in name:
        return Problem(
            where, "uses backslashes", "write paths with forward slashes: data/input.csv"
        )
    if pure.is_absolute():
        return Problem(where, "is an absolute path", hint)
    if ".." in pure.parts or "." in name.split("/") or "" in name.split("/"):
        return Problem(where, "is not a plain relative path ('..', '.' or '//')", hint)
    if "\x00" in name:
        return Problem(where, "contains a NUL character", hint)
    if control_characters(name):
        return Problem(f"attachment '{shown(name)}'", CONTROL_MESSAGE, hint)
    if len(pure.parts) > files.MAX_DEPTH:
        return Problem(where, f"is nested deeper than {files.MAX_DEPTH} levels", hint)
    return None


def _checked(
    uploads: Sequence[Upload], limits: SeedLimits
) -> tuple[list[files.LoadedFile], list[Problem]]:
    """Sizes (each and together) and UTF-8 for text files, as for files on disk."""
    loaded, problems, total = [], [], 0
    for u in sorted(uploads, key=lambda x: x.name):
        if u.data is None or u.size > limits.max_attachment_bytes:
            problems.append(files.too_large(u.name, u.size, limits))
            continue
        total += u.size
        bad = files.not_text(u.name, u.data)
        if bad:
            problems.append(bad)
            continue
        loaded.append(files.LoadedFile(u.name, u.data))
    if total > limits.max_total_bytes:
        problems.append(files.too_large_together(total, limits))
    return loaded, problems
