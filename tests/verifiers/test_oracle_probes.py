"""The probes built from the oracle's workspace (pure: workspace tars in memory)."""

from __future__ import annotations

import json

from verifiers.archives import tar_of
from verifiers.probes import FieldsDropped, TruncatedOutputs, mentioned_paths
from verifiers.probes.undone import named_programs

PRISTINE = [("/app", tar_of({"app/data.csv": (b"a,1\n", 0o644), "app/old.json": (b"{}", 0o644)}))]
ORACLE = [
    (
        "/app",
        tar_of(
            {
                "app/data.csv": (b"a,1\n", 0o644),  # unchanged input
                "app/old.json": (b"{}", 0o644),  # unchanged
                "app/out/summary.json": (b'{"regions": {"a": 1}, "total": 1, "rows": 1}', 0o644),
                "app/out/users.txt": (b"alice\nbob\ncarol\n", 0o644),
                "app/__pycache__/x.cpython-311.pyc": (b"\0", 0o644),  # a by-product
            }
        ),
    )
]


def test_truncated_outputs_cut_only_what_the_oracle_wrote() -> None:
    probe = TruncatedOutputs.for_oracle(ORACLE, PRISTINE)
    assert probe.paths == ("/app/out/summary.json", "/app/out/users.txt")


def test_truncated_outputs_leave_a_file_whose_end_the_oracle_did_not_write() -> None:
    """A fix in the middle of a source file (a mined commit) keeps the file's last line:
    cutting it removes nothing the solution wrote. A changed end is still cut."""
    source = b"def f():\n    return 1\n\n\ndef g():\n    return 2\n"
    report = b"total,1\nrows,1\n"
    pristine = [
        ("/app", tar_of({"app/lib.py": (source, 0o644), "app/report.csv": (report, 0o644)}))
    ]
    oracle = [
        (
            "/app",
            tar_of(
                {
                    "app/lib.py": (source.replace(b"return 1", b"return 10"), 0o644),
                    "app/report.csv": (b"total,2\nrows,2\n", 0o644),
                }
            ),
        )
    ]
    assert TruncatedOutputs.for_oracle(oracle, pristine).paths == ("/app/report.csv",)


def test_fields_dropped_keeps_the_summary_figures_and_drops_the_breakdown() -> None:
    probe = FieldsDropped.for_oracle(ORACLE, PRISTINE)
    assert list(probe.files) == ["/app/out/summary.json"]
    assert json.loads(probe.files["/app/out/summary.json"]) == {"total": 1, "rows": 1}


def test_nothing_to_drop_means_no_probe() -> None:
    flat = [("/app", tar_of({"app/out/one.json": (b'{"total": 1}', 0o644)}))]
    assert FieldsDropped.for_oracle(flat, PRISTINE).files == {}


REPORT = (
    b"# Recovery\n\nRecovered 37 orders (ids 121-157).\n\n"
    b"They were only in the write-ahead log, which SQLite never looked for.\n"
)
INSTRUCTION = (
    "Write /app/RECOVERY.md stating how many orders you recovered and their id range, and "
    "write the per-region totals to /app/out/users.txt."
)


def _oracle_with(files: dict[str, bytes]) -> list[tuple[str, bytes]]:
    return [("/app", tar_of({f"app/{k}": (v, 0o644) for k, v in files.items()}))]


def test_a_prose_cut_that_removes_no_number_or_name_is_a_tolerance() -> None:
    """Regression (make demo's sqlite seed): the last line of a Markdown report explains,
    in prose, what no verifier can grade; cutting it leaves every fact the task asks the
    report to state. A data output's cut stays a probe."""
    oracle = _oracle_with({"RECOVERY.md": REPORT, "out/users.txt": b"alice\nbob\ncarol\n"})
    after = {"/app/RECOVERY.md": REPORT, "/app/out/users.txt": b"alice\nbob\ncarol\n"}
    cut, prose = TruncatedOutputs.for_oracle(oracle, PRISTINE).without_prose(after, INSTRUCTION)
    assert prose.paths == ("/app/RECOVERY.md",) and prose.name == "truncated-prose"
    # users.txt is plain text too, but its cut removes "carol": no number and no name the
    # instruction uses, yet a record of data (one word, no sentence), so it stays graded
    assert cut.paths == ("/app/out/users.txt",)


def test_a_prose_cut_that_removes_a_number_or_a_named_thing_stays_a_probe() -> None:
    numbers_last = b"# Recovery\n\nThe restore lost them.\nRecovered 37 orders (ids 121-157).\n"
    names_last = b"# Report\n\nSee the log.\nThe fix is in recover_wal.py.\n"
    instruction = INSTRUCTION + " Name the script you wrote (recover_wal.py)."
    for report in (numbers_last, names_last):
        after = {"/app/RECOVERY.md": report}
        cut, prose = TruncatedOutputs(("/app/RECOVERY.md",)).without_prose(after, instruction)
        assert cut.paths == ("/app/RECOVERY.md",) and prose.paths == ()


def test_what_a_named_program_left_behind_is_a_tolerance_not_a_probe() -> None:
    """Regression (tests/precision, b-logrotate-ini): the task is a rotation script the
    instruction names; the reference ran it once, which rotated the sample logs. A
    verifier running the script on logs of its own rightly ignores those: their cut is a
    tolerance. Files the instruction names stay cut by the probe, and with no named
    program nothing moves (any file the reference wrote may be the answer)."""
    oracle = _oracle_with(
        {
            "rotate.py": b"#!/usr/bin/env python3\nimport configparser\nprint('rotated')\n",
            "rotate.ini": b"[rotate]\nkeep = 3\nmax_bytes = 100\n",
            "logs/api.log.1": b"line 1\nline 2\nline 3\n",
        }
    )
    instruction = "Make /app/rotate.py read its settings from /app/rotate.ini."
    named = mentioned_paths(instruction, "/app")
    programs = named_programs(oracle, PRISTINE, named)
    assert programs == ["/app/rotate.py"]
    everything = TruncatedOutputs.for_oracle(oracle, PRISTINE)
    cut, left = everything.without_by_products(named, programs)
    assert cut.paths == ("/app/rotate.ini", "/app/rotate.py")
    assert left.paths == ("/app/logs/api.log.1",) and left.name == "truncated-by-products"
    data_only = "Write the rotation settings to /app/rotate.ini."
    cut, left = everything.without_by_products(mentioned_paths(data_only, "/app"), [])
    assert cut.paths == everything.paths and left.paths == ()
