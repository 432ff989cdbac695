"""Unsafe archives and folders are refused with an error that names the member."""

from __future__ import annotations

import io
import os
import tarfile
from pathlib import Path

import pytest

from envfactory.core.errors import InvalidPack
from envfactory.packs import PackLimits, open_verified, verify_pack
from envfactory.packs.safety import check_member_name


def _tar(path: Path, entries: list[tarfile.TarInfo | tuple[str, bytes]]) -> Path:
    with tarfile.open(path, "w") as tf:
        for e in entries:
            if isinstance(e, tarfile.TarInfo):
                tf.addfile(e)
            else:
                info = tarfile.TarInfo(e[0])
                info.size = len(e[1])
                tf.addfile(info, io.BytesIO(e[1]))
    return path


def _link(name: str, target: str, kind: bytes) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = target
    return info


def _special(name: str, kind: bytes) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    return info


UNSAFE = {
    "absolute path": ([("/etc/cron.d/evil", b"x")], "absolute path"),
    "traversal": ([("../evil.sh", b"x")], r"path traversal"),
    "traversal inside": ([("envs/a/../../../evil", b"x")], r"path traversal"),
    "symlink to an absolute path": (
        [_link("envs/a/x", "/etc/passwd", tarfile.SYMTYPE)],
        "escapes the pack",
    ),
    "symlink climbing out": (
        [_link("envs/a/x", "../../../etc", tarfile.SYMTYPE)],
        "escapes the pack",
    ),
    "hardlink climbing out": (
        [_link("envs/a/x", "../outside", tarfile.LNKTYPE)],
        "escapes the pack",
    ),
    "symlink inside the pack": (
        [("a.txt", b"x"), _link("b.txt", "a.txt", tarfile.SYMTYPE)],
        "not allowed",
    ),
    "hardlink inside the pack": (
        [("a.txt", b"x"), _link("b.txt", "a.txt", tarfile.LNKTYPE)],
        "not allowed",
    ),
    "fifo": ([_special("envs/a/pipe", tarfile.FIFOTYPE)], "device or FIFO"),
    "character device": ([_special("envs/a/null", tarfile.CHRTYPE)], "device or FIFO"),
    "duplicate name": ([("pack.json", b"{}"), ("pack.json", b"{}")], "occurs twice"),
    "too many members": ([(f"f{i}", b"") for i in range(6)], "more than 5 members"),
    "oversize member": ([("big.bin", b"x" * 200)], "exceeds the 100-byte member limit"),
    "oversize total": ([(f"f{i}", b"x" * 90) for i in range(3)], "exceeds 250 bytes in total"),
    "backslash name": ([("envs\\..\\evil", b"x")], "backslash"),
    "oversize manifest": (
        [("pack.json", b" " * 60)],
        "pack.json: 60 bytes exceeds the 50-byte limit",
    ),
}

LIMITS = PackLimits(max_members=5, max_member_bytes=100, max_total_bytes=250, max_manifest_bytes=50)


@pytest.mark.parametrize("case", sorted(UNSAFE))
def test_an_unsafe_tar_is_refused_before_anything_is_used(tmp_path, case):
    entries, message = UNSAFE[case]
    pack = _tar(tmp_path / "evil.tar", entries)
    with pytest.raises(InvalidPack, match=message):
        verify_pack(pack, LIMITS)
    with pytest.raises(InvalidPack, match=message):
        open_verified(pack, tmp_path / "out" / "x", LIMITS)
    # nothing was written outside the extraction folder
    assert sorted(p.name for p in tmp_path.iterdir()) == ["evil.tar", "out"]


def test_a_gzip_bomb_is_stopped_by_the_total_limit(tmp_path):
    pack = tmp_path / "bomb.tar.gz"
    with tarfile.open(pack, "w:gz") as tf:
        for i in range(4):
            info = tarfile.TarInfo(f"zeros{i}")
            info.size = 1 << 20
            tf.addfile(info, io.BytesIO(bytes(1 << 20)))
    assert pack.stat().st_size < 50_000  # tiny on disk, 4 MiB unpacked
    with pytest.raises(InvalidPack, match="in total"):
        open_verified(pack, tmp_path / "x", PackLimits(max_total_bytes=3 << 20))


def test_a_folder_pack_with_an_escaping_symlink_is_refused(tmp_path):
    (tmp_path / "pack/envs/a").mkdir(parents=True)
    os.symlink("/etc/passwd", tmp_path / "pack/envs/a/instruction.md")
    with pytest.raises(InvalidPack, match="envs/a/instruction.md.*escapes the pack"):
        verify_pack(tmp_path / "pack")


def test_a_folder_pack_with_a_hardlinked_file_is_refused(tmp_path):
    (tmp_path / "pack").mkdir()
    (tmp_path / "outside.txt").write_text("secret")
    os.link(tmp_path / "outside.txt", tmp_path / "pack/inside.txt")
    with pytest.raises(InvalidPack, match="inside.txt.*hardlink"):
        verify_pack(tmp_path / "pack")


def test_a_file_that_is_not_a_pack_is_refused(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(InvalidPack, match="neither a pack folder nor a tar"):
        verify_pack(tmp_path / "notes.txt")


def test_a_tar_without_a_manifest_is_refused(tmp_path):
    pack = _tar(tmp_path / "p.tar", [("envs/a/solver/instruction.md", b"hi")])
    with pytest.raises(InvalidPack, match="no pack.json"):
        verify_pack(pack)


@pytest.mark.parametrize("name", ["a/b.txt", "./a/b.txt", "a//b.txt"])
def test_plain_relative_names_are_accepted(name):
    assert check_member_name(name) == "a/b.txt"
