"""Answer keys within reach: the oracle's answers, found in what a solver can read.

A task leaks its answer when the image holds it outside the work: a helper script in
`/usr/local/bin` with the expected string baked in, a backup or a copy of the reference's
result under `/opt` or `/var`, a hidden directory beside the workspace, a gzipped copy. A
solver reads it, writes it to the output and never does the work; a verifier that checks
only the output rewards that.

The class, by rule, not by example:

1. **The answers.** The data files the reference wrote or changed in the workspace (not
   programs, not by-products), each reduced to its *distinctive lines*: the lines, three
   characters or more, that no visible starting file of the workspace holds. An output
   whose distinctive lines add up to fewer than `MIN_DISTINCTIVE` characters is too
   generic to be recognised elsewhere (a lone ``42``) and is not searched for.
2. **The search** (`search_script`, in the pristine environment, as root): every regular
   file under 1 MiB in the places a solver reads and a task author leaves things
   (`SEARCH_ROOTS`, the hidden entries of the workspace and of `/`), language libraries,
   package databases and caches aside, that holds any distinctive line (`grep -F`), and
   every gzip file whose content does; at most `MAX_FOUND` files come back.
3. **The match** (host side): an output is *within reach* when one found file holds all
   of its distinctive lines (as text, or gunzipped), and neither that file nor a directory
   above it is named by the instruction (a task that says "restore it from
   /var/backups/x" makes that file the intended source, not a leak).
4. **The row** (`answer-in-reach`, on the no-op state): the outputs within reach written
   with the reference's bytes, nothing else done. Expected 0: a 1 is "the answer is
   readable in the environment: P".
"""

from __future__ import annotations

import base64
import gzip
import posixpath
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from envfactory.core.models import EnvironmentSpec

from .base import Probe, qs
from .numbers import embedded_writes, file_entries, program_language
from .workspace import Workspace, is_named, is_output, mentioned_paths

#: where a solver reads and a task author leaves things (the workspace is searched only
#: for its hidden entries: its visible starting files define what is not distinctive)
SEARCH_ROOTS = ("/usr/local", "/opt", "/srv", "/var", "/home", "/root", "/etc", "/tmp", "/mnt")
#: trees of code and package data nobody bakes a task's answer into
PRUNED = (
    "*/site-packages",
    "*/dist-packages",
    "*/node_modules",
    "/usr/local/lib/python*",
    "/usr/local/go",
    "/usr/local/cargo",
    "/usr/local/rustup",
    "/var/lib/dpkg",
    "/var/lib/apt",
    "/var/cache",
    "/var/log/apt",
    "/proc",
    "/sys",
    "/dev",
    "/run",
    "/.envfactory-*",
)
MIN_LINE = 3  # characters: shorter lines are too common to mean anything
MIN_DISTINCTIVE = 16  # characters of distinctive lines an output needs to be searched for
MAX_OUTPUT = 256 * 1024  # bytes: larger outputs are not answers one bakes into a script
MAX_FOUND = 24  # files the search brings back
MAX_FOUND_BYTES = 256 * 1024  # bytes of each found file brought back
MAX_PATTERNS = 200


@dataclass(frozen=True)
class Answer:
    path: str
    data: bytes
    lines: tuple[str, ...]  # its distinctive lines


def answers(oracle: Workspace, pristine: Workspace, spec: EnvironmentSpec) -> list[Answer]:
    """The reference's data outputs with enough distinctive lines to be recognised."""
    before, after = file_entries(pristine), file_entries(oracle)
    visible = set()
    for path, entry in before.items():
        if not _hidden(path, spec.workspace_paths):
            visible.update(_lines(entry.data))
    out = []
    for path, entry in sorted(after.items()):
        changed = path not in before or before[path].data != entry.data
        if not changed or not is_output(path) or len(entry.data) > MAX_OUTPUT:
            continue
        if program_language(path, entry) is not None or _binary(entry.data):
            continue
        lines = tuple(dict.fromkeys(ln for ln in _lines(entry.data) if ln not in visible))
        if sum(map(len, lines)) >= MIN_DISTINCTIVE:
            out.append(Answer(path, entry.data, lines))
    return out


def patterns(found: Sequence[Answer]) -> list[str]:
    """The lines the search greps for (each answer's longest first, all answers in turn)."""
    per = [sorted(a.lines, key=len, reverse=True) for a in found]
    out: list[str] = []
    for i in range(max(map(len, per), default=0)):
        out += [lines[i] for lines in per if i < len(lines) and lines[i] not in out]
    return out[:MAX_PATTERNS]


def search_script(found: Sequence[Answer], spec: EnvironmentSpec) -> str:
    """Shell printing, for each file a solver could read that holds a distinctive line
    (gzip files: once decompressed), ``FOUND <path>`` and its bytes base64-encoded, then
    ``END``. POSIX tools only (find, grep, gzip, base64, head)."""
    pats = base64.b64encode("\n".join(patterns(found)).encode()).decode()
    hidden = " ".join(f"{posixpath.join(w, '.')}[!.]*" for w in (*spec.workspace_paths, "/"))
    prune = " -o ".join(f"-path {qs([p])}" for p in PRUNED)
    return f"""
p=/tmp/.envfactory-answer-patterns; printf '%s' {qs([pats])} | base64 -d > "$p"
roots=""
for r in {qs(SEARCH_ROOTS)} {hidden}; do [ -e "$r" ] && [ "$r" != "$p" ] && roots="$roots $r"; done
[ -n "$roots" ] || {{ echo END; exit 0; }}
list=/tmp/.envfactory-answer-files
find $roots -xdev \\( {prune} \\) -prune -o -type f -size -1024k -print 2>/dev/null \\
  | grep -v -x -e "$p" -e "$list" > "$list"
{{
  tr '\\n' '\\0' < "$list" | xargs -0 -r grep -lsF -f "$p" 2>/dev/null
  grep '\\.gz$' "$list" | while read -r f; do
    gzip -dc "$f" 2>/dev/null | head -c 1048576 | grep -qsF -f "$p" && printf '%s\\n' "$f"
  done
}} | sort -u | head -n {MAX_FOUND} | while read -r f; do
  echo "FOUND $f"; head -c {MAX_FOUND_BYTES} "$f" | base64 | tr -d '\\n'; echo
done
rm -f "$p" "$list"
echo END
"""


def parse_found(text: str) -> dict[str, bytes]:
    """The search's output as {path: bytes} (gzip files decompressed); {} when it did not
    end (a cut output is no evidence)."""
    lines = text.splitlines()
    if not lines or lines[-1] != "END":
        return {}
    out: dict[str, bytes] = {}
    for head, body in zip(lines[:-1:2], lines[1:-1:2], strict=False):
        if not head.startswith("FOUND "):
            return {}
        data = base64.b64decode(body or b"")
        if data.startswith(b"\x1f\x8b"):
            try:
                data = gzip.decompress(data)
            except (OSError, EOFError, zlib.error):
                pass  # cut at MAX_FOUND_BYTES: what decompressed is not kept either
        out[head.removeprefix("FOUND ")] = data
    return out


def within_reach(
    found: Sequence[Answer], files: Mapping[str, bytes], spec: EnvironmentSpec
) -> dict[str, str]:
    """{output path: the readable file that holds all of its distinctive lines}, files the
    instruction names (or lies under a named directory of) aside."""
    named = mentioned_paths(spec.instruction, spec.workdir)
    texts = {
        p: data.decode("utf-8", errors="replace")
        for p, data in sorted(files.items())
        if not is_named(p, named) and p not in {a.path for a in found}
    }
    out = {}
    for a in found:
        source = next((p for p, t in texts.items() if all(ln in t for ln in a.lines)), None)
        if source is not None:
            out[a.path] = source
    return out


class AnswerInReach(Probe):
    """Applied to the no-op state: each output of the reference whose distinctive lines
    all sit in one file a solver can read outside the work (a helper script, a backup, a
    hidden or gzipped copy the instruction does not point to) is written with the
    reference's bytes; nothing else is done. Fools a verifier that checks only the output
    of a task whose environment holds the answer: the answer is readable, the work is not
    needed."""

    name = "answer-in-reach"

    def __init__(self, outputs: Mapping[str, bytes], sources: Mapping[str, str]) -> None:
        self.outputs = dict(outputs)
        self.sources = dict(sources)

    @property
    def detail(self) -> str:
        return ", ".join(
            f"the reference's {o}, the answer readable in the environment at {s}"
            for o, s in sorted(self.sources.items())
        )

    @property
    def touched(self) -> tuple[str, ...]:
        return tuple(sorted(self.outputs))

    def script(self, spec: EnvironmentSpec) -> str:
        dirs = sorted({posixpath.dirname(p) for p in self.outputs})
        return f"mkdir -p {qs(dirs)}\n" + embedded_writes(self.outputs)


def answer_probe(
    found: Sequence[Answer], files: Mapping[str, bytes], spec: EnvironmentSpec
) -> AnswerInReach | None:
    """The probe for the outputs within reach, or None when none is."""
    sources = within_reach(found, files, spec)
    if not sources:
        return None
    return AnswerInReach({a.path: a.data for a in found if a.path in sources}, sources)


def _lines(data: bytes) -> list[str]:
    text = data.decode("utf-8", errors="replace")
    return [s for ln in text.splitlines() if len(s := ln.strip()) >= MIN_LINE]


def _binary(data: bytes) -> bool:
    return b"\x00" in data[:8192]


def _hidden(path: str, workspace_paths: Sequence[str]) -> bool:
    root = next((w for w in workspace_paths if path.startswith(w.rstrip("/") + "/")), "")
    rel = path[len(root) :] if root else path
    return any(part.startswith(".") for part in rel.split("/") if part)
