"""The disk watchdog's measurement and schedule, without Docker."""

from __future__ import annotations

from pathlib import Path

from sandboxes.disk import MIB, Watched, storage_opt_size, usage_bytes


def test_usage_counts_allocated_blocks_so_a_sparse_file_costs_what_it_uses(tmp_path: Path) -> None:
    (tmp_path / "d" / "e").mkdir(parents=True)
    (tmp_path / "d" / "e" / "real").write_bytes(b"x" * (4 * MIB))
    with open(tmp_path / "sparse", "wb") as f:
        f.truncate(1024 * MIB)
    (tmp_path / "link").symlink_to("/usr")  # not followed
    used = usage_bytes([str(tmp_path)])
    assert 4 * MIB <= used < 5 * MIB


def test_a_growing_sandbox_is_measured_before_it_could_reach_its_quota() -> None:
    w = Watched("c", quota=1000 * MIB, paths=[], on_exceeded=lambda _: None)
    assert w.next_interval(poll_s=0.5, now=10.0, used=0) == 0.5  # first look: idle period
    w.used, w.measured_at = 100 * MIB, 10.0
    # 100 MiB/s with 800 MiB to go: due in well under the 8 s it would take
    assert w.next_interval(poll_s=10.0, now=11.0, used=200 * MIB) == 4.0
    # idle but slow to walk: no more than 5 % of a core
    w.walk_s = 0.2
    assert w.next_interval(poll_s=0.5, now=12.0, used=200 * MIB) == 4.0


def test_the_storage_opt_ceiling_leaves_the_watchdog_room_to_report_first() -> None:
    assert storage_opt_size(64) == "128m" and storage_opt_size(10240) == "10752m"
