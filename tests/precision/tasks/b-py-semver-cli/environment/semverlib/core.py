"""Parsing and ordering of Semantic Versioning 2.0.0 version strings."""
import re
from typing import NamedTuple

_SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$"
)


class Version(NamedTuple):
    major: int
    minor: int
    patch: int
    prerelease: str  # "" when there is none, e.g. "rc.1"
    build: str       # "" when there is none, e.g. "sha.5114f85"


def parse(text: str) -> Version:
    """Parse a version string; raise ValueError if it is not valid SemVer."""
    m = _SEMVER.match(text)
    if not m:
        raise ValueError(f"invalid semantic version: {text!r}")
    major, minor, patch, pre, build = m.groups()
    return Version(int(major), int(minor), int(patch), pre or "", build or "")


def compare(a: str, b: str) -> int:
    """Return -1, 0 or 1 as version a has lower, equal or higher precedence than b."""
    va, vb = parse(a), parse(b)
    return (va > vb) - (va < vb)
