"""Pack test fixtures: an in-memory artifact store and gated export items built from it."""

from __future__ import annotations

import hashlib

import pytest

from envfactory.core.models import (
    BuildContext,
    CheckKind,
    EnvironmentSpec,
    FileEntry,
    GateCheck,
    GateReport,
    Provenance,
    Step,
    Verifier,
)
from envfactory.packs import ExportItem


class DictArtifacts:
    """Content-addressed bytes in a dict: the same contract as the store's ArtifactStore."""

    def __init__(self) -> None:
        self.blobs: dict[str, bytes] = {}

    def put_bytes(self, data: bytes) -> str:
        key = hashlib.sha256(data).hexdigest()
        self.blobs[key] = data
        return key

    def get(self, key: str) -> bytes:
        return self.blobs[key]


def entry(artifacts, path: str, text: str, mode: int = 0o644) -> FileEntry:
    """Put `text` into any artifact store (DictArtifacts or the real one) as a FileEntry."""
    return FileEntry(path=path, key=artifacts.put_bytes(text.encode()), mode=mode)


def gate_report(
    env_id: str, *, oracle: int = 1, verifier_version: int = 1, harbor_noop: int | None = 0
) -> GateReport:
    """A report gated under both runtimes (harbor_noop=None: under envfactory's only)."""
    checks = [
        GateCheck(kind=CheckKind.ORACLE, name="oracle", expected=1, observed=(oracle,) * 3),
        GateCheck(kind=CheckKind.NOOP, name="no-op", expected=0, observed=(0, 0, 0)),
    ]
    if harbor_noop is not None:
        checks += [
            GateCheck(
                kind=CheckKind.ORACLE,
                name="harbor:oracle",
                expected=1,
                observed=(oracle,),
                semantics="harbor",
            ),
            GateCheck(
                kind=CheckKind.NOOP,
                name="harbor:no-op",
                expected=0,
                observed=(harbor_noop,),
                semantics="harbor",
            ),
        ]
    return GateReport(
        env_id=env_id,
        verifier_version=verifier_version,
        checks=tuple(checks),
        semantics=("envfactory",) if harbor_noop is None else ("envfactory", "harbor"),
    )


def make_item(artifacts, env_id: str = "env-hello", **report: int | None) -> ExportItem:
    spec = EnvironmentSpec(
        id=env_id,
        name=f"{env_id} task",
        instruction="Write the word hello into /workspace/out.txt.",
        build=BuildContext(
            files=(
                entry(
                    artifacts,
                    "Dockerfile",
                    "FROM python:3.12-slim\nWORKDIR /workspace\nCOPY data/input.txt /workspace/input.txt\n",
                ),
                entry(artifacts, "data/input.txt", "hello\n"),
            )
        ),
        reference_solution=(Step(script="echo hello > /workspace/out.txt"),),
    )
    verifier = Verifier(
        env_id=env_id,
        files=(entry(artifacts, "test.sh", "grep -qx hello /workspace/out.txt\n", 0o755),),
        entry="bash test.sh",
        provenance=Provenance(author="agent:verifier/scripted", inputs_seen=("instruction",)),
    )
    return ExportItem(spec=spec, verifier=verifier, gate_report=gate_report(env_id, **report))


@pytest.fixture
def artifacts() -> DictArtifacts:
    return DictArtifacts()
