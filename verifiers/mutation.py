"""The mutation score of a gate battery: does it notice a weaker verifier?

A verifier that passes its gates may still be weak where the battery has blind spots (too
few partial states). Here the verifier is weakened automatically (`verifiers.mutants`:
one change per mutant) and each mutant is run against the states the gate run already
produced: oracle first, then no-op, unsolved, probe and regression states, once each,
stopping at the first state whose reward differs from the expected one (the mutant is
"killed" by that check). A mutant that passes every state "survived" — the battery has a
gap its diff points at — unless its output on every state is the original verifier's own
(rewards and normalised stdout/stderr) *and* it only changes how a check judges (relaxed
comparison, loosened tolerance, `|| true`, no `set -e`): then it is
"equivalent-suspected" and left out of the score (killed / (killed + survived)). A mutant
that removes a check and still prints what the original printed everywhere shows that no
state ever failed that check: a blind spot, so it counts as survived. (A verifier that
stops at its first failure prints the same on every state where an earlier check fails,
so output identity alone would hide exactly those gaps.)

Invariants:
- states are never re-produced: each mutant is verified on exactly what each gate row
  verified (`GateRun.prepared`: layer image, harbor replay included) through
  `runner.verify_prepared`, i.e. in a fresh container per verification like a gate
  check (the verifier's files arrive only then, no solver process survives);
- only checks the original verifier passed are used (a failed check says nothing about a
  mutant), and probe states the gates verified once for several rows count once;
- model-free and deterministic in which mutants it picks; cost = the verifications
  counted in `MutationScore.verifications` (at most mutants × states).
"""

from __future__ import annotations

import hashlib
import re
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from envfactory.core.models import (
    CheckKind,
    EnvironmentSpec,
    Evidence,
    GateReport,
    Mutant,
    MutantStatus,
    MutationScore,
    ShortcutFinding,
    Verifier,
)
from envfactory.core.models.rows import FindingRule, Rule
from sandboxes.protocol import Sandbox, SandboxEngine

from .gates import GateRun, Progress
from .mutants import MutantFile, mutants_of_file, round_robin
from .runner import PreparedState, VerifyResult, verifier_tar, verify_prepared
from .tamper import VERIFIER_DIR_PREFIX

RULE = str(Rule(FindingRule.WEAK_BATTERY, "weak-battery"))
#: operators that take a check out (wholly or one operand of it). Such a mutant with the
#: original's output on every state means no state ever failed that check — a blind spot
#: of the battery, not an equivalent mutant (unless the check is redundant, which is rare).
REMOVES_A_CHECK = frozenset(
    {
        "drop-assert",
        "drop-check",
        "compare-true",
        "delete-test",
        "early-exit",
        "skip-file-check",
        "drop-check-line",
    }
)
#: parts of a verifier's output that differ between two runs of the same verifier
_VOLATILE = (
    (re.compile(re.escape(VERIFIER_DIR_PREFIX) + r"[0-9a-f]+"), "<verifier-dir>"),
    (re.compile(r"/\.envfactory-stage-[0-9a-f]+"), "<stage>"),
    (re.compile(r"\b\d+(?:\.\d+)?\s?(?:s|ms|sec|seconds)\b"), "<time>"),
    (re.compile(r"0x[0-9a-fA-F]+"), "0x<addr>"),
)


@dataclass(frozen=True)
class Target:
    """One gate row a mutant is verified on, with the reward a sound verifier gives."""

    name: str
    expected: int
    prepared: PreparedState  # exactly what the gates verified for this row


def battery(run: GateRun) -> list[Target]:
    """The gate run's rows in check order (oracle, no-op, unsolved, probe, regression),
    each verification input once (rows the gates shared with a twin are left out), only
    where the original verifier passed. A tolerance row kills no mutant (a verifier more
    tolerant than the instruction requires is not weaker), nor does a row the trace shows
    the verifier cannot judge."""
    out = []
    for check in run.report.checks:
        prepared = run.prepared.get(check.name)
        if prepared is None and check.name in run.states:
            prepared = run.states[check.name].prepared
        judges = check.kind != CheckKind.TOLERANCE and not check.not_applicable
        if judges and check.passed and run.results.get(check.name) and prepared is not None:
            out.append(Target(check.name, check.expected, prepared))
    return out


def mutation_score(
    run: GateRun,
    *,
    engine: SandboxEngine,
    spec: EnvironmentSpec,
    verifier: Verifier,
    files: Callable[[str], bytes],
    max_mutants: int = 40,
    concurrency: int = 2,
    progress: Progress | None = None,
) -> MutationScore:
    """Generate up to `max_mutants` mutants of `verifier` and run each on the gate states."""
    t0 = time.monotonic()
    original = verifier_tar(verifier, files)
    found = [m for path in sorted(original) for m in mutants_of_file(path, original[path][0])]
    chosen = round_robin(found, max_mutants)
    targets = battery(run)
    if not any(t.expected == 1 for t in targets):
        chosen = []  # without a passing oracle the gates failed: nothing to measure
    scorer = _Scorer(run, engine, spec, verifier, original, targets, len(chosen), progress)
    with ThreadPoolExecutor(max(1, concurrency), thread_name_prefix="mutant") as pool:
        try:
            mutants = list(pool.map(scorer.score, chosen))
        finally:
            scorer.reaper.shutdown(wait=True)
    count = {s: sum(m.status == s for m in mutants) for s in ("killed", "survived")}
    return MutationScore(
        killed=count["killed"],
        survived=count["survived"],
        equivalent=len(mutants) - count["killed"] - count["survived"],
        mutants=tuple(mutants),
        candidates=len(found),
        verifications=scorer.verifications,
        wall_s=round(time.monotonic() - t0, 3),
    )


class _Scorer:
    """Runs mutants through the battery; counts verifications; removes containers off
    the critical path (like the gates)."""

    def __init__(
        self,
        run: GateRun,
        engine: SandboxEngine,
        spec: EnvironmentSpec,
        verifier: Verifier,
        original: dict[str, tuple[bytes, int]],
        targets: list[Target],
        total: int,
        progress: Progress | None,
    ) -> None:
        self.run, self.engine, self.spec, self.verifier = run, engine, spec, verifier
        self.original, self.targets, self.total, self.progress = original, targets, total, progress
        self.reaper = ThreadPoolExecutor(2, thread_name_prefix="mutant-rm")
        self.lock = threading.Lock()
        self.verifications = self.done = 0

    def score(self, m: MutantFile) -> Mutant:
        vfiles = dict(self.original)
        vfiles[m.file] = (m.text, self.original[m.file][1])
        passed: list[tuple[Target, VerifyResult]] = []
        killed_by = None
        for target in self.targets:
            res = verify_prepared(
                self.engine,
                target.prepared,
                spec=self.spec,
                verifier=self.verifier,
                verifier_files=vfiles,
                remove=self._remove_later,
            )
            with self.lock:
                self.verifications += 1
            if res.reward != target.expected:
                killed_by = target.name
                break
            passed.append((target, res))
        status = "killed" if killed_by else self._survivor_status(m, passed)
        self._tick(f"{m.operator} {m.file}:{m.line} {status}")
        return Mutant(
            file=m.file,
            operator=m.operator,
            line=m.line,
            diff=m.diff,
            status=status,
            killed_by=killed_by,
        )

    def _survivor_status(
        self, m: MutantFile, passed: list[tuple[Target, VerifyResult]]
    ) -> MutantStatus:
        same = all(same_output(res, self.run.results.get(t.name, [])) for t, res in passed)
        return survivor_status(m.operator, same_everywhere=same and bool(passed))

    def _remove_later(self, box: Sandbox) -> None:
        self.reaper.submit(box.remove)

    def _tick(self, what: str) -> None:
        with self.lock:
            self.done += 1
            done = self.done
        if self.progress:
            self.progress(done, self.total, what)


def survivor_status(operator: str, *, same_everywhere: bool) -> MutantStatus:
    """Equivalent-suspected: the original's output on every state, and the mutant only
    changes how a check judges (a removed check that never fired is a gap: survived)."""
    if same_everywhere and operator not in REMOVES_A_CHECK:
        return "equivalent-suspected"
    return "survived"


def normalised(text: str) -> str:
    for pattern, repl in _VOLATILE:
        text = pattern.sub(repl, text)
    return text.strip()


def same_output(res: VerifyResult, originals: Sequence[VerifyResult]) -> bool:
    """Whether `res` looks like one of the original verifier's runs on the same state."""
    mine = (res.reward, normalised(res.stdout), normalised(res.stderr))
    return any(mine == (o.reward, normalised(o.stdout), normalised(o.stderr)) for o in originals)


def mutation_findings(report: GateReport, min_score: float) -> tuple[ShortcutFinding, ...]:
    """A review finding when the battery's mutation score is below `min_score`, carrying
    every survivor's diff (what the battery would not notice). Its id is stable per
    verifier version, so re-running the gates does not file it twice."""
    ms = report.mutation
    if ms is None or ms.score is None or ms.score >= min_score:
        return ()
    survivors = [m for m in ms.mutants if m.status == "survived"]
    key = f"{report.env_id}\0{RULE}\0v{report.verifier_version}"
    summary = (
        f"mutation score {ms.score:.2f} is below {min_score:.2f}: {len(survivors)} weakened "
        f"verifier(s) passed every gate state; add partial states that tell them apart"
    )
    return (
        ShortcutFinding(
            id="finding-" + hashlib.sha256(key.encode()).hexdigest()[:12],
            env_id=report.env_id,
            source="mutation",
            rule=RULE,
            evidence=Evidence(
                summary=summary,
                commands=tuple(f"{m.operator} {m.file}:{m.line}" for m in survivors),
                verifier_output="\n".join(m.diff for m in survivors),
            ),
        ),
    )
