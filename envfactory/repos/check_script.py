"""The verifier's program, copied into a mined task's tests/ as check.py (stdlib only).

It runs inside the environment's container, from /tests, with expected.json beside it:

    python3 -I check.py                 # verify: exit 0 iff every expected test passed
                                        # (pytest runs those tests alone, by node id)
    python3 -I check.py --report OUT    # mine: write {test id: passed|failed|skipped}

Before the tests run it restores the test files to the fix commit's version (files/…),
removes every conftest.py the commit does not have and every __pycache__, so nothing the
solver left in the workspace's test infrastructure is run. pytest runs in a child process
with the workspace appended to sys.path after pytest itself is imported, plugins from
entry points off, a config file of ours, append import mode, and the guard beside this
file (check_guard.py) armed before any of the workspace's code is imported: the results
are the guard's records, signed with a key drawn for this run, never the child's exit
status, output or a file it could write (docs/repositories.md, "Verdicts the code under
test cannot forge"). `go test -json` runs with the module proxy and go.work off. The
verdict is the set of named tests that passed, never an exit status or an output line.
"""

import hashlib
import hmac
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

Config = dict[str, Any]
Results = dict[str, str]

HERE = Path(__file__).resolve().parent
#: past this many expected tests, the target files run whole (a shorter command line)
MAX_NODE_IDS = 200
#: the tests' process: the guard is loaded from its file (never from a directory put on
#: sys.path) and armed before pytest runs or the workspace is on sys.path
PYTEST_MAIN = (
    "import sys, importlib.util as u; sys.dont_write_bytecode = True; "
    "s = u.spec_from_file_location('envfactory_check_guard', sys.argv[1]); "
    "g = u.module_from_spec(s); s.loader.exec_module(g); "
    "p = g.arm(int(sys.argv[2]), int(sys.argv[3])); del g, s, u; import pytest; "
    "sys.path.extend(sys.argv[4].split(':')); sys.exit(pytest.main(sys.argv[5:], plugins=[p]))"
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
    """Run the tests in a child pytest process with the guard (check_guard.py) loaded
    before any code of the workspace; the results are the guard's signed records only."""
    key = secrets.token_bytes(32)
    paths = ":".join(str(p) for p in (ws, ws / "src") if p.is_dir())
    trusted = sorted(str(ws / rel) for rel in [*cfg["restore"], *cfg["conftests"]])
    secret = tmp / "guard.key"
    fd = os.open(secret, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    body = json.dumps({"workspace": str(ws), "trusted": trusted}).encode()
    os.write(fd, key.hex().encode() + b"\n" + body)
    os.close(fd)
    key_fd = os.open(secret, os.O_RDONLY)
    secret.unlink()
    read_end, write_end = os.pipe()
    args = [
        cfg["python"],
        "-I",
        "-c",
        PYTEST_MAIN,
        str(HERE / "check_guard.py"),
        str(key_fd),
        str(write_end),
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
        *(node_ids(cfg) if 0 < len(cfg["expect"]) <= MAX_NODE_IDS else cfg["targets"]),
    ]
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(tmp),
        "LANG": "C.UTF-8",
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
    }
    records: list[bytes] = []
    reader = threading.Thread(target=_drain, args=(read_end, records), daemon=True)
    reader.start()
    try:
        _run(args, ws, env, cfg["timeout"], pass_fds=(key_fd, write_end))
    finally:
        os.close(key_fd)
        os.close(write_end)
    reader.join(timeout=30)
    return guard_results(b"".join(records), key)


def _drain(fd: int, into: list[bytes]) -> None:
    with os.fdopen(fd, "rb") as f:
        while chunk := f.read1(1 << 16):
            into.append(chunk)


def guard_results(data: bytes, key: bytes) -> Results:
    """Test id (JUnit's `module.Class::name`) → outcome, from the guard's records. Only
    records signed with this run's key, in sequence, count; a tamper record, a bad
    signature or a gap in the sequence makes every test "failed" (nothing the tests'
    process reports is believed after its code forged something)."""
    out: Results = {}
    expected_seq = 1
    for line in data.splitlines():
        fields = line.split(b"\t")
        body, mac = b"\t".join(fields[:-1]), fields[-1]
        if len(fields) != 4 or not hmac.compare_digest(_mac(key, body), mac):
            print("the tests' process sent a record the guard did not sign: every test failed")
            return {t: "failed" for t in out}
        seq, name, outcome = (f.decode(errors="replace") for f in fields[:3])
        if seq != str(expected_seq):
            print("the guard's records are out of sequence: every test failed")
            return {t: "failed" for t in out}
        expected_seq += 1
        if name == "tamper":
            print("the guard saw the runner tampered with:", outcome)
            return {t: "failed" for t in out}
        if name == "note":
            print("guard:", outcome)
            continue
        test = junit_id(bytes.fromhex(name).decode(errors="surrogateescape"))
        out[test] = outcome if out.get(test, outcome) == outcome else "failed"
    return out


def _mac(key: bytes, body: bytes) -> bytes:
    return hmac.new(key, body, hashlib.sha256).hexdigest().encode()


def junit_id(nodeid: str) -> str:
    """The id pytest's JUnit writer gives the test `nodeid`: the file as a dotted module,
    classes joined by dots, then `::` and the name with its parameters."""
    path, bracket, params = nodeid.partition("[")
    names = path.split("::")
    names[0] = re.sub(r"\.py$", "", names[0].replace("/", "."))
    names[-1] += bracket + params
    return ".".join(names[:-1]) + "::" + names[-1]


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


def _run(
    args: list[str], cwd: Path, env: dict[str, str], timeout: float, pass_fds: tuple[int, ...] = ()
) -> str:
    """Run `args` in a session of its own and kill that whole session when it ends, so
    that nothing it started outlives the tests."""
    proc = subprocess.Popen(
        args,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        pass_fds=pass_fds,
        start_new_session=True,
    )
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        print("tests timed out after", timeout, "s")
        out = b""
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        proc.wait()
    text = out.decode(errors="replace")
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
