"""`RepoMiner.mine_candidate`: one commit of a stored clone → an environment stored for the
gates, or dropped with the reason. One pydantic input, one pydantic result, so a Temporal
activity can wrap it as is.

    miner = RepoMiner(engine, artifacts, store, work_dir)
    result = miner.mine_candidate(CandidateInput(snapshot=snap, commit="abc123"))
    result.outcome   # "stored" (then gate it: workflows.repo_mining) or "dropped"
    result.reason    # why it was dropped: no test change, unbuildable, no fail-to-pass, …

Stages (each one reached is counted in the yield table): a *candidate* changes test files
and other files and has a runner for its tests; *buildable* when its image at the parent
builds; *fail_to_pass* when a touched test fails at the parent (with the commit's test
files) and passes at the commit. Pass-to-pass tests (passing at both) are kept up to
`pass_to_pass_max` (a sample seeded by the commit). The test runs are the verifier's own program
(check.py) in a container of the built image with the network off.
"""

from __future__ import annotations

import random
import resource
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from envfactory.core.errors import EnvFactoryError, ImageBuildFailed
from envfactory.core.models import LimitCaps
from envfactory.core.models.repos import CandidateInput, CandidateResult
from envfactory.store import ArtifactStore, Store
from envfactory.suites.intake import import_one
from sandboxes.protocol import SandboxEngine
from verifiers.formats import context_tar, load_task

from . import history as h
from .buildlog import build_error
from .conventions import is_doc_path, is_test_path
from .declared import ProjectFiles
from .dropped import Dropped
from .git import GitFailed
from .intake import open_snapshot
from .patches import FilePatch, hunk_refs, partial_states, subset_patch
from .prose import prose_hunks
from .quality import unsaid_names
from .runners import Toolchain, runner_for
from .taskdir import TaskParts, write_task
from .testruns import TestRuns, run_tests
from .wording import InstructionWriter


@dataclass
class RepoMiner:
    engine: SandboxEngine
    artifacts: ArtifactStore
    store: Store
    work_dir: Path
    caps: LimitCaps | None = None
    #: a model's instructions (wording.model_writer) for candidates with fail-to-pass
    #: tests; None: the template's, for every commit
    writer: InstructionWriter | None = None

    def mine_candidate(self, inp: CandidateInput) -> CandidateResult:
        t0 = cpu_seconds()
        bare = open_snapshot(inp.snapshot, self.artifacts, self.work_dir / "clones")
        info = h.commit_info(bare, inp.commit)
        row: dict[str, Any] = {}  # what was learnt before a drop (toolchain, counts)
        try:
            result = self._mine(bare, info, inp, row)
        except Dropped as drop:
            result = CandidateResult(
                commit=info.commit,
                subject=info.subject[:200],
                outcome="dropped",
                stage=drop.stage,
                reason=drop.reason,
                reason_kind=drop.kind,
                **row,
            )
        return result.model_copy(update={"cpu_s": result.cpu_s + cpu_seconds() - t0})

    def _mine(
        self, bare: Path, info: h.CommitInfo, inp: CandidateInput, row: dict[str, Any]
    ) -> CandidateResult:
        parts, patches, files = self._parts(bare, info, inp)
        task_dir = self.work_dir / "tasks" / parts.name
        row["installed"] = parts.runner.installs(files)
        image, chain = self._build_ladder(task_dir, parts, files)
        row.update(toolchain=chain.version, toolchain_why=chain.why)
        runs = run_tests(self.engine, image, task_dir, parts.patch, inp.test_timeout_s)
        row.update(parent_counts=runs.counts("parent"), commit_counts=runs.counts("commit"))
        parts.expect = _expected(runs, inp.pass_to_pass_max, info.commit)
        f2p = [t for t in parts.expect if t in runs.fail_to_pass]
        assert info.parent is not None  # a root commit is dropped by `_parts`
        code, docs = _code_and_prose(bare, info.parent, patches)
        states = partial_states(sum(p.units for p in code), info.commit, inp.hunk_max)
        parts.partials = {s.name: subset_patch(code, set(s.hunks)) + docs for s in states}
        parts.ungraded = [p.path for p in patches if is_doc_path(p.path)]
        if self.writer is not None:
            paths = [p.path for p in patches]
            parts.written = self.writer(info.commit, info.message, paths, parts.patch)
        task = write_task(task_dir, parts)
        unsaid = unsaid_names(parts.test_files, f2p, (task / "instruction.md").read_text())
        entry = import_one(task, self.store, self.artifacts, suite=inp.suite, caps=self.caps)
        held = bool(unsaid) and inp.hold_underspecified
        finding = _unsaid_finding(unsaid)
        return CandidateResult(
            commit=info.commit,
            subject=info.subject[:200],
            outcome="held" if held else "stored",
            stage="fail_to_pass",
            reason=finding if held else "",
            reason_kind="underspecified" if held else None,
            runner=parts.runner.name,
            env_id=entry.env_id,
            fail_to_pass=tuple(f2p),
            pass_to_pass=tuple(t for t in parts.expect if t not in runs.fail_to_pass),
            hunks=tuple(hunk_refs(code)),
            partials=tuple(states),
            findings=(finding,) if unsaid else (),
            unsaid_names=tuple(unsaid),
            instruction_source="model" if parts.written else "template",
            tokens=parts.written.tokens if parts.written else 0,
            **row,
        )

    def _parts(
        self, bare: Path, info: h.CommitInfo, inp: CandidateInput
    ) -> tuple[TaskParts, list[FilePatch], ProjectFiles]:
        if info.parent is None:
            raise Dropped("scanned", "root_commit", "a root commit has no parent to start from")
        tests, rest = _split(info)
        reverted = h.reverted_commit(bare, info)
        if reverted:
            raise Dropped(
                "scanned", "reverts_visible_commit",
                f"it reverts {reverted[:12]}, which the solver's history holds: "
                "`git revert` would solve it",
            )  # fmt: skip
        runner = runner_for([p for s, p in tests if s != "D"])
        if runner is None:
            raise Dropped(
                "scanned", "no_test_runner", f"no test runner runs the changed test files: {tests}"
            )
        try:
            patches = h.file_patches(bare, info.parent, info.commit, [p for _, p in rest])
        except UnicodeDecodeError:
            raise Dropped(
                "candidate", "diff_not_text", "the fix's diff is not UTF-8 text"
            ) from None
        commit_tree = h.tree_paths(bare, info.commit)
        parent = info.parent
        files = ProjectFiles(h.tree_paths(bare, parent), lambda p: h.file_at(bare, parent, p))
        kept = [p for s, p in tests if s != "D"]
        self.work_dir.joinpath("bundles").mkdir(parents=True, exist_ok=True)
        bundle = self.work_dir / "bundles" / f"{info.parent}.bundle"
        if not bundle.exists():
            h.parent_bundle(bare, info.parent, bundle)
        parts = TaskParts(
            name=f"{inp.suite}-{info.commit[:12]}",
            commit=info.commit,
            message=info.message,
            runner=runner,
            dockerfile="",  # one per toolchain tried (`_build_ladder`)
            bundle=bundle,
            patch="".join(p.header + "".join(p.hunks) for p in patches),
            test_files=restored(kept, commit_tree, lambda p: h.file_at(bare, info.commit, p)),
            conftests=sorted(p for p in commit_tree if Path(p).name == "conftest.py"),
            targets=runner.targets([p for p in kept if runner.runs(p)]),
            timeout_s=inp.test_timeout_s,
        )
        return parts, patches, files

    def _build_ladder(
        self, task_dir: Path, parts: TaskParts, files: ProjectFiles
    ) -> tuple[str, Toolchain]:
        """The image built with the first toolchain of the runner's ladder that builds it
        (a Python the project declares, then the next); `unbuildable` with each one's
        error when none does."""
        failed: list[str] = []
        for chain in parts.runner.toolchains(files):
            parts.dockerfile = parts.runner.dockerfile(files, chain)
            try:
                image = self._build(write_task(task_dir, parts))
            except ImageBuildFailed as exc:
                failed.append(f"on {chain.label}: {_build_reason(exc)}")
                continue
            if failed:
                chain = replace(chain, why=f"{chain.why}; did not build {'; '.join(failed)}")
            return image, chain
        raise Dropped("candidate", "unbuildable", f"unbuildable {'; '.join(failed)}")

    def _build(self, task_dir: Path) -> str:
        try:
            task = load_task(task_dir, self.artifacts, self.caps)
            build = self.engine.build(
                context_tar(task.spec.build, self.artifacts.get),
                dockerfile=task.spec.build.dockerfile,
            )
        except ImageBuildFailed:
            raise  # `_build_ladder` tries the next toolchain
        except EnvFactoryError as exc:
            raise Dropped("candidate", "invalid_task", f"not a valid task: {exc.message}") from None
        return build.image


def _split(info: h.CommitInfo) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    tests = [(s, p) for s, p in info.changed if is_test_path(p)]
    rest = [(s, p) for s, p in info.changed if not is_test_path(p)]
    if not tests:
        raise Dropped("scanned", "no_test_change", "no test file changed")
    if not rest:
        raise Dropped("scanned", "only_test_change", "only test files changed (no fix to make)")
    return tests, rest


def _expected(runs: TestRuns, p2p_max: int, seed: str) -> list[str]:
    if not runs.fail_to_pass:
        raise why_no_fail_to_pass(runs)
    p2p = sorted(runs.pass_to_pass)
    if len(p2p) > p2p_max:  # a sample spread over the files and classes, the same each run
        p2p = sorted(random.Random(seed).sample(p2p, p2p_max))
    return sorted(runs.fail_to_pass) + p2p


def why_no_fail_to_pass(runs: TestRuns) -> Dropped:
    """Why no touched test is fail-to-pass, most telling first: a test file that does not
    collect at the commit (the missing module named), every touched test failing at the
    commit too, or the counts."""
    errors = runs.collect_errors("commit")
    if errors:
        return Dropped("buildable", "collection_error",
                       f"the tests do not collect at the commit: {'; '.join(errors)[:400]}")  # fmt: skip
    at = runs.counts("commit")
    if at.failed and not at.passed:
        return Dropped("buildable", "fails_at_commit",
                       f"every touched test fails at the fix commit too ({runs.summary()})")  # fmt: skip
    return Dropped("buildable", "no_fail_to_pass", f"no fail-to-pass test ({runs.summary()})")


def _unsaid_finding(names: list[str]) -> str:
    if not names:
        return ""
    said = ", ".join(f"`{n}`" for n in names)
    return f"the tests require {said}; the instruction does not say so"


def _build_reason(exc: ImageBuildFailed) -> str:
    return build_error(exc.log or exc.message) or _last_line(exc)


def _last_line(exc: ImageBuildFailed) -> str:
    lines = [ln.strip() for ln in (exc.log or exc.message).splitlines() if ln.strip()]
    errors = [ln for ln in lines if "error" in ln.lower() and "non-zero code" not in ln]
    return (errors or lines or ["no build log"])[-1][:300]


def cpu_seconds() -> float:
    """CPU seconds of this process and of its finished children (git)."""
    own, kids = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _code_and_prose(
    bare: Path, parent: str, patches: list[FilePatch]
) -> tuple[list[FilePatch], str]:
    """(the fix's code, the patch text of its documentation): documentation files (a
    changelog line) and the hunks of a Python file that change only docstrings or comments
    (`prose`) are in every partial state, since no test reads them."""
    code, docs = [], []
    for p in patches:
        if is_doc_path(p.path):
            docs.append(p)
            continue
        if not p.path.endswith(".py") or not p.hunks:
            code.append(p)
            continue
        try:
            old = h.file_at(bare, parent, p.path).decode()
        except (GitFailed, UnicodeDecodeError):  # a new file, or not text
            code.append(p)
            continue
        kept, words = prose_hunks(p, old)
        code += [kept] if kept else []
        docs += [words] if words else []
    return code, "".join(p.header + "".join(p.hunks) for p in docs)


#: the commit's other Python test files are restored beside the touched ones (a suite's
#: helpers and fixtures) while they number at most this many and fit in this many bytes
RESTORED_MAX, RESTORED_BYTES = 400, 4 << 20


def restored(
    touched: list[str], commit_tree: frozenset[str], read: Callable[[str], bytes]
) -> dict[str, bytes]:
    """The test files put back to the commit's version before every verification: the
    ones the commit touched, every conftest.py of the commit's tree, and its other Python
    test files (helpers and fixtures the tests import) within the bounds above. What the
    solver left in them is never run: a conftest.py that passes every test, a helper whose
    assertion always holds."""
    conftests = sorted(p for p in commit_tree if Path(p).name == "conftest.py")
    out = {p: read(p) for p in dict.fromkeys([*touched, *conftests])}
    helpers = sorted(p for p in commit_tree if p.endswith(".py") and is_test_path(p))
    if len(helpers) > RESTORED_MAX:
        return out
    more = {p: read(p) for p in helpers if p not in out}
    if sum(map(len, more.values())) <= RESTORED_BYTES:
        out.update(more)
    return out
