import sys

sys.path.insert(0, "/app")
from textutil import slugify  # noqa: E402


def test_lowercases():
    assert slugify("abc") == "abc"
