"""Produce and verify the states of an integrity-corpus task: reference, untouched, exploit,
and each alternative correct solution (`alternatives/<name>.sh`) it ships.

Used by `test_corpus.py`. Every state is verified once, with the project's own runner
(`verifiers.runner.verify_state`, envfactory's runtime: a fresh container from the
pristine image with the state's workspace copied in, or the state itself under
`verify_scope = "full-state"`). Tasks flagged `harbor-only` are also verified the way
Harbor does it: in the exploited container itself, `/tests` copied in, `bash
/tests/test.sh`, reward read from `/logs/verifier/reward.txt`.

Invariants: one image build per task (the engine caches builds by context hash); every
container and snapshot carries the engine's run labels, so the session's gc removes them.
"""

from __future__ import annotations

import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from envfactory.core.models import Purpose, StateKind
from envfactory.store import ArtifactStore
from sandboxes.protocol import Sandbox, SandboxEngine
from verifiers.formats import ImportedTask, context_tar, load_task
from verifiers.formats.model import BlobReader
from verifiers.runner import verify_state

CORPUS = Path(__file__).resolve().parents[2] / "corpus" / "integrity"


@dataclass(frozen=True)
class Entry:
    """One task of corpus.toml."""

    name: str
    cls: str
    sound: bool
    layout: str
    runtime: str
    bug: str

    @property
    def path(self) -> Path:
        return CORPUS / self.name


def manifest() -> list[Entry]:
    """corpus.toml's entries, sorted by name."""
    data = tomllib.loads((CORPUS / "corpus.toml").read_text())["tasks"]
    return [
        Entry(name, e["class"], e["sound"], e["layout"], e["runtime"], e["bug"])
        for name, e in sorted(data.items())
    ]


@dataclass
class Outcome:
    """Rewards observed for one task's states (None: that state was not verified)."""

    reference: int | None = None
    untouched: int | None = None
    exploit: int | None = None
    exploit_harbor: int | None = None
    alternatives: dict[str, int] = field(default_factory=dict)
    evidence: dict[str, str] = field(default_factory=dict)


def run_in(box: Sandbox, script: str, what: str, timeout: float = 120) -> None:
    """Run a bash script as root in the box; raise with its output if it fails."""
    res = box.exec(["bash", "-c", script], user="root", workdir="/", timeout=timeout)
    if res.exit_code != 0:
        raise RuntimeError(f"{what} exited {res.exit_code}: {(res.stdout + res.stderr)[-1500:]}")


def snapshot_after(
    engine: SandboxEngine, task: ImportedTask, image: str, scripts: list[str], what: str
) -> str:
    """The image of a container of `image` after running `scripts` in order."""
    box = engine.start(image, limits=task.spec.limits, purpose=Purpose.TEST, network=False)
    try:
        for i, script in enumerate(scripts, 1):
            run_in(box, script, f"{what} step {i}")
        return _snapshot(box, what)
    finally:
        box.remove()


def _snapshot(box: Sandbox, what: str, tries: int = 3) -> str:
    """Commit the box; retried because on a loaded host Docker's pause can fail to freeze
    the container's cgroup ("unable to freeze"), which says nothing about the task."""
    for attempt in range(1, tries + 1):
        try:
            return box.snapshot(StateKind.SOLVER, label=what).image
        except Exception:
            if attempt == tries:
                raise
            time.sleep(2 * attempt)
    raise AssertionError("unreachable")


def harbor_reward(
    engine: SandboxEngine, task: ImportedTask, image: str, exploit: str, files: BlobReader
) -> tuple[int, str]:
    """Harbor's runtime: exploit, then /tests in the same container, reward.txt decides."""
    box = engine.start(image, limits=task.spec.limits, purpose=Purpose.TEST, network=False)
    try:
        run_in(box, exploit, "exploit")
        for f in task.verifier.files:
            box.write_file(f"/tests/{f.path}", files.get(f.key), f.mode)
        res = box.exec(["bash", "/tests/test.sh"], user="root", workdir="/tests", timeout=60)
        got = box.exec(["cat", "/logs/verifier/reward.txt"], user="root").stdout.strip()
        return int(got == "1"), f"exit {res.exit_code}; reward.txt {got!r}"
    finally:
        box.remove()


def alternatives(entry: Entry) -> list[Path]:
    """The task's alternative correct solutions: `alternatives/*.sh`, one script each."""
    return sorted((entry.path / "alternatives").glob("*.sh"))


def check_task(engine: SandboxEngine, entry: Entry, artifacts: ArtifactStore) -> Outcome:
    """Build the task and verify its reference, untouched, exploit and alternative states once each."""
    task = load_task(entry.path, artifacts)
    image = engine.build(
        context_tar(task.spec.build, artifacts.get), dockerfile=task.spec.build.dockerfile
    ).image
    exploit = (entry.path / "exploit.sh").read_text()
    out = Outcome()

    def reward(state: str, label: str) -> int:
        res = verify_state(
            engine,
            state_image=state,
            pristine_image=image,
            spec=task.spec,
            verifier=task.verifier,
            files=artifacts.get,
        )
        out.evidence[label] = (
            f"exit {res.exit_code}; {res.notes}; {(res.stdout + res.stderr)[-600:]}"
        )
        return res.reward

    steps = [s.script for s in task.spec.reference_solution]
    out.reference = reward(snapshot_after(engine, task, image, steps, "reference"), "reference")
    out.untouched = reward(image, "untouched")
    out.exploit = reward(snapshot_after(engine, task, image, [exploit], "exploit"), "exploit")
    for alt in alternatives(entry):
        label = f"alternative {alt.stem}"
        state = snapshot_after(engine, task, image, [alt.read_text()], label)
        out.alternatives[alt.stem] = reward(state, label)
    if entry.runtime == "harbor-only":
        out.exploit_harbor, out.evidence["exploit-harbor"] = harbor_reward(
            engine, task, image, exploit, artifacts
        )
    return out
