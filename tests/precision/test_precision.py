"""The standing precision set: sound work nobody on the team wrote, every gate run on it
through the real CLI (`envfactory validate`, real Docker, traced), and not one rejected.

`tests/precision/tasks/` holds sound Harbor / Terminal-Bench tasks written by authors who
had not read the probes (README-a.md and README-b.md say what each asks, what its
verifier checks, and the rewards its author observed by hand). A rejection here is a false
rejection: the test fails naming the task and the failing rows with their reasons, and
the fix belongs in the gates, never in the task.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.validate_cli import validate_json

pytestmark = [pytest.mark.docker, pytest.mark.slow]

TASKS = sorted(p for p in (Path(__file__).parent / "tasks").iterdir() if p.is_dir())


@pytest.fixture(scope="module")
def validated(tmp_path_factory) -> dict[str, dict]:  # type: ignore[type-arg]
    _, output, out = validate_json(TASKS, tmp_path_factory.mktemp("home"), 3)
    assert out, output
    return out


def test_the_set_holds_at_least_twelve_tasks() -> None:
    assert len(TASKS) >= 12, [p.name for p in TASKS]


@pytest.mark.parametrize("task", [p.name for p in TASKS])
def test_sound_work_is_never_rejected(validated, task) -> None:  # type: ignore[no-untyped-def]
    got = validated[task]
    assert "error" not in got, got
    assert got["verdict"] == "passed", f"{task}: {got['reasons']}"
