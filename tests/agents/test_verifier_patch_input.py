"""What the verifier writer is told in a patch round, without Docker or a model: confirmed
shortcuts as shortcut evidence, confirmed too-strict findings as correct results the
verifier must accept — never the one as the other."""

from __future__ import annotations

from envfactory.agents.roles.verifier_writer import (
    VerifierFileText,
    VerifierWriterInput,
    writer_task,
)
from envfactory.core.models import (
    BuildContext,
    EnvironmentSpec,
    Evidence,
    Provenance,
    ShortcutFinding,
    Step,
    Verifier,
)


def _finding(fid: str, rule: str, summary: str) -> ShortcutFinding:
    return ShortcutFinding(
        id=fid, env_id="env-t", source="probe", rule=rule, evidence=Evidence(summary=summary)
    )


def test_a_confirmed_too_strict_finding_is_told_as_a_result_to_accept() -> None:
    spec = EnvironmentSpec(
        id="env-t",
        name="t",
        instruction="Write the summary to /app/out/summary.yaml.",
        build=BuildContext(files=()),
        reference_solution=(Step(script="true"),),
    )
    old = Verifier(
        env_id="env-t", files=(), entry="/bin/sh t.sh", provenance=Provenance(author="x")
    )
    findings = [
        _finding("sf-1", "probe:reward-file", "planted reward file earned 1"),
        _finding("sf-2", "too-strict:yaml-reserialised", "rejects YAML with keys reordered"),
    ]
    inp = VerifierWriterInput.for_patch(
        spec, old, [VerifierFileText(path="t.sh", content="true\n")], findings
    )
    assert [e.summary for e in inp.shortcut_evidence] == ["planted reward file earned 1"]
    assert [e.summary for e in inp.rejected_correct_evidence] == [
        "rejects YAML with keys reordered"
    ]
    task = writer_task(inp)
    shortcut_at = task.index("planted reward file earned 1")
    accept_at = task.index("rejects YAML with keys reordered")
    assert "Shortcut evidence 1" in task[:shortcut_at]
    assert "must accept" in task[shortcut_at:accept_at]
    assert inp.finding_ids == ("sf-1", "sf-2")
