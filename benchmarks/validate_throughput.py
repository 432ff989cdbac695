"""Gate throughput on small tasks: two engine settings side by side in one run, against Harbor.

    python -m benchmarks.validate_throughput [--tasks DIR ...] [--repeats 3]
        [--concurrency 4] [--compare native-usr|standby|own-command|settle-early]
        [--standby 4]
        [--harbor PATH]
        [--harbor-trials 8] [--naive-rows 12] [--flaky-runs 4] [--first-battery]

`--compare native-usr` (default): verification containers with the storage driver's own
/usr/lib and /usr/local, then with kernel overlays of the same layers
(`sandboxes/native_usr.py`, the default). `--compare standby`: standby containers off
and on (`--standby` deep). `--compare own-command`: verifications by a started container
and an exec, then as the container's own command (`DockerEngine.run`, the default).
`--compare settle-early`: every harbor row run, then the rows that can no longer change
a verdict skipped (`GateInput.settle_early`, the default).

With `--first-battery`, a third mode gates the same tasks with the battery the gates had
when the integrity issue was filed (the 12 first probes, every row `repeats` times, no
traced, oracle-derived or left-out-step states, no harbor rows): the ratio of today's
seconds per task to that mode's is what the probes added since cost, measured side by
side under the same load.

Prints, from one run on the same tasks (default: the two small Harbor tasks in
benchmarks/tasks/), each task gated once per mode, the modes interleaved so that load
from other processes hits both alike:
- per task and mode: gate seconds (the `run_gates` wall, after the
  build and the verification layer), gate rows (checks) and fresh verification
  containers (each repeat of a row is one; rows with byte-identical inputs share one);
- per mode: seconds per task, verifications/min, checks/min and the machine's busy CPU
  seconds per task (gates are CPU-bound on 2 cores: the figure that has to come down);
  Harbor's oracle trials
  per minute on the same tasks, engine and concurrency (a trial is one container, the
  oracle solution and one verification: the closest thing Harbor has to a verification)
  when Harbor is installed, else n/a; and our verifications/min over Harbor's;
- the naive harness (benchmarks/naive_harness.py) on `--naive-rows` of the gated rows,
  spread over the tasks: every row `repeats` times, a docker CLI call per operation, at
  the same concurrency; its verifications/min and checks/min (a check: one row at
  `repeats` runs) and ours over them, and how many of its rewards agreed with the gates';
- per mode, where the time goes: engine calls by kind, summed over threads;
- the floor of one verification here: a bare `docker run --rm IMAGE true`, an exec, and
  one whole verification of each task's oracle state run alone, per mode (wall and CPU);
  from it, per mode, the floor of seconds per task: verifications × that CPU ÷ cores;
- the flaky-verifier table (benchmarks/flaky_detection.py) unless `--flaky-runs 0`.
A benchmark prints numbers; it asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import statistics as st
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from benchmarks.flaky_detection import flaky_table, print_flaky
from benchmarks.harbor_trials import HarborRun, find_harbor, oracle_trials
from benchmarks.naive_harness import NaiveRow, NaiveRun, naive_run, rows_of, sample
from benchmarks.sandbox_overhead import busy_cpu_s
from benchmarks.verifier_cost import oracle_state
from envfactory.core.models import Purpose
from envfactory.core.settings import load_settings
from envfactory.store import ArtifactStore
from sandboxes import DockerEngine
from verifiers.battery import gate_input
from verifiers.formats import context_tar, load_task
from verifiers.gates import GateInput
from verifiers.probes import by_name
from verifiers.runner import verifier_tar, verify_prepared
from verifiers.validate import validate_task

ROOT = Path(__file__).resolve().parents[1]


def every_row(inp: GateInput) -> GateInput:
    """Every harbor row runs, even after its verdict is settled: the baseline of
    `--compare settle-early`."""
    return replace(inp, settle_early=False)


#: per comparison, its two modes: a name, the engine settings it changes and how it changes
#: the gate input (None: not at all)
COMPARE: dict[
    str, tuple[tuple[str, dict[str, object], Callable[[GateInput], GateInput] | None], ...]
] = {
    "native-usr": (("kernel /usr off", {"native_usr": False}, None), ("kernel /usr on", {}, None)),
    "standby": (("standby off", {"standby": 0}, None), ("standby on", {"standby": None}, None)),
    "own-command": (("exec", {"own_command": False}, None), ("own command", {}, None)),
    "settle-early": (("every row", {}, every_row), ("settle early", {}, None)),
}
FIRST = "first battery"
#: the probes the gates had when the integrity issue (13) was filed
FIRST_PROBES = (
    "reward-file",
    "forged-output",
    "conftest-pass",
    "startup-hook",
    "module-shadow",
    "path-hijack",
    "delete-tests",
    "empty-tests",
    "placeholder-outputs",
    "break-collection",
    "git-reset",
    "delayed-rewrite",
)


def first_battery(inp: GateInput) -> GateInput:
    """The gate input as the first battery would have run it (see the module docstring)."""
    return replace(
        inp,
        spec=inp.spec.model_copy(update={"semantics": inp.spec.semantics[:1]}),
        probes=tuple(by_name(n) for n in FIRST_PROBES),
        traced_probes=None,
        adaptive_repeats=False,
        omissions=False,
        derived_probes=False,
    )


class Timed:
    """Wraps an engine (and its sandboxes) and adds up the wall time of every call by name."""

    def __init__(self, inner: object, totals: dict[str, list[float]], lock: threading.Lock) -> None:
        self._inner, self._totals, self._lock = inner, totals, lock

    def __getattr__(self, name: str):  # type: ignore[no-untyped-def]
        attr = getattr(self._inner, name)
        if (
            not callable(attr)
            or name.startswith("_")
            or name in {"build", "ensure_base_image", "gc", "standby"}
        ):
            return attr

        def call(*a, **kw):  # type: ignore[no-untyped-def]
            t0 = time.monotonic()
            try:
                out = attr(*a, **kw)
            finally:
                with self._lock:
                    self._totals[name].append(time.monotonic() - t0)
            if name == "run":  # (result, the stopped sandbox): its removal is timed too
                return out[0], Timed(out[1], self._totals, self._lock)
            return Timed(out, self._totals, self._lock) if name == "start" else out

        return call


@dataclass
class Mode:
    name: str
    engine: DockerEngine
    totals: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    gate_s: dict[str, float] = field(default_factory=dict)  # task → run_gates wall
    cpu_s: dict[str, float] = field(default_factory=dict)  # task → machine busy CPU, same span
    checks: dict[str, int] = field(default_factory=dict)
    verifications: dict[str, int] = field(default_factory=dict)
    verdicts: dict[str, str] = field(default_factory=dict)
    naive_rows: dict[str, list[NaiveRow]] = field(default_factory=dict)  # task → its rows
    standby: tuple[int, int, int] = (0, 0, 0)  # handed out, started, removed unused
    adjust: Callable[[GateInput], GateInput] | None = None

    @property
    def wall(self) -> float:
        return sum(self.gate_s.values())

    def per_min(self, counts: dict[str, int]) -> float:
        return sum(counts.values()) / self.wall * 60 if self.wall else 0.0


def small_tasks() -> list[Path]:
    """The small Harbor tasks the gate benchmarks run by default (benchmarks/tasks/)."""
    return sorted(p for p in (ROOT / "benchmarks/tasks").iterdir() if p.is_dir())


def add_tasks_argument(ap: argparse.ArgumentParser) -> None:
    """`--tasks DIR ...`, the small tasks by default."""
    ap.add_argument("--tasks", nargs="*", type=Path, default=small_tasks())


def one_verification(
    engine: DockerEngine, task: Path, artifacts: ArtifactStore, n: int = 5
) -> tuple[float, float]:
    """(busy CPU seconds, wall seconds) of one verification of `task`'s oracle state, the
    mean of `n` run one after another on a quiet machine: fresh container, the verifier's
    command, removal. Verifications per task × this CPU ÷ cores is what the gates cannot
    go below on this machine however the rest is arranged."""
    loaded = load_task(task, artifacts)
    spec = loaded.spec
    image = build_task(engine, task, artifacts)
    inp, _ = gate_input(
        engine, spec=spec, verifier=loaded.verifier, files=artifacts.get, image=image
    )
    oracle = oracle_state(engine, image, spec)
    prepared = replace(oracle.prepared, image=inp.verify_image or image)
    vfiles = verifier_tar(loaded.verifier, artifacts.get)
    cpu, t0 = busy_cpu_s(), time.monotonic()
    for _ in range(n):
        verify_prepared(
            engine, prepared, spec=spec, verifier=loaded.verifier, verifier_files=vfiles
        )
    return (busy_cpu_s() - cpu) / n, (time.monotonic() - t0) / n


def bare_container_s(image: str, n: int = 5) -> float:
    """Median of `docker run --rm --network none IMAGE true` (the engine's bare cost)."""
    times = []
    for _ in range(n):
        t0 = time.monotonic()
        subprocess.run(
            [
                "docker",
                "run",
                "--rm",
                "--label",
                "envfactory.owner=bench",
                "--network",
                "none",
                image,
                "true",
            ],
            check=True,
            capture_output=True,
        )
        times.append(time.monotonic() - t0)
    return st.median(times)


def exec_overhead_s(engine: DockerEngine, image: str, n: int = 5) -> float:
    """Median wall of exec'ing `true` in a warm sandbox: what an exec adds to a command."""
    with engine.sandbox(image, purpose=Purpose.BENCHMARK) as box:
        return st.median([box.exec(["true"]).duration_s for _ in range(n)])


def gate_all(modes: list[Mode], tasks: list[Path], artifacts: ArtifactStore, args) -> None:  # type: ignore[no-untyped-def]
    for i, task in enumerate(tasks):
        for mode in modes if i % 2 == 0 else modes[::-1]:
            timed = Timed(mode.engine, mode.totals, threading.Lock())
            cpu0 = busy_cpu_s()
            res = validate_task(
                timed,
                task,
                artifacts,
                repeats=args.repeats,  # type: ignore[arg-type]
                concurrency=args.concurrency,
                adjust=mode.adjust,
            )
            mode.gate_s[task.name] = res.run.wall_s
            mode.cpu_s[task.name] = busy_cpu_s() - cpu0  # the build is cached: ~the gates
            mode.checks[task.name] = len(res.report.checks)
            mode.verifications[task.name] = sum(len(v) for v in res.run.results.values())
            mode.verdicts[task.name] = res.report.verdict.value
            vfiles = verifier_tar(res.task.verifier, artifacts.get)
            mode.naive_rows[task.name] = rows_of(res.run, res.task.verifier, vfiles)
            print(
                f"  {task.name:16s} {mode.name:12s} {res.report.verdict.value:7s} "
                f"{res.run.wall_s:6.1f}s",
                file=sys.stderr,
                flush=True,
            )


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add_tasks_argument(ap)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--compare", choices=sorted(COMPARE), default="native-usr")
    ap.add_argument(
        "--standby", type=int, default=None, help="standby depth (default: concurrency)"
    )
    ap.add_argument("--harbor", default=None, help="the harbor executable (default: on PATH)")
    ap.add_argument("--harbor-trials", type=int, default=8, help="oracle trials per task; 0: skip")
    ap.add_argument(
        "--naive-rows", type=int, default=12, help="gated rows the naive harness runs; 0: skip"
    )
    ap.add_argument(
        "--flaky-runs", type=int, default=4, help="gate runs per flaky verifier and mode"
    )
    ap.add_argument(
        "--first-battery",
        action="store_true",
        help="also gate with the first battery (what the probes added since cost)",
    )
    args = ap.parse_args()
    tasks = [t for t in args.tasks if t.is_dir()]
    run_id = f"bench-{uuid.uuid4().hex[:8]}"
    base = load_settings().sandbox.model_copy(update={"pool_size": args.concurrency})
    depth = args.standby if args.standby is not None else args.concurrency
    modes = []
    for name, change, adjust in COMPARE[args.compare]:
        change = {k: depth if v is None else v for k, v in change.items()}
        engine = DockerEngine(base.model_copy(update=change), run_id=run_id)
        modes.append(Mode(name, engine, adjust=adjust))
    if args.first_battery:
        modes.append(Mode(FIRST, modes[0].engine, adjust=first_battery))
    engine = modes[1].engine
    harbor, harbor_note = find_harbor(args.harbor) if args.harbor_trials else (None, "skipped")
    harbor_runs: list[HarborRun] = []
    naive: NaiveRun | None = None
    flaky = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            artifacts = ArtifactStore(Path(tmp) / "artifacts")
            images = [
                build_task(engine, t, artifacts) for t in tasks
            ]  # the timed part is the gates
            bare, exec_over = bare_container_s(images[0]), exec_overhead_s(engine, images[0])
            one = {
                m.name: {t.name: one_verification(m.engine, t, artifacts) for t in tasks}
                for m in modes[:2]
            }
            gate_all(modes, tasks, artifacts, args)
            sb = engine.prestarted
            modes[1].standby = (sb.handed_out, sb.started, sb.discarded)
            if args.naive_rows:
                rows = sample(list(modes[1].naive_rows.values()), args.naive_rows)
                naive = naive_run(rows, repeats=args.repeats, concurrency=args.concurrency)
        for t in tasks if harbor else []:
            harbor_runs.append(
                oracle_trials(
                    harbor,
                    t,
                    engine,
                    trials=args.harbor_trials,  # type: ignore[arg-type]
                    concurrency=args.concurrency,
                )
            )
        if args.flaky_runs:
            flaky = flaky_table(
                engine, runs=args.flaky_runs, repeats=args.repeats, concurrency=args.concurrency
            )
    finally:
        for e in {id(m.engine): m.engine for m in modes}.values():
            e.close()
        engine.gc(run_id=run_id, include_live=True)
        subprocess.run(
            "docker ps -aq --filter label=envfactory.owner=bench | xargs -r docker rm -f",
            shell=True,
            capture_output=True,
        )
    report(modes, tasks, harbor_runs, harbor_note, naive, (bare, exec_over, one), args)
    if flaky:
        print()
        print_flaky(flaky, args.repeats)
    return 0


def build_task(engine: DockerEngine, task: Path, artifacts: ArtifactStore) -> str:
    spec = load_task(task, artifacts).spec
    return engine.build(
        context_tar(spec.build, artifacts.get), dockerfile=spec.build.dockerfile
    ).image


def report(
    modes: list[Mode],
    tasks: list[Path],
    harbor: list[HarborRun],
    harbor_note: str,
    naive: NaiveRun | None,
    floors: tuple[float, float, dict[str, dict[str, tuple[float, float]]]],
    args,
) -> None:  # type: ignore[no-untyped-def]
    bare, exec_over, one = floors
    cores = os.cpu_count() or 1
    print()
    print(
        f"tasks: {len(tasks)}   repeats: {args.repeats}   concurrency: {args.concurrency}   "
        f"modes: {args.compare}   standby depth: {modes[1].engine.settings.standby}   "
        f"{harbor_note}"
    )
    hb = {h.task: h for h in harbor}
    cols = [*(m.name for m in modes), "naive harness", "Harbor oracle trials"]
    print(f"  {'':28s}" + "".join(f"{c:>22s}" for c in cols))
    for t in tasks:
        n = t.name
        cells = [f"{m.gate_s[n]:6.1f}s {m.checks[n]:3d}ch {m.verifications[n]:3d}v" for m in modes]
        cells.append("")
        h = hb.get(n)
        cells.append(f"{h.wall_s:6.1f}s {h.trials:3d} trials" if h else "n/a")
        print(f"  {'gate s: ' + n:28s}" + "".join(f"{c:>22s}" for c in cells))
    harbor_min = (
        sum(h.trials for h in harbor) / sum(h.wall_s for h in harbor) * 60 if harbor else None
    )
    naive_v = naive.per_min(naive.verifications) if naive else None
    naive_c = naive.per_min(naive.rows) if naive else None
    rows = {
        "seconds per task": [f"{m.wall / len(tasks):.1f}" for m in modes] + ["n/a", "n/a"],
        "verifications/min": [f"{m.per_min(m.verifications):.1f}" for m in modes]
        + [f"{naive_v:.1f}" if naive_v else "n/a"]
        + [f"{harbor_min:.1f} trials/min" if harbor_min else "n/a"],
        "checks/min": [f"{m.per_min(m.checks):.1f}" for m in modes]
        + [f"{naive_c:.1f}" if naive_c else "n/a", "n/a"],
        "busy CPU s per task": [f"{sum(m.cpu_s.values()) / len(tasks):.1f}" for m in modes]
        + ["n/a", "n/a"],
        f"floor s per task ({cores} cores)": [
            f"{sum(v * alone[t][0] for t, v in m.verifications.items()) / len(tasks) / cores:.1f}"
            for m in modes
            for alone in [one.get(m.name, one[modes[0].name])]
        ]
        + ["n/a", "n/a"],
        "verifications/min ÷ naive": [
            f"{m.per_min(m.verifications) / naive_v:.1f}x" if naive_v else "n/a" for m in modes
        ]
        + ["", ""],
        "checks/min ÷ naive": [
            f"{m.per_min(m.checks) / naive_c:.1f}x" if naive_c else "n/a" for m in modes
        ]
        + ["", ""],
        "verifications/min ÷ Harbor": [
            f"{m.per_min(m.verifications) / harbor_min:.1f}x" if harbor_min else "n/a"
            for m in modes
        ]
        + ["", ""],
        "checks/min ÷ Harbor": [
            f"{m.per_min(m.checks) / harbor_min:.1f}x" if harbor_min else "n/a" for m in modes
        ]
        + ["", ""],
    }
    for name, cells in rows.items():
        print(f"  {name:28s}" + "".join(f"{c:>22s}" for c in cells))
    if harbor:
        print(
            "  Harbor trials passed: "
            + ", ".join(f"{h.task} {h.passed}/{h.trials}" for h in harbor)
            + (
                "   errors: " + str(sum(h.errors for h in harbor))
                if any(h.errors for h in harbor)
                else ""
            )
        )
    if naive:
        print(
            f"  naive harness: {naive.rows} rows x {args.repeats} = {naive.verifications} "
            f"verifications in {naive.wall_s:.1f}s; {naive.agreed}/{naive.verifications} "
            "rewards agreed with the gates' on the same rows"
        )
    first = next((m for m in modes if m.name == FIRST), None)
    if first is not None and first.wall:
        print(
            f"  today's battery ÷ the first ({modes[0].name}): seconds per task "
            f"{modes[0].wall / first.wall:.2f}x, verifications "
            f"{sum(modes[0].verifications.values()) / max(1, sum(first.verifications.values())):.2f}x"
        )
    handed, started, unused = modes[1].standby
    if started:
        print(
            f"standby: {handed} containers handed out ready "
            f"({sum(modes[1].verifications.values())} verifications, the rest replays that "
            f"changed nothing), {started} started ahead, {unused} removed unused at the runs' ends"
        )
    print(
        f"floor here: bare container (docker run --rm IMAGE true) {bare:.3f}s   "
        f"exec {exec_over:.3f}s"
    )
    for mode, alone in one.items():
        for t, (cpu, wall) in alone.items():
            print(
                f"  one verification of {t}'s oracle, alone, {mode}: {wall:.3f}s wall, "
                f"{cpu:.3f}s busy CPU"
            )
    print(
        "  floor s per task: the task's verifications x one verification's CPU / cores -- "
        "the gate wall if nothing but the verifications ran and the cores never idled"
    )
    for m in modes:
        print(f"where the time goes, {m.name} (engine calls, summed over threads):")
        for name, vals in sorted(m.totals.items(), key=lambda kv: -sum(kv[1])):
            print(
                f"  {name:12s} n={len(vals):5d}  total {sum(vals):8.1f}s  mean {st.mean(vals):.3f}s"
            )


if __name__ == "__main__":
    sys.exit(main())
