"""Untrusted Dockerfiles make the daemon fetch nothing (issue 46, item 2): pure, no engine.

Red-team finding: a pack built offline fetched `ADD http://127.0.0.1:PORT/…` from a
listener on the host, and `COPY --from=` copied a file out of a private local image.
"""

from __future__ import annotations

import pytest

from envfactory.core.errors import ImageBuildFailed
from sandboxes.dockerfile_policy import check_untrusted

BASES = {"python:3.11-slim", "debian:12", "envfactory/base:abc"}


def check(text: str) -> None:
    check_untrusted(text, BASES.__contains__, where="environment/Dockerfile")


def refused(text: str) -> ImageBuildFailed:
    with pytest.raises(ImageBuildFailed) as err:
        check(text)
    return err.value


@pytest.mark.parametrize(
    "line",
    [
        "ADD http://127.0.0.1:8000/secret /s",
        "ADD https://169.254.169.254/latest/meta-data/ /m",
        "add HTTP://10.0.0.1/x /x",
        "ADD --checksum=sha256:00 http://example.org/a.tgz /a",
        'ADD ["http://127.0.0.1:7233/", "/t"]',
        "ADD git@github.com:o/r.git /r",
        "ADD ftp://host/file /f",
        "ADD a.txt http://host/x /dir/",
    ],
)
def test_add_of_a_url_is_refused_naming_the_line(line: str) -> None:
    err = refused(f"FROM python:3.11-slim\nRUN true\n{line}\n")
    assert "environment/Dockerfile line 3" in err.message and "URL" in err.message
    assert err.hint and "RUN" in err.hint


def test_add_whose_source_is_a_variable_is_refused() -> None:
    err = refused("FROM debian:12\nARG U=http://127.0.0.1/x\nADD $U /x\n")
    assert "line 3" in err.message and "variable" in err.message


def test_a_continued_add_is_refused_at_its_first_line() -> None:
    err = refused("FROM debian:12\nADD \\\n  http://127.0.0.1/x \\\n  /x\n")
    assert "line 2" in err.message


def test_onbuild_add_of_a_url_is_refused() -> None:
    err = refused("FROM debian:12\nONBUILD ADD http://127.0.0.1/x /x\n")
    assert "line 2" in err.message


def test_local_add_copy_and_heredocs_pass() -> None:
    check(
        "FROM python:3.11-slim AS build\nADD app.tar.gz /app/\nCOPY . /src\n"
        "ADD <<EOF /etc/motd\nhttp://not-a-source\nEOF\nRUN echo http://x\n"
        "FROM debian:12\nCOPY --from=build /app /app\nCOPY --from=0 /src /src\n"
    )


@pytest.mark.parametrize(
    "ref",
    [
        "envfactory/env:0123abcd",
        "private/secrets:latest",
        "127.0.0.1:5000/img",
        "sha256:" + "a" * 64,
    ],
)
def test_from_an_image_that_is_not_a_base_is_refused(ref: str) -> None:
    err = refused(f"FROM {ref}\nRUN true\n")
    assert f"line 1: FROM {ref}" in err.message and "base images" in err.message


def test_from_through_a_variable_is_refused() -> None:
    err = refused("ARG BASE=private/secrets\nFROM ${BASE}\n")
    assert "line 2" in err.message and "variable" in err.message


def test_copy_from_an_image_is_refused_and_from_a_later_stage_too() -> None:
    err = refused("FROM debian:12\nCOPY --from=private/secrets:latest /etc/key /k\n")
    assert "line 2" in err.message and "--from=private/secrets:latest" in err.message
    err = refused("FROM debian:12 AS a\nCOPY --from=b /x /x\nFROM debian:12 AS b\n")
    assert "line 2" in err.message
    err = refused("FROM debian:12\nCOPY --from=1 /x /x\n")  # index of a stage not yet read
    assert "line 2" in err.message


def test_stages_scratch_and_bases_pass_and_a_stage_name_is_not_mistaken_for_an_image() -> None:
    check(
        "FROM envfactory/base:abc AS Builder\nRUN true\nFROM builder\n"
        "FROM scratch AS empty\nFROM --platform=linux/amd64 debian:12\n"
        "COPY --from=BUILDER /x /x\nCOPY --from=empty / /e\n"
    )
