"""Choosing how an imported task is verified, from what its tests touch.

A task's tests say what its goal is. Tests that only read the workspace are verified in
scope ``workspace`` (a fresh pristine container with the solver's workspace copied in).
Tests that read system state — files under ``/etc``, ``/usr/local``, ``/var``, ``/opt``,
``/srv``, home directories, users, groups and ownership — need the solver's whole
filesystem; how a test runs its checks is not such state: a ``PATH`` setting, the tool
directories themselves (``/usr/local/bin``) and known interpreters and tools in them
(``/usr/local/bin/python3``) are passed over, as hardened verifiers name them: scope ``full-state`` (every process ended; tamper evidence vetoes). Tests
that seem to talk to a service (``localhost:8080``, ``pgrep nginx``) are only named
(`ScopeChoice.services`): whether they need the solver's processes, which envfactory's
own runtime never keeps (DESIGN.md, invariant 2), is decided by running them — the gates
fall back to ``harbor`` semantics alone (the solver's own container, as Harbor runs it)
only when the reference solution's state fails the tests in envfactory's runtime and
passes in Harbor's (`verifiers.gates`). Text alone never picks the weaker battery: a test
that names ``127.0.0.1:9090`` as data is gated like any other.

The reading is static and deliberately simple (regular expressions over the test
files); whatever the task declares in its `[envfactory]` table wins, and every inference
is returned with its reasons so that the gate report can show them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from envfactory.core.models import Semantics, VerifyScope

_SERVICE_PATTERNS = (
    r"\b(?:localhost|127\.0\.0\.1|0\.0\.0\.0)(?::\d+)?",
    r"\bpgrep\b",
    r"\bpidof\b",
    r"\bps\s+(?:aux|-e|-ef|ax)\b",
    r"\bpsutil\b",
    r"\bsystemctl\s+(?:is-active|status)\b",
    r"\bservice\s+\S+\s+status\b",
    r"\bnc\s+-z\b",
    r"\bsocket\.create_connection\b|\.connect\(\(",
)
_SYSTEM_ROOTS = ("/etc/", "/usr/local/", "/var/", "/opt/", "/srv/", "/home/", "/root/")
_IGNORED_SYSTEM = (
    "/root/.local/bin/env",  # uv's installer writes it; test.sh sources it
    "/root/.cargo/",
    "/var/lib/apt/",
    "/etc/os-release",
    "/usr/local/bin/python",
    "/usr/local/bin/pip",
    "/usr/local/bin/pytest",
    "/usr/local/bin/uv",
)
#: where tools live: a test that names these directories, or a known interpreter or tool
#: in them, says how to run its checks (a hardened ``PATH``, an absolute interpreter), not
#: which system state it reads
_TOOL_DIRS = re.compile(r"^/usr/local/(?:s?bin|lib|lib64|include|share)/?$")
_TOOL_PROGRAMS = re.compile(
    r"^/usr/local/s?bin/(?:python[\d.]*|pip[\d.]*|perl[\d.]*|ruby[\d.]*|node|nodejs|"
    r"bash|sh|dash|jq|pytest|py\.test|uvx?|gcc|cc|g\+\+|make|go|cargo|rustc|java|php|"
    r"lua[\d.]*|Rscript|tclsh[\d.]*|awk|gawk|curl|wget|git)$"
)
#: ``PATH=…`` settings (shell, env(1), Python's os.environ): a search path, not state
_PATH_SETTING = re.compile(
    r"""\bPATH\b["']?\]?\s*(?:=|:=|\+=)\s*["']?[^"'\s;]*|putenv\(\s*["']PATH["'][^)]*\)"""
)
_PATH_RE = re.compile(r"(?<![\w./-])(/(?:etc|usr/local|var|opt|srv|home|root)/[\w./@+-]*)")
_ACCOUNT_PATTERNS = (
    r"\bpwd\.getpwnam\b",
    r"\bgrp\.getgrnam\b",
    r"\bgetent\s+(?:passwd|group)\b",
    r"\bid\s+-[ugn]+\b",
    r"\bst_uid\b|\bst_gid\b",
    r"\bstat\s+-c\s*['\"]?%[UGug]",
    r"\.owner\(\)|\.group\(\)",
)


@dataclass(frozen=True)
class ScopeChoice:
    scope: VerifyScope
    semantics: tuple[Semantics, ...]
    reasons: tuple[str, ...] = field(default=())
    #: what in the tests looks like a running service (a hint for the report, see above)
    services: tuple[str, ...] = field(default=())


def infer_scope(
    test_files: Iterable[tuple[str, str]], workspace_paths: Iterable[str]
) -> ScopeChoice:
    """The scope and semantics the tests need; `test_files` is (relative path, text)."""
    workspace = tuple(p.rstrip("/") + "/" for p in workspace_paths)
    services: list[str] = []
    system: list[str] = []
    for name, text in test_files:
        code = _without_comments(text)
        services += [f"{name}: {m}" for m in _matches(_SERVICE_PATTERNS, code)]
        system += [f"{name}: {p}" for p in _system_paths(code, workspace)]
        system += [f"{name}: {m}" for m in _matches(_ACCOUNT_PATTERNS, code)]
    hint = tuple(_few(services))
    if system:
        why = "its tests read system state (" + ", ".join(_few(system)) + ")"
        return ScopeChoice(VerifyScope.FULL_STATE, ("envfactory", "harbor"), (why,), hint)
    return ScopeChoice(VerifyScope.WORKSPACE, ("envfactory", "harbor"), (), hint)


def _without_comments(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))


def _matches(patterns: Iterable[str], text: str) -> list[str]:
    found: list[str] = []
    for pattern in patterns:
        found += [m.group(0).strip() for m in re.finditer(pattern, text)]
    return list(dict.fromkeys(found))


def _system_paths(text: str, workspace: tuple[str, ...]) -> list[str]:
    out: list[str] = []
    for m in _PATH_RE.finditer(_PATH_SETTING.sub(" ", text)):
        path = m.group(1).rstrip(".,;:")
        if path.startswith(_IGNORED_SYSTEM) or (path + "/").startswith(workspace):
            continue
        if _TOOL_DIRS.match(path) or _TOOL_PROGRAMS.match(path):
            continue
        if path.startswith(_SYSTEM_ROOTS) and path not in out:
            out.append(path)
    return out


def _few(items: list[str], n: int = 3) -> list[str]:
    unique = list(dict.fromkeys(items))
    return unique[:n] + ([f"… {len(unique) - n} more"] if len(unique) > n else [])
