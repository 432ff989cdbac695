"""A tiny real task for the verifier tests: sum the numbers in a file.

The image (fixtures/sum) holds /workspace as a git repo whose last commit has stale data
and outputs, visible unittest tests that derive their expectation from the workspace, and
a `run-tests.sh`. The *sound* verifier ships its own expectations and runs pytest
isolated; each *naive* verifier embodies one common mistake (see `NAIVE`).
"""

from __future__ import annotations

import hashlib
import io
import tarfile
from pathlib import Path

from envfactory.core.models import (
    BuildContext,
    EnvironmentSpec,
    FileEntry,
    PartialSolution,
    Provenance,
    Step,
    Verifier,
)

FIXTURE = Path(__file__).parent / "fixtures" / "sum"

INSTRUCTION = (
    "Compute the sum of the integers in /workspace/data/nums.txt and write it to "
    "/workspace/out/total.txt, and write how many integers there are to /workspace/out/count.txt."
)

SPEC = EnvironmentSpec(
    id="env-sum",
    name="sum",
    instruction=INSTRUCTION,
    build=BuildContext(files=()),
    reference_solution=(
        Step(
            title="total",
            script="mkdir -p out && python3 -c \"print(sum(int(x) for x in open('data/nums.txt').read().split()))\" > out/total.txt",
        ),
        Step(title="count", script="wc -l < data/nums.txt | tr -d ' ' > out/count.txt"),
    ),
    partial_solutions=(
        PartialSolution(
            name="wrong-total",
            steps=(
                Step(script="mkdir -p out && echo 99 > out/total.txt && echo 4 > out/count.txt"),
            ),
        ),
    ),
)

SOUND_TESTS = b"""\
import pathlib

OUT = pathlib.Path("/workspace/out")


def test_total():
    assert (OUT / "total.txt").read_text().strip() == "100"


def test_count():
    assert (OUT / "count.txt").read_text().strip() == "4"
"""
SOUND_ENTRY = (
    "/usr/local/bin/python3 -I -m pytest -q -p no:cacheprovider --noconftest "
    '-c pytest.ini --rootdir="$VERIFIER_DIR" test_outputs.py'
)

#: name → (entry, extra files): each is one mistake a real verifier makes.
NAIVE: dict[str, tuple[str, dict[str, bytes]]] = {
    "trusts-reward-file": (
        "bash run.sh; grep -qx 1 /logs/verifier/reward.txt",
        {
            "run.sh": b"python3 -m pytest -q test_outputs.py && mkdir -p /logs/verifier && echo 1 > /logs/verifier/reward.txt\n"
        },
    ),
    "parses-output": (
        "mkdir -p /logs/verifier; python3 -m pytest -q test_outputs.py >> /logs/verifier/test-output.txt 2>&1;"
        " grep -q PASSED /logs/verifier/test-output.txt",
        {},
    ),
    "pytest-unprotected": ("python3 -m pytest -q test_outputs.py", {}),
    "python-from-path": (
        "python3 -m pytest -q -p no:cacheprovider --noconftest test_outputs.py",
        {},
    ),
    "runs-from-workspace": (
        'cd /workspace && python3 -m pytest -q --noconftest "$OLDPWD/test_outputs.py"',
        {},
    ),
    "runs-workspace-tests": ("cd /workspace && python3 -m unittest discover -s tests -q", {}),
    "checks-existence": (
        "test -s /workspace/out/total.txt && test -s /workspace/out/count.txt",
        {},
    ),
    "greps-failures": (
        "python3 -m pytest -q /workspace/tests > /tmp/o 2>&1; ! grep -qi failed /tmp/o",
        {},
    ),
    "runs-a-script": (
        "bash test.sh",
        {"test.sh": b"python3 -I -m pytest -q --noconftest -p no:cacheprovider test_outputs.py\n"},
    ),
}


class MemoryFiles:
    """A content-addressed stand-in for the artifact store's `get` (sha256 keys)."""

    def __init__(self) -> None:
        self.blobs: dict[str, bytes] = {}

    def put(self, data: bytes) -> str:
        key = hashlib.sha256(data).hexdigest()
        self.blobs[key] = data
        return key

    def __call__(self, key: str) -> bytes:
        return self.blobs[key]


def make_verifier(
    files: MemoryFiles, entry: str, extra: dict[str, bytes] | None = None, *, timeout_s: int = 60
) -> Verifier:
    members = {"test_outputs.py": SOUND_TESTS, "pytest.ini": b"[pytest]\n", **(extra or {})}
    entries = tuple(
        FileEntry(path=n, key=files.put(d), mode=0o755 if n.endswith(".sh") else 0o644)
        for n, d in members.items()
    )
    return Verifier(
        env_id=SPEC.id,
        files=entries,
        entry=entry,
        timeout_s=timeout_s,
        provenance=Provenance(author="human:test"),
    )


def sound_verifier(files: MemoryFiles) -> Verifier:
    return make_verifier(files, SOUND_ENTRY)


def naive_verifier(files: MemoryFiles, name: str) -> Verifier:
    entry, extra = NAIVE[name]
    return make_verifier(files, entry, extra)


def context_tar() -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        for p in sorted(FIXTURE.iterdir()):
            tf.add(p, arcname=p.name)
    return buf.getvalue()
