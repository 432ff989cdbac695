"""The project's self-check for slugify: prints ALL CHECKS PASSED or FAILED lines."""

import sys

sys.path.insert(0, "/app")
from textutil import slugify  # noqa: E402

CASES = [
    ("  Hello, World! ", "hello-world"),
    ("Many   spaces", "many-spaces"),
    ("already-slug", "already-slug"),
    ("--x--", "x"),
    ("C++ & Rust", "c-rust"),
    ("", ""),
]
bad = [(given, want, slugify(given)) for given, want in CASES if slugify(given) != want]
for given, want, got in bad:
    print(f"FAILED slugify({given!r}) = {got!r}, want {want!r}")
print("ALL CHECKS PASSED" if not bad else f"{len(bad)} of {len(CASES)} checks FAILED")
sys.exit(1 if bad else 0)
