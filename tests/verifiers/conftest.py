"""Fixtures for the verifier tests: the `sum` task's image, built once per session."""

from __future__ import annotations

import pytest

from .sumtask import SPEC, MemoryFiles, context_tar

# fixtures/ holds files baked into test images (its test_sum.py is the image's own test).
collect_ignore = ["fixtures"]


@pytest.fixture(scope="session")
def sum_image(docker_engine, base_image) -> str:  # type: ignore[no-untyped-def]
    """The sum task's environment image (FROM python:3.11-slim, mapped to the local base)."""
    return docker_engine.build(context_tar()).image


@pytest.fixture
def files() -> MemoryFiles:
    return MemoryFiles()


@pytest.fixture(scope="session")
def spec():  # type: ignore[no-untyped-def]
    return SPEC
