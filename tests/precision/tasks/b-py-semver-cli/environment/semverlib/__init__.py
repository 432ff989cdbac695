"""Tiny Semantic Versioning helpers used by the release scripts."""
from .core import Version, compare, parse

__all__ = ["Version", "compare", "parse"]
