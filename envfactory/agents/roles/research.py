"""The research agent: TaskSeed → EnvironmentSpec, proven to build and to be solvable.

It works in a builder sandbox (seed attachments under /seed, the build context it writes
under /env). Its finish tool is the proof: the factory tars /env, builds the image,
applies the reference solution in a fresh container (every step must exit 0), and
applies each partial solution in another. Any failure — invalid fields, a build error,
a failing step — goes back to the model as an observation to repair, within the loop's
budget. Only a spec that passed is returned, with its image id and build result.
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import posixpath
import tarfile
from collections.abc import Sequence

from pydantic import Field

from envfactory.core.errors import EnvFactoryError
from envfactory.core.models import (
    AgentRole,
    BuildContext,
    BuildResult,
    EnvironmentSpec,
    FinishRefusal,
    Limits,
    Model,
    PartialSolution,
    Purpose,
    ServiceSpec,
    Step,
    TaskSeed,
    new_id,
)
from sandboxes.protocol import Sandbox, SandboxEngine

from ..build_context import (
    ContextFile,
    ContextProblem,
    context_tar,
    files_from_archive,
    store_context,
)
from ..recording import put_model
from ..tools import ToolResult, _Args, cap_text, refuse
from .common import RoleRuntime, accept, finish_tool, run_loop, store_trajectory, task_text

PROMPT_VERSION = "research.v1"
MAX_DIGEST_BYTES = 64 * 1024 * 1024


class ResearchInput(Model):
    seed: TaskSeed
    context_dir: str = "/env"
    attachments_dir: str = "/seed"
    limits: Limits = Limits()


class ResearchService(_Args):
    name: str = Field(pattern=r"^[a-z][a-z0-9-]{0,30}$", description="its hostname, e.g. db")
    dockerfile: str = Field(
        min_length=1, description="its Dockerfile in the build context, e.g. db.Dockerfile"
    )
    command: list[str] = Field(default_factory=list, description="empty: the image's CMD")
    env: dict[str, str] = Field(default_factory=dict)
    ready: str = Field(default="", description="shell check run in the service until it exits 0")


class ResearchFinish(_Args):
    name: str = Field(min_length=1, description="short kebab-case name of the environment")
    instruction: str = Field(min_length=20, description="what the solver sees (no solution!)")
    success_criteria: str = Field(min_length=20, description="checkable from the final state")
    hidden_state_notes: str = Field(min_length=10, description="what the solver must discover")
    reference_solution: list[Step] = Field(min_length=1, description="ordered shell steps")
    partial_solutions: list[PartialSolution] = Field(default_factory=list)
    workdir: str = "/workspace"
    dockerfile: str = "Dockerfile"
    services: list[ResearchService] = Field(
        default_factory=list,
        description="containers next to the main one (a database, a cache), reachable by name",
    )
    summary: str = ""


class ResearchResult(Model):
    spec: EnvironmentSpec
    spec_key: str
    build: BuildResult
    trajectory_key: str


def research_task(inp: ResearchInput) -> str:
    s = inp.seed
    files = "\n".join(
        f"- {posixpath.join(inp.attachments_dir, a.path)} ({a.size} bytes)" for a in s.attachments
    )
    return task_text(
        f"Seed: {s.title}",
        [
            ("Domain", s.domain),
            ("Workflow description", s.description),
            ("Attached files", files),
            ("Repository", s.repository or ""),
            (
                "Constraints",
                f"solver turn budget {s.constraints.max_turns}, time budget "
                f"{s.constraints.time_budget_s}s, base image flavour "
                f"{s.constraints.base_image}",
            ),
            ("Where", f"Write the build context under {inp.context_dir}."),
        ],
    )


async def _run_steps(
    engine: SandboxEngine,
    image: str,
    steps: Sequence[Step],
    workdir: str,
    limits: Limits,
    label: str,
    *,
    last_must_change: bool = False,
    services: Sequence[ServiceSpec] = (),
) -> str | None:
    """Apply steps in a fresh container; the first failure as text, or None.

    With `last_must_change`, the workdir's contents before the last step must differ from
    after it: the gates score every prefix of the reference solution as an unsolved state,
    so a last step that changes nothing there (a check) makes a prefix look solved."""
    try:
        box = await asyncio.to_thread(
            engine.start, image, limits=limits, purpose=Purpose.RESEARCH_CHECK, services=services
        )
    except EnvFactoryError as exc:  # a service that does not start is the agent's to fix
        return f"{label}: the sandbox did not start: {exc}"
    try:
        before = None
        for i, step in enumerate(steps, 1):
            if last_must_change and i == len(steps):
                before = await _contents(box, workdir)
            res = await asyncio.to_thread(
                box.exec, step.script, timeout=float(limits.exec_timeout_s), workdir=workdir
            )
            if not res.ok:
                why = "timed out" if res.timed_out else f"exit code {res.exit_code}"
                out = cap_text(res.stdout + "\n" + res.stderr, 3000)
                return f"{label} step {i} ({step.title or 'untitled'}) failed: {why}\n{out}"
        if before is not None and before == await _contents(box, workdir):
            return (
                f"{label}: the last step changes nothing in {workdir}, so the solution "
                "without it already looks solved. Fold checks into the step before."
            )
        return None
    finally:
        await asyncio.to_thread(box.remove)


async def _contents(box: Sandbox, path: str) -> str | None:
    """A digest of the files under `path` (names, modes, bytes; not times); None if too big."""
    try:
        tar = await asyncio.to_thread(box.get_archive, path)
    except EnvFactoryError:
        return None
    if len(tar) > MAX_DIGEST_BYTES:
        return None
    h = hashlib.sha256()
    with tarfile.open(fileobj=io.BytesIO(tar)) as t:
        for m in sorted(t.getmembers(), key=lambda m: m.name):
            f = t.extractfile(m) if m.isfile() else None
            h.update(f"{m.name}\0{m.type!r}\0{m.mode}\0".encode() + (f.read() if f else b""))
    return h.hexdigest()


class _Checker:
    """The research finish tool: build, then prove the solution and partials apply."""

    def __init__(
        self, inp: ResearchInput, rt: RoleRuntime, builder: Sandbox, engine: SandboxEngine
    ) -> None:
        self.inp, self.rt, self.builder, self.engine = inp, rt, builder, engine

    async def _prove(
        self, args: ResearchFinish, image: str, services: tuple[ServiceSpec, ...]
    ) -> tuple[FinishRefusal, str] | None:
        """Run the reference solution, then each partial, in fresh containers."""
        lim = self.inp.limits
        problem = await _run_steps(
            self.engine,
            image,
            args.reference_solution,
            args.workdir,
            lim,
            "reference solution",
            last_must_change=True,
            services=services,
        )
        if problem:
            return FinishRefusal.REFERENCE_FAILED, problem
        for partial in args.partial_solutions:
            label = f"partial {partial.name!r}"
            problem = await _run_steps(
                self.engine, image, partial.steps, args.workdir, lim, label, services=services
            )
            if problem:
                return FinishRefusal.PARTIAL_FAILED, problem
        return None

    async def __call__(self, args: ResearchFinish) -> ToolResult:
        try:
            tar = await asyncio.to_thread(self.builder.get_archive, self.inp.context_dir)
            files = files_from_archive(tar)
        except (ContextProblem, EnvFactoryError) as exc:
            return refuse(
                FinishRefusal.NO_BUILD_CONTEXT,
                f"cannot read the build context in {self.inp.context_dir}: {exc}",
            )
        paths = {f.path for f in files}
        for dockerfile in (args.dockerfile, *(s.dockerfile for s in args.services)):
            if dockerfile not in paths:
                return refuse(
                    FinishRefusal.NO_BUILD_CONTEXT,
                    f"no {dockerfile} in {self.inp.context_dir}; write it first",
                )
        try:
            build = await asyncio.to_thread(
                self.engine.build, context_tar(files), dockerfile=args.dockerfile
            )
            services = await _build_services(self.engine, args, files)
        except EnvFactoryError as exc:
            return refuse(
                FinishRefusal.BUILD_FAILED, "the image did not build:\n" + cap_text(str(exc), 6000)
            )
        problem = await self._prove(args, build.image, services)
        if problem is not None:
            kind, text = problem
            return refuse(kind, text + "\nFix the environment or the steps and call finish again.")
        ctx = store_context(self.rt.store, files, args.dockerfile)
        spec = EnvironmentSpec(
            id=new_id("env"),
            name=args.name,
            seed_id=self.inp.seed.id,
            instruction=args.instruction,
            success_criteria=args.success_criteria,
            hidden_state_notes=args.hidden_state_notes,
            build=ctx,
            workdir=args.workdir,
            workspace_paths=(args.workdir,),
            reference_solution=tuple(args.reference_solution),
            partial_solutions=tuple(args.partial_solutions),
            limits=self.inp.limits,
            services=tuple(
                s.model_copy(
                    update={"build": ctx.model_copy(update={"dockerfile": s.build.dockerfile})}
                )
                for s in services
            ),
            image=build.image,
        )
        return accept(
            (spec, build, args.summary), "environment built; the reference solution ran cleanly"
        )


async def _build_services(
    engine: SandboxEngine, args: ResearchFinish, files: list[ContextFile]
) -> tuple[ServiceSpec, ...]:
    """Each declared service built from the same context with its own Dockerfile."""
    out = []
    for svc in args.services:
        built = await asyncio.to_thread(engine.build, context_tar(files), dockerfile=svc.dockerfile)
        out.append(
            ServiceSpec(
                name=svc.name,
                build=BuildContext(dockerfile=svc.dockerfile, files=()),
                command=tuple(svc.command),
                env=svc.env,
                ready=svc.ready,
                image=built.image,
            )
        )
    return tuple(out)


async def run_research(
    inp: ResearchInput, *, rt: RoleRuntime, builder: Sandbox, engine: SandboxEngine
) -> ResearchResult:
    """Run the research role; the builder sandbox should have the network the build needs."""
    for a in inp.seed.attachments:
        data = await asyncio.to_thread(rt.store.get, a.key)
        await asyncio.to_thread(
            builder.write_file, posixpath.join(inp.attachments_dir, a.path), data, 0o644
        )
    res, traj, spent = await run_loop(
        rt,
        role=AgentRole.RESEARCH,
        prompt_version=PROMPT_VERSION,
        task=research_task(inp),
        sandbox=builder,
        workdir="/",
        env_id=None,
        finish=finish_tool(
            ResearchFinish,
            _Checker(inp, rt, builder, engine),
            "Submit the environment; it is built and its solution is run.",
        ),
    )
    if res is None:
        assert spent is not None
        _, spent.trajectory_key = store_trajectory(rt.store, traj)  # type: ignore[attr-defined]
        raise spent
    spec, build, summary = res.payload
    traj, key = store_trajectory(rt.store, traj, env_id=spec.id, summary=summary)
    return ResearchResult(
        spec=spec, spec_key=put_model(rt.store, spec), build=build, trajectory_key=key
    )
