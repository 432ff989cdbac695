from __future__ import annotations

from collections.abc import Iterator

import pytest

from envfactory.core.models import Purpose
from sandboxes import DockerEngine, DockerSandbox


@pytest.fixture
def sandbox(docker_engine: DockerEngine, base_image: str) -> Iterator[DockerSandbox]:
    with docker_engine.sandbox(base_image, purpose=Purpose.TEST) as sb:
        yield sb
