"""Malformed and hostile archives (issue 15, item 1): each ends in a clear InvalidPack,
fast, and nothing but pack.json is written before the refusal."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from envfactory.cli import app
from envfactory.core.errors import InvalidPack
from envfactory.packs import export_pack, open_verified, verify_pack

from .conftest import make_item
from .tars import Entry, manifest_bytes, write_tar

ADDED = "envs/env-hello/verifier/files/conftest.py"


def _exported(tmp_path: Path, artifacts) -> Path:
    out = tmp_path / "good.tar"
    export_pack([make_item(artifacts)], out, artifacts=artifacts, created_by="t")
    return out


def _members(src: Path) -> list[Entry]:
    with tarfile.open(src) as tf:
        return [(i.name, tf.extractfile(i).read()) for i in tf]  # type: ignore[union-attr]


def _written(dest: Path) -> dict[str, int]:
    return {
        p.relative_to(dest).as_posix(): p.stat().st_size for p in dest.rglob("*") if p.is_file()
    }


def _refused(pack: Path, dest: Path, match: str) -> None:
    """Refused by verify and by extraction; what was extracted is only listed members,
    each at most its listed size."""
    with pytest.raises(InvalidPack, match=match):
        verify_pack(pack)
    with pytest.raises(InvalidPack, match=match):
        open_verified(pack, dest)
    written = _written(dest)
    if written:
        listed = {
            m["path"]: m["size"] for m in json.loads((dest / "pack.json").read_text())["members"]
        }
        assert all(size <= listed[path] for path, size in written.items() if path != "pack.json")


def test_an_unlisted_member_of_a_gzip_pack_is_refused_before_a_byte_of_it_is_written(
    tmp_path, artifacts
):
    """Regression (issue 15): a 14 MB .tar.gz wrote 2-3 GiB to /tmp before its unlisted
    member was refused."""
    entries = _members(_exported(tmp_path, artifacts))
    zeros = tarfile.TarInfo(ADDED)
    zeros.size = 32 << 20
    pack = tmp_path / "evil.tar.gz"
    with tarfile.open(pack, "w:gz", compresslevel=1) as tf:
        for name, data in entries:  # type: ignore[misc]
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
        tf.addfile(zeros, io.BytesIO(bytes(zeros.size)))
    _refused(pack, tmp_path / "x", f"member {ADDED}: not listed in pack.json")


def test_a_member_larger_than_its_listing_is_refused_at_its_header(tmp_path, artifacts):
    entries = _members(_exported(tmp_path, artifacts))
    name, data = entries[-1]  # type: ignore[misc]
    pack = write_tar(tmp_path / "evil.tar", [*entries[:-1], (name, data + b"x" * 100)])
    _refused(
        pack,
        tmp_path / "x",
        f"member {name}: {len(data) + 100} bytes in the archive, pack.json lists {len(data)}",
    )


def test_a_file_member_followed_by_a_path_under_it_is_refused(tmp_path):
    """Regression (issue 15): a file `a` then `a/b` ended in a NotADirectoryError traceback."""
    listed = {"a": b"x"}
    pack = write_tar(
        tmp_path / "evil.tar", [("pack.json", manifest_bytes(listed)), ("a", b"x"), ("a/b", b"y")]
    )
    _refused(pack, tmp_path / "x", "member a/b: not listed in pack.json")


def test_a_manifest_listing_a_path_as_file_and_folder_is_refused(tmp_path):
    listed = {"a": b"x", "a/b": b"y"}
    pack = write_tar(
        tmp_path / "evil.tar", [("pack.json", manifest_bytes(listed)), ("a", b"x"), ("a/b", b"y")]
    )
    _refused(pack, tmp_path / "x", "member 'a' is listed as a file and as a folder")


def test_a_300_character_name_is_refused_with_a_message(tmp_path):
    """Regression (issue 15): a 300-character member name ended in an OSError traceback."""
    name = "envs/" + "n" * 300
    pack = write_tar(tmp_path / "evil.tar", [("pack.json", manifest_bytes({})), (name, b"x")])
    _refused(pack, tmp_path / "x", "name too long, one part is 300 bytes .at most 255.")


def test_a_folder_that_holds_no_listed_file_is_refused(tmp_path):
    folder = tarfile.TarInfo("envs/other")
    folder.type = tarfile.DIRTYPE
    pack = write_tar(
        tmp_path / "evil.tar", [("pack.json", manifest_bytes({"a/b": b"x"})), folder, ("a/b", b"x")]
    )
    _refused(pack, tmp_path / "x", "'envs/other': a folder holding no file that pack.json lists")


def test_a_member_before_the_manifest_is_refused(tmp_path):
    pack = write_tar(
        tmp_path / "evil.tar", [("a/b", b"x"), ("pack.json", manifest_bytes({"a/b": b"x"}))]
    )
    _refused(
        pack, tmp_path / "x", "no pack.json at the start of the archive .the first member is 'a/b'."
    )


@pytest.mark.parametrize("mode", ["w", "w:gz"])
def test_a_tar_cut_inside_a_member_is_reported_as_truncated(tmp_path, mode):
    """Regression (issue 15): a tar cut mid-member was reported as "members missing"."""
    listed = {"a.bin": bytes(range(256)) * 400, "b.bin": b"b" * 50_000}
    full = write_tar(
        tmp_path / f"full.{mode}", [("pack.json", manifest_bytes(listed)), *listed.items()], mode
    )
    data = full.read_bytes()
    cut = tmp_path / ("cut.tar.gz" if mode == "w:gz" else "cut.tar")
    cut.write_bytes(data[: len(data) * 3 // 4 if mode == "w" else len(data) - 200])
    _refused(cut, tmp_path / "x", "archive is truncated")


def test_a_tar_cut_between_members_is_reported_as_truncated(tmp_path):
    listed = {"a.bin": b"a" * 1000, "b.bin": b"b" * 1000}
    full = write_tar(
        tmp_path / "full.tar", [("pack.json", manifest_bytes(listed)), *listed.items()]
    )
    with tarfile.open(full) as tf:
        end_of_a = next(i for i in tf if i.name == "a.bin").offset_data + 1024
    cut = tmp_path / "cut.tar"
    cut.write_bytes(full.read_bytes()[:end_of_a])
    listed_only_a = {"a.bin": b"a" * 1000}
    small = write_tar(
        tmp_path / "small.tar",
        [("pack.json", manifest_bytes(listed_only_a)), *listed_only_a.items()],
    )
    small.write_bytes(small.read_bytes()[: -10240 + 3000])  # keep a.bin, drop the end blocks
    _refused(cut, tmp_path / "x", "archive is truncated")
    _refused(small, tmp_path / "y", "archive is truncated .it ends after member a.bin without")


def test_a_damaged_header_is_reported_as_corrupt_not_as_the_end(tmp_path):
    listed = {"a.bin": b"a" * 1000, "b.bin": b"b" * 1000}
    full = write_tar(
        tmp_path / "full.tar", [("pack.json", manifest_bytes(listed)), *listed.items()]
    )
    with tarfile.open(full) as tf:
        at = next(i for i in tf if i.name == "b.bin").offset
    data = bytearray(full.read_bytes())
    data[at + 148 : at + 156] = b"garbage!"  # the header checksum
    bad = tmp_path / "bad.tar"
    bad.write_bytes(bytes(data))
    _refused(bad, tmp_path / "x", "corrupt tar archive .a damaged header after member a.bin")


def _cut(data: bytes) -> bytes:
    return data[: len(data) * 2 // 3]


CLI_CASES = {
    "file then a path under it": ([("x", b"1"), ("x/y", b"2")], None, "member x: not listed"),
    "300-character name": ([("envs/" + "n" * 300, b"x")], None, "name too long"),
    "unlisted member": ([(ADDED, b"pass\n")], None, f"member {ADDED}: not listed in pack.json"),
    "cut mid-member": ([], _cut, "archive is truncated"),
}


@pytest.mark.parametrize("extra,damage,says", CLI_CASES.values(), ids=CLI_CASES.keys())
def test_pack_import_of_a_malformed_archive_exits_two_with_the_reason_and_stores_nothing(
    tmp_path, artifacts, extra, damage, says
):
    entries = _members(_exported(tmp_path, artifacts))
    pack = write_tar(tmp_path / "evil.tar", [*entries, *extra])
    if damage:
        pack.write_bytes(damage(pack.read_bytes()))
    _refused_by_import(pack, tmp_path / "home", says)


def test_a_pack_with_no_environments_is_refused_by_import_and_stores_nothing(tmp_path):
    pack = write_tar(tmp_path / "empty.tar", [("pack.json", manifest_bytes({}))])
    verify_pack(pack)  # a well-formed archive: only importing it makes no sense
    _refused_by_import(pack, tmp_path / "home", "lists no environments")


def _refused_by_import(pack: Path, home: Path, says: str) -> None:
    """`pack import` exits 2 saying why, with no traceback, and stores nothing."""
    res = CliRunner().invoke(
        app,
        ["pack", "import", str(pack), "--no-build", "--json"],
        env={"ENVFACTORY_HOME": str(home)},
    )
    assert res.exit_code == 2, res.output
    assert says in res.output and "Traceback" not in res.output
    from envfactory.core.settings import Settings
    from envfactory.store import Store

    store = Store.from_settings(Settings(home=home))
    assert store.packs.list() == [] and store.environments.list() == []
