"""Workspace tar sanitising and findings derived from gate reports (pure)."""

from __future__ import annotations

import io
import tarfile

from envfactory.core.models import CheckKind, GateCheck, GateReport, PathChange
from verifiers.archives import read_members, sanitize, tar_of
from verifiers.evidence import findings_from_report


def _tar(entries: list[tarfile.TarInfo]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        for e in entries:
            tf.addfile(e, io.BytesIO(b"x" * e.size) if e.isreg() else None)
    return buf.getvalue()


def _info(name: str, kind: bytes = tarfile.REGTYPE, link: str = "") -> tarfile.TarInfo:
    i = tarfile.TarInfo(name)
    i.type, i.linkname = kind, link
    i.size = 1 if kind == tarfile.REGTYPE else 0
    return i


def test_sanitize_keeps_the_workspace_and_drops_anything_that_could_escape_it() -> None:
    raw = _tar(
        [
            _info("workspace", tarfile.DIRTYPE),
            _info("workspace/a.txt"),
            _info("workspace/link", tarfile.SYMTYPE, "/etc"),
            _info("workspace/../usr/bin/python3"),
            _info("/etc/passwd"),
            _info("other/x"),
            _info("workspace/hard", tarfile.LNKTYPE, "usr/bin/python3"),
            _info("workspace/dev", tarfile.CHRTYPE),
        ]
    )
    with tarfile.open(fileobj=io.BytesIO(sanitize(raw, root_name="workspace"))) as tf:
        names = tf.getnames()
    assert names == ["workspace", "workspace/a.txt", "workspace/link"]


def test_tar_of_round_trips_contents_and_modes() -> None:
    raw = tar_of({"test.sh": (b"exit 0\n", 0o755), "sub/data.txt": (b"1", 0o644)})
    assert read_members(raw) == {"sub/data.txt": b"1", "test.sh": b"exit 0\n"}
    with tarfile.open(fileobj=io.BytesIO(raw)) as tf:
        assert tf.getmember("test.sh").mode == 0o755


def _report() -> GateReport:
    tamper = (PathChange(path="/usr/local/bin/python3", kind="A"),)
    return GateReport(
        env_id="env-1",
        verifier_version=1,
        checks=(
            GateCheck(kind=CheckKind.ORACLE, name="oracle", expected=1, observed=(1, 1)),
            GateCheck(kind=CheckKind.NOOP, name="no-op", expected=0, observed=(0, 0)),
            GateCheck(
                kind=CheckKind.PROBE,
                name="probe:path-hijack@no-op",
                expected=0,
                observed=(1, 1),
                tamper=tamper,
            ),
            GateCheck(
                kind=CheckKind.PROBE, name="probe:reward-file@no-op", expected=0, observed=(0, 0)
            ),
            GateCheck(kind=CheckKind.REGRESSION, name="regression:x", expected=0, observed=(0, 1)),
            GateCheck(
                kind=CheckKind.UNSOLVED, name="prefix-1", expected=0, observed=(0, 0), tamper=tamper
            ),
        ),
    )


def test_failing_probe_and_regression_checks_and_tamper_become_findings() -> None:
    found = findings_from_report(_report())
    assert [(f.source, f.rule) for f in found] == [
        ("probe", "probe:path-hijack"),
        ("probe", "regression"),
        ("tamper", "tamper:path-dir"),
    ]
    assert found[0].evidence.diff[0].path == "/usr/local/bin/python3"


def test_finding_ids_are_stable_across_runs_so_the_queue_can_deduplicate() -> None:
    assert [f.id for f in findings_from_report(_report())] == [
        f.id for f in findings_from_report(_report())
    ]


def test_a_flaky_regression_fails_the_verdict_with_its_reason() -> None:
    report = _report()
    assert report.verdict == "failed"
    assert "regression regression:x: flaky, rewards [0, 1]" in report.reasons


def _two_runtime_report(first: str) -> GateReport:
    """Sound under envfactory, broken under harbor; `first` is the reward's own runtime."""
    rows = [
        GateCheck(kind=CheckKind.ORACLE, name="oracle", expected=1, observed=(1,)),
        GateCheck(kind=CheckKind.NOOP, name="no-op", expected=0, observed=(0,)),
        GateCheck(kind=CheckKind.PROBE, name="probe:reward-file@no-op", expected=0, observed=(0,)),
        GateCheck(
            kind=CheckKind.PROBE,
            name="harbor:probe:reward-file@no-op",
            expected=0,
            observed=(1,),
            semantics="harbor",
        ),
    ]
    if first == "harbor":
        rows = [r.model_copy(update={"semantics": "harbor"}) for r in rows[:2]] + rows[3:]
    return GateReport(
        env_id="env-1",
        verifier_version=1,
        checks=tuple(rows),
        semantics=(first, *({"envfactory", "harbor"} - {first})),
    )


def test_a_row_under_another_runtime_restricts_export_but_is_no_finding() -> None:
    report = _two_runtime_report("envfactory")
    assert findings_from_report(report) == ()
    assert report.verdict == "passed" and not report.safe_under("harbor")
    assert [f.rule for f in findings_from_report(_two_runtime_report("harbor"))] == [
        "harbor:probe:reward-file"
    ]
