"""One textual edit of a verifier file: what every mutation operator produces.

Offsets are byte offsets into the file's UTF-8 text; an edit replaces exactly the bytes
[start, end) and nothing else (start == end: an insertion), so a mutant differs from its
original in one place.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Edit:
    operator: str  # "drop-assert", "early-exit", ...
    line: int  # 1-based line the edit is about
    start: int
    end: int
    text: str
