"""Base images by release on the real engine: Dockerfiles that name Debian 13, Ubuntu 24.04
or Python 3.13 build on the local trixie base; bookworm references keep the bookworm base.

The trixie base is built once (about a minute and a half here) and then reused by recipe
hash, like bookworm: these tests are `slow`.
"""

from __future__ import annotations

import uuid

import pytest

from envfactory.core.models import Purpose
from envfactory.core.settings import SandboxSettings
from sandboxes import DockerEngine
from tests.sandboxes.test_builds import context

pytestmark = [pytest.mark.docker, pytest.mark.slow]


@pytest.fixture(scope="module")
def trixie(docker_engine: DockerEngine) -> str:
    return docker_engine.ensure_base_image("minimal", release="trixie")


@pytest.fixture(scope="module")
def trixie_python(docker_engine: DockerEngine, trixie: str) -> str:
    return docker_engine.ensure_base_image("python", release="trixie")


def _build(engine: DockerEngine, dockerfile: str):  # type: ignore[no-untyped-def]
    # A unique line: the test proves a build, not a cache hit from an earlier session.
    return engine.build(context({"Dockerfile": f"{dockerfile}RUN echo {uuid.uuid4().hex}\n"}))


def test_a_dockerfile_for_debian_13_builds_on_trixie_without_a_warning(
    docker_engine: DockerEngine, trixie: str
) -> None:
    res = _build(
        docker_engine,
        'FROM debian:13.0-slim\nRUN . /etc/os-release && test "$VERSION_ID" = 13\n'
        "RUN grep -q 'Suites: trixie' /etc/apt/sources.list.d/debian.sources\n",
    )
    try:
        assert res.substitutions == (f"debian:13.0-slim -> {trixie}",)
        assert res.warnings == ()
    finally:
        docker_engine.remove_image(res.tag)


def test_a_dockerfile_for_ubuntu_24_04_builds_on_trixie_with_a_warning_naming_it(
    docker_engine: DockerEngine, trixie: str
) -> None:
    res = _build(
        docker_engine, 'FROM ubuntu:24.04\nRUN . /etc/os-release && test "$VERSION_ID" = 13\n'
    )
    try:
        assert res.substitutions == (f"ubuntu:24.04 -> {trixie}",)
        assert len(res.warnings) == 1
        assert res.warnings[0].startswith(f"ubuntu:24.04 -> {trixie}: Ubuntu 24.04 (noble)")
        assert "Debian 13 (trixie)" in res.warnings[0]
    finally:
        docker_engine.remove_image(res.tag)


def test_a_dockerfile_for_python_3_13_gets_python_3_13(
    docker_engine: DockerEngine, trixie_python: str
) -> None:
    res = _build(docker_engine, "FROM python:3.13-slim\nRUN pip --version\n")
    try:
        assert res.substitutions == (f"python:3.13-slim -> {trixie_python}",)
        assert res.warnings == ()
        with docker_engine.sandbox(res.image, purpose=Purpose.TEST) as sb:
            out = sb.exec(
                "python3.13 -c 'import sys; print(sys.version_info[:2])' && which python3"
            )
        assert out.exit_code == 0, out.stderr
        assert out.stdout.split() == ["(3,", "13)", "/usr/local/bin/python3"]
    finally:
        docker_engine.remove_image(res.tag)


def test_bookworm_references_keep_the_bookworm_base_without_warnings(
    docker_engine: DockerEngine, base_image: str
) -> None:
    res = _build(
        docker_engine,
        "FROM python:3.11-slim\nRUN python3 -c 'import sys; assert sys.version_info[:2] == (3, 11)'\n"
        'FROM debian:12-slim\nRUN . /etc/os-release && test "$VERSION_ID" = 12\n',
    )
    try:
        bookworm = docker_engine.ensure_base_image("minimal")
        assert res.substitutions == (
            f"python:3.11-slim -> {base_image}",
            f"debian:12-slim -> {bookworm}",
        )
        assert res.warnings == ()
    finally:
        docker_engine.remove_image(res.tag)


def test_the_users_from_map_wins_over_the_release_map_and_carries_no_warning(
    docker_engine: DockerEngine, base_image: str
) -> None:
    settings = SandboxSettings(from_map={"ubuntu:24.04": base_image})
    engine = DockerEngine(settings, client=docker_engine.client, run_id=docker_engine.run_id)
    res = _build(engine, "FROM ubuntu:24.04\n")
    try:
        assert res.substitutions == (f"ubuntu:24.04 -> {base_image}",) and res.warnings == ()
    finally:
        engine.remove_image(res.tag)
