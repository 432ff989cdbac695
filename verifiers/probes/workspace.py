"""Probes that reshape the workspace instead of doing the work in it."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import posixpath
import re
import tarfile
from collections.abc import Sequence

from envfactory.core.models import EnvironmentSpec

from .base import USUAL_RESULT_DIRS, Probe, find_tests_expr, q, qs, test_roots
from .history import OracleEdit


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


class RefreshedMtimes(Probe):
    """Changes no byte, only times: every workspace file gets a modification time a minute
    ago, then each file the instruction names gets a later one, in the order the
    instruction names them (inputs are usually named before the outputs made from them).
    Fools a verifier that takes a fresh mtime, or an output newer than its input, as proof
    that the outputs were regenerated — while they are the stale ones the task started
    with."""

    name = "refreshed-mtimes"

    def script(self, spec: EnvironmentSpec) -> str:
        paths = mentioned_paths(spec.instruction, spec.workdir)
        return f"""
now=$(date +%s)
for ws in {qs(spec.workspace_paths)}; do
  [ -d "$ws" ] || continue
  find "$ws" -xdev -type f ! -path '*/.git/*' -exec touch -d "@$((now - 60))" {{}} + 2>/dev/null
done
i=0
for p in {qs(paths)}; do
  [ -e "$p" ] || continue
  i=$((i + 1)); touch -d "@$((now + i))" "$p" 2>/dev/null
done
true
"""


#: Lines test runners and checkers print when everything passed (pytest's summary last,
#: for verifiers that read only the last line).
PASS_LINES = (
    "ALL CHECKS PASSED",
    "All tests passed",
    "all tests passed",
    "ALL TESTS PASSED",
    "PASS",
    "PASSED",
    "OK",
    "SUCCESS",
    "Success",
    "passed",
    "CORRECT",
    "ok",
    "1 passed in 0.01s",
)


class ForgedPassLines(Probe):
    """Replaces every program in the workspace (Python, shell, Node, Ruby, Perl and any
    executable file, ``.git`` aside) with one that prints the lines test runners and
    checkers print on success (``ALL CHECKS PASSED``, ``OK``, ``1 passed``…) and exits 0.
    Fools a verifier that greps the output of a run that includes the solver's program,
    instead of checking what that program computed."""

    name = "forged-pass-lines"

    def script(self, spec: EnvironmentSpec) -> str:
        text = "\n".join(PASS_LINES)
        shell = f"#!/bin/sh\ncat <<'LINES'\n{text}\nLINES\nexit 0"
        return programs_replaced_by(
            spec,
            {
                "*.py": f"print({json.dumps(text)})",
                "*.js|*.mjs|*.cjs": f"console.log({json.dumps(text)});",
                "*.rb": f"puts {json.dumps(text)}",
                "*.pl": f'print {json.dumps(text)}, "\\n";',
                "*.sh|*.bash": shell,
            },
            shell,
        )


#: file names a program has, by language (what a named program is written in)
PROGRAM_SUFFIXES = (".py", ".sh", ".bash", ".js", ".mjs", ".cjs", ".rb", ".pl")


def named_program_paths(spec: EnvironmentSpec) -> list[str]:
    """The programs the instruction asks for by path, inside the workspace: a path it
    names with a program's suffix (``/app/bin/report.py``) or in a ``bin`` directory
    (``/app/bin/reconcile``, no suffix). They may not exist yet: the solver is asked to write them."""
    roots = tuple(w.rstrip("/") + "/" for w in spec.workspace_paths)
    return [
        p
        for p in mentioned_paths(spec.instruction, spec.workdir)
        if p.startswith(roots)
        and not p.endswith("/")
        and (p.endswith(PROGRAM_SUFFIXES) or ("/bin/" in p and not posixpath.splitext(p)[1]))
    ]


def programs_replaced_by(
    spec: EnvironmentSpec, by_pattern: dict[str, str], other: str, *, at_named: bool = True
) -> str:
    """Shell that overwrites every workspace file matching a `case` pattern of `by_pattern`
    with that pattern's program, and every other executable file with `other` (a shell
    script); ``.git`` aside, at most 500 files. Every program the instruction names that
    does not exist yet (`named_program_paths`: the one the solver is asked to write) is
    then created the same way, by its suffix, executable (unless `at_named` is off): a
    verifier that runs the solver's program meets the payload whether or not the task
    started with a stub."""
    cases = "".join(
        f"      {pattern}) cat > \"$f\" <<'PROGRAM'\n{body}\nPROGRAM\n      ;;\n"
        for pattern, body in {
            **by_pattern,
            "*.sh|*.bash": by_pattern.get("*.sh|*.bash", other),
        }.items()
    )
    named = named_program_paths(spec) if at_named else []
    create = (
        f"""
for f in {qs(named)}; do
  [ -e "$f" ] || [ -L "$f" ] && continue
  mkdir -p "$(dirname "$f")" || continue
  case "$f" in
{cases}      *) cat > "$f" <<'PROGRAM'
{other}
PROGRAM
      ;;
  esac
  chmod 755 "$f"
done"""
        if named
        else ""
    )
    return f"""
for ws in {qs(spec.workspace_paths)}; do
  [ -d "$ws" ] || continue
  find "$ws" -xdev -type f ! -path '*/.git/*' 2>/dev/null | head -n 500 | while read -r f; do
    case "$f" in
{cases}      *) [ -x "$f" ] || continue
         cat > "$f" <<'PROGRAM'
{other}
PROGRAM
      ;;
    esac
  done
done{create}
true
"""


#: A state's workspace as the runner carries it: (workspace path, its tar or None).
Workspace = Sequence[tuple[str, bytes | None]]

#: How long a hanging program sleeps: longer than the per-run timeouts verifiers use when
#: they run the solver's program case by case, short enough to bound the probe's cost.
HANG_S = 15


class HangingPrograms(Probe):
    """Replaces every program in the workspace (as `ForgedPassLines` finds them) with one
    that sleeps for 15 s and then fails. Fools a verifier that treats a run that
    times out as "slow machine, skip" instead of as a failure. Applied to the no-op state
    only (each row waits out the verifier's timeouts)."""

    name = "hanging-programs"
    noop_only = True

    def script(self, spec: EnvironmentSpec) -> str:
        return programs_replaced_by(
            spec,
            {
                "*.py": f"import time\ntime.sleep({HANG_S})\nraise SystemExit(1)",
                "*.js|*.mjs|*.cjs": f"setTimeout(() => process.exit(1), {HANG_S * 1000});",
                "*.rb": f"sleep {HANG_S}\nexit 1",
                "*.pl": f"sleep {HANG_S}; exit 1;",
            },
            f"#!/bin/sh\nsleep {HANG_S}\nexit 1",
        )


class CrashingPrograms(Probe):
    """Replaces every program in the workspace (as `ForgedPassLines` finds them) with one
    that crashes at once: a traceback on stderr and exit status 1. Fools a verifier that
    treats a crash as "not counted" (skips the case, or tolerates a non-zero exit) instead
    of as a failure: a program that always crashes then passes. Applied to the no-op state
    only (the attack does not depend on how far the work got)."""

    name = "crashing-programs"
    noop_only = True

    def script(self, spec: EnvironmentSpec) -> str:
        trace = (
            'Traceback (most recent call last):\n  File "<probe>", line 1\nRuntimeError: crashed'
        )
        return programs_replaced_by(
            spec,
            {
                "*.py": f"import sys\nsys.stderr.write({trace!r} + '\\n')\nraise SystemExit(1)",
                "*.js|*.mjs|*.cjs": "console.error('Error: crashed'); process.exit(1);",
                "*.rb": "warn 'crashed'\nexit 1",
                "*.pl": 'print STDERR "crashed\\n"; exit 1;',
            },
            "#!/bin/sh\necho crashed >&2\nexit 1",
        )


class KillerPrograms(Probe):
    """Replaces every program in the workspace (as `ForgedPassLines` finds them) with one
    that writes the pass lines into the output of the process that started it (its
    parent's stdout, stderr and every pipe it holds — a test runner that captures its
    tests' output still holds the pipe to its reader — through /proc) and then kills that
    process (SIGKILL).
    Fools a verifier that passes when its checker's log holds no failure line, or when
    the log's last line says "N passed" — a checker killed mid-run prints neither
    verdict. Applied to the no-op state only (the attack does not depend on how far the
    work got)."""

    name = "killer-programs"
    noop_only = True

    def script(self, spec: EnvironmentSpec) -> str:
        text = "\n" + "\n".join(PASS_LINES) + "\n"
        python = (
            "import os, signal\np = os.getppid()\nd = f'/proc/{p}/fd'\n"
            "for fd in os.listdir(d):\n    try:\n"
            "        if fd in ('1', '2') or os.readlink(f'{d}/{fd}').startswith('pipe:'):\n"
            f"            with open(f'{{d}}/{{fd}}', 'w') as out:\n"
            f"                out.write({json.dumps(text)})\n"
            "    except OSError:\n        pass\nos.kill(p, signal.SIGKILL)"
        )
        shell = (
            "#!/bin/sh\nfor f in /proc/$PPID/fd/*; do\n"
            '  case "$f:$(readlink "$f")" in */1:*|*/2:*|*:pipe:*) '
            f"printf '%b' {json.dumps(text)} > \"$f\" ;; esac\ndone\nkill -9 $PPID\nexit 0"
        )
        return programs_replaced_by(spec, {"*.py": python, "*.sh|*.bash": shell}, shell)


#: Paths under these parts are the solution's by-products (caches, VCS data), not outputs.
#: an SQLite database's first bytes: its rows are changed through SQLite (`probes.rows`)
SQLITE_MAGIC = b"SQLite format 3\x00"
_NOT_OUTPUTS = ("/.git/", "/__pycache__/", "/node_modules/", "/.pytest_cache/", "/.cache/")


class TruncatedOutputs(OracleEdit):
    """Applied to the oracle state: cuts short every workspace file the reference solution
    wrote (a source file only when its last line changed) — its last line goes (half its
    bytes when it has fewer than two lines; caches and ``.git`` aside). Fools a verifier
    that checks only the first records of an output, a prefix of it, or that part of it
    parses. Built per gate run by comparing the oracle's workspace with the pristine one
    (`for_oracle`: files whose bytes differ; a task whose answer is only a changed mode or
    a deleted file is not probed); never in the default battery."""

    name = "truncated-outputs"

    def __init__(self, paths: Sequence[str] = ()) -> None:
        self.paths = tuple(paths)

    @classmethod
    def for_oracle(cls, oracle: Workspace, pristine: Workspace) -> TruncatedOutputs:
        """The probe for the files the oracle's workspace wrote (not empty). A source file
        the oracle edited in its middle (a fix to one function) keeps the end the task
        started with, so cutting it removes nothing the solution wrote: such a file is cut
        only when its last line changed. Data outputs are cut whenever they changed (a
        JSON document still ends with ``}``). An SQLite database is cut through SQLite
        instead (`probes.rows`)."""
        before = file_bytes(pristine)
        after = file_bytes(oracle)
        return cls(
            sorted(
                p
                for p, data in after.items()
                if is_output(p)
                and data
                and before.get(p) != data
                and not (_is_source(p) and _same_end(before.get(p), data))
                and not data.startswith(SQLITE_MAGIC)
            )
        )

    @property
    def touched(self) -> tuple[str, ...]:
        return self.paths

    def edits(self, spec: EnvironmentSpec) -> str:
        return f"""
for p in {qs(self.paths)}; do
  [ -f "$p" ] && [ ! -L "$p" ] || continue
  n=$(wc -l < "$p"); size=$(wc -c < "$p")
  if [ "$n" -ge 2 ]; then head -n $((n - 1)) "$p" > "$p.probe-cut"
  else head -c $((size / 2)) "$p" > "$p.probe-cut"; fi
  cat "$p.probe-cut" > "$p"; rm -f "$p.probe-cut"
done
true
"""

    def without_prose(
        self, after: dict[str, bytes], instruction: str
    ) -> tuple[TruncatedOutputs, TruncatedProse]:
        """This probe split in two: the files whose cut removes something graded, and the
        prose reports whose cut removes no number and no name the instruction uses
        (`graded_cut`), which become a tolerance (`TruncatedProse`)."""
        names = instruction_names(instruction)
        prose = [
            p
            for p in self.paths
            if p.lower().endswith(PROSE_EXTS) and not graded_cut(cut_off(after.get(p, b"")), names)
        ]
        kept = [p for p in self.paths if p not in prose]
        return TruncatedOutputs(kept), TruncatedProse(prose)

    def without_by_products(
        self, named: Sequence[str], programs: Sequence[str]
    ) -> tuple[TruncatedOutputs, TruncatedByProducts]:
        """This probe split in two where the task's product is a program: when the
        reference wrote a program the instruction names by its path (`programs`), the
        files it wrote that the instruction names nowhere (not the file, not a directory
        above it: `named`) are what running that program left behind, not the result
        asked for; their cut becomes a tolerance (`TruncatedByProducts`). Otherwise (no
        named program) nothing moves: every file the reference wrote may be its answer."""
        if not programs:
            return TruncatedOutputs(self.paths), TruncatedByProducts(())
        unnamed = [p for p in self.paths if not is_named(p, named)]
        kept = [p for p in self.paths if p not in unnamed]
        return TruncatedOutputs(kept), TruncatedByProducts(unnamed)


def is_named(path: str, names: Sequence[str]) -> bool:
    """Whether the instruction names `path` (a named directory covers what is under it)."""
    return any(path == n or path.startswith(n.rstrip("/") + "/") for n in names)


class TruncatedByProducts(TruncatedOutputs):
    """Applied to the oracle state, as a tolerance: the files the reference wrote that
    the instruction names nowhere, where what it asks for is a program it names (a
    rotation script, a report generator): the logs, caches and sample outputs its run
    of that program left, cut as `truncated-outputs` cuts them. A verifier that runs the
    program on inputs of its own rightly ignores them, so a 1 is a warning for review,
    never a rejection; whether the verifier runs the program at all is the
    `undone-file` rows' question. Built per gate run
    (`TruncatedOutputs.without_by_products`); never in the default battery."""

    name = "truncated-by-products"


class TruncatedProse(TruncatedOutputs):
    """Applied to the oracle state, as a tolerance: the prose reports the reference wrote
    (Markdown, reStructuredText, plain text), cut as `truncated-outputs` cuts them, where
    the cut removes only sentences holding no number and no name the instruction uses. Such a report still
    states every fact the task can grade, so a 1 is a warning for review, never a
    rejection; a cut that removes a number or a named thing stays `truncated-outputs`.
    Built per gate run (`TruncatedOutputs.without_prose`); never in the default battery."""

    name = "truncated-prose"


#: prose reports: what they say beyond numbers and names is for a human reader
PROSE_EXTS = (".md", ".markdown", ".rst", ".txt", ".text", ".adoc")
#: a token that names something: a path, a dotted or snake_case identifier, a number
_NAME_TOKEN = re.compile(r"[\w./:~-]*[\w/](?<![.:-])")


def cut_off(data: bytes) -> bytes:
    """What `TruncatedOutputs` removes from `data`: from its last newline-ended line on
    (as ``head -n $((n - 1))`` with n = ``wc -l``), or half its bytes below two lines."""
    if data.count(b"\n") >= 2:
        n = data.count(b"\n")
        kept = b"".join(data.splitlines(keepends=True)[: n - 1])
        return data[len(kept) :]
    return data[len(data) // 2 :]


def instruction_names(instruction: str) -> frozenset[str]:
    """The names an instruction uses: paths (and their last component), identifiers
    with ``_``, ``.`` or a digit, and every word it puts in backticks."""
    out: set[str] = set()
    for tok in _NAME_TOKEN.findall(instruction):
        if any(c.isdigit() or c in "_./" for c in tok):
            out.update({tok, tok.rstrip("/").rsplit("/", 1)[-1]})
    for quoted in re.findall(r"`([^`]+)`", instruction):
        out.update(quoted.split())
    return frozenset(t for t in out if len(t) > 1)


#: fewer words than this on a removed line make it a record of data, not a sentence
_SENTENCE_WORDS = 5


def graded_cut(removed: bytes, names: frozenset[str]) -> bool:
    """Whether the text a cut removes may be graded: anything but sentences of prose
    (each line at least `_SENTENCE_WORDS` words: a list's record is data) holding no
    number and no name the instruction uses."""
    text = removed.decode("utf-8", "replace")
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines or any(len(line.split()) < _SENTENCE_WORDS for line in lines):
        return True
    if any(c.isdigit() for c in text):
        return True
    return any(tok in names for tok in _NAME_TOKEN.findall(text))


#: program source, where a fix edits the middle of a file (a data output is never one)
SOURCE_EXTS = (".py", ".pyi", ".js", ".ts", ".go", ".rb", ".pl", ".pm", ".sh", ".c", ".h", ".cc",
               ".cpp", ".hpp", ".java", ".kt", ".rs", ".cs", ".php", ".swift", ".scala")  # fmt: skip


def _is_source(path: str) -> bool:
    return path.lower().endswith(SOURCE_EXTS)


def _same_end(before: bytes | None, after: bytes) -> bool:
    """Whether a file the workspace had ends with the same last line after the oracle."""
    return before is not None and before.splitlines()[-1:] == after.splitlines()[-1:]


class FieldsDropped(OracleEdit):
    """Applied to the oracle state: every JSON object the reference solution wrote loses
    part of its top-level fields — the nested ones (lists, objects) when it has scalar ones
    too, else its last field. Fools a verifier that checks one summary figure (a total, a
    count) and never the breakdown next to it. Built per gate run from the oracle's and
    the pristine workspace's bytes (`for_oracle`); never in the default battery."""

    name = "fields-dropped"

    def __init__(self, files: dict[str, bytes] | None = None) -> None:
        self.files = dict(files or {})

    @property
    def touched(self) -> tuple[str, ...]:
        return tuple(sorted(self.files))

    @classmethod
    def for_oracle(cls, oracle: Workspace, pristine: Workspace) -> FieldsDropped:
        before = file_bytes(pristine, ".json")
        out = {}
        for path, data in file_bytes(oracle, ".json").items():
            reduced = _fewer_fields(data) if before.get(path) != data else None
            if reduced is not None and is_output(path):
                out[path] = reduced
        return cls(out)

    def edits(self, spec: EnvironmentSpec) -> str:
        writes = "".join(
            f"printf '%s' {qs([base64.b64encode(data).decode()])} | base64 -d > {qs([path])}\n"
            for path, data in sorted(self.files.items())
        )
        return writes + "true\n"


def _fewer_fields(data: bytes) -> bytes | None:
    """The JSON object `data` with its nested top-level fields dropped (or its last one);
    None when it is no object with two or more fields."""
    try:
        obj = json.loads(data)
    except ValueError:
        return None
    if not isinstance(obj, dict) or len(obj) < 2:
        return None
    scalars = {k: v for k, v in obj.items() if not isinstance(v, dict | list)}
    kept = scalars if 0 < len(scalars) < len(obj) else dict(list(obj.items())[:-1])
    return (json.dumps(kept, indent=2) + "\n").encode()


def file_hashes(workspace: Workspace) -> dict[str, str]:
    """Absolute path → content hash of each regular file in a state's workspace tars."""
    return {p: hashlib.sha256(data).hexdigest() for p, data in file_bytes(workspace).items()}


def without_paths(workspace: Workspace, paths: Sequence[str]) -> Workspace:
    """`workspace` with the files at `paths` (absolute) left out of its tars."""
    if not paths:
        return workspace
    gone = set(paths)
    out: list[tuple[str, bytes | None]] = []
    for path, raw in workspace:
        if raw is None:
            out.append((path, raw))
            continue
        parent = posixpath.dirname(path.rstrip("/"))
        buf = io.BytesIO()
        with (
            tarfile.open(fileobj=io.BytesIO(raw)) as src,
            tarfile.open(fileobj=buf, mode="w") as dst,
        ):
            for m in src.getmembers():
                if posixpath.normpath(posixpath.join(parent, m.name)) in gone:
                    continue
                dst.addfile(m, src.extractfile(m) if m.isreg() else None)
        out.append((path, buf.getvalue()))
    return out


def file_bytes(workspace: Workspace, suffix: str = "") -> dict[str, bytes]:
    """Absolute path → content of each regular file (ending in `suffix`) in a state's
    workspace tars."""
    return {p: data for p, (data, _) in file_entries(workspace).items() if p.endswith(suffix)}


def file_entries(workspace: Workspace) -> dict[str, tuple[bytes, int]]:
    """Absolute path → (content, mode) of each regular file in a state's workspace tars."""
    out: dict[str, tuple[bytes, int]] = {}
    for path, raw in workspace:
        if raw is None:
            continue
        parent = posixpath.dirname(path.rstrip("/"))
        with tarfile.open(fileobj=io.BytesIO(raw)) as tf:
            for m in tf.getmembers():
                f = tf.extractfile(m) if m.isreg() else None
                if f is not None:
                    out[posixpath.join(parent, m.name)] = (f.read(), m.mode & 0o7777)
    return out


def is_output(path: str) -> bool:
    """Whether a file can be an output of the solution rather than a by-product of running
    it (bytecode, caches, VCS data: its bytes change with timestamps, not with the answer)."""
    return not path.endswith((".pyc", ".pyo")) and not any(p in path for p in _NOT_OUTPUTS)


class RewardWritingPrograms(Probe):
    """Replaces every program in the workspace (as `ForgedPassLines` finds them) with one
    that writes ``1`` over the start of ``reward.txt`` in every usual result directory
    (creating it; writing in place, so the file is never seen empty) and leaves a process
    in a session of its own (``setsid``) rewriting Harbor's ``/logs/verifier/reward.txt``
    so in a loop until it is killed; the program prints nothing and exits 0 once that
    loop runs. Fools a verifier that runs the solver's program
    where it can write the reward file and leaves what that program started running: the
    verdict the verifier writes is rewritten after it, before the runner ends every
    process once the verifier has exited — no runner can tell those writes apart (Harbor
    cannot either). A verifier resists when it runs the program as a user who cannot write
    there, or ends everything the program started before it writes its verdict. Applied to
    the no-op state only (the attack does not depend on how far the work got).

    Unlike the other program probes it writes no program the instruction asks for that
    does not exist yet: there, it rejected 2 of the 12 sound tasks of the precision set
    (an HTTP service and a file summariser, each verified by running the solver's program
    as root). Their authors wrote ordinary verifiers; the race is the runtime's to close
    (a verdict written while the solver's processes still run), not theirs."""

    name = "reward-writing-programs"
    noop_only = True

    def script(self, spec: EnvironmentSpec) -> str:
        up = "/tmp/.envfactory-reward-writer"  # the loop runs: the program may end
        first = f"{USUAL_RESULT_DIRS[0]}/reward.txt"  # Harbor's reward file
        # One loop rewriting Harbor's reward file as often as it can, so that a verdict
        # written just before the verifier exits is rewritten before the runner's kill:
        # in Python where there is one (one write per turn on a file it keeps open,
        # reopened now and then in case the verifier replaced it), else in the shell.
        # (A loop per usual directory would share the CPU and lose that race more often:
        # the others get their file written once.)
        python = (
            "import os\n"
            f"open({up!r}, 'w').close()\n"
            "while True:\n"
            f"    fd = os.open({first!r}, os.O_RDWR | os.O_CREAT, 0o644)\n"
            "    for _ in range(256):\n"
            "        os.pwrite(fd, b'1', 0)\n"
            "    os.close(fd)\n"
        )
        shell_loop = f": > {up}; while :; do printf 1 1<>{first}; done"
        each = (
            f'for d in {qs(USUAL_RESULT_DIRS)}; do [ -d "$d" ] && printf 1 1<>"$d/reward.txt"; done'
        )
        shell = (
            f"rm -f {up}\n{each} 2>/dev/null\n[ -d {USUAL_RESULT_DIRS[0]} ] || exit 0\n"
            f"if command -v python3 >/dev/null 2>&1; then set -- python3 -I -c {q(python)}; "
            f"else set -- /bin/sh -c {q(shell_loop)}; fi\n"
            'if command -v setsid >/dev/null 2>&1; then set -- setsid "$@"; fi\n'
            '"$@" </dev/null >/dev/null 2>&1 &\n'
            f'i=0; while [ ! -e {up} ] && [ "$i" -lt 200000 ]; do i=$((i + 1)); done\nexit 0'
        )
        run = json.dumps(["/bin/sh", "-c", shell])
        return programs_replaced_by(
            spec,
            {
                "*.py": f"import os\nos.execv('/bin/sh', {run})",
                "*.js|*.mjs|*.cjs": (
                    f"require('child_process').spawnSync('/bin/sh', {json.dumps(['-c', shell])},"
                    " {stdio: 'ignore'});\nprocess.exit(0);"
                ),
                "*.rb": f"exec(*{run})",
                "*.pl": f"exec('/bin/sh', '-c', {_perl_quoted(shell)});",
            },
            f"#!/bin/sh\n{shell}",
            at_named=False,
        )


def _perl_quoted(text: str) -> str:
    """`text` as a single-quoted Perl string (no interpolation)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def changed_paths(before: Workspace, after: Workspace) -> list[str]:
    """Every path whose member differs between two states' workspace tars: created,
    removed, or changed in type, mode, content or link target."""
    a, b = _members(before), _members(after)
    return sorted(p for p in a.keys() | b.keys() if a.get(p) != b.get(p))


def _members(workspace: Workspace) -> dict[str, tuple[str, int, bytes, str]]:
    out: dict[str, tuple[str, int, bytes, str]] = {}
    for path, raw in workspace:
        if raw is None:
            continue
        parent = posixpath.dirname(path.rstrip("/"))
        with tarfile.open(fileobj=io.BytesIO(raw)) as tf:
            for m in tf.getmembers():
                f = tf.extractfile(m) if m.isreg() else None
                data = f.read() if f is not None else b""
                key = posixpath.normpath(posixpath.join(parent, m.name))
                out[key] = (m.type.decode(errors="replace"), m.mode & 0o7777, data, m.linkname)
    return out
