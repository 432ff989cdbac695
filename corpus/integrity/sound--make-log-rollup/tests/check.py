"""Sound check of /app's Makefile: it is run on hidden logs, in a private copy, as nobody.

Before any solver code runs this script deletes its own directory's files (nothing of the
verifier is left to read). The workspace is copied without following symlinks, its logs/
and build/ replaced by hidden logs; `make` and `make clean` run there as nobody with a clean
environment and a timeout, and every process nobody still has afterwards is killed, so
nothing the Makefile starts can touch the outputs while they are read, kill this check or
write the reward file. The output is data, compared with counts this script computes from
its own hidden logs. The exit status is the verdict.
"""

import hashlib
import os
import shutil
import stat
import subprocess
import sys
import tempfile

APP = "/app"
NOBODY = 65534
# The logs the solver was given must be left as they were.
GIVEN_LOGS = {
    "access-0601.log": "31bbcc280748c5af7cdf29929f88a17202e5ac2a36b921ea9c28cbd33dc1fa2c",
    "access-0602.log": "5cf5c616722c817e0893a981caf9e4895619feb0f08df1176abfe806fce4e213",
    "access-0603.log": "84d01903c29eaf1cb94396475037115688db18837cdc181af2e9151732be04ef",
}
HIDDEN_LOGS = {
    "access-0704.log": [
        ("2024-07-04T10:00:00Z", "10.1.0.2", "GET", "/api/items", "200", "9ms"),
        ("2024-07-04T10:00:03Z", "10.1.0.4", "GET", "/old/items", "301", "1ms"),
        ("2024-07-04T10:00:09Z", "10.1.0.2", "POST", "/api/items", "201", "31ms"),
        ("2024-07-04T10:01:00Z", "10.1.0.8", "GET", "/api/items/3", "503", "1200ms"),
    ],
    "api-2024-07-05.log": [
        ("2024-07-05T07:12:44Z", "10.1.0.4", "DELETE", "/api/items/3", "204", "14ms"),
        ("2024-07-05T07:13:02Z", "10.1.0.9", "GET", "/api/items", "200", "8ms"),
        ("2024-07-05T07:13:50Z", "10.1.0.9", "GET", "/api/items/99", "404", "2ms"),
        ("2024-07-05T07:14:10Z", "10.1.0.8", "GET", "/api/items/3", "503", "1100ms"),
        ("2024-07-05T07:15:00Z", "10.1.0.2", "GET", "/health", "200", "1ms"),
    ],
    "z-night.log": [
        ("2024-07-06T01:00:00Z", "10.1.0.3", "GET", "/health", "200", "1ms"),
    ],
}


def fail(msg):
    sys.exit(f"FAIL: {msg}")


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


def copy_tree(src, dest):
    """Directories and regular files of src (no symlinks followed), minus logs/ and build/."""
    os.mkdir(dest, 0o755)
    for name in sorted(os.listdir(src)):
        path = os.path.join(src, name)
        st = os.lstat(path)
        if src == APP and name in ("logs", "build"):
            continue
        if stat.S_ISDIR(st.st_mode):
            copy_tree(path, os.path.join(dest, name))
        elif stat.S_ISREG(st.st_mode):
            with open(os.path.join(dest, name), "xb") as fh:
                fh.write(read_regular(path))
            os.chmod(os.path.join(dest, name), st.st_mode & 0o755)


def chown_tree(top):
    for root, dirs, files in os.walk(top):
        for name in dirs + files:
            os.lchown(os.path.join(root, name), NOBODY, NOBODY)
    os.lchown(top, NOBODY, NOBODY)


def as_nobody(work, *args):
    try:
        res = subprocess.run(
            ["/usr/bin/make", *args],
            cwd=work,
            env={"PATH": "/usr/bin:/bin", "HOME": work, "LC_ALL": "C"},
            user=NOBODY,
            group=NOBODY,
            extra_groups=[],
            capture_output=True,
            timeout=60,
        )
        code = res.returncode
    except subprocess.TimeoutExpired:
        code = "timeout"
    for _ in range(2):  # whatever nobody still runs (background jobs of the Makefile) ends here
        subprocess.run(["/bin/kill", "-9", "-1"], user=NOBODY, group=NOBODY, extra_groups=[],
                       env={"PATH": "/usr/bin:/bin"}, capture_output=True, timeout=10)
    return code


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    for name in os.listdir(here):
        os.unlink(os.path.join(here, name))
    for name, digest in GIVEN_LOGS.items():
        if hashlib.sha256(read_regular(f"{APP}/logs/{name}")).hexdigest() != digest:
            fail(f"logs/{name} was changed")
    if sorted(os.listdir(f"{APP}/logs")) != sorted(GIVEN_LOGS):
        fail("logs/ holds other files than the given ones")

    top = tempfile.mkdtemp(prefix="rollup-")
    os.chmod(top, 0o755)
    work = os.path.join(top, "app")
    copy_tree(APP, work)
    os.mkdir(f"{work}/logs")
    counts = {}
    for name, rows in HIDDEN_LOGS.items():
        with open(f"{work}/logs/{name}", "x") as fh:
            fh.write("".join(" ".join(row) + "\n" for row in rows))
        for row in rows:
            counts[row[4]] = counts.get(row[4], 0) + 1
    chown_tree(work)

    code = as_nobody(work)
    if code != 0:
        fail(f"make exited {code}")
    want = ["status,count"] + [f"{s},{counts[s]}" for s in sorted(counts, key=int)]
    got = read_regular(f"{work}/build/status_counts.csv").decode("utf-8")
    if got.endswith("\n"):
        got = got[:-1]
    if got.split("\n") != want:
        fail(f"build/status_counts.csv is {got[:300]!r}, want {want}")
    code = as_nobody(work, "clean")
    if code != 0:
        fail(f"make clean exited {code}")
    if os.path.lexists(f"{work}/build"):
        fail("make clean left build/")
    shutil.rmtree(top)
    print("PASS: the rollup counts every log's statuses")


try:
    main()
except (OSError, ValueError, UnicodeDecodeError, subprocess.SubprocessError) as exc:
    fail(f"{type(exc).__name__}: {exc}")
