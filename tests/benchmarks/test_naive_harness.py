"""benchmarks/naive_harness.py on real Docker: the naive way gets the rewards the state
deserves (workspace copied in, verifier run, exit status or Harbor's reward file), and
the rows it samples are spread over every task."""

from __future__ import annotations

import io
import tarfile

import pytest

from benchmarks.naive_harness import NaiveRow, naive_run, naive_verify, sample
from envfactory.core.models import FileEntry, Provenance, Verifier, VerifyScope
from verifiers.runner import PreparedState

pytestmark = pytest.mark.docker

CHECK = b"#!/bin/sh\ngrep -qx 42 /app/out/answer.txt\n"


def _workspace_tar(answer: bytes | None) -> bytes | None:
    """The tar of /app/out as the gates pack it (rooted at its last component)."""
    if answer is None:
        return None
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        d = tarfile.TarInfo("out")
        d.type, d.mode = tarfile.DIRTYPE, 0o755
        tf.addfile(d)
        f = tarfile.TarInfo("out/answer.txt")
        f.size = len(answer)
        tf.addfile(f, io.BytesIO(answer))
    return buf.getvalue()


def _row(image: str, answer: bytes | None, gate_reward: int, *, harbor: bool) -> NaiveRow:
    entry = (
        "if sh check.sh; then echo 1; else echo 0; fi >/logs/verifier/reward.txt"
        if harbor
        else "sh check.sh"
    )
    verifier = Verifier(
        env_id="e",
        files=(FileEntry(path="check.sh", key="0" * 64, mode=0o755),),
        entry=entry,
        provenance=Provenance(author="test"),
        mount_path="/tests",
        reward_dir="/logs/verifier" if harbor else None,
    )
    prepared = PreparedState(image, VerifyScope.WORKSPACE, (("/app/out", _workspace_tar(answer)),))
    return NaiveRow("row", prepared, verifier, {"check.sh": (CHECK, 0o755)}, gate_reward)


@pytest.mark.parametrize("harbor", [False, True], ids=["exit-status", "reward-file"])
def test_the_naive_way_rewards_what_the_state_holds(base_image: str, harbor: bool) -> None:
    assert naive_verify(_row(base_image, b"42\n", 1, harbor=harbor)) == 1
    assert naive_verify(_row(base_image, b"41\n", 0, harbor=harbor)) == 0
    assert naive_verify(_row(base_image, None, 0, harbor=harbor)) == 0


def test_a_run_counts_every_repeat_and_the_rewards_that_agree(base_image: str) -> None:
    rows = [
        _row(base_image, b"42\n", 1, harbor=False),
        _row(base_image, b"7\n", 1, harbor=False),  # the "gates" said 1: a disagreement
    ]
    run = naive_run(rows, repeats=2, concurrency=2)
    assert (run.rows, run.verifications, run.agreed) == (2, 4, 2)
    assert run.wall_s > 0 and run.per_min(run.verifications) > 0


def test_the_sample_takes_each_tasks_share_spread_over_its_rows(base_image: str) -> None:
    a = [_row(base_image, str(i).encode(), 0, harbor=False) for i in range(10)]
    b = [_row(base_image, str(i).encode(), 0, harbor=False) for i in range(3)]
    got = sample([a, b], 6)
    assert got[:3] == [a[0], a[3], a[6]] and got[3:] == b
