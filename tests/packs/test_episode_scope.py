"""The trainer's episode sandboxes carry the install's home scope (issue 46, item 8).

Regression: `envfactory train --pack` opened the pack with `DockerEngine()` (no settings),
so its episode containers had an empty `envfactory.home` label and `sandbox gc` from the
same home removed none of them after the trainer was killed. Both ways the trainer opens
a pack are checked on the real engine: `train`'s own `_open_pack`, and `Pack.open`
without an engine (a trainer script).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import docker
import pytest

from envfactory.cli.train import _open_pack
from envfactory.core.settings import Settings
from envfactory.packs import export_pack
from envfactory.packs.runtime import Pack
from sandboxes import labels as L

from .conftest import DictArtifacts, make_item

pytestmark = pytest.mark.docker


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """ENVFACTORY_HOME for the process; the home scope its sandboxes must carry."""
    monkeypatch.setenv("ENVFACTORY_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("ENVFACTORY_SANDBOX__HOME_SCOPE", raising=False)
    return Settings(home=tmp_path / "home", database_url=None).sandbox.home_scope


def _open_with_cli(path: Path) -> Any:
    return _open_pack(path)


def _open_without_engine(path: Path) -> Any:
    return Pack.open(path)


@pytest.mark.parametrize("open_pack", [_open_with_cli, _open_without_engine])
def test_an_episode_sandbox_carries_the_install_home_scope(
    tmp_path: Path,
    artifacts: DictArtifacts,
    home: str,
    base_image: str,
    open_pack: Callable[[Path], Any],
) -> None:
    export_pack([make_item(artifacts)], tmp_path / "p.tar", artifacts=artifacts, created_by="t")
    with open_pack(tmp_path / "p.tar") as pack, pack.reset() as episode:
        box = episode._sandbox()
        labels = docker.from_env().api.inspect_container(box.id)["Config"]["Labels"]
        assert home and labels[L.HOME] == home and labels[L.SANDBOX]
