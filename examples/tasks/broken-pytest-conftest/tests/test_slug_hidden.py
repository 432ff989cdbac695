import sys

import pytest

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


@pytest.mark.parametrize("given,want", CASES)
def test_slugify(given, want):
    assert slugify(given) == want
