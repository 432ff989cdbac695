"""Differential test of /app/intervals.py:merge against a reference, in a child process.

The workspace module could do anything when imported (exit 0, print "OK", patch
builtins), so it never runs in this process: a child imports it, reads the cases from
stdin and prints its answers as JSON; this process compares them with its own reference.
Cases are random but seeded, so the verdict is deterministic.
"""

import json
import random
import subprocess
import sys

CHILD = r"""
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("intervals", "/app/intervals.py")
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
cases = json.loads(sys.stdin.read())
print("\n" + json.dumps([mod.merge([list(iv) for iv in case]) for case in cases]))
"""


def reference(intervals):
    out = []
    for start, end in sorted(intervals):
        if out and start <= out[-1][1]:
            out[-1][1] = max(out[-1][1], end)
        else:
            out.append([start, end])
    return out


def cases():
    rnd = random.Random(20261129)
    fixed = [[], [[1, 1]], [[1, 3], [3, 5]], [[5, 8], [1, 6]], [[1, 10], [2, 3]], [[4, 4], [4, 4]]]
    generated = []
    for _ in range(300):
        n = rnd.randint(0, 8)
        generated.append([sorted((rnd.randint(0, 30), rnd.randint(0, 30))) for _ in range(n)])
    return fixed + generated


def main() -> None:
    todo = cases()
    try:
        proc = subprocess.run(
            [sys.executable, "-I", "-S", "-c", CHILD],
            input=json.dumps(todo), capture_output=True, text=True, timeout=30,
        )
    except subprocess.TimeoutExpired:
        print("FAIL: merge() did not finish in 30 s")
        sys.exit(1)
    lines = proc.stdout.strip().splitlines()
    try:
        answers = json.loads(lines[-1]) if lines else None
    except ValueError:
        answers = None
    if not isinstance(answers, list) or len(answers) != len(todo):
        print("FAIL: no answers from merge()", proc.stderr[-2000:])
        sys.exit(1)
    for case, got in zip(todo, answers):
        want = reference(case)
        if got != want:
            print(f"FAIL: merge({case}) returned {got}, expected {want}")
            sys.exit(1)
    print(f"merge() correct on {len(todo)} cases")


main()
