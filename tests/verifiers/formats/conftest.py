"""Fixtures for the task-format tests: small task directories (the `artifacts` store
fixture comes from tests/conftest.py)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from .formats_helpers import HARBOR_MIN, TB_MIN, write_tree


@pytest.fixture
def harbor_task(tmp_path: Path) -> Callable[..., Path]:
    """A minimal valid Harbor task, with `changes` applied (None deletes a file)."""

    def make(changes: dict[str, str | None] | None = None, name: str = "mini") -> Path:
        root = write_tree(tmp_path / name, dict(HARBOR_MIN))
        for rel, text in (changes or {}).items():
            if text is None:
                (root / rel).unlink()
            else:
                write_tree(root, {rel: text})
        return root

    return make


@pytest.fixture
def tb_task(tmp_path: Path) -> Callable[..., Path]:
    def make(changes: dict[str, str | None] | None = None, name: str = "mini-tb") -> Path:
        root = write_tree(tmp_path / name, dict(TB_MIN))
        for rel, text in (changes or {}).items():
            if text is None:
                target = root / rel
                shutil.rmtree(target) if target.is_dir() else target.unlink()
            else:
                write_tree(root, {rel: text})
        return root

    return make
