"""Checks semverlib.compare (imported in a child process) and the /app/semver-sort wrapper."""
import json
import os
import stat
import subprocess
import sys

PYTHON = "/usr/local/bin/python3"
WRAPPER = "/app/semver-sort"
SETPRIV = "/usr/bin/setpriv"
NOBODY = 65534
ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8"}
failures = []

COMPARE_CASES = [
    ("1.0.0", "1.0.0-alpha", 1),
    ("1.0.0-alpha", "1.0.0", -1),
    ("1.0.0-rc.2", "1.0.0-rc.10", -1),
    ("1.0.0-alpha", "1.0.0-alpha.1", -1),
    ("1.0.0-alpha.1", "1.0.0-alpha.beta", -1),
    ("1.0.0-alpha.beta", "1.0.0-beta", -1),
    ("1.0.0-beta.11", "1.0.0-beta.2", 1),
    ("1.0.0-beta.11", "1.0.0-rc.1", -1),
    ("1.0.0+build.1", "1.0.0+build.2", 0),
    ("1.0.0-rc.1+a", "1.0.0-rc.1+b", 0),
    ("1.0.0+zzz", "1.0.0-rc.1+aaa", 1),
    ("2.0.0", "10.0.0", -1),
    ("1.10.0", "1.9.0", 1),
    ("1.2.10", "1.2.9", 1),
    ("1.0.0-1", "1.0.0-a", -1),
    ("1.0.0-a", "1.0.0-1", 1),
    ("1.2.3-x.10", "1.2.3-x.9a", -1),
    ("1.2.3-999", "1.2.3-1000", -1),
    ("1.0.0-alpha.2.b", "1.0.0-alpha.2.a", 1),
    ("1.0.0-0.3.7", "1.0.0-0.3.7", 0),
    ("1.0.0-Alpha", "1.0.0-alpha", -1),
    ("1.0.0-alpha-2", "1.0.0-alpha-10", 1),
    ("1.0.0-alpha.1.1", "1.0.0-alpha.1", 1),
    ("0.0.1", "0.0.1", 0),
]

SORT_INPUT = (
    "  1.0.0-rc.1\n1.0.0+build.7\n2.0.0\n1.0.0-alpha.beta\n\n1.0.0-beta.11\n1.0.0-alpha\n1.10.0\n"
    "1.0.0-beta.2\n1.0.0\t\n1.0.0-alpha.1\n1.9.0\n1.0.0-beta\n0.9.12\n1.0.0-x.7.z.92\n1.0.0-1\n"
    "1.0.0+exp.sha.5114f85\n1.0.0-alpha.10\n   \n1.0.0-alpha.9\n10.0.0-0\n1.0.0-alpha-b\n"
)
SORTED = [
    "0.9.12", "1.0.0-1", "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.9", "1.0.0-alpha.10",
    "1.0.0-alpha.beta", "1.0.0-alpha-b", "1.0.0-beta", "1.0.0-beta.2", "1.0.0-beta.11", "1.0.0-rc.1",
    "1.0.0-x.7.z.92", "1.0.0+build.7", "1.0.0", "1.0.0+exp.sha.5114f85", "1.9.0", "1.10.0", "2.0.0",
    "10.0.0-0",
]
# Highest first; the three equal 1.0.0 versions stay in input order.
REVERSED = [
    "10.0.0-0", "2.0.0", "1.10.0", "1.9.0", "1.0.0+build.7", "1.0.0", "1.0.0+exp.sha.5114f85",
    "1.0.0-x.7.z.92", "1.0.0-rc.1", "1.0.0-beta.11", "1.0.0-beta.2", "1.0.0-beta", "1.0.0-alpha-b",
    "1.0.0-alpha.beta", "1.0.0-alpha.10", "1.0.0-alpha.9", "1.0.0-alpha.1", "1.0.0-alpha", "1.0.0-1",
    "0.9.12",
]
INVALID_INPUTS = ["1.2.3\n1.2\n2.0.0\n", "1.0.0\n01.0.0\n", "1.0.0-rc.1\nv1.0.0\n"]

IMPORT_PROBE = r"""
import json, sys
sys.path.insert(0, "/app")
from semverlib import compare, parse
cases = json.load(sys.stdin)
out = []
for a, b in cases:
    r = compare(a, b)
    out.append(r if type(r) is int else repr(r))
try:
    parse("1.2")
    invalid = "accepted"
except ValueError:
    invalid = "ValueError"
print(json.dumps({"results": out, "parse_invalid": invalid}))
"""


def can_drop():
    try:
        return subprocess.run([SETPRIV, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--", "/bin/true"],
                              capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


PREFIX = [SETPRIV, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--"] if can_drop() else []


def run(cmd, stdin_text):
    try:
        return subprocess.run(PREFIX + cmd, input=stdin_text, capture_output=True, text=True,
                              cwd="/tmp", env=ENV, timeout=30)
    except subprocess.TimeoutExpired:
        return None
    except OSError as e:
        failures.append(f"cannot run {cmd[0]}: {e}")
        return None


def open_up_app():
    """Let the unprivileged user read /app; executables stay executable for everyone."""
    for dirpath, dirnames, filenames in os.walk("/app"):
        for name in [dirpath] + [os.path.join(dirpath, n) for n in dirnames + filenames]:
            if os.path.islink(name):
                continue
            mode = os.stat(name).st_mode
            extra = stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH
            if stat.S_ISDIR(mode) or mode & (stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH):
                extra |= stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH
            os.chmod(name, mode | extra)


def check_module():
    p = run([PYTHON, "-I", "-S", "-c", IMPORT_PROBE], json.dumps([[a, b] for a, b, _ in COMPARE_CASES]))
    if p is None or p.returncode != 0:
        failures.append("importing semverlib / calling compare failed: "
                        + ("timeout" if p is None else p.stderr.strip()[-800:]))
        return
    try:
        data = json.loads(p.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        failures.append(f"module probe printed something unexpected: {p.stdout[-300:]!r}")
        return
    results = data.get("results", [])
    if len(results) != len(COMPARE_CASES):
        failures.append("module probe returned the wrong number of results")
        return
    for (a, b, want), got in zip(COMPARE_CASES, results):
        if got != want:
            failures.append(f"compare({a!r}, {b!r}) returned {got!r}, expected {want}")
    if data.get("parse_invalid") != "ValueError":
        failures.append("parse('1.2') no longer raises ValueError")


def check_wrapper():
    if not os.path.isfile(WRAPPER):
        failures.append(f"{WRAPPER} does not exist")
        return
    if not os.access(WRAPPER, os.X_OK):
        failures.append(f"{WRAPPER} is not executable")
        return
    for label, args, want in (("ascending", [], SORTED), ("--reverse", ["--reverse"], REVERSED)):
        p = run([WRAPPER] + args, SORT_INPUT)
        if p is None:
            failures.append(f"semver-sort {label}: timed out or could not run")
            continue
        got = p.stdout.splitlines()
        if p.returncode != 0 or got != want:
            failures.append(f"semver-sort {label}: exit {p.returncode}, output {got} expected {want}"
                            + (f"; stderr: {p.stderr.strip()[-300:]}" if p.stderr.strip() else ""))
    for text in INVALID_INPUTS:
        p = run([WRAPPER], text)
        if p is None:
            failures.append("semver-sort on invalid input: timed out or could not run")
        elif p.returncode != 2 or p.stdout != "" or not p.stderr.strip():
            failures.append(f"semver-sort on {text!r}: exit {p.returncode}, stdout {p.stdout!r}, "
                            f"stderr {p.stderr.strip()[-200:]!r}; expected exit 2, no output, an error message")
    p = run([WRAPPER], "")
    if p is None or p.returncode != 0 or p.stdout != "":
        failures.append("semver-sort on empty input must print nothing and exit 0")


def main():
    if not os.path.isdir("/app/semverlib"):
        print("FAIL: /app/semverlib is missing")
        return 1
    open_up_app()
    check_module()
    check_wrapper()
    for f in failures:
        print("FAIL:", f)
    if failures:
        return 1
    print(f"OK: {len(COMPARE_CASES)} comparisons, sorted/reversed output and error handling")
    return 0


if __name__ == "__main__":
    sys.exit(main())
