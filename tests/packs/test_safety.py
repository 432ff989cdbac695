"""Unsafe archives and folders are refused with an error that names the member."""

from __future__ import annotations

import os
import tarfile
from pathlib import Path

import pytest

from envfactory.core.errors import InvalidPack
from envfactory.packs import PackLimits, open_verified, verify_pack
from envfactory.packs.safety import check_member_name

from .tars import manifest_bytes, with_manifest, write_tar


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
    "duplicate name": ([("a.txt", b"x"), ("a.txt", b"x")], "occurs twice"),
    "too many members": ([(f"f{i}", b"") for i in range(6)], "lists 6 members, more than 5"),
    "oversize member": ([("big.bin", b"x" * 200)], "'big.bin' is 200 bytes, more than 100"),
    "oversize total": ([(f"f{i}", b"x" * 90) for i in range(3)], "lists 270 bytes, more than 250"),
    "backslash name": ([("envs\\..\\evil", b"x")], "backslash"),
    "control character in a name": ([("envs/a/b\nc", b"x")], "control character"),
    "a 300-character name": ([("envs/" + "n" * 300, b"x")], "name too long, one part is 300"),
    "a 1100-byte path": ([("/".join(["d" * 100] * 11), b"x")], "name too long, 1110 bytes"),
}

LIMITS = PackLimits(
    max_members=5, max_member_bytes=100, max_total_bytes=250, max_manifest_bytes=4096
)


@pytest.mark.parametrize("case", sorted(UNSAFE))
def test_an_unsafe_tar_is_refused_before_anything_is_used(tmp_path, case):
    entries, message = UNSAFE[case]
    safe = {
        e[0]: e[1]
        for e in entries
        if isinstance(e, tuple)
        and "\\" not in e[0]
        and "\n" not in e[0]
        and len(e[0]) < 250
        and not e[0].startswith(("/", "."))
        and ".." not in e[0]
    }
    pack = write_tar(tmp_path / "evil.tar", with_manifest(entries, safe))
    with pytest.raises(InvalidPack, match=message):
        verify_pack(pack, LIMITS)
    with pytest.raises(InvalidPack, match=message):
        open_verified(pack, tmp_path / "out" / "x", LIMITS)
    # nothing was written outside the extraction folder
    assert sorted(p.name for p in tmp_path.iterdir()) == ["evil.tar", "out"]


def _zeros_bomb(pack: Path, n: int = 4) -> Path:
    zeros = {f"zeros{i}": bytes(1 << 20) for i in range(n)}
    write_tar(pack, with_manifest(list(zeros.items())), "w:gz")
    assert pack.stat().st_size < 50_000  # tiny on disk, 4 MiB unpacked
    return pack


def test_a_gzip_bomb_is_stopped_by_the_total_limit_before_a_byte_is_written(tmp_path):
    pack = _zeros_bomb(tmp_path / "bomb.tar.gz")
    with pytest.raises(InvalidPack, match="lists 4194304 bytes, more than 3145728"):
        open_verified(pack, tmp_path / "x", PackLimits(max_total_bytes=3 << 20))
    assert not any((tmp_path / "x").iterdir())


def test_a_gzip_bomb_is_stopped_by_its_expansion_ratio_before_a_byte_is_written(tmp_path):
    pack = _zeros_bomb(tmp_path / "bomb.tar.gz")
    with pytest.raises(InvalidPack, match="more than 100 times its size .an archive bomb"):
        open_verified(pack, tmp_path / "x", PackLimits(expansion_floor_bytes=1 << 20))
    assert not any((tmp_path / "x").iterdir())


def test_a_folder_pack_with_an_escaping_symlink_is_refused(tmp_path):
    (tmp_path / "pack/envs/a").mkdir(parents=True)
    (tmp_path / "pack/pack.json").write_bytes(manifest_bytes({}))
    os.symlink("/etc/passwd", tmp_path / "pack/envs/a/instruction.md")
    with pytest.raises(InvalidPack, match="envs/a/instruction.md.*escapes the pack"):
        verify_pack(tmp_path / "pack")


def test_a_folder_pack_with_a_hardlinked_file_is_refused(tmp_path):
    (tmp_path / "pack").mkdir()
    (tmp_path / "pack/pack.json").write_bytes(manifest_bytes({}))
    (tmp_path / "outside.txt").write_text("secret")
    os.link(tmp_path / "outside.txt", tmp_path / "pack/inside.txt")
    with pytest.raises(InvalidPack, match="inside.txt.*hardlink"):
        verify_pack(tmp_path / "pack")


def test_a_file_that_is_not_a_pack_is_refused(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(InvalidPack, match="neither a pack folder nor a tar"):
        verify_pack(tmp_path / "notes.txt")


def test_a_tar_without_a_manifest_is_refused(tmp_path):
    pack = write_tar(tmp_path / "p.tar", [("envs/a/solver/instruction.md", b"hi")])
    with pytest.raises(InvalidPack, match="no pack.json at the start of the archive"):
        verify_pack(pack)


@pytest.mark.parametrize("name", ["a/b.txt", "./a/b.txt", "a//b.txt"])
def test_plain_relative_names_are_accepted(name):
    assert check_member_name(name) == "a/b.txt"
