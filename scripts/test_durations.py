"""Keep the table of the slowest tests in docs/testing.md current (`make durations`).

Two ways to get the durations:

- ``--log FILE``: read pytest's own ``--durations`` lines (``12.34s call  tests/x.py::test_y``)
  from a log, e.g. what `.ci/run` printed (its test stage asks for the 50 slowest);
- otherwise run pytest here with the arguments after ``--`` (``make durations`` runs the
  README's test selection) and record every test's setup, call and teardown time.

Either way the tests are then collected (no test runs) to learn what each one needs: its
markers (docker, temporal, postgres, slow) and the fixtures that cost time (a base image
build, the Temporal dev server, a PostgreSQL store). The table, with the first line of each
test's docstring as the reason it is slow, replaces what lies between the two marker
comments of docs/testing.md.

With ``--weights FILE`` it also writes each test's seconds as JSON: tests/durations.json,
which orders the test files for the xdist workers, longest first (tests/file_order.py).

    python scripts/test_durations.py --log /tmp/ci.log --weights tests/durations.json
    python scripts/test_durations.py -- -m "not gpu and not compose and not faults"
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "testing.md"
START, END = "<!-- durations:start -->", "<!-- durations:end -->"
_LINE = re.compile(r"^\s*([\d.]+)s (setup|call|teardown)\s+(\S+::\S+)")
#: markers and fixtures that say what a test needs, in the words the table uses
_NEEDS = (
    ("docker", "Docker"),
    ("temporal", "Temporal"),
    ("postgres", "PostgreSQL"),
    ("base_image", "base image"),
    ("temporal_env", "Temporal"),
    ("pg_url", "PostgreSQL"),
)


class _Recorder:
    """pytest plugin: each test's seconds (all phases) and what it needs."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.needs: dict[str, list[str]] = {}
        self.why: dict[str, str] = {}

    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        for item in items:
            names = {m.name for m in item.iter_markers()} | set(getattr(item, "fixturenames", ()))
            self.needs[item.nodeid] = list(dict.fromkeys(w for k, w in _NEEDS if k in names))
            doc = getattr(getattr(item, "function", None), "__doc__", None) or ""
            if not doc.strip():  # the module's docstring says what its tests share
                doc = getattr(getattr(item, "module", None), "__doc__", None) or ""
            self.why[item.nodeid] = " ".join(doc.strip().split(". ")[0].split())[:160]

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.seconds[report.nodeid] += report.duration


def from_log(text: str) -> dict[str, float]:
    """Test id → seconds, summed over the phases a ``--durations`` listing shows."""
    out: dict[str, float] = defaultdict(float)
    for line in text.splitlines():
        m = _LINE.match(line)
        if m:
            out[m.group(3)] += float(m.group(1))
    return dict(out)


def table(seconds: dict[str, float], rec: _Recorder, n: int) -> str:
    rows = sorted(seconds.items(), key=lambda kv: -kv[1])[:n]
    out = [
        f"The {len(rows)} slowest tests: {sum(s for _, s in rows):.0f} s in all (setup, "
        "call and teardown; a module's shared fixture counts on its first test), written "
        "by `scripts/test_durations.py`.",
        "",
        "| # | seconds | test | needs | why it is slow (its docstring) |",
        "|---|---|---|---|---|",
    ]
    for i, (test, secs) in enumerate(rows, 1):
        needs = ", ".join(rec.needs.get(test, [])) or "—"
        why = rec.why.get(test, "").replace("|", "\\|") or "—"
        out.append(f"| {i} | {secs:.1f} | `{test}` | {needs} | {why} |")
    return "\n".join(out)


def write_weights(path: Path, seconds: dict[str, float], source: str) -> None:
    """Each test's seconds (a second or more, heaviest first) as JSON, what orders the test
    files for the xdist workers (tests/file_order.py)."""
    tests = {t: round(s, 1) for t, s in sorted(seconds.items(), key=lambda kv: -kv[1]) if s >= 1}
    path.write_text(json.dumps({"source": source, "tests": tests}, indent=1) + "\n")


def write(doc: Path, body: str) -> None:
    text = doc.read_text()
    if START not in text or END not in text:
        sys.exit(f"{doc}: no {START} … {END} section to replace; add the two lines first")
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    doc.write_text(f"{head}{START}\n{body}\n{END}{tail}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--log", type=Path, help="read pytest --durations lines from this log")
    ap.add_argument("--top", type=int, default=50, help="how many tests the table lists")
    ap.add_argument("--doc", type=Path, default=DOC)
    ap.add_argument("--weights", type=Path, help="also write each test's seconds here (JSON)")
    ap.add_argument("pytest_args", nargs="*", help="after --: what pytest runs (no --log)")
    args = ap.parse_args(argv)
    rec = _Recorder()
    if args.log:
        seconds = from_log(args.log.read_text(errors="replace"))
        if not seconds:
            sys.exit(f"{args.log}: no pytest --durations lines in it")
        # collect the files, not the ids: an id of the log may have been renamed since
        files = sorted({t.split("::", 1)[0] for t in seconds if Path(t.split("::", 1)[0]).exists()})
        pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", *files], plugins=[rec])
    else:
        rc = pytest.main([*args.pytest_args, "-p", "no:cacheprovider"], plugins=[rec])
        if rc not in (0, 1):
            return int(rc)
        seconds = dict(rec.seconds)
    write(args.doc, table(seconds, rec, args.top))
    if args.weights:
        source = f"--durations lines of {args.log.name}" if args.log else "a run of this script"
        write_weights(args.weights, seconds, source)
        print(f"{args.weights}: the seconds of the tests that took a second or more")
    print(f"{args.doc}: the {min(args.top, len(seconds))} slowest of {len(seconds)} tests")
    return 0


if __name__ == "__main__":
    sys.exit(main())
