"""The probes built from the oracle's workspace (pure: workspace tars in memory)."""

from __future__ import annotations

import json

from verifiers.archives import tar_of
from verifiers.probes import FieldsDropped, TruncatedOutputs

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


def test_fields_dropped_keeps_the_summary_figures_and_drops_the_breakdown() -> None:
    probe = FieldsDropped.for_oracle(ORACLE, PRISTINE)
    assert list(probe.files) == ["/app/out/summary.json"]
    assert json.loads(probe.files["/app/out/summary.json"]) == {"total": 1, "rows": 1}


def test_nothing_to_drop_means_no_probe() -> None:
    flat = [("/app", tar_of({"app/out/one.json": (b'{"total": 1}', 0o644)}))]
    assert FieldsDropped.for_oracle(flat, PRISTINE).files == {}
