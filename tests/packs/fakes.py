"""A recording sandbox engine: the `SandboxEngine` seam without Docker.

Each sandbox keeps the actions run in it; a snapshot freezes that history under a new
image name, so a reward function can judge a state by what was done to reach it.
Everything that touched a sandbox is logged in order, to check the reward invariants.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path

from envfactory.core.models import (
    BuildResult,
    ExecResult,
    Limits,
    PathChange,
    Purpose,
    StateKind,
    StateRef,
)


@dataclass
class FakeSandbox:
    engine: FakeEngine
    id: str
    image: str
    history: list[str] = field(default_factory=list)
    removed: bool = False

    def exec(self, cmd, *, timeout=None, user=None, workdir=None, env=None) -> ExecResult:
        assert not self.removed, "exec on a removed sandbox"
        self.history.append(cmd)
        self.engine.log(f"exec {self.id} {cmd}")
        failed = "false" in cmd
        return ExecResult(exit_code=1 if failed else 0, stdout=f"ran: {cmd}\n")

    def write_file(self, path, data, mode=0o644) -> None:
        self.engine.log(f"write {self.id} {path}")

    def read_file(self, path, max_bytes=None) -> bytes:
        return b""

    def put_dir(self, src: Path, dest: str) -> None:
        self.engine.log(f"put_dir {self.id} {dest}")

    def get_archive(self, path: str) -> bytes:
        return b""

    def put_archive(self, dest: str, tar_bytes: bytes) -> None:
        self.engine.log(f"put_archive {self.id} {dest}")

    def diff(self) -> list[PathChange]:
        return []

    def snapshot(self, kind: StateKind, label: str = "", env_id: str | None = None) -> StateRef:
        image = f"state-of-{self.id}"
        self.engine.states[image] = tuple(self.history)
        self.engine.log(f"snapshot {self.id}")
        return StateRef(
            image=image,
            kind=kind,
            label=label,
            env_id=env_id,
            diff=(PathChange(path="/workspace/out.txt", kind="A"),),
        )

    def restart(self) -> None:
        self.engine.log(f"restart {self.id}")

    def remove(self) -> None:
        self.removed = True
        self.engine.log(f"remove {self.id}")


class FakeEngine:
    def __init__(self) -> None:
        self.events: list[str] = []
        self.states: dict[str, tuple[str, ...]] = {}
        self.builds = 0
        self.build_networks: list[bool | None] = []
        self.started: list[FakeSandbox] = []
        self.removed_images: list[str] = []
        self._lock = threading.Lock()

    def log(self, event: str) -> None:
        with self._lock:
            self.events.append(event)

    def ensure_base_image(self, flavour: str = "python") -> str:
        return "base"

    def build(
        self, context_tar: bytes, *, dockerfile: str = "Dockerfile", tag=None, network=None
    ) -> BuildResult:
        with self._lock:
            self.builds += 1
            self.build_networks.append(network)
        return BuildResult(image="env-image", tag="envfactory/env:x", context_hash="0" * 64)

    def build_dir(self, path, *, dockerfile="Dockerfile", tag=None) -> BuildResult:
        raise NotImplementedError

    def start(
        self,
        image,
        *,
        limits: Limits | None = None,
        purpose=Purpose.EPISODE,
        run_id=None,
        network=None,
        services=(),
        native_usr=False,
    ) -> FakeSandbox:
        assert network is False, "episodes must run with the network off"
        with self._lock:
            box = FakeSandbox(self, f"box{len(self.started)}", image)
            self.started.append(box)
        self.log(f"start {box.id} {image}")
        return box

    def run(
        self,
        image,
        argv,
        *,
        limits: Limits | None = None,
        purpose=Purpose.VERIFY,
        run_id=None,
        network=None,
        services=(),
        native_usr=False,
        timeout=None,
    ) -> tuple[ExecResult, FakeSandbox]:
        box = self.start(image, limits=limits, purpose=purpose, network=network)
        return box.exec(list(argv), timeout=timeout), box

    def remove_image(self, image: str) -> None:
        self.removed_images.append(image)

    def gc(self, *, older_than_s: float = 0) -> list[str]:
        return []


@dataclass(frozen=True)
class Verdict:
    reward: int


def snapshot_capture(engine, box, spec, pristine):
    """The capture seam over the recording engine: restart, then snapshot."""
    from envfactory.packs.runtime import CapturedState

    box.restart()
    ref = box.snapshot(StateKind.SOLVER, label="episode", env_id=spec.id)
    return CapturedState(pristine, state_image=ref.image, diff=ref.diff)


def oracle_reward(engine: FakeEngine, oracle: str):
    """A reward function that passes iff the oracle script was run in the state."""

    def reward(req) -> Verdict:
        image = req.state.state_image
        engine.log(f"verify {image} files={sorted(req.files(e.key) for e in req.verifier.files)}")
        return Verdict(1 if oracle in engine.states[image] else 0)

    return reward
