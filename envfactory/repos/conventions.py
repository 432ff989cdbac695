"""Which files of a commit are tests: a table of conventions, one row per pattern.

A path is a test file when a directory on it is named like a test directory
(`tests/`, `test/`, `testing/`, `__tests__/`, `testdata/`, `spec/`) or its file name
matches a test-file pattern of some ecosystem (`test_*.py`, `*_test.py`, `conftest.py`,
`*_test.go`, `*.spec.ts`, `*.test.js`, …). Everything else is "the rest": the fix. Documentation in the fix (`docs/`, `*.rst`,
`*.md`, a changelog) is left out of its partial states: no test reads it.
"""

from __future__ import annotations

from fnmatch import fnmatchcase
from pathlib import PurePosixPath

TEST_DIRS = frozenset({"tests", "test", "testing", "__tests__", "testdata", "spec", "specs"})

#: (ecosystem, file-name pattern)
TEST_FILE_PATTERNS: tuple[tuple[str, str], ...] = (
    ("python", "test_*.py"),
    ("python", "*_test.py"),
    ("python", "conftest.py"),
    ("go", "*_test.go"),
    ("javascript", "*.test.js"),
    ("javascript", "*.spec.js"),
    ("typescript", "*.test.ts"),
    ("typescript", "*.spec.ts"),
    ("rust", "*_test.rs"),
    ("java", "*Test.java"),
    ("ruby", "*_spec.rb"),
)


def is_test_path(path: str) -> bool:
    p = PurePosixPath(path)
    if any(part in TEST_DIRS for part in p.parts[:-1]):
        return True
    return any(fnmatchcase(p.name, pattern) for _, pattern in TEST_FILE_PATTERNS)


def split_paths(paths: list[str]) -> tuple[list[str], list[str]]:
    """(test files, the rest), each in the order given."""
    tests = [p for p in paths if is_test_path(p)]
    return tests, [p for p in paths if not is_test_path(p)]


DOC_DIRS = frozenset({"docs", "doc"})
DOC_SUFFIXES = (".md", ".rst", ".txt", ".adoc")
DOC_NAMES = ("CHANGELOG", "CHANGES", "NEWS", "HISTORY", "AUTHORS")
#: type stubs: read by type checkers, never by a test run
STUB_SUFFIXES = (".pyi",)


def is_doc_path(path: str) -> bool:
    """Documentation, or a type stub: no test run reads it, so the fix's partial states
    always include it."""
    p = PurePosixPath(path)
    return (
        any(part in DOC_DIRS for part in p.parts[:-1])
        or p.suffix.lower() in DOC_SUFFIXES + STUB_SUFFIXES
        or p.name.upper().startswith(DOC_NAMES)
    )
