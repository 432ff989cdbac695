"""The verifier writer: instruction + success criteria + a fresh environment → a verifier.

Invariant 3 of the design: the writer never sees the solution. `VerifierWriterInput` has
no field that could hold the reference solution, partial solutions or a solved state;
`from_spec` copies only the instruction, the criteria and the workdir. In patch mode it
also gets shortcut evidence (what a reward hacker did) and the current verifier's own
files, never the solution. The caller must hand in a *fresh* sandbox started from the
environment image (never an oracle or partial state).

The finish tool refuses, with the reason fed back to the model: an entry command whose
program is not an absolute path (a solver controls PATH and the workspace), a Python
interpreter without `-I`, no files, and a verifier that already passes on the untouched
environment (a no-op must score 0).
"""

from __future__ import annotations

import asyncio
import posixpath
import shlex
from collections.abc import Sequence

from pydantic import Field

from envfactory.core.models import (
    AgentRole,
    EnvironmentSpec,
    Evidence,
    FileEntry,
    FinishRefusal,
    Model,
    Provenance,
    Rule,
    ShortcutFinding,
    Verifier,
)
from envfactory.core.models.base import NonEmpty
from sandboxes.protocol import Sandbox

from ..tools import ToolResult, _Args, cap_text, refuse
from .common import RoleRuntime, accept, finish_tool, run_loop, store_trajectory, task_text

PROMPT_VERSION = "verifier.v1"
MAX_FILES, MAX_FILE_BYTES = 64, 1_000_000


class VerifierFileText(Model):
    path: NonEmpty  # relative to the verifier directory
    content: str


class VerifierWriterInput(Model):
    """Exactly what the writer may see. There is deliberately no solution field."""

    env_id: str
    instruction: NonEmpty
    success_criteria: NonEmpty
    workdir: str = "/workspace"
    verifier_dir: str = "/verifier"
    version: int = Field(default=1, ge=1)
    shortcut_evidence: tuple[Evidence, ...] = ()
    #: confirmed too-strict findings: results a correct solver could leave that the
    #: current verifier rejects (never the reference's own result: see verifiers.evidence)
    rejected_correct_evidence: tuple[Evidence, ...] = ()
    finding_ids: tuple[str, ...] = ()
    previous_files: tuple[VerifierFileText, ...] = ()
    previous_entry: str | None = None
    noop_check: bool = True  # run the verifier on the untouched environment before accepting

    @classmethod
    def from_spec(cls, spec: EnvironmentSpec) -> VerifierWriterInput:
        return cls(
            env_id=spec.id,
            instruction=spec.instruction,
            success_criteria=spec.success_criteria or spec.instruction,
            workdir=spec.workdir,
        )

    @classmethod
    def for_patch(
        cls,
        spec: EnvironmentSpec,
        verifier: Verifier,
        files: Sequence[VerifierFileText],
        findings: Sequence[ShortcutFinding],
    ) -> VerifierWriterInput:
        """Patch mode: the current verifier's files plus what each shortcut did, and each
        correct result it rejected (a confirmed too-strict finding)."""
        base = cls.from_spec(spec)
        strict = [f for f in findings if not Rule.names_shortcut(f.rule)]
        return base.model_copy(
            update={
                "version": verifier.version + 1,
                "previous_files": tuple(files),
                "previous_entry": verifier.entry,
                "finding_ids": tuple(f.id for f in findings),
                "shortcut_evidence": tuple(f.evidence for f in findings if f not in strict),
                "rejected_correct_evidence": tuple(f.evidence for f in strict),
            }
        )


class VerifierFinish(_Args):
    summary: str = Field(description="what the verifier checks, criterion by criterion")
    entry: str = Field(description="command run from the verifier directory; exit 0 = success")
    files: list[str] = Field(
        default_factory=list, description="paths relative to the verifier directory; empty = all"
    )
    timeout_s: int = Field(default=120, ge=1, le=1800)


class VerifierWriterResult(Model):
    verifier: Verifier
    trajectory_key: str
    summary: str = ""


def _evidence_text(ev: Evidence) -> str:
    lines = [ev.summary]
    lines += [f"command: {c}" for c in ev.commands[:30]]
    lines += [f"changed: {d.kind} {d.path}" for d in ev.diff[:60]]
    if ev.verifier_output:
        lines.append("verifier output:\n" + cap_text(ev.verifier_output, 2000))
    return "\n".join(lines)


def writer_task(inp: VerifierWriterInput) -> str:
    fields = [
        ("Instruction the solver gets", inp.instruction),
        ("Success criteria", inp.success_criteria),
        (
            "Layout",
            f"The solver works in {inp.workdir}. Write the verifier under "
            f"{inp.verifier_dir}; its entry command runs from there.",
        ),
    ]
    if inp.previous_files:
        fields.append(
            (
                "Current verifier (already in place, patch it)",
                f"entry: {inp.previous_entry}\nfiles: "
                + ", ".join(f.path for f in inp.previous_files),
            )
        )
    for i, ev in enumerate(inp.shortcut_evidence, 1):
        fields.append((f"Shortcut evidence {i}", _evidence_text(ev)))
    for i, ev in enumerate(inp.rejected_correct_evidence, 1):
        title = f"Correct result the verifier rejects {i} (it must accept results like it)"
        fields.append((title, _evidence_text(ev)))
    return task_text("Write the verifier", fields)


def entry_problem(entry: str) -> str | None:
    """Why an entry command is unsafe, or None. The solver controls PATH and the workspace."""
    try:
        argv = shlex.split(entry)
    except ValueError as exc:
        return f"the entry command does not parse: {exc}"
    if not argv:
        return "the entry command is empty"
    prog = argv[0]
    if not prog.startswith("/"):
        return (
            f"the entry program {prog!r} is not an absolute path; a solver controls PATH. "
            "Use e.g. `/usr/local/bin/python3 -I check.py` or `/bin/bash check.sh`"
        )
    if "python" in posixpath.basename(prog) and "-I" not in argv[1:3]:
        return "call Python with -I (isolated: ignores PYTHON* variables, user site and cwd)"
    if prog.startswith("/workspace") or prog.startswith("/tmp"):
        return f"the entry program {prog!r} lives where the solver can write"
    return None


async def _collect(sandbox: Sandbox, root: str, wanted: list[str]) -> list[tuple[str, bytes]] | str:
    if not wanted:
        res = await asyncio.to_thread(
            sandbox.exec, f"cd {shlex.quote(root)} && find . -type f", timeout=30.0
        )
        if not res.ok:
            return f"cannot list {root}: {res.stderr.strip()[:500]}"
        # bytecode from a dry run is not part of the verifier
        wanted = sorted(
            p[2:]
            for p in res.stdout.split("\n")
            if p.startswith("./") and "__pycache__/" not in p and not p.endswith(".pyc")
        )
    if not wanted:
        return f"there are no files under {root}; write the verifier there first"
    if len(wanted) > MAX_FILES:
        return f"too many verifier files ({len(wanted)} > {MAX_FILES})"
    out = []
    for rel in wanted:
        norm = posixpath.normpath(rel)
        if norm.startswith("..") or posixpath.isabs(norm):
            return f"file {rel!r} must be relative to {root}, inside it"
        data = await asyncio.to_thread(
            sandbox.read_file, posixpath.join(root, norm), MAX_FILE_BYTES
        )
        out.append((norm, data))
    return out


async def _noop_problem(
    sandbox: Sandbox, inp: VerifierWriterInput, entry: str, timeout: int
) -> str | None:
    cmd = f"cd {shlex.quote(inp.verifier_dir)} && {entry}"
    res = await asyncio.to_thread(sandbox.exec, cmd, timeout=float(timeout))
    if res.ok:
        return (
            "your verifier exits 0 on the untouched environment, so a no-op would earn the "
            "reward. It must fail there. Output:\n" + cap_text(res.stdout + res.stderr, 2000)
        )
    return None


async def run_verifier_writer(
    inp: VerifierWriterInput, *, rt: RoleRuntime, sandbox: Sandbox
) -> VerifierWriterResult:
    for f in inp.previous_files:
        await asyncio.to_thread(
            sandbox.write_file, posixpath.join(inp.verifier_dir, f.path), f.content.encode(), 0o644
        )

    async def on_finish(args: VerifierFinish) -> ToolResult:
        problem = entry_problem(args.entry)
        kind = FinishRefusal.UNSAFE_ENTRY
        files = await _collect(sandbox, inp.verifier_dir, args.files)
        if isinstance(files, str) and problem is None:
            problem, kind = files, FinishRefusal.NO_FILES
        if problem is None and inp.noop_check:
            problem = await _noop_problem(sandbox, inp, args.entry, args.timeout_s)
            kind = FinishRefusal.PASSES_NOOP
        if problem is not None:
            return refuse(kind, f"verifier refused: {problem}\nFix it and call finish again.")
        return accept((args, files), "verifier accepted")

    res, traj, spent = await run_loop(
        rt,
        role=AgentRole.VERIFIER,
        prompt_version=PROMPT_VERSION,
        task=writer_task(inp),
        sandbox=sandbox,
        workdir=inp.workdir,
        env_id=inp.env_id,
        finish=finish_tool(VerifierFinish, on_finish, "Submit the verifier."),
    )
    if res is None:
        assert spent is not None
        _, spent.trajectory_key = store_trajectory(rt.store, traj)  # type: ignore[attr-defined]
        raise spent
    args, files = res.payload
    traj, key = store_trajectory(rt.store, traj)
    return VerifierWriterResult(
        verifier=_verifier(inp, rt, args, files, key), trajectory_key=key, summary=args.summary
    )


def _verifier(
    inp: VerifierWriterInput,
    rt: RoleRuntime,
    args: VerifierFinish,
    files: list[tuple[str, bytes]],
    traj_key: str,
) -> Verifier:
    entries = tuple(
        FileEntry(path=p, key=rt.store.put_bytes(data), mode=0o755 if p.endswith(".sh") else 0o644)
        for p, data in files
    )
    seen = ["instruction", "success_criteria", f"environment:{inp.env_id}"]
    if inp.previous_files:
        seen.append(f"previous_verifier:v{inp.version - 1}")
    seen += [f"shortcut_evidence:{fid}" for fid in inp.finding_ids]
    seen.append(f"trajectory:{traj_key}")
    return Verifier(
        env_id=inp.env_id,
        version=inp.version,
        files=entries,
        entry=args.entry,
        timeout_s=args.timeout_s,
        provenance=Provenance(
            author=f"agent:verifier/{rt.model.name}",
            inputs_seen=tuple(seen),
            prompt_version=PROMPT_VERSION,
        ),
    )
