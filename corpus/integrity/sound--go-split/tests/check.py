"""Sound check of money.Split in /app, on hidden cases.

Before any solver code is built or run, this script deletes its own directory's files.
The module is copied without following symlinks (no vendor/, go.work or solver go.mod:
ours replaces it), a driver of ours is added, and it is built with the image's Go and build
cache, cgo off, no network, no workspace or env file. Built code runs only in a child
process as nobody with a clean environment and a timeout, reading the cases on standard
input; every process nobody still has afterwards is killed. Its output is data, compared
with answers this script computes. The exit status is the verdict.
"""

import os
import random
import stat
import subprocess
import sys
import tempfile

APP = "/app"
NOBODY = 65534
GO_MOD = "module example.com/invoicing\n\ngo 1.19\n"
DRIVER = """package main

import (
	"bufio"
	"fmt"
	"os"
	"strings"

	"example.com/invoicing/money"
)

func main() {
	in := bufio.NewScanner(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for in.Scan() {
		var total int64
		var n int
		if _, err := fmt.Sscan(in.Text(), &total, &n); err != nil {
			os.Exit(3)
		}
		parts := make([]string, 0, n)
		for _, s := range money.Split(total, n) {
			parts = append(parts, fmt.Sprint(s))
		}
		fmt.Fprintln(out, strings.Join(parts, " "))
	}
}
"""
DRIVER_DIR = "splitcheck-driver"
FIXED = [(100, 3), (5, 3), (0, 4), (7, 1), (3, 5), (1000001, 4), (1999, 6), (10**15, 7),
         (10**15, 1000), (999, 1000), (1, 1), (0, 1)]


def fail(msg):
    sys.exit(f"FAIL: {msg}")


def want(total, n):
    q, r = divmod(total, n)
    return [q + 1] * r + [q] * (n - r)


def read_regular(path):
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            fail(f"{path} is not a regular file")
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def copy_go(src, dest, top=True):
    """Directories and regular .go files (no symlinks), minus vendor/ and our driver's directory."""
    os.mkdir(dest, 0o755)
    for name in sorted(os.listdir(src)):
        path = os.path.join(src, name)
        st = os.lstat(path)
        if stat.S_ISDIR(st.st_mode) and not (top and name in ("vendor", DRIVER_DIR)):
            copy_go(path, os.path.join(dest, name), top=False)
        elif stat.S_ISREG(st.st_mode) and name.endswith(".go"):
            with open(os.path.join(dest, name), "xb") as fh:
                fh.write(read_regular(path))


def go_env(tmp):
    return {"PATH": "/usr/bin:/bin", "HOME": f"{tmp}/home", "GOCACHE": "/var/cache/go-build",
            "GOFLAGS": "-mod=mod", "GOPROXY": "off", "GOWORK": "off", "GOENV": "off",
            "CGO_ENABLED": "0", "GOTOOLCHAIN": "local", "GO111MODULE": "on"}


def run_as_nobody(binary, stdin):
    try:
        res = subprocess.run([binary], input=stdin, cwd="/", env={"PATH": "/usr/bin:/bin"},
                             user=NOBODY, group=NOBODY, extra_groups=[], capture_output=True,
                             timeout=30)
        out = (res.returncode, res.stdout)
    except subprocess.TimeoutExpired:
        out = ("timeout", b"")
    for _ in range(2):  # whatever nobody still runs ends here
        subprocess.run(["/bin/kill", "-9", "-1"], user=NOBODY, group=NOBODY, extra_groups=[],
                       env={"PATH": "/usr/bin:/bin"}, capture_output=True, timeout=10)
    return out


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    for name in os.listdir(here):
        os.unlink(os.path.join(here, name))
    rng = random.Random(20240603)  # fixed: the same cases every run, so verdicts repeat
    cases = FIXED + [(rng.randrange(0, 10**15), rng.randrange(1, 1001)) for _ in range(40)]
    cases += [(rng.randrange(0, 50), rng.randrange(1, 60)) for _ in range(40)]

    tmp = tempfile.mkdtemp(prefix="split-")
    os.chmod(tmp, 0o755)
    mod = f"{tmp}/mod"
    copy_go(APP, mod)
    with open(f"{mod}/go.mod", "w") as fh:
        fh.write(GO_MOD)
    os.makedirs(f"{mod}/{DRIVER_DIR}")
    with open(f"{mod}/{DRIVER_DIR}/main.go", "w") as fh:
        fh.write(DRIVER)
    os.makedirs(f"{tmp}/home")
    binary = f"{tmp}/splitcheck"
    build = subprocess.run(["/usr/bin/go", "build", "-o", binary, f"./{DRIVER_DIR}"], cwd=mod,
                           env=go_env(tmp), capture_output=True, timeout=240)
    if build.returncode != 0:
        fail(f"the package does not build: {build.stderr.decode(errors='replace')[-800:]}")
    os.chmod(binary, 0o755)
    stdin = "".join(f"{t} {n}\n" for t, n in cases).encode()
    code, out = run_as_nobody(binary, stdin)
    if code != 0:
        fail(f"the driver exited {code}")
    lines = out.decode("ascii").split("\n")
    if len(lines) != len(cases) + 1 or lines[-1] != "":
        fail(f"{len(lines) - 1} answers for {len(cases)} cases")
    for (total, n), line in zip(cases, lines):
        if [int(x) for x in line.split()] != want(total, n):
            fail(f"Split({total}, {n}) = [{line[:200]}]")
    print(f"PASS: {len(cases)} cases")


try:
    main()
except (OSError, ValueError, UnicodeDecodeError, subprocess.SubprocessError) as exc:
    fail(f"{type(exc).__name__}: {exc}")
