"""Hunks of a Python fix that change only docstrings or comments are prose: every partial
state keeps them, as it keeps a changelog line (no test can tell them from their absence).
Made from the shape of boltons' 967864f: a module docstring names the new function."""

from __future__ import annotations

from envfactory.repos.patches import parse_file_patch
from envfactory.repos.prose import apply_hunk, prose_hunks

OLD = '''"""``statsutils`` provides :func:`mean`,
:func:`median` and many others."""

import math


def mean(xs):
    # the arithmetic mean
    return sum(xs) / len(xs)
'''

DIFF = '''diff --git a/s.py b/s.py
--- a/s.py
+++ b/s.py
@@ -1,2 +1,2 @@
 """``statsutils`` provides :func:`mean`,
-:func:`median` and many others."""
+:func:`median`, :func:`mode` and many others."""
@@ -7,3 +7,7 @@ import math
 def mean(xs):
-    # the arithmetic mean
+    # the arithmetic mean of xs
     return sum(xs) / len(xs)
+
+
+def mode(xs):
+    return max(set(xs), key=xs.count)
'''


def test_a_docstring_hunk_is_prose_and_a_hunk_adding_code_is_not() -> None:
    patch = parse_file_patch("s.py", DIFF)
    code, prose = prose_hunks(patch, OLD)
    assert code is not None and prose is not None
    assert [h.splitlines()[0] for h in prose.hunks] == ["@@ -1,2 +1,2 @@"]
    assert [h.splitlines()[0] for h in code.hunks] == ["@@ -7,3 +7,7 @@ import math"]


def test_a_hunk_changing_only_a_comment_is_prose() -> None:
    diff = (
        "diff --git a/s.py b/s.py\n--- a/s.py\n+++ b/s.py\n"
        "@@ -8,2 +8,2 @@ def mean(xs):\n-    # the arithmetic mean\n+    # the mean\n"
        "     return sum(xs) / len(xs)\n"
    )
    code, prose = prose_hunks(parse_file_patch("s.py", diff), OLD)
    assert code is None and prose is not None


def test_a_hunk_changing_a_string_that_is_not_a_docstring_is_code() -> None:
    old = 'GREETING = "hello"\n'
    diff = (
        "diff --git a/g.py b/g.py\n--- a/g.py\n+++ b/g.py\n"
        '@@ -1 +1 @@\n-GREETING = "hello"\n+GREETING = "hello!"\n'
    )
    code, prose = prose_hunks(parse_file_patch("g.py", diff), old)
    assert prose is None and code is not None


def test_a_hunk_that_does_not_apply_where_it_says_is_code() -> None:
    assert apply_hunk("a = 1\n", "@@ -5,1 +5,1 @@\n-b = 2\n+b = 3\n") is None
    diff = "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -5,1 +5,1 @@\n-b = 2\n+b = 3\n"
    code, prose = prose_hunks(parse_file_patch("x.py", diff), "a = 1\n")
    assert prose is None and code is not None
