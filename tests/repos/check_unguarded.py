# The check.py that mined environments published before the guard carry (envfactory
# 59f44b7): pytest in the process that imports the workspace, the verdict from its JUnit
# file. Kept as the weak verifier tests/repos/test_mine_forgery_docker.py shows fooled.
"""The verifier's program, copied into a mined task's tests/ as check.py (stdlib only).

It runs inside the environment's container, from /tests, with expected.json beside it:

    python3 -I check.py                 # verify: exit 0 iff every expected test passed
                                        # (pytest runs those tests alone, by node id)
    python3 -I check.py --report OUT    # mine: write {test id: passed|failed|skipped}

Before the tests run it restores the test files to the fix commit's version (files/…),
removes every conftest.py the commit does not have and every __pycache__, so nothing the
solver left in the workspace's test infrastructure is run. pytest runs with the
workspace appended to sys.path after pytest itself is imported, plugins from entry points
off, a config file of ours, append import mode, results read from a JUnit file in a
private directory; `go test -json` runs with the module proxy and go.work off. The
verdict is the set of named tests that passed, never an exit status or an output line.
"""

import json
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

Config = dict[str, Any]
Results = dict[str, str]

HERE = Path(__file__).resolve().parent
#: past this many expected tests, the target files run whole (a shorter command line)
MAX_NODE_IDS = 200
PYTEST_MAIN = (
    "import sys, pytest; sys.dont_write_bytecode = True; "
    "sys.path.extend(sys.argv[1].split(':')); sys.exit(pytest.main(sys.argv[2:]))"
)


def restore(cfg: Config, ws: Path) -> None:
    keep = {ws / c for c in cfg["conftests"]}
    for found in ws.rglob("conftest.py"):
        if found not in keep and ".git" not in found.parts:
            found.unlink()
    for cache in [p for p in ws.rglob("__pycache__") if p.is_dir()]:
        shutil.rmtree(cache, ignore_errors=True)
    for rel in cfg["restore"]:
        dest = ws / rel
        if dest.is_dir() and not dest.is_symlink():
            shutil.rmtree(dest)
        elif dest.is_symlink():
            dest.unlink()
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(HERE / "files" / rel, dest)


def run_pytest(cfg: Config, ws: Path, tmp: Path) -> Results:
    junit = tmp / "junit.xml"
    paths = ":".join(str(p) for p in (ws, ws / "src") if p.is_dir())
    args = [
        cfg["python"],
        "-I",
        "-c",
        PYTEST_MAIN,
        paths,
        "-p",
        "no:cacheprovider",
        "-c",
        str(HERE / "pytest.ini"),
        "--rootdir",
        str(ws),
        "--confcutdir",
        str(ws),
        "--import-mode=append",
        "-q",
        "--junitxml",
        str(junit),
        *(node_ids(cfg) if 0 < len(cfg["expect"]) <= MAX_NODE_IDS else cfg["targets"]),
    ]
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(tmp),
        "LANG": "C.UTF-8",
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
    }
    _run(args, ws, env, cfg["timeout"])
    if not junit.is_file():
        return {}
    out: Results = {}
    for case in ET.parse(junit).iter("testcase"):
        name = case.get("classname", "") + "::" + case.get("name", "")
        kinds = {child.tag for child in case}
        out[name] = (
            "failed"
            if kinds & {"failure", "error"}
            else ("skipped" if "skipped" in kinds else "passed")
        )
    return out


def node_ids(cfg: Config) -> list[str]:
    """pytest node ids of the expected tests (`module.Class::name` → `file.py::Class::name`),
    so that a verification runs those tests alone; a test no target file holds is run by
    its whole file."""
    files = {t[: -len(".py")].replace("/", "."): t for t in cfg["targets"]}
    out: list[str] = []
    for test in cfg["expect"]:
        owner, _, name = test.partition("::")
        module = next((m for m in sorted(files, key=len, reverse=True)
                       if owner == m or owner.startswith(m + ".")), None)  # fmt: skip
        if module is None:
            return list(cfg["targets"])
        classes = owner[len(module) :].strip(".")
        out.append("::".join(p for p in (files[module], *classes.split("."), name) if p))
    return out


def run_go(cfg: Config, ws: Path, tmp: Path) -> Results:
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp),
        "GOPATH": str(tmp / "gopath"),
        "GOCACHE": str(tmp / "gocache"),
        "GOFLAGS": "-mod=mod",
        "GOPROXY": "off",
        "GOWORK": "off",
        "GOTOOLCHAIN": "local",
        "CGO_ENABLED": "0",
        "LANG": "C.UTF-8",
    }
    out: Results = {}
    for pkg in cfg["targets"]:
        stdout = _run(
            ["/usr/bin/go", "test", "-json", "-count=1", "./" + pkg], ws, env, cfg["timeout"]
        )
        for line in stdout.splitlines():
            try:
                event = json.loads(line)
            except ValueError:
                continue
            test, action = event.get("Test"), event.get("Action")
            if test and "/" not in test and action in ("pass", "fail", "skip"):
                out[pkg + "::" + test] = {"pass": "passed", "fail": "failed"}.get(action, "skipped")
    return out


def _run(args: list[str], cwd: Path, env: dict[str, str], timeout: float) -> str:
    try:
        proc = subprocess.run(
            args,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        print("tests timed out after", timeout, "s")
        return ""
    text = proc.stdout.decode(errors="replace")
    print(text[-4000:])
    return text


RUNNERS: dict[str, Any] = {"pytest": run_pytest, "go": run_go}


def main(argv: list[str]) -> int:
    cfg = json.loads((HERE / "expected.json").read_text())
    ws = Path(cfg["workspace"])
    restore(cfg, ws)
    tmp = Path(tempfile.mkdtemp(prefix="check-"))
    try:
        results = RUNNERS[cfg["runner"]](cfg, ws, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if len(argv) == 2 and argv[0] == "--report":
        Path(argv[1]).write_text(json.dumps(results, sort_keys=True))
        return 0
    missing = [t for t in cfg["expect"] if results.get(t) != "passed"]
    for name in missing:
        print("not passed:", name, results.get(name, "not run"))
    return 1 if missing or not cfg["expect"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
