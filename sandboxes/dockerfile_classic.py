"""BuildKit-only Dockerfile syntax, translated into what the classic builder builds.

The engine here builds with the classic builder (no buildx, so no BuildKit): it has no
heredocs, no `COPY --chmod` and no `RUN --mount`. Suites are written for BuildKit, so
`to_classic` rewrites a Dockerfile's text into an equivalent one plus files to add to the
build context. It is pure: text and the context's file names in, text and files out.

- `RUN <<EOF` (the heredoc is the whole command): the body is the script, run by the
  stage's shell as BuildKit does (`sh -c BODY`): the file is COPY'd to /tmp and sourced,
  then removed. A body starting with `#!` is run as an executable, as BuildKit does.
- `RUN cmd <<EOF …` (any other command with heredocs, e.g. `cat > f <<'EOF'`): BuildKit
  hands the command line and its bodies to the shell, which applies the heredoc rules
  itself (a quoted delimiter: no expansion; `<<-`: leading tabs stripped). So does this
  translation: the command line and the bodies, verbatim, become the sourced script.
- `COPY <<EOF /path` / `ADD`: the body becomes a context file (mode 0644, named by its
  delimiter) copied in its place. An unquoted delimiter expands `$NAME` / `${NAME}` from
  the stage's own ENV and ARG defaults, as BuildKit does; any other `$` form, or a name
  the Dockerfile does not define, is refused (quote the delimiter to copy it verbatim).
- `COPY --chmod=MODE …` becomes the COPY and a `RUN chmod MODE` of exactly the paths it
  wrote (as root when the stage set another USER); `--link` is dropped (a layer-cache
  hint). `RUN --mount=type=cache` and `--network=default` are dropped (they do not
  change what the step produces); every other flag the classic builder lacks is refused.
- The `# syntax=` directive is dropped (the classic builder has one frontend).

Anything else that cannot be translated raises `ImageBuildFailed` naming the Dockerfile
line, never a silently different image.
"""

from __future__ import annotations

import fnmatch
import json
import posixpath
import re
import shlex
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field

from envfactory.core.errors import ImageBuildFailed

HEREDOC_DIR = ".envfactory-heredoc"  # where the bodies go in the build context
_DIRECTIVE_RE = re.compile(r"^#[ \t]*([a-zA-Z][a-zA-Z0-9]*)[ \t]*=[ \t]*(.+?)[ \t]*$")
_HEREDOC_WORD_RE = re.compile(r"^(\d*)<<(-?)([^<]+)$")
_NAME_RE = re.compile(r"^[A-Za-z0-9_.-]+$")
_MODE_RE = re.compile(r"^(?:[0-7]{3,4}|[ugoa]*[-+=][rwxXst]*(?:,[ugoa]*[-+=][rwxXst]*)*)$")
_VAR_RE = re.compile(r"\\\$|\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)|\$(.?)")
_COPY_KEEP = ("--from=", "--chown=")
_COPY_REFUSED_HINT = "write it as separate COPY and RUN lines the classic builder knows"


@dataclass(frozen=True)
class ContextFile:
    path: str  # relative to the build context's root
    data: bytes
    mode: int


@dataclass(frozen=True)
class ClassicDockerfile:
    text: str
    files: tuple[ContextFile, ...] = ()


@dataclass(frozen=True)
class Heredoc:
    word: str  # as written: `<<-'EOF'`
    name: str  # the delimiter without quotes
    quoted: bool
    chomp: bool  # `<<-`: leading tabs stripped from the body
    body: str = ""  # every line up to the delimiter's, newlines kept


@dataclass
class _Stage:
    """What the translation tracks of the stage being read."""

    env: dict[str, str] = field(default_factory=dict)
    user: str | None = None  # the last USER line of the stage; None: the base's


@dataclass
class _Translation:
    where: str
    context: frozenset[str]
    out: list[str] = field(default_factory=list)
    files: list[ContextFile] = field(default_factory=list)
    stage: _Stage = field(default_factory=_Stage)
    stages: dict[str, _Stage] = field(default_factory=dict)
    global_args: dict[str, str] = field(default_factory=dict)
    seen_from: bool = False

    def fail(self, line: int, problem: str, hint: str) -> ImageBuildFailed:
        return ImageBuildFailed(f"{self.where} line {line}: {problem}", hint=hint)

    def add_file(self, name: str, data: str, mode: int = 0o644) -> str:
        path = f"{HEREDOC_DIR}/{len(self.files) + 1}/{name}"
        self.files.append(ContextFile(path, data.encode(), mode))
        return path


def to_classic(
    text: str, context_paths: Collection[str] = (), *, where: str = "Dockerfile"
) -> ClassicDockerfile:
    """`text` rewritten for the classic builder, with the files it needs in the context
    (`context_paths`: the context's file paths, for `--chmod` of copied directories).
    A Dockerfile that needs no translation comes back unchanged, with no files."""
    tr = _Translation(where, frozenset(p.lstrip("./") for p in context_paths))
    lines = text.splitlines(keepends=True)
    start, escape = _directives(lines, tr)
    for first, raw, logical, bodies in _instructions(lines[start:], start, escape, tr):
        _translate(tr, first, raw, logical, bodies)
    if not tr.files and "".join(tr.out) == text:
        return ClassicDockerfile(text)
    return ClassicDockerfile("".join(tr.out), tuple(tr.files))


def instructions(text: str, *, where: str = "Dockerfile") -> Iterator[tuple[int, str]]:
    """(first line number, logical line) of each instruction, continuations joined and
    heredoc bodies skipped, as the translation reads them."""
    tr = _Translation(where, frozenset())
    lines = text.splitlines(keepends=True)
    start, escape = _directives(lines, tr)
    for first, _raw, logical, _bodies in _instructions(lines[start:], start, escape, tr):
        yield first, logical


def _directives(lines: list[str], tr: _Translation) -> tuple[int, str]:
    """Parser directives at the top: `syntax` dropped, the others kept; the escape char."""
    escape = "\\"
    for i, line in enumerate(lines):
        m = _DIRECTIVE_RE.match(line.strip())
        if not m:
            return i, escape
        key, value = m.group(1).lower(), m.group(2)
        if key == "escape":
            if value not in ("\\", "`"):
                raise tr.fail(i + 1, f"escape={value} is not a Dockerfile escape", "use \\ or `")
            escape = value
        if key != "syntax":
            tr.out.append(line)
    return len(lines), escape


def _instructions(
    lines: list[str], offset: int, escape: str, tr: _Translation
) -> Iterator[tuple[int, list[str], str, list[Heredoc]]]:
    """(first line number, physical lines, logical line, heredoc bodies) per instruction;
    blank and comment lines between instructions go straight to the output."""
    i = 0
    while i < len(lines):
        stripped = lines[i].strip()
        if not stripped or stripped.startswith("#"):
            tr.out.append(lines[i])
            i += 1
            continue
        first, parts, raw = i, [], []
        while i < len(lines):
            raw.append(lines[i])
            body = lines[i].rstrip("\r\n")
            i += 1
            if i - 1 > first and (not body.strip() or body.lstrip().startswith("#")):
                continue  # a comment or blank line inside a continued instruction
            if body.rstrip().endswith(escape):
                parts.append(body.rstrip()[:-1])
                continue
            parts.append(body)
            break
        logical = "".join(parts).strip()
        heredocs = _heredoc_words(logical, offset + first + 1, tr)
        bodies = []
        for doc in heredocs:
            text, i = _read_body(lines, i, doc, offset + first + 1, tr)
            raw.append(text + doc.name + "\n")
            bodies.append(Heredoc(doc.word, doc.name, doc.quoted, doc.chomp, text))
        yield offset + first + 1, raw, logical, bodies


def _heredoc_words(logical: str, line: int, tr: _Translation) -> list[Heredoc]:
    words = shell_words(logical)
    if not words or words[0].upper() not in ("RUN", "COPY", "ADD"):
        return []
    if len(words) > 1 and words[1].startswith("["):
        return []  # exec form: no heredocs
    out = []
    for word in words[1:]:
        m = _HEREDOC_WORD_RE.match(word)
        if not m:
            continue
        delim = m.group(3)
        name = re.sub(r"[\"'\\]", "", delim)
        if not _NAME_RE.match(name):
            raise tr.fail(
                line,
                f"cannot read the heredoc {word!r}",
                "write the delimiter as a word of its own (`<<EOF > file`, not `<<EOF>file`)",
            )
        out.append(Heredoc(word, name, name != delim, m.group(2) == "-"))
    return out


def _read_body(
    lines: list[str], i: int, doc: Heredoc, line: int, tr: _Translation
) -> tuple[str, int]:
    body: list[str] = []
    while i < len(lines):
        text = lines[i].rstrip("\r\n")
        i += 1
        if (text.lstrip("\t") if doc.chomp else text) == doc.name:
            return "".join(body), i
        body.append(text + "\n")
    raise tr.fail(
        line,
        f"the heredoc {doc.word} is never closed",
        f"end its body with a line holding only {doc.name}",
    )


def shell_words(text: str) -> list[str]:
    """Words split at unquoted whitespace, each kept as written (quotes included)."""
    words: list[str] = []
    cur, quote, escaped = "", "", False
    for ch in text:
        if escaped:
            cur, escaped = cur + ch, False
        elif ch == "\\" and quote != "'":
            cur, escaped = cur + ch, True
        elif quote:
            cur, quote = cur + ch, "" if ch == quote else quote
        elif ch in "'\"":
            cur, quote = cur + ch, ch
        elif ch.isspace():
            if cur:
                words.append(cur)
            cur = ""
        else:
            cur += ch
    return [*words, cur] if cur else words


def _translate(
    tr: _Translation, line: int, raw: list[str], logical: str, bodies: list[Heredoc]
) -> None:
    words = shell_words(logical)
    op = words[0].upper()
    if op == "FROM":
        _enter_stage(tr, words)
    elif op in ("ENV", "ARG"):
        _remember_vars(tr, op, logical[len(words[0]) :].strip())
    elif op == "USER" and len(words) > 1:
        tr.stage.user = words[1]
    if op == "RUN":
        tr.out.extend(_run(tr, line, logical, bodies) or raw)
    elif op in ("COPY", "ADD"):
        tr.out.extend(_copy(tr, line, op, logical, bodies) or raw)
    else:
        tr.out.extend(raw)


def _enter_stage(tr: _Translation, words: list[str]) -> None:
    args = [w for w in words[1:] if not w.startswith("--")]
    parent = tr.stages.get(args[0].lower()) if args else None
    tr.stage = _Stage(dict(parent.env), parent.user) if parent else _Stage()
    tr.seen_from = True
    if len(args) >= 3 and args[1].lower() == "as":
        tr.stages[args[2].lower()] = tr.stage


def _remember_vars(tr: _Translation, op: str, rest: str) -> None:
    """ENV / ARG values the stage defines (for expanding COPY heredocs); an ARG without a
    default takes the global ARG's (before the first FROM), else stays undefined."""
    words = shell_words(rest)
    pairs: list[tuple[str, str | None]]
    if op == "ENV" and len(words) >= 2 and "=" not in words[0]:
        pairs = [(words[0], rest[len(words[0]) :].strip())]  # the old `ENV NAME value`
    else:
        pairs = [(w.split("=", 1)[0], w.split("=", 1)[1] if "=" in w else None) for w in words]
    for name, value in pairs:
        target = tr.stage.env if tr.seen_from else tr.global_args
        if value is None:
            if tr.seen_from and name in tr.global_args:
                target[name] = tr.global_args[name]
            continue
        target[name] = _unquote(value)


def _unquote(value: str) -> str:
    try:
        parts = shlex.split(value)
    except ValueError:
        return value
    return " ".join(parts)


# -- RUN ---------------------------------------------------------------------------------


def _run(tr: _Translation, line: int, logical: str, bodies: list[Heredoc]) -> list[str] | None:
    """The RUN's classic lines, or None to keep it as written."""
    flags, command = _split_flags(logical[3:].lstrip())
    kept = [f for f in flags if not _droppable_run_flag(f)]
    if kept:
        raise tr.fail(line, f"RUN {kept[0]} needs BuildKit", _COPY_REFUSED_HINT)
    if not bodies:
        return [f"RUN {command}\n"] if flags else None
    k = len(tr.files) + 1
    target = f"/tmp/{HEREDOC_DIR}-{k}"
    if shell_words(command) == [bodies[0].word] and len(bodies) == 1:
        doc = bodies[0]
        script = _chomped(doc) if doc.chomp else doc.body
        run = shlex.quote(target) if script.startswith("#!") else f". {shlex.quote(target)}"
        path = tr.add_file("run", script, 0o755 if script.startswith("#!") else 0o644)
    else:  # the shell reads the command and its heredocs, as under BuildKit
        script = command + "\n" + "".join(d.body + d.name + "\n" for d in bodies)
        path, run = tr.add_file("run", script), f". {shlex.quote(target)}"
    return [
        f"COPY {path} {target}\n",
        f"RUN trap {shlex.quote('rm -f ' + shlex.quote(target))} EXIT; {run}\n",
    ]


def _droppable_run_flag(flag: str) -> bool:
    """Flags that change how a step runs, never what it produces."""
    if flag.startswith("--mount="):
        opts = dict(o.split("=", 1) for o in flag[8:].split(",") if "=" in o)
        return opts.get("type") == "cache"
    return flag == "--network=default"


def _split_flags(rest: str) -> tuple[list[str], str]:
    flags: list[str] = []
    while rest.startswith("--"):
        word = shell_words(rest)[0]
        flags.append(word)
        rest = rest[len(word) :].lstrip()
    return flags, rest


def _chomped(doc: Heredoc) -> str:
    return "".join(ln.lstrip("\t") for ln in doc.body.splitlines(keepends=True))


# -- COPY / ADD --------------------------------------------------------------------------


def _copy(
    tr: _Translation, line: int, op: str, logical: str, bodies: list[Heredoc]
) -> list[str] | None:
    flags, rest = _split_flags(logical[len(op) :].lstrip())
    kept, chmod = [], None
    for flag in flags:
        if flag.startswith("--chmod="):
            chmod = _mode(tr, line, flag[8:])
        elif flag.startswith(_COPY_KEEP):
            kept.append(flag)
        elif flag != "--link":
            raise tr.fail(line, f"{op} {flag} needs BuildKit", _COPY_REFUSED_HINT)
    if not bodies and len(kept) == len(flags):
        return None
    words, json_form = _copy_words(tr, line, rest)
    named = {d.word: d for d in bodies}
    sources = [_heredoc_source(tr, line, named[w]) if w in named else w for w in words[:-1]]
    args = json.dumps([*sources, words[-1]]) if json_form else " ".join([*sources, words[-1]])
    out = [" ".join([op, *kept, args]) + "\n"]
    if chmod:
        from_stage = any(f.startswith("--from=") for f in kept)
        out += _chmod_lines(tr, chmod, sources, words[-1], from_stage)
    return out


def _copy_words(tr: _Translation, line: int, rest: str) -> tuple[list[str], bool]:
    """The COPY's sources and destination; whether it was written as a JSON array."""
    if rest.startswith("["):
        try:
            words = json.loads(rest)
        except ValueError:
            words = None
        if not isinstance(words, list):
            words = None
    else:
        words = rest.split()  # the classic builder splits at whitespace, quotes and all
    if words is None or len(words) < 2 or not all(isinstance(w, str) for w in words):
        raise tr.fail(line, "COPY needs sources and a destination", "name both")
    return words, rest.startswith("[")


def _heredoc_source(tr: _Translation, line: int, doc: Heredoc) -> str:
    body = _chomped(doc) if doc.chomp else doc.body
    if not doc.quoted:
        body = _expand(tr, line, doc, body)
    return tr.add_file(doc.name, body)


def _expand(tr: _Translation, line: int, doc: Heredoc, body: str) -> str:
    """BuildKit's expansion of an unquoted COPY heredoc, for the names the stage defines."""

    def value(m: re.Match[str]) -> str:
        if m.group(0) == "\\$":
            return "$"
        name = m.group(1) or m.group(2)
        if name is None:
            nxt = m.group(3)
            if nxt in ("", " ", "\t", "\n", '"', "'", "/", ".", ":", "-", ","):
                return m.group(0)  # a lone `$` is kept
            raise tr.fail(
                line,
                f"the heredoc {doc.word} uses `${nxt}`, which the translation cannot expand",
                f"quote the delimiter (<<'{doc.name}') to copy the body verbatim",
            )
        if name not in tr.stage.env:
            raise tr.fail(
                line,
                f"the heredoc {doc.word} expands ${name}, which this Dockerfile does not set",
                f"set it with ENV or ARG NAME=default, or quote the delimiter (<<'{doc.name}')",
            )
        return tr.stage.env[name]

    return _VAR_RE.sub(value, body)


def _mode(tr: _Translation, line: int, mode: str) -> str:
    if not _MODE_RE.match(mode):
        raise tr.fail(line, f"--chmod={mode} is not a file mode", "write it as 755 or u+x")
    return mode


def _chmod_lines(
    tr: _Translation, mode: str, sources: list[str], dest: str, from_stage: bool
) -> list[str]:
    """`RUN chmod` of what the COPY wrote: each file, each directory's entries."""
    matched = [m for s in sources for m in _matches(tr, s, from_stage)]
    into_dir = dest.endswith("/") or len(matched) > 1
    cmds = []
    for path, is_dir in matched:
        if is_dir:  # its contents go into the destination
            children = _children(tr.context, path) if not from_stage else None
            targets = [posixpath.join(dest, c) for c in children] if children else [dest]
            cmds.append(f"chmod -R {mode} " + " ".join(_quote(t) for t in targets))
        elif into_dir:
            cmds.append(f"chmod {mode} {_quote(posixpath.join(dest, posixpath.basename(path)))}")
        else:  # `COPY f /usr/local/bin`: into the directory when it is one
            inside = _quote(posixpath.join(dest, posixpath.basename(path)))
            cmds.append(
                f"if [ -d {_quote(dest)} ]; then chmod {mode} {inside}; "
                f"else chmod {mode} {_quote(dest)}; fi"
            )
    run = [f"RUN {' && '.join(cmds)}\n"]
    user = tr.stage.user
    if user and user.split(":")[0] not in ("root", "0"):
        return ["USER root\n", *run, f"USER {user}\n"]
    return run


def _matches(tr: _Translation, source: str, from_stage: bool) -> list[tuple[str, bool]]:
    """(path, is a directory) of what a COPY source names in the context."""
    path = posixpath.normpath(source.strip("\"'").lstrip("/")).lstrip("./") or "."
    if from_stage:
        return [(path, path.endswith("/") or path == ".")]
    if source.startswith(HEREDOC_DIR):
        return [(source, False)]
    dirs = _ancestors(tr.context)
    if any(ch in path for ch in "*?["):
        names = sorted(n for n in tr.context | dirs if _glob(path, n))
        return [(n, n in dirs) for n in names]
    if path == ".":
        return [(".", True)]
    return [(path, path in dirs)]


def _ancestors(paths: frozenset[str]) -> set[str]:
    out = set()
    for p in paths:
        while "/" in p:
            p = p.rsplit("/", 1)[0]
            out.add(p)
    return out


def _children(context: frozenset[str], directory: str) -> list[str]:
    prefix = "" if directory == "." else directory.rstrip("/") + "/"
    return sorted({p[len(prefix) :].split("/", 1)[0] for p in context if p.startswith(prefix)})


def _glob(pattern: str, name: str) -> bool:
    parts, names = pattern.split("/"), name.split("/")
    return len(parts) == len(names) and all(
        fnmatch.fnmatchcase(n, p) for p, n in zip(parts, names, strict=True)
    )


def _quote(path: str) -> str:
    """Double quotes: the shell still expands `$VAR` (as COPY expands its destination)."""
    if re.fullmatch(r"[A-Za-z0-9_./$:{}@%+=-]+", path):
        return path
    return '"' + re.sub(r'(["\\`])', r"\\\1", path) + '"'
