"""Runs /app/rotate.py (as an unprivileged user when possible) against configs written here."""
import os
import shutil
import stat
import subprocess
import sys
import tempfile

SCRIPT = "/app/rotate.py"
DEFAULT_INI = "/app/rotate.ini"
PYTHON = "/usr/local/bin/python3"
SETPRIV = "/usr/bin/setpriv"
NOBODY = 65534
failures = []


def can_drop():
    try:
        return subprocess.run([SETPRIV, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--", "/bin/true"],
                              capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


DROP = can_drop()


def make_tree(root, files):
    """files: relpath -> bytes (a file) or None (a directory)."""
    os.makedirs(root)
    for rel, data in files.items():
        path = os.path.join(root, rel)
        if data is None:
            os.makedirs(path, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as f:
                f.write(data)
    if DROP:
        for dirpath, dirnames, filenames in os.walk(root):
            for name in [dirpath] + [os.path.join(dirpath, n) for n in dirnames + filenames]:
                os.chown(name, NOBODY, NOBODY)


def snapshot(root):
    snap = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for d in dirnames:
            snap[os.path.relpath(os.path.join(dirpath, d), root)] = None
        for n in filenames:
            p = os.path.join(dirpath, n)
            with open(p, "rb") as f:
                snap[os.path.relpath(p, root)] = f.read()
    return snap


def write_ini(path, directory, suffix, max_bytes, keep):
    with open(path, "w") as f:
        f.write(f"[rotate]\ndirectory = {directory}\nsuffix = {suffix}\nmax_bytes = {max_bytes}\nkeep = {keep}\n")
    os.chmod(path, 0o644)


def run_script(label, env_extra):
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8"}
    env.update(env_extra)
    cmd = [PYTHON, "-S", SCRIPT]  # standard library only: no site-packages start-up hooks
    if DROP:
        cmd = [SETPRIV, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--"] + cmd
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, cwd="/tmp", env=env, timeout=30)
    except subprocess.TimeoutExpired:
        failures.append(f"{label}: rotate.py timed out")
        return
    if p.returncode != 0:
        failures.append(f"{label}: rotate.py exited {p.returncode}: {p.stderr.strip()[-500:]}")


def expect(label, root, expected):
    got = snapshot(root)
    if got == expected:
        return
    for key in sorted(set(got) | set(expected)):
        if key not in got:
            failures.append(f"{label}: {key} is missing")
        elif key not in expected:
            failures.append(f"{label}: unexpected {key}")
        elif got[key] != expected[key]:
            failures.append(f"{label}: {key} has the wrong content ({got[key]!r:.60} instead of {expected[key]!r:.60})")


def main():
    if not os.path.isfile(SCRIPT):
        print(f"FAIL: {SCRIPT} does not exist")
        return 1
    # The script must be readable by the unprivileged user that runs it.
    for dirpath, dirnames, filenames in os.walk("/app"):
        for name in [dirpath] + [os.path.join(dirpath, n) for n in dirnames + filenames]:
            if not os.path.islink(name):
                mode = os.stat(name).st_mode
                os.chmod(name, mode | stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH
                         | (stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH if stat.S_ISDIR(mode) else 0))

    original_ini = open(DEFAULT_INI, "rb").read() if os.path.exists(DEFAULT_INI) else None
    base = tempfile.mkdtemp(prefix="rotcheck-")
    os.chmod(base, 0o755)
    try:
        # Scenario A: default config file, keep=3, max_bytes=100, suffix .log
        s1 = os.path.join(base, "s1")
        big, c1, c2, c3 = b"B" * 150, b"rotated-1\n", b"rotated-2\n", b"rotated-3\n"
        other, small, notes = b"o" * 101, b"s" * 100, b"n" * 500
        make_tree(s1, {"big.log": big, "big.log.1": c1, "big.log.2": c2, "big.log.3": c3,
                       "small.log": small, "other.log": other, "notes.txt": notes,
                       "dir.log": None, "dir.log/inner.log": b"i" * 300})
        write_ini(DEFAULT_INI, s1, ".log", 100, 3)
        run_script("default config", {})
        after_a = {"big.log": b"", "big.log.1": big, "big.log.2": c1, "big.log.3": c2,
                   "small.log": small, "other.log": b"", "other.log.1": other, "notes.txt": notes,
                   "dir.log": None, "dir.log/inner.log": b"i" * 300}
        expect("default config", s1, after_a)

        # Scenario B: ROTATE_CONFIG wins over /app/rotate.ini; keep=1, max_bytes=10, suffix .out
        s2, s3 = os.path.join(base, "s2"), os.path.join(base, "s3")
        job, old = b"j" * 50, b"previous\n"
        make_tree(s2, {"job.out": job, "job.out.1": old, "job.log": b"l" * 50,
                       "tiny.out": b"t" * 5, "exact.out": b"e" * 10})
        decoy = {"decoy.out": b"d" * 80, "decoy.log": b"d" * 80}
        make_tree(s3, decoy)
        write_ini(DEFAULT_INI, s3, ".out", 0, 2)
        alt_ini = os.path.join(base, "alternate.ini")
        write_ini(alt_ini, s2, ".out", 10, 1)
        run_script("ROTATE_CONFIG", {"ROTATE_CONFIG": alt_ini})
        expect("ROTATE_CONFIG", s2, {"job.out": b"", "job.out.1": job, "job.log": b"l" * 50,
                                     "tiny.out": b"t" * 5, "exact.out": b"e" * 10})
        expect("ROTATE_CONFIG must override /app/rotate.ini", s3, decoy)

        # Scenario C: edited default config read again (empty ROTATE_CONFIG = unset); keep=2
        s4 = os.path.join(base, "s4")
        a, a1, a2 = b"a" * 30, b"a-one\n", b"a-two\n"
        make_tree(s4, {"a.log": a, "a.log.1": a1, "a.log.2": a2, "b.log": b"b" * 20})
        write_ini(DEFAULT_INI, s4, ".log", 20, 2)
        run_script("edited default config", {"ROTATE_CONFIG": ""})
        expect("edited default config", s4, {"a.log": b"", "a.log.1": a, "a.log.2": a1, "b.log": b"b" * 20})
        expect("directories of earlier configs stay untouched", s1, after_a)
        expect("directories of earlier configs stay untouched", s3, decoy)
    finally:
        if original_ini is not None:
            with open(DEFAULT_INI, "wb") as f:
                f.write(original_ini)
        shutil.rmtree(base, ignore_errors=True)

    for f in failures:
        print("FAIL:", f)
    if failures:
        return 1
    print("OK: three rotation scenarios match" + ("" if DROP else " (ran as root: setpriv unavailable)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
