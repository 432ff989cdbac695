"""Run a candidate's touched tests at the parent and at the commit, in one container of
its image (network off), with the verifier's own program: check.py in report mode.

The tests directory (check.py, the commit's test files) is copied to /tests; the first run
is the parent with the commit's test files restored, then the fix is applied with `git
apply` and the same tests run again. Fail-to-pass: passed at the commit and not at the
parent; pass-to-pass: passed at both.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from envfactory.core.errors import SandboxFileNotFound
from envfactory.core.models import Limits, Purpose
from sandboxes.protocol import Sandbox, SandboxEngine

from .dropped import Dropped
from .runners import WORKSPACE


@dataclass(frozen=True)
class TestRuns:
    parent: dict[str, str]
    commit: dict[str, str]

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

    def summary(self) -> str:
        return (
            f"{len(self.commit)} tests ran; at the parent {_count(self.parent)}, "
            f"at the commit {_count(self.commit)}"
        )


def _count(outcomes: dict[str, str]) -> str:
    passed = sum(1 for o in outcomes.values() if o == "passed")
    return f"{passed} passed, {len(outcomes) - passed} did not"


def run_tests(
    engine: SandboxEngine, image: str, task_dir: Path, patch: str, timeout_s: int
) -> TestRuns:
    sb = engine.start(image, limits=Limits(), purpose=Purpose.VERIFY, network=False)
    try:
        sb.put_dir(task_dir / "tests", "/tests")
        parent = _report(sb, "parent", timeout_s)
        sb.write_file("/tmp/envfactory-fix.patch", patch)
        applied = sb.exec(
            "git apply --whitespace=nowarn /tmp/envfactory-fix.patch", workdir=WORKSPACE, timeout=60
        )
        if applied.exit_code != 0:
            tail = (applied.stderr or applied.stdout).strip().splitlines()[-1:]
            raise Dropped(
                "buildable", "fix_does_not_apply", f"the fix does not apply at the parent: {tail}"
            )
        commit = _report(sb, "commit", timeout_s)
    finally:
        sb.remove()
    return TestRuns(parent, commit)


def _report(sb: Sandbox, label: str, timeout_s: int) -> dict[str, str]:
    out = f"/tmp/envfactory-{label}.json"
    sb.exec(f"bash /tests/test.sh --report {out}", timeout=timeout_s + 60)
    try:
        data = json.loads(sb.read_file(out))
    except (SandboxFileNotFound, ValueError):
        raise Dropped(
            "buildable", "tests_did_not_report", f"the tests did not report at the {label}"
        ) from None
    return {str(k): str(v) for k, v in data.items()}
