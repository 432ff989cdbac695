"""How envfactory's gates do on the red-team integrity corpus (`corpus/integrity/`).

For every corpus task: `verifiers.validate.validate_task` (build + every gate), then, per
attack class: tasks, caught (a broken verifier the gates rejected), missed (a broken
verifier whose gates all passed), harness limits (accepted, where the exploit works only in
Harbor's runtime through what the gate report names as a harness limit there: the solver is
root in the verifier's container), false rejections (a sound verifier rejected), oracle-only
rejections (rejected only because the reference state earned 0: no verdict on the bug),
errors (the reference failed or the verifier was unrunnable), and for each caught task the failing
check(s) that are root causes, in report order (first failure first), marked when every one
of them is a privileged row (its attack used what a solver does not have: the verifier's
own file names; `GateReport.privileged_only`).

Tasks run in round-robin order over classes, so a run cut short still covers every class;
SIGTERM or Ctrl-C prints the table of the tasks finished so far. Always exits 0: this is a
benchmark, not a test.

Usage (from the checkout's root; PYTHONPATH=. so this checkout's gates are the ones run,
not whichever checkout the venv's editable install points at):
    PYTHONPATH=. python benchmarks/integrity.py [--only CLASS,…] [--repeats N] [--skip A,B] [--tasks A,B] [--json]
"""

from __future__ import annotations

import argparse
import itertools
import json
import signal
import sys
import tempfile
import time
import tomllib
import uuid
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path

from envfactory.core.models import TaskVerdict, counts
from envfactory.core.models.rows import RowId
from envfactory.core.settings import load_settings
from envfactory.store import ArtifactStore
from sandboxes import DockerEngine
from verifiers.probes import PROBES
from verifiers.validate import validate_task

CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "integrity"


@dataclass
class TaskResult:
    name: str
    cls: str
    sound: bool
    runtime: str
    outcome: str  # TaskVerdict value, or "error: ..." when validation raised
    failing: list[str] = field(default_factory=list)  # root-cause check names, report order
    evidence: str = ""  # the first failing check's evidence, shortened
    seconds: float = 0.0
    #: probes whose harness limit under harbor semantics the gate report notes (the part of
    #: the attack no verifier can resist in Harbor's runtime, left out of the harbor rows)
    harbor_limits: list[str] = field(default_factory=list)
    #: every reason of the rejection is a row whose attack used what a solver does not
    #: have (`GateReport.privileged_only`): caught only by "a solver who knew the tests"
    privileged_only: bool = False

    @property
    def oracle_only(self) -> bool:
        """Rejected, but only because the reference state was not rewarded: no verdict on
        the bug (the corpus test shows each reference earns 1 when verified on its own)."""
        return self.outcome == TaskVerdict.REJECTED.value and self.failing == ["oracle"]

    @property
    def harbor_rejected(self) -> bool:
        """A `harbor:` row failed: unsafe under Harbor's runtime (an export there is refused),
        whatever the verdict under envfactory's own runtime."""
        return any(RowId.parse(n).semantics == "harbor" for n in self.failing)

    @property
    def caught(self) -> bool:
        rejected = self.outcome == TaskVerdict.REJECTED.value and not self.oracle_only
        return not self.sound and (rejected or self.harbor_rejected)

    @property
    def caught_envfactory(self) -> bool:
        """Caught by a row gated under envfactory's own runtime (not only `harbor:` rows)."""
        return self.caught and any(
            n != "oracle" and RowId.parse(n).semantics is None for n in self.failing
        )

    @property
    def harness_limit(self) -> bool:
        """Accepted, but the exploit works only in Harbor's runtime and only through what the
        gate report names as a harness limit there (no verifier can resist it: the solver
        is root in the verifier's container): the report says so instead of a verdict."""
        return (
            not self.sound
            and self.outcome == TaskVerdict.PASSED.value
            and self.runtime == "harbor-only"
            and self.cls in self.harbor_limits
        )

    @property
    def missed(self) -> bool:
        return (
            not self.sound
            and self.outcome == TaskVerdict.PASSED.value
            and not self.caught
            and not self.harness_limit
        )

    @property
    def false_rejection(self) -> bool:
        rejected = self.outcome == TaskVerdict.REJECTED.value and not self.oracle_only
        return self.sound and (rejected or self.harbor_rejected)

    @property
    def error(self) -> bool:
        return self.outcome not in (TaskVerdict.PASSED.value, TaskVerdict.REJECTED.value)


def load_manifest(
    only: str | None,
    skip: set[str] = frozenset(),  # type: ignore[assignment]
    names: set[str] | None = None,
) -> list[dict]:
    """corpus.toml's entries (optionally only the comma-separated classes in `only`, only
    the tasks in `names`, less `skip`), round-robin over classes."""
    classes = set(only.split(",")) if only else None
    tasks = tomllib.loads((CORPUS / "corpus.toml").read_text())["tasks"]
    unknown = sorted((names or set()) - set(tasks))
    if unknown:
        raise SystemExit(f"integrity: no task {', '.join(unknown)} in corpus.toml")
    by_class: dict[str, list[dict]] = defaultdict(list)
    for name, e in sorted(tasks.items()):
        wanted = (classes is None or e["class"] in classes) and (names is None or name in names)
        if wanted and name not in skip:
            by_class[e["class"]].append({"name": name, **e})
    rounds = itertools.zip_longest(*by_class.values())
    return [e for r in rounds for e in r if e is not None]


def run_one(
    engine: DockerEngine, entry: dict, artifacts: ArtifactStore, repeats: int, concurrency: int
) -> TaskResult:
    """Validate one task; a raised error is a result too."""
    res = TaskResult(entry["name"], entry["class"], entry["sound"], entry["runtime"], "")
    t0 = time.monotonic()
    try:
        v = validate_task(
            engine, CORPUS / entry["name"], artifacts, repeats=repeats, concurrency=concurrency
        )
        report = v.report
        res.outcome = report.outcome.value
        failed = [c for c in report.checks if not c.passed and counts(c)]
        res.failing = [c.name for c in failed]
        res.evidence = " | ".join(failed[0].evidence)[-300:] if failed else ""
        if report.reference_failure is not None:
            res.failing.insert(0, f"reference step {report.reference_failure.step}")
        res.failing += [f"unrunnable: {u}" for u in report.unrunnable]
        res.privileged_only = report.privileged_only
        res.harbor_limits = [
            p.name for p in PROBES if p.harness_limits.get("harbor") in report.notes
        ]
    except Exception as exc:  # a benchmark reports, it does not stop
        res.outcome = f"error: {type(exc).__name__}: {str(exc)[:200]}"
    res.seconds = time.monotonic() - t0
    return res


def _row(label: str, rs: list[TaskResult]) -> str:
    counts = [
        sum(r.caught for r in rs),
        sum(r.caught_envfactory for r in rs),
        sum(r.missed for r in rs),
        sum(r.harness_limit for r in rs),
    ]
    counts += [sum(r.false_rejection for r in rs), sum(r.oracle_only for r in rs)]
    counts.append(sum(r.error for r in rs))
    widths = (6, 10, 6, 13, 9, 10, 6)
    return f"{label:18s} {len(rs):5d} " + " ".join(
        f"{c:{w}d}" for c, w in zip(counts, widths, strict=True)
    )


def table(results: list[TaskResult]) -> str:
    """Per class: tasks, caught, missed, false rejections, errors; then the caught tasks'
    failing checks, the missed tasks, and the sound tasks rejected."""
    by_class: dict[str, list[TaskResult]] = defaultdict(list)
    for r in results:
        by_class[r.cls].append(r)
    head = f"{'class':18s} {'tasks':>5s} {'caught':>6s} {'caught-env':>10s} {'missed':>6s} {'harness-limit':>13s} {'false-rej':>9s}"
    head += f" {'oracle-rej':>10s} {'errors':>6s}"
    lines = [head]
    lines += [_row(c, by_class[c]) for c in sorted(by_class, key=lambda c: (c == "sound", c))]
    lines.append(_row("all", results))
    lines.append("\ncaught (first failing checks):")
    lines += [
        f"  {r.name}: {', '.join(r.failing[:4])}{' (privileged rows only)' * r.privileged_only}"
        for r in results
        if r.caught
    ]
    lines.append(
        f"caught only by privileged rows: {sum(r.caught and r.privileged_only for r in results)}"
    )
    lines.append("\nmissed (broken verifier, every gate passed):")
    lines += [f"  {r.name} [{r.runtime}]" for r in results if r.missed]
    limited = [r for r in results if r.harness_limit]
    if limited:
        lines.append(
            "\nharness limit (accepted; the report notes what no verifier can resist there):"
        )
        lines += [f"  {r.name} [{r.runtime}]: {r.cls}" for r in limited]
    bad = [r for r in results if r.false_rejection or r.oracle_only or r.error]
    if bad:
        lines.append("\nfalse rejections, oracle-only rejections and errors:")
        lines += [f"  {r.name}: {r.outcome}: {', '.join(r.failing[:4])} {r.evidence}" for r in bad]
    return "\n".join(lines)


def _stop(signum, frame):  # type: ignore[no-untyped-def]
    raise KeyboardInterrupt


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--only", help="comma-separated attack classes ('sound' included)")
    ap.add_argument(
        "--repeats",
        type=int,
        default=3,
        help="repeats per gate check (default 3, the gates' default)",
    )
    ap.add_argument("--concurrency", type=int, default=2, help="verifications in flight per task")
    ap.add_argument("--skip", default="", help="comma-separated task names to leave out")
    ap.add_argument("--tasks", default="", help="comma-separated task names: only these")
    ap.add_argument(
        "--json", action="store_true", help="one JSON object per task, then the summary"
    )
    args = ap.parse_args()
    signal.signal(signal.SIGTERM, _stop)
    names = set(filter(None, args.tasks.split(","))) or None
    entries = load_manifest(args.only, set(filter(None, args.skip.split(","))), names)
    engine = DockerEngine(
        load_settings().sandbox.model_copy(update={"pool_size": args.concurrency}),
        run_id=f"bench-integrity-{uuid.uuid4().hex[:8]}",
    )
    results: list[TaskResult] = []
    t0 = time.monotonic()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            artifacts = ArtifactStore(Path(tmp) / "artifacts")
            for i, entry in enumerate(entries, 1):
                r = run_one(engine, entry, artifacts, args.repeats, args.concurrency)
                results.append(r)
                line = (
                    json.dumps(asdict(r))
                    if args.json
                    else (
                        f"[{i}/{len(entries)} {time.monotonic() - t0:6.0f}s] {r.name}: {r.outcome} "
                        f"({r.seconds:.0f}s) {', '.join(r.failing[:4])} {r.evidence if r.oracle_only else ''}"
                    )
                )
                print(line, flush=True)
    except KeyboardInterrupt:
        print(f"\ninterrupted after {len(results)} of {len(entries)} tasks", flush=True)
    finally:
        engine.gc(run_id=engine.run_id, include_live=True, images=True)
    print(f"\n{len(results)} tasks in {time.monotonic() - t0:.0f}s (repeats {args.repeats})\n")
    print(table(results), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
