"""Builds /app/rle.c with the documented command and checks it against a reference codec."""
import os
import random
import shutil
import subprocess
import sys
import tempfile

SRC = "/app/rle.c"
GCC = "/usr/bin/gcc"
SETPRIV = "/usr/bin/setpriv"
failures = []


def reference_encode(data: bytes) -> bytes:
    out = bytearray()
    i = 0
    while i < len(data):
        j = i
        while j < len(data) and data[j] == data[i] and j - i < 255:
            j += 1
        out += bytes([j - i, data[i]])
        i = j
    return bytes(out)


def drop_privileges_prefix():
    """Run the program under test as nobody when this container allows it."""
    probe = [SETPRIV, "--reuid=65534", "--regid=65534", "--clear-groups", "--", "/bin/true"]
    try:
        if os.path.exists(SETPRIV) and subprocess.run(probe, capture_output=True, timeout=10).returncode == 0:
            return probe[:-1]
    except (OSError, subprocess.SubprocessError):
        pass
    return []


def main() -> int:
    if not os.path.isfile(SRC):
        print(f"FAIL: {SRC} does not exist")
        return 1
    work = tempfile.mkdtemp(prefix="rle-check-")
    os.chmod(work, 0o755)
    src_copy = os.path.join(work, "rle.c")
    shutil.copyfile(SRC, src_copy)
    binary = os.path.join(work, "rle")
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LC_ALL": "C"}
    build = subprocess.run([GCC, "-O2", "-o", binary, src_copy], capture_output=True, text=True,
                           cwd=work, env=env, timeout=60)
    if build.returncode != 0:
        print("FAIL: gcc -O2 -o rle rle.c failed:\n" + build.stderr)
        return 1
    os.chmod(binary, 0o755)
    prefix = drop_privileges_prefix()

    def run(mode, data):
        try:
            p = subprocess.run(prefix + [binary, mode], input=data, capture_output=True,
                               cwd="/", env=env, timeout=10)
        except subprocess.TimeoutExpired:
            return None, b"", b"timeout"
        return p.returncode, p.stdout, p.stderr

    rng = random.Random(20240611)
    cases = {
        "empty": b"",
        "single byte": b"a",
        "short runs": b"aaabccdddd",
        "no runs": bytes(range(256)),
        "nul run": b"\x00" * 7 + b"x",
        "0xff runs": b"\xff\xff\xff\x00\xff\xff" + b"\xfe" * 3,
        "trailing 0xff run": b"ab" + b"\xff" * 300,
        "exactly 255": b"z" * 255,
        "exactly 256": b"z" * 256,
        "exactly 510": b"q" * 510,
        "run of 600": b"A" * 600,
        "long mixed": b"".join(bytes([rng.randrange(256)]) * rng.choice([1, 1, 2, 3, 40, 254, 255, 256, 700])
                               for _ in range(300)),
        "random": bytes(rng.randrange(4) for _ in range(5000)),
    }
    for name, data in cases.items():
        expected = reference_encode(data)
        rc, out, err = run("-e", data)
        if rc != 0 or out != expected:
            failures.append(f"encode {name!r}: exit {rc}, {len(out)} bytes, expected exit 0 and {len(expected)} bytes"
                            + ("" if rc != 0 else f" (first difference at byte "
                               f"{next((i for i, (a, b) in enumerate(zip(out, expected)) if a != b), min(len(out), len(expected)))})"))
        rc, out, err = run("-d", expected)
        if rc != 0 or out != data:
            failures.append(f"decode {name!r}: exit {rc}, {len(out)} bytes, expected exit 0 and {len(data)} bytes")

    non_canonical = {
        "split run": (bytes([2, 97, 3, 97]), b"aaaaa"),
        "255 pairs then 1": (bytes([255, 0, 255, 0, 1, 0]), b"\x00" * 511),
        "0xff count and value": (bytes([255, 255, 1, 7]), b"\xff" * 255 + b"\x07"),
    }
    for name, (stream, data) in non_canonical.items():
        rc, out, err = run("-d", stream)
        if rc != 0 or out != data:
            failures.append(f"decode non-canonical {name!r}: exit {rc}, got {out[:20]!r}...")

    malformed = {
        "lone count": bytes([3]),
        "odd length after pairs": bytes([2, 97, 5]),
        "zero count": bytes([0, 97]),
        "zero count after pairs": bytes([1, 98, 0, 99, 2, 100]),
    }
    for name, stream in malformed.items():
        rc, out, err = run("-d", stream)
        if rc != 1:
            failures.append(f"decode malformed {name!r}: exit {rc}, expected 1")
        elif not err.strip():
            failures.append(f"decode malformed {name!r}: no error message on stderr")

    shutil.rmtree(work, ignore_errors=True)
    for f in failures:
        print("FAIL:", f)
    if failures:
        return 1
    print(f"OK: {len(cases)} round trips, {len(non_canonical)} non-canonical and {len(malformed)} malformed streams")
    return 0


if __name__ == "__main__":
    sys.exit(main())
