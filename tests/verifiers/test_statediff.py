"""A live state's changes: read from the overlay upper directory where this process can,
else by listings from inside the container — and both ways see the same tamper."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from envfactory.core.models import PathChange, Purpose
from sandboxes import DockerEngine, DockerSandbox
from verifiers import statediff
from verifiers.statediff import live_diff
from verifiers.tamper import tamper_changes

from .sumtask import SPEC

pytestmark = pytest.mark.docker

#: a planted command, a deleted start-up file and a library rewritten with a forged mtime
TAMPER = (
    "printf '#!/bin/sh\\nexit 0\\n' > /usr/local/bin/pytest && chmod +x /usr/local/bin/pytest; "
    "rm -f /etc/profile; "
    "f=$(ls /usr/lib/python3*/unittest/case.py | head -n 1); "
    'echo "# patched" >> "$f"; touch -d "2001-01-01" "$f"'
)


class ListingOnly:
    """The sandbox as a worker inside a container sees it: no upper directory to read."""

    def __init__(self, box: DockerSandbox) -> None:
        self._box = box

    def local_diff(self) -> list[PathChange] | None:
        return None

    def __getattr__(self, name: str) -> object:
        return getattr(self._box, name)


@pytest.fixture
def box(docker_engine: DockerEngine, base_image: str) -> Iterator[DockerSandbox]:
    statediff.pristine_listing(docker_engine, base_image, SPEC)
    with docker_engine.sandbox(base_image, purpose=Purpose.TEST) as sb:
        yield sb


def test_a_fresh_sandbox_has_no_changes_either_way(
    docker_engine: DockerEngine, base_image: str, box: DockerSandbox
) -> None:
    assert live_diff(docker_engine, box, base_image, SPEC) == ()
    assert live_diff(docker_engine, ListingOnly(box), base_image, SPEC) == ()  # type: ignore[arg-type]


def test_both_ways_see_the_same_tamper(
    docker_engine: DockerEngine, base_image: str, box: DockerSandbox
) -> None:
    assert box.exec(["/bin/sh", "-c", TAMPER], user="root").ok
    local = live_diff(docker_engine, box, base_image, SPEC)
    listed = live_diff(docker_engine, ListingOnly(box), base_image, SPEC)  # type: ignore[arg-type]
    assert local is not None and listed is not None
    found = tamper_changes(local, SPEC.workspace_paths)
    assert found == tamper_changes(listed, SPEC.workspace_paths)
    kinds = {c.path.rsplit("/", 1)[-1]: c.kind for c in found}
    assert kinds["pytest"] == "A" and kinds["profile"] == "D" and kinds["case.py"] == "C"
