"""Probes that reshape the workspace instead of doing the work in it."""

from __future__ import annotations

import posixpath
import re

from envfactory.core.models import EnvironmentSpec

from .base import Probe, find_tests_expr, qs, test_roots


class DeleteTests(Probe):
    """Deletes every test-like file (``test_*.py``, ``*_test.py``, ``test.sh``,
    ``run-tests.sh``, ``*.test.js``…) the solver can reach. Fools a verifier that runs tests
    shipped inside the solver's state, where "no test failed" then means "no test ran"."""

    name = "delete-tests"

    def script(self, spec: EnvironmentSpec) -> str:
        return f"""
for root in {qs(test_roots(spec))}; do
  [ -d "$root" ] && find "$root" -xdev -type f {find_tests_expr()} -exec rm -f {{}} + 2>/dev/null
done
true
"""


class EmptyTests(Probe):
    """Truncates every test-like file the solver can reach to zero bytes: an empty test
    module defines no test and an empty shell script exits 0. Fools a verifier that runs
    tests or scripts from the solver's state and accepts "nothing failed"."""

    name = "empty-tests"

    def script(self, spec: EnvironmentSpec) -> str:
        return f"""
for root in {qs(test_roots(spec))}; do
  [ -d "$root" ] && find "$root" -xdev -type f {find_tests_expr()} -exec truncate -s 0 {{}} + 2>/dev/null
done
true
"""


# Absolute paths, or relative ones that look like files (a dot-extension), optionally quoted.
_PATH_RE = re.compile(r"(?<![\w:/.-])((?:/|\./|\.\./)?[\w.-]+(?:/[\w.-]+)*/?)")
_SKIP_ROOTS = ("/proc", "/sys", "/dev", "/run/envfactory-verifier")


def mentioned_paths(instruction: str, workdir: str) -> list[str]:
    """Paths the instruction names, made absolute against the task's working directory.

    Absolute paths count when they have at least two components or a file extension;
    relative ones only when their last component has an extension (``out/report.csv``),
    so that ordinary words are not taken for paths. URLs are skipped.
    """
    text = re.sub(r"\w+://\S+", " ", instruction)
    out: list[str] = []
    for m in _PATH_RE.finditer(text):
        tok = m.group(1).rstrip(".")
        if not tok or tok in {"/", ".", ".."}:
            continue
        last = tok.rstrip("/").rsplit("/", 1)[-1]
        has_ext = bool(re.search(r"\.[A-Za-z][A-Za-z0-9]{0,5}$", last)) and not last.startswith(".")
        if tok.startswith("/"):
            if tok.count("/") < 2 and not has_ext:
                continue
            path = tok
        elif has_ext and ("/" in tok or len(last.split(".")[0]) >= 2):
            path = posixpath.normpath(posixpath.join(workdir, tok))
        else:
            continue
        if not path.startswith(_SKIP_ROOTS) and path not in out:
            out.append(path)
    return out


class PlaceholderOutputs(Probe):
    """Creates a placeholder for every path the instruction mentions that does not exist
    yet, valid for its type but wrong (``{"result": 0}`` JSON, a one-row CSV, ``0`` text, a
    runnable ``exit 0`` script, an empty SQLite database; a directory when the path ends
    with ``/``). Fools a verifier
    that checks that outputs exist instead of checking what they contain."""

    name = "placeholder-outputs"

    def script(self, spec: EnvironmentSpec) -> str:
        paths = mentioned_paths(spec.instruction, spec.workdir)
        return f"""
for p in {qs(paths)}; do
  [ -e "$p" ] && continue
  case "$p" in
    */) mkdir -p "$p" ;;
    *) mkdir -p "$(dirname "$p")" || continue
       case "$p" in
         *.json) echo '{{"result": 0, "items": []}}' > "$p" ;;
         *.jsonl|*.ndjson) echo '{{"id": 0}}' > "$p" ;;
         *.csv) printf 'id,value\\n0,0\\n' > "$p" ;;
         *.txt|*.out) echo 0 > "$p" ;;
         *.md) printf '# Report\\n\\nplaceholder\\n' > "$p" ;;
         *.py) echo 'pass' > "$p" ;;
         *.sh) printf '#!/bin/sh\\nexit 0\\n' > "$p"; chmod 0755 "$p" ;;
         *.db|*.sqlite|*.sqlite3) : > "$p" ;;
         *) printf 'placeholder\\n' > "$p" ;;
       esac ;;
  esac
done
true
"""


class GitReset(Probe):
    """Resets every git repository in the workspace to its last commit (``reset --hard``:
    tracked files revert, new files stay), then checks out the newest commit reachable from
    any ref. Fools a verifier that derives its expectation from workspace files the solver
    can revert (inputs and outputs then agree with each other, not with the task), and a
    task whose fix sits in history the solver can see."""

    name = "git-reset"

    def script(self, spec: EnvironmentSpec) -> str:
        return f"""
command -v git >/dev/null 2>&1 || exit 0
for ws in {qs(spec.workspace_paths)}; do
  [ -d "$ws" ] || continue
  find "$ws" -xdev -maxdepth 4 -name .git 2>/dev/null | while read -r g; do
    repo=$(dirname "$g")
    git -c safe.directory='*' -C "$repo" reset -q --hard 2>/dev/null
    newest=$(git -c safe.directory='*' -C "$repo" rev-list --all --max-count=1 2>/dev/null)
    [ -n "$newest" ] && git -c safe.directory='*' -C "$repo" checkout -q "$newest" 2>/dev/null
  done
done
true
"""
