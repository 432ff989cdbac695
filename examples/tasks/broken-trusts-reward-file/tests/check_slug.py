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
bad = [g for g, w in CASES if slugify(g) != w]
print("slugify ok" if not bad else f"FAIL: slugify wrong for {bad}")
sys.exit(1 if bad else 0)
