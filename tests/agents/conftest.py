"""Fixtures for the agent tests: a local chat-completions server, a directory-backed
sandbox and the real artifact store — real implementations of the seams, no patching."""

from __future__ import annotations

import io
import re
import subprocess
import tarfile
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import pytest

from envfactory.agents import RetryPolicy
from envfactory.agents.chat_server import LocalChatServer
from envfactory.core.models import ExecResult, PathChange, StateKind, StateRef
from envfactory.core.settings import AgentSettings
from envfactory.store import ArtifactStore


class DirSandbox:
    """A Sandbox whose filesystem is a host directory: absolute paths map under `root`.

    Commands run with bash in `root/<workdir>`. Absolute paths under the mapped prefixes
    (/workspace, /verifier, /env, /seed) in a command are rewritten under `root`, so test
    scripts can use the same absolute paths they would use in a container."""

    MAPPED = re.compile(r"(?<![\w./-])/(workspace|verifier|env|seed)\b")

    def __init__(self, root: Path) -> None:
        self.root, self.id, self.image = root, "dir-sandbox", "dir-image"
        self.snapshots: list[StateRef] = []
        self.commands: list[str] = []

    def _p(self, path: str) -> Path:
        return self.root / path.lstrip("/")

    def exec(
        self,
        cmd: str | Sequence[str],
        *,
        timeout: float | None = None,
        user: str | None = None,
        workdir: str | None = None,
        env: Mapping[str, str] | None = None,
    ) -> ExecResult:
        text = cmd if isinstance(cmd, str) else " ".join(cmd)
        self.commands.append(text)
        text = self.MAPPED.sub(lambda m: f"{self.root}/{m.group(1)}", text)
        cwd = self._p(workdir or "/")
        cwd.mkdir(parents=True, exist_ok=True)
        t0 = time.monotonic()
        try:
            p = subprocess.run(
                ["bash", "-c", text], cwd=cwd, capture_output=True, text=True, timeout=timeout
            )
        except subprocess.TimeoutExpired:
            return ExecResult(exit_code=None, timed_out=True, duration_s=time.monotonic() - t0)
        return ExecResult(
            exit_code=p.returncode,
            stdout=p.stdout,
            stderr=p.stderr,
            duration_s=time.monotonic() - t0,
        )

    def write_file(self, path: str, data: bytes | str, mode: int = 0o644) -> None:
        p = self._p(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data.encode() if isinstance(data, str) else data)
        p.chmod(mode)

    def read_file(self, path: str, max_bytes: int | None = None) -> bytes:
        from envfactory.core.errors import SandboxError

        try:
            data = self._p(path).read_bytes()
        except OSError as exc:
            raise SandboxError(f"cannot read {path}: {exc.strerror}") from exc
        return data[:max_bytes] if max_bytes else data

    def put_dir(self, src: Path, dest: str) -> None:
        raise NotImplementedError

    def get_archive(self, path: str) -> bytes:
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as tar:
            tar.add(self._p(path), arcname=Path(path).name)
        return buf.getvalue()

    def put_archive(self, dest: str, tar_bytes: bytes) -> None:
        raise NotImplementedError

    def diff(self) -> list[PathChange]:
        return [
            PathChange(path="/" + str(p.relative_to(self.root)), kind="A")
            for p in sorted(self.root.rglob("*"))
            if p.is_file()
        ]

    def snapshot(self, kind: StateKind, label: str = "", env_id: str | None = None) -> StateRef:
        ref = StateRef(
            image=f"dir-snapshot-{len(self.snapshots)}",
            kind=kind,
            label=label,
            env_id=env_id,
            diff=tuple(self.diff()),
        )
        self.snapshots.append(ref)
        return ref

    def restart(self) -> None:
        return

    def remove(self) -> None:
        return


class RecordingSleep:
    """A sleep that records the delays instead of waiting (backoff is observed, not timed)."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, s: float) -> None:
        self.delays.append(s)


@pytest.fixture
def server() -> Iterator[LocalChatServer]:
    with LocalChatServer() as srv:
        yield srv


@pytest.fixture
def store(tmp_path: Path) -> ArtifactStore:
    """The real content-addressed artifact store, on a temporary directory."""
    return ArtifactStore(tmp_path / "artifacts")


@pytest.fixture
def sandbox(tmp_path: Path) -> DirSandbox:
    root = tmp_path / "box"
    (root / "workspace").mkdir(parents=True)
    return DirSandbox(root)


@pytest.fixture
def sleeper() -> RecordingSleep:
    return RecordingSleep()


@pytest.fixture
def retry(sleeper: RecordingSleep) -> RetryPolicy:
    return RetryPolicy(max_retries=3, sleep=sleeper)


@pytest.fixture
def settings_for():
    """AgentSettings pointing at a local server; keyword overrides per test."""

    def make(server: LocalChatServer, **kw: object) -> AgentSettings:
        base: dict[str, object] = dict(
            backend="openai",
            model="local-test",
            base_url=server.url,
            max_turns=10,
            request_timeout_s=5.0,
            max_retries=3,
        )
        return AgentSettings(**(base | kw))  # type: ignore[arg-type]

    return make


@pytest.fixture
def make_sandbox():
    """A factory of directory sandboxes, for engines that start several."""
    return DirSandbox
