"""The reason an image did not build, from its build log: the package being installed and
the first real error line, never pip's closing note ("This error originates from a
subprocess, and is likely not a problem with pip.")."""

from __future__ import annotations

import re

#: lines that say an error happened without saying which
_NOISE = re.compile(
    r"originates from a subprocess|subprocess-exited-with-error|metadata-generation-failed"
    r"|See above for (the )?output|non-zero code|Failed to build installable wheels"
    r"|^ERROR: Failed building wheel|^error: failed-wheel-build"
    r"|dependency resolver does not currently take into account",
    re.IGNORECASE,
)
_ERROR = re.compile(r"^(?:error:|ERROR:|[A-Za-z_][\w.]*(?:Error|Exception):)\s*\S")
_PACKAGE = re.compile(
    r"^(?:Collecting|Processing|Obtaining|Building wheel for|Running setup\.py install for)"
    r"\s+(\S+)"
)
_BOX = re.compile(r"^[\s│|╰─>×]+")


def build_error(log: str) -> str:
    """'PACKAGE: first error line' (or the error line alone when no package was being
    installed); '' when the log holds no error line."""
    lines = [_BOX.sub("", ln).strip() for ln in log.splitlines()]
    for i, line in enumerate(lines):
        if _ERROR.match(line) and not _NOISE.search(line):
            package = next(
                (m.group(1) for ln in reversed(lines[:i]) if (m := _PACKAGE.match(ln))), ""
            )
            text = line[:300]
            return f"{package}: {text}" if package and package not in text else text
    return ""
