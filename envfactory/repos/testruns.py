"""Run a candidate's touched tests at the parent and at the commit, in one container of
its image (network off), with the verifier's own program: check.py in report mode.

The tests directory (check.py, the commit's test files) is copied to /tests; the first run
is the parent with the commit's test files restored, then the fix is applied with `git
apply` and the same tests run again. Fail-to-pass: passed at the commit and not at the
parent; pass-to-pass: passed at both.

A file pytest could not collect (an import error, a syntax error) is reported by its
JUnit file as a test with no class (`::tests.test_x`): it is counted as an error, never as
a test that ran, and its message (the last lines pytest printed) names the missing module.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from envfactory.core.errors import SandboxFileNotFound
from envfactory.core.models import Limits, Purpose
from envfactory.core.models.repos import TestCounts
from sandboxes.protocol import Sandbox, SandboxEngine

from .dropped import Dropped
from .runners import WORKSPACE

#: pytest's section for a file it could not collect, and the exception line in it
_COLLECT_SECTION = re.compile(r"^_+ ERROR collecting (\S+) _+$", re.M)
_EXCEPTION_LINE = re.compile(r"^E\s+(\S.*)$", re.M)


@dataclass(frozen=True)
class TestRuns:
    __test__ = False  # not a pytest class

    parent: dict[str, str]
    commit: dict[str, str]
    parent_log: str = ""
    commit_log: str = ""

    @property
    def fail_to_pass(self) -> set[str]:
        return {
            t for t, o in self.commit.items() if o == "passed" and self.parent.get(t) != "passed"
        }

    @property
    def pass_to_pass(self) -> set[str]:
        return {
            t for t, o in self.commit.items() if o == "passed" and self.parent.get(t) == "passed"
        }

    def counts(self, side: str) -> TestCounts:
        own, other = (self.parent, self.commit) if side == "parent" else (self.commit, self.parent)
        tests = {t: o for t, o in own.items() if not is_collect_error(t)}
        return TestCounts(
            passed=sum(1 for o in tests.values() if o == "passed"),
            failed=sum(1 for o in tests.values() if o == "failed"),
            skipped=sum(1 for o in tests.values() if o == "skipped"),
            errors=sum(1 for t in own if is_collect_error(t)),
            not_collected=sum(1 for t in other if not is_collect_error(t) and t not in own),
        )

    def collect_errors(self, side: str) -> list[str]:
        """'FILE: ERROR' for each file pytest could not collect at `side`."""
        own, log = (self.parent, self.parent_log) if side == "parent" else (
            self.commit, self.commit_log)  # fmt: skip
        if not any(is_collect_error(t) for t in own):
            return []
        said = _collect_sections(log)
        files = [t.removeprefix("::") for t in own if is_collect_error(t)]
        return [_collect_line(f, said) for f in sorted(files)]

    def summary(self) -> str:
        return f"at the parent {self.counts('parent')}; at the commit {self.counts('commit')}"


def is_collect_error(test_id: str) -> bool:
    """A JUnit row for a file that did not collect: no class, the module as the name."""
    return test_id.startswith("::")


def _collect_sections(log: str) -> dict[str, str]:
    """File → the last exception line of its "ERROR collecting" section (the error
    itself, after the traceback: `ModuleNotFoundError: No module named 'x'`)."""
    parts = _COLLECT_SECTION.split(log)
    out: dict[str, str] = {}
    for path, body in zip(parts[1::2], parts[2::2], strict=True):
        section = re.split(r"^[=_]{5,}", body, maxsplit=1, flags=re.M)[0]
        lines = _EXCEPTION_LINE.findall(section)
        out[path] = lines[-1].strip() if lines else ""
    return out


def _collect_line(module: str, said: dict[str, str]) -> str:
    path = module.replace(".", "/") + ".py"
    why = said.get(path) or next((w for p, w in said.items() if p.endswith(path)), "")
    return f"{path}: {why}" if why else f"{path} did not collect"


def run_tests(
    engine: SandboxEngine, image: str, task_dir: Path, patch: str, timeout_s: int
) -> TestRuns:
    sb = engine.start(image, limits=Limits(), purpose=Purpose.VERIFY, network=False)
    try:
        sb.put_dir(task_dir / "tests", "/tests")
        parent, parent_log = _report(sb, "parent", timeout_s)
        sb.write_file("/tmp/envfactory-fix.patch", patch)
        applied = sb.exec(
            "git apply --whitespace=nowarn /tmp/envfactory-fix.patch", workdir=WORKSPACE, timeout=60
        )
        if applied.exit_code != 0:
            tail = (applied.stderr or applied.stdout).strip().splitlines()[-1:]
            raise Dropped(
                "buildable", "fix_does_not_apply", f"the fix does not apply at the parent: {tail}"
            )
        commit, commit_log = _report(sb, "commit", timeout_s)
    finally:
        sb.remove()
    return TestRuns(parent, commit, parent_log, commit_log)


def _report(sb: Sandbox, label: str, timeout_s: int) -> tuple[dict[str, str], str]:
    out = f"/tmp/envfactory-{label}.json"
    ran = sb.exec(f"bash /tests/test.sh --report {out}", timeout=timeout_s + 60)
    try:
        data = json.loads(sb.read_file(out))
    except (SandboxFileNotFound, ValueError):
        raise Dropped(
            "buildable", "tests_did_not_report", f"the tests did not report at the {label}"
        ) from None
    log = (ran.stdout or "") + (ran.stderr or "")
    return with_collect_errors({str(k): str(v) for k, v in data.items()}, log), log


def with_collect_errors(report: dict[str, str], log: str) -> dict[str, str]:
    """`report` plus a collection-error row (``::module``, failed) for each file the log's
    "ERROR collecting" sections name that the report has no row for: a verdict read from
    the tests' own records (the guarded check.py) holds no row for a file that never
    collected, yet the file did not run."""
    out = dict(report)
    for path in _collect_sections(log):
        module = "::" + path.removesuffix(".py").replace("/", ".")
        if path.endswith(".py") and module not in out:
            out[module] = "failed"
    return out
