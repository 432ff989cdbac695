"""Helpers for the task-format tests: example paths and small task trees."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
EXAMPLES = REPO / "examples" / "tasks"
TB_EXAMPLES = REPO / "examples" / "tasks-tb"


def write_tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        if rel.endswith(".sh"):
            target.chmod(0o755)
    return root


HARBOR_MIN = {
    "instruction.md": "Write hello to /app/out.txt.\n",
    "task.toml": 'version = "1.0"\n\n[verifier]\ntimeout_sec = 20.0\n',
    "environment/Dockerfile": "FROM python:3.11-slim\nWORKDIR /app\n",
    "solution/solve.sh": "#!/bin/bash\n# step 1: write\necho hi > /app/a\n# step 2: copy\ncp /app/a /app/out.txt\n",
    "tests/test.sh": '#!/bin/bash\n[ "$(cat /app/out.txt)" = hi ]\n',
}
TB_MIN = {
    "task.yaml": "instruction: Write hello to /app/out.txt.\nmax_test_timeout_sec: 15\n",
    "Dockerfile": "FROM python:3.11-slim\nWORKDIR /app\nCOPY data.txt /app/\n",
    "data.txt": "x\n",
    "solution.sh": "#!/bin/bash\necho hi > /app/out.txt\n",
    "run-tests.sh": "#!/bin/bash\nbash $TEST_DIR/check.sh\n",
    "tests/check.sh": '[ "$(cat /app/out.txt)" = hi ]\n',
}


def example_dirs() -> list[Path]:
    return sorted(p for p in EXAMPLES.iterdir() if p.is_dir())
