"""Pure parts of builds and base images: FROM-rewriting, content hashing, mirror discovery."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import docker
import pytest

from envfactory.core.errors import SandboxError
from envfactory.core.models import PathChange
from sandboxes.base_image import BaseRecipe, build_minimal, find_mirror
from sandboxes.builds import BUILTIN_MAP, Context, match_map, rewrite_from_lines
from sandboxes.sandbox import _drop_engine_artifacts

LOCAL = {"python:3.12-slim": "envfactory/base-python:abc", "ubuntu:22.04": "envfactory/base:def"}


def test_from_lines_are_rewritten_and_reported_and_stage_names_are_left_alone() -> None:
    dockerfile = (
        "FROM --platform=linux/amd64 python:3.12-slim AS build\n"
        "RUN echo hi\n"
        "FROM build\n"
        "from docker.io/library/ubuntu:22.04\n"
        "FROM alpine:3\n"
    )
    text, subs = rewrite_from_lines(dockerfile, LOCAL.get)
    assert text == (
        "FROM --platform=linux/amd64 envfactory/base-python:abc AS build\n"
        "RUN echo hi\n"
        "FROM build\n"
        "from envfactory/base:def\n"
        "FROM alpine:3\n"
    )
    assert subs == (
        "python:3.12-slim -> envfactory/base-python:abc",
        "docker.io/library/ubuntu:22.04 -> envfactory/base:def",
    )


def test_map_patterns_match_exactly_or_by_glob_in_order() -> None:
    mapping = {"node:20": "local/node", "python:*": "local/py"}
    assert match_map("node:20", mapping) == "local/node"
    assert match_map("node:18", mapping) is None
    assert match_map("python:3.11-bookworm", mapping) == "local/py"


def _tar(files: dict[str, bytes], mtime: int) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size, info.mtime = len(data), mtime
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def test_the_content_hash_ignores_mtimes_and_order_but_not_bytes() -> None:
    a = Context.from_tar(_tar({"Dockerfile": b"FROM x\n", "f": b"1"}, mtime=1))
    b = Context.from_tar(_tar({"f": b"1", "Dockerfile": b"FROM x\n"}, mtime=999))
    c = Context.from_tar(_tar({"Dockerfile": b"FROM x\n", "f": b"2"}, mtime=1))
    assert a.content_hash("Dockerfile") == b.content_hash("Dockerfile")
    assert a.content_hash("Dockerfile") != c.content_hash("Dockerfile")


def test_the_mirror_comes_from_the_hosts_deb822_sources(tmp_path: Path) -> None:
    (tmp_path / "sources.list.d").mkdir()
    (tmp_path / "sources.list.d" / "debian.sources").write_text(
        "Types: deb\nURIs: http://mirror.example/debian-security\nSuites: bookworm-security\n\n"
        "Types: deb\nURIs: http://mirror.example/debian/\nSuites: bookworm bookworm-updates\n"
    )
    assert find_mirror("bookworm", tmp_path) == "http://mirror.example/debian"


def test_the_recipe_hash_changes_with_the_recipe() -> None:
    one = BaseRecipe(mirror="http://m", ca_sha256="0" * 64)
    assert one.hash() == BaseRecipe(mirror="http://m", ca_sha256="0" * 64).hash()
    assert one.hash() != BaseRecipe(mirror="http://m", ca_sha256="1" * 64).hash()
    assert (
        one.hash() != BaseRecipe(mirror="http://m", ca_sha256="0" * 64, packages=("bash",)).hash()
    )


def test_diff_hides_the_init_mount_point_but_not_real_changes_beside_it() -> None:
    def pc(path: str, kind: str) -> PathChange:
        return PathChange(path=path, kind=kind)  # type: ignore[arg-type]

    only_init = [pc("/usr", "C"), pc("/usr/sbin", "C"), pc("/usr/sbin/docker-init", "A")]
    assert _drop_engine_artifacts(only_init) == []
    with_real = [*only_init, pc("/usr/sbin/evil", "A")]
    assert _drop_engine_artifacts(with_real) == [
        pc("/usr", "C"),
        pc("/usr/sbin", "C"),
        pc("/usr/sbin/evil", "A"),
    ]


def test_a_suite_the_host_does_not_list_comes_from_the_hosts_debian_mirror(
    tmp_path: Path,
) -> None:
    """A bookworm host builds trixie from the mirror it already uses, not a guessed one."""
    (tmp_path / "sources.list.d").mkdir()
    (tmp_path / "sources.list.d" / "debian.sources").write_text(
        "Types: deb\nURIs: http://mirror.example/debian-security\nSuites: bookworm-security\n\n"
        "Types: deb\nURIs: http://mirror.example/debian/\nSuites: bookworm bookworm-updates\n"
    )
    (tmp_path / "sources.list").write_text("deb http://other.example/nodesource nodistro main\n")
    assert find_mirror("trixie", tmp_path) == "http://mirror.example/debian"


STANDINS = {
    # reference: (flavour, release, warns)
    "debian:12-slim": ("minimal", "bookworm", False),
    "debian:bookworm": ("minimal", "bookworm", False),
    "debian:13.0-slim": ("minimal", "trixie", False),
    "debian:trixie-slim": ("minimal", "trixie", False),
    "debian:latest": ("minimal", "trixie", False),
    "debian:stable-slim": ("minimal", "trixie", False),
    "debian": ("minimal", "trixie", False),
    "debian:bullseye": ("minimal", "bookworm", True),
    "debian:sid": ("minimal", "trixie", True),
    "ubuntu:24.04": ("minimal", "trixie", True),
    "ubuntu:noble-20240801": ("minimal", "trixie", True),
    "ubuntu:22.04": ("minimal", "bookworm", True),
    "ubuntu:20.04": ("minimal", "bookworm", True),
    "ubuntu": ("minimal", "trixie", True),
    "python:3.11-slim": ("python", "bookworm", False),
    "python:3.11-slim-bookworm": ("python", "bookworm", False),
    "python:3.12-slim": ("python", "trixie", True),
    "python:3.13-slim": ("python", "trixie", False),
    "python:3.13": ("python", "trixie", False),
    "python:3.13-slim-bookworm": ("python", "trixie", True),
    "python:3.11-slim-trixie": ("python", "bookworm", True),
    "python:3.10": ("python", "bookworm", True),
    "python:3.9-slim": ("python", "bookworm", True),
    "python:3.14-slim": ("python", "trixie", True),
}


def test_each_public_reference_maps_to_the_base_of_the_release_it_names() -> None:
    got = {}
    for ref in STANDINS:
        s = match_map(ref, BUILTIN_MAP)
        assert s is not None, ref
        got[ref] = (s.flavour, s.release, s.warning(ref, "local:x") is not None)
    assert got == STANDINS
    assert match_map("alpine:3", BUILTIN_MAP) is None
    assert match_map("node:20-bookworm", BUILTIN_MAP) is None


def test_a_release_warning_names_the_substitution_and_both_releases() -> None:
    standin = match_map("ubuntu:24.04", BUILTIN_MAP)
    assert standin is not None
    warning = standin.warning("ubuntu:24.04", "envfactory/base:abc")
    assert warning is not None
    assert warning.startswith("ubuntu:24.04 -> envfactory/base:abc: Ubuntu 24.04 (noble)")
    assert "Debian 13 (trixie)" in warning
    py = match_map("python:3.12-slim", BUILTIN_MAP)
    assert py is not None and "Python 3.13 on Debian 13" in (
        py.warning("python:3.12-slim", "x") or ""
    )


def test_a_failed_debootstrap_says_what_it_printed_and_where_it_built(tmp_path: Path) -> None:
    # the demo's console shows only the error: debootstrap's own last words must be in it
    recipe = BaseRecipe(mirror="http://127.0.0.1:1/debian", ca_sha256="0" * 64)
    with pytest.raises(SandboxError) as err:
        build_minimal(docker.from_env(), recipe, workdir=tmp_path)
    assert "debootstrap failed with exit code" in str(err.value)
    assert "127.0.0.1:1" in str(err.value) or "Release" in str(err.value), str(err.value)
    assert str(tmp_path) in (err.value.hint or "")
