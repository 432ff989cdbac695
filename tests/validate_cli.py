"""`envfactory validate --json` through the real CLI, its output read back per task."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from envfactory.cli import app


def validate_json(tasks: list[Path], home: Path, jobs: int) -> tuple[int, str, dict[str, Any]]:
    """(exit code, output, {task directory name: its JSON object}) of one validate run
    over `tasks`, one repeat, `jobs` at a time, in the home `home`."""
    result = CliRunner().invoke(
        app,
        ["validate", *map(str, tasks), "--repeats", "1", "--json", "-j", str(jobs)],
        env={"ENVFACTORY_HOME": str(home)},
    )
    decoder, text, out, i = json.JSONDecoder(), result.stdout, {}, 0
    while i < len(text):
        if text[i].isspace():
            i += 1
            continue
        obj, i = decoder.raw_decode(text, i)
        out[Path(obj["task"]).name] = obj
    return result.exit_code, result.output, out
