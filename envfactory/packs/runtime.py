"""Episode runtime for trainers: `Pack.open(path)` → `env.reset()` → `Episode`.

    with Pack.open("envs.tar", engine=engine) as pack:
        env = pack.environments[0]
        with env.reset() as ep:
            obs = ep.exec("ls /workspace")
            r = ep.reward()          # 0 or 1

Invariants (the reward invariants of DESIGN.md, applied to packs):
- a pack is opened only after every member's hash checked (`verify.open_verified`); a
  tar is extracted into a private scratch folder, a folder pack is read in place (so
  hand an untrusted pack over as a tar: nobody can change it between check and use);
- an episode runs in a locked-down sandbox with the network off, whatever the spec says;
- `reward()` ends every solver process (restart), takes the final state (the workspace
  tars and tamper evidence; a committed image for full-state scope), removes the
  solver's container, and only then verifies in a fresh container, with the verifier
  copied in there and nowhere earlier (`verifiers.runner`); binary reward, computed once
  per episode;
- episodes share no mutable state: the only shared thing is each environment's image
  id, resolved once under a lock. `areset` / `aexec` / `areward` / `aclose` run the
  blocking calls in worker threads, so many episodes can run concurrently.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import itertools
import shutil
import tarfile
import tempfile
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from envfactory.core.errors import EnvFactoryError, NotFound
from envfactory.core.models import (
    EnvironmentSpec,
    ExecResult,
    PackManifest,
    PathChange,
    Purpose,
    StateKind,
    Verifier,
    VerifyScope,
)
from sandboxes.protocol import Sandbox, SandboxEngine

from .images import DockerImages, ImageIO
from .reader import PackedEnvironment, read_environment
from .safety import PackLimits
from .signing import TrustedKeys
from .verify import open_verified


class EpisodeFinished(EnvFactoryError):
    """An action or reward was asked of an episode that is closed or already rewarded."""


@dataclass(frozen=True)
class CapturedState:
    """An episode's final state, taken from its sandbox before the sandbox is removed.

    Scope `workspace`: `prepared` holds the workspace tars and tamper evidence (no image is
    committed: a listing-based diff and `get_archive` cost far less than `docker commit`).
    Scope `full-state`: `state_image` is the committed container, removed after reward.
    """

    pristine_image: str
    prepared: Any = None  # verifiers.runner.PreparedState
    state_image: str | None = None
    diff: tuple[PathChange, ...] = ()


@dataclass(frozen=True)
class RewardRequest:
    """Everything verification needs; handed to the reward function."""

    engine: SandboxEngine
    state: CapturedState
    spec: EnvironmentSpec
    verifier: Verifier
    files: Callable[[str], bytes]  # verifier file bytes by content key


class Verification(Protocol):
    reward: int


RewardFn = Callable[[RewardRequest], Verification]
Capture = Callable[[SandboxEngine, Sandbox, EnvironmentSpec, str], CapturedState]


def capture_state(
    engine: SandboxEngine,
    box: Sandbox,
    spec: EnvironmentSpec,
    pristine: str,
    *,
    evidence: bool = False,
) -> CapturedState:
    """End every solver process (restart keeps the filesystem), then take the state.

    Workspace scope verifies the workspace copied into the *pristine* image, so changes
    outside it cannot move the reward; listing them (`evidence=True`, for mining) costs
    a few seconds per episode and is off by default:
    `Pack.open(..., capture=functools.partial(capture_state, evidence=True))`.
    """
    box.restart()
    if spec.verify_scope == VerifyScope.WORKSPACE:
        from verifiers.states import capture

        prepared, diff = capture(
            engine, box, spec, pristine=pristine, recipe=(), want_diff=evidence
        )
        return CapturedState(pristine, prepared=prepared, diff=tuple(diff))
    ref = box.snapshot(StateKind.SOLVER, label="episode", env_id=spec.id)
    return CapturedState(pristine, state_image=ref.image, diff=ref.diff)


def verify_with_runner(req: RewardRequest) -> Verification:
    """The default reward: the verifiers package's runner (fresh container, verifier in)."""
    from verifiers.runner import verifier_tar, verify_prepared, verify_state

    st = req.state
    if st.prepared is not None:
        return verify_prepared(
            req.engine,
            st.prepared,
            spec=req.spec,
            verifier=req.verifier,
            verifier_files=verifier_tar(req.verifier, req.files),
        )
    return verify_state(
        req.engine,
        state_image=st.state_image or st.pristine_image,
        pristine_image=st.pristine_image,
        spec=req.spec,
        verifier=req.verifier,
        files=req.files,
        state_diff=st.diff,
    )


def observation(res: ExecResult) -> str:
    """What the policy sees after an action: output, then what went wrong, if anything."""
    text = res.stdout + (res.stderr if not res.stdout or not res.stderr else "\n" + res.stderr)
    notes = []
    if res.truncated:
        notes.append("[output truncated]")
    if res.timed_out:
        notes.append("[timed out]")
    elif res.disk_exceeded:
        notes.append("[stopped: past the sandbox's disk quota]")
    elif res.exit_code != 0:
        notes.append(f"[exit code {res.exit_code}]")
    return "\n".join([text.rstrip("\n"), *notes]).strip("\n")


class Episode:
    """One rollout in one sandbox. Not shared between threads; make one per rollout."""

    def __init__(self, env: PackEnv, box: Sandbox, pristine_image: str) -> None:
        self.env = env
        self.id = f"ep-{uuid.uuid4().hex[:12]}"
        self._box: Sandbox | None = box
        self._pristine = pristine_image
        self._reward: int | None = None
        self.verification: Verification | None = None
        self.steps = 0

    @property
    def instruction(self) -> str:
        return self.env.instruction

    def _sandbox(self) -> Sandbox:
        if self._box is None:
            raise EpisodeFinished(f"episode {self.id}: already rewarded or closed")
        return self._box

    def exec_result(self, action: str) -> ExecResult:
        box = self._sandbox()
        spec = self.env.spec
        self.steps += 1
        return box.exec(action, timeout=spec.limits.exec_timeout_s, workdir=spec.workdir)

    def exec(self, action: str) -> str:
        """Run one shell action in the sandbox and return the observation text."""
        return observation(self.exec_result(action))

    def reward(self) -> int:
        """Verify the final state (once): 1 if the verifier's entry exits 0, else 0."""
        if self._reward is not None:
            return self._reward
        box = self._sandbox()
        try:
            state = self.env.capture(box, self._pristine)
        finally:
            self._remove_box()  # the solver's container is gone before the verifier exists
        try:
            self.verification = self.env.verify(state)
            self._reward = 1 if self.verification.reward == 1 else 0
        finally:
            if state.state_image and state.state_image != self._pristine:
                with contextlib.suppress(EnvFactoryError):
                    self.env.engine.remove_image(state.state_image)
        return self._reward

    def _remove_box(self) -> None:
        box, self._box = self._box, None
        if box is not None:
            box.remove()

    def close(self) -> None:
        self._remove_box()

    async def aexec(self, action: str) -> str:
        return await asyncio.to_thread(self.exec, action)

    async def areward(self) -> int:
        return await asyncio.to_thread(self.reward)

    async def aclose(self) -> None:
        await asyncio.to_thread(self.close)

    def __enter__(self) -> Episode:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> Episode:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class PackEnv:
    """One environment of an open pack; `reset()` starts an episode."""

    def __init__(
        self,
        packed: PackedEnvironment,
        engine: SandboxEngine,
        images: ImageIO,
        reward_fn: RewardFn,
        capture: Capture,
        build_network: bool = False,
    ) -> None:
        self.packed = packed
        self.build_network = build_network  # a pack's builds are offline unless asked
        self.engine = engine
        self._images = images
        self._reward_fn = reward_fn
        self._capture = capture
        self._files = packed.verifier_files()  # read once; immutable afterwards
        self._image: str | None = None
        self._image_lock = threading.Lock()
        self._built_spec: EnvironmentSpec | None = None  # service images filled in

    @property
    def env_id(self) -> str:
        return self.packed.env_id

    @property
    def spec(self) -> EnvironmentSpec:
        """The packed spec; once `image()` ran, with its services' images built."""
        return self._built_spec or self.packed.spec

    @property
    def instruction(self) -> str:
        return self.packed.instruction

    def image(self) -> str:
        """The environment image: loaded from the pack or built from its context, once."""
        with self._image_lock:
            if self._image is None:
                loaded = self.packed.load_image(self._images)
                if loaded is not None:
                    self._image = loaded
                else:
                    built = self.engine.build(
                        self.packed.context_tar(),
                        dockerfile=self.spec.build.dockerfile,
                        network=self.build_network,
                    )
                    self._image = built.image
                self._built_spec = self._build_services()
            return self._image

    def _build_services(self) -> EnvironmentSpec:
        """Each service's image, built from the pack's context files (by content key)."""
        spec = self.packed.spec
        if not spec.services:
            return spec
        files = self.packed.context_files()
        by_key = {e.key: files[e.path] for e in spec.build.files}
        services = tuple(
            s.model_copy(
                update={
                    "image": self.engine.build(
                        _tar({e.path: by_key[e.key] for e in s.build.files}),
                        dockerfile=s.build.dockerfile,
                        network=self.build_network,
                    ).image
                }
            )
            for s in spec.services
        )
        return spec.model_copy(update={"services": services})

    def reset(self, *, run_id: str | None = None) -> Episode:
        image = self.image()
        box = self.engine.start(
            image,
            limits=self.spec.limits,
            purpose=Purpose.EPISODE,
            run_id=run_id,
            network=False,
            services=self.spec.services,
        )
        return Episode(self, box, image)

    async def areset(self, *, run_id: str | None = None) -> Episode:
        return await asyncio.to_thread(self.reset, run_id=run_id)

    def capture(self, box: Sandbox, pristine: str) -> CapturedState:
        return self._capture(self.engine, box, self.spec, pristine)

    def verify(self, state: CapturedState) -> Verification:
        return self._reward_fn(
            RewardRequest(
                engine=self.engine,
                state=state,
                spec=self.spec,
                verifier=self.packed.verifier,
                files=self._files.__getitem__,
            )
        )


class Pack:
    """An open, verified pack. Close it (or use `with`) to remove what was extracted."""

    def __init__(
        self, manifest: PackManifest, envs: tuple[PackEnv, ...], scratch: Path | None
    ) -> None:
        self.manifest = manifest
        self.environments = envs
        self._scratch = scratch
        self._turn = itertools.count()
        self._turn_lock = threading.Lock()

    @classmethod
    def open(
        cls,
        path: str | Path,
        *,
        engine: SandboxEngine | None = None,
        limits: PackLimits | None = None,
        reward_fn: RewardFn | None = None,
        capture: Capture | None = None,
        images: ImageIO | None = None,
        scratch_dir: Path | None = None,
        trust: TrustedKeys | None = None,
        build_network: bool = False,
    ) -> Pack:
        """Verify (with `trust`: only a pack signed by a trusted key) and open a pack.
        Images built from its contexts are built offline unless `build_network`."""
        path = Path(path)
        scratch = (
            None
            if path.is_dir()
            else Path(tempfile.mkdtemp(prefix="envfactory-pack-", dir=scratch_dir))
        )
        try:
            verified = open_verified(path, scratch or path, limits, trust)
            if engine is None:  # a caller without settings (a trainer script): the local
                # engine with the install's settings, so its sandboxes carry the home scope
                # (`sandbox gc` of this install finds them after a SIGKILL)
                from envfactory.core.settings import load_settings
                from sandboxes import DockerEngine

                engine = DockerEngine(load_settings().sandbox)
            io = images or DockerImages.from_engine(engine)
            envs = tuple(
                PackEnv(
                    read_environment(verified, e),
                    engine,
                    io,
                    reward_fn or verify_with_runner,
                    capture or capture_state,
                    build_network,
                )
                for e in verified.manifest.environments
            )
        except BaseException:
            if scratch is not None:
                shutil.rmtree(scratch, ignore_errors=True)
            raise
        return cls(verified.manifest, envs, scratch)

    def reset(self, *, run_id: str | None = None) -> Episode:
        """An episode of the pack's next environment, round-robin: a trainer that only
        calls `pack.reset()` samples every environment in turn."""
        with self._turn_lock:
            i = next(self._turn) % len(self.environments)
        return self.environments[i].reset(run_id=run_id)

    async def areset(self, *, run_id: str | None = None) -> Episode:
        return await asyncio.to_thread(self.reset, run_id=run_id)

    def environment(self, env_id: str) -> PackEnv:
        for env in self.environments:
            if env.env_id == env_id:
                return env
        raise NotFound(
            f"environment {env_id} is not in pack {self.manifest.id}",
            hint=f"it holds: {', '.join(e.env_id for e in self.environments)}",
        )

    def close(self) -> None:
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None

    def __enter__(self) -> Pack:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _tar(files: dict[str, tuple[bytes, int]]) -> bytes:
    """A build context tar from path → (bytes, mode)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        for path, (data, mode) in sorted(files.items()):
            info = tarfile.TarInfo(path)
            info.size, info.mode = len(data), mode
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()
