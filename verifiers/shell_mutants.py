"""Mutants of shell verifier files (test.sh, *.sh), line by line.

Operators: `exit 0` inserted before a line that runs a check (early-exit); a check line
replaced by `:` (drop-check-line); `|| exit N` turned into `|| true` (or-exit-true); the
`e` dropped from `set -e…` when later check lines rely on it (drop-set-e). A check line
is a command whose first word is `test`, `[`, `[[`, `diff`, `cmp`, `grep -q`, a Python
interpreter or pytest (also after `if`, `!`, `exec`, `timeout N`, `env`, `VAR=…`).

Invariant: lines inside a here-document and lines joined by a trailing backslash are never
touched (changing one would change another command than the one it seems to be), and a
dropped line becomes `:` so a block it was alone in stays a valid block.
"""

from __future__ import annotations

import re

from .edits import Edit

_HEREDOC = re.compile(r"<<(-?)\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\2")
_PREFIX = re.compile(
    r"^(?:(?:if|elif|while|until|!|exec|env|then|do)\s+|timeout\s+(?:-\S+\s+)*\S+\s+|[A-Za-z_]\w*=\S*\s+)"
)
_CHECK = re.compile(r"^(?:test|\[\[?|diff|cmp|python[0-9.]*|pytest|py\.test)$")
_OPENERS = ("if", "while", "until")
_NOT_BEFORE = ("elif", "else", "then", "do", "fi", "done", "esac", ";;", "}", ")")
_STRUCTURAL = (
    "if",
    "elif",
    "else",
    "then",
    "fi",
    "for",
    "while",
    "until",
    "do",
    "done",
    "case",
    "esac",
    "function",
    "{",
    "}",
    ";;",
)
_OR_EXIT = re.compile(r"\|\|\s*exit(?:\s+(\d+))?\s*(?=$|;|#|\)|\})")
_SET_E = re.compile(r"^(\s*set\s+)(-[A-Za-z]+)")


def is_shell(path: str, text: str) -> bool:
    if path.endswith((".sh", ".bash")):
        return True
    first = text.split("\n", 1)[0]
    return first.startswith("#!") and bool(re.search(r"\b(?:ba|da|z|k)?sh\b", first))


def shell_edits(text: str) -> list[Edit]:
    """Candidate edits of a shell script, in source order."""
    lines = text.encode().split(b"\n")
    starts = [0]
    for raw in lines[:-1]:
        starts.append(starts[-1] + len(raw) + 1)
    decoded = [raw.decode() for raw in lines]
    mutable = _mutable_lines(decoded)
    commands = [i for i in mutable if _command(decoded[i])]
    out: list[Edit] = []
    for i in mutable:
        line, at = decoded[i], starts[i]
        cmd = _command(line)
        indent = line[: len(line) - len(line.lstrip())]
        if cmd and _is_check(cmd) and not cmd.startswith(_NOT_BEFORE):
            out.append(Edit("early-exit", i + 1, at, at, f"{indent}exit 0\n"))
            if not _structural(cmd) and "<<" not in cmd:
                out.append(
                    Edit(
                        "drop-check-line",
                        i + 1,
                        at + len(indent.encode()),
                        at + len(line.encode()),
                        ":",
                    )
                )
        for m in _OR_EXIT.finditer(line):
            if m.group(1) != "0":
                matched = m.group(0)
                a, b = len(line[: m.start()].encode()), len(line[: m.end()].encode())
                new = "|| true" + matched[len(matched.rstrip()) :]
                out.append(Edit("or-exit-true", i + 1, at + a, at + b, new))
        out += _set_e(decoded, i, at, commands)
    return out


def _set_e(lines: list[str], i: int, at: int, commands: list[int]) -> list[Edit]:
    m = _SET_E.match(lines[i])
    if not m or "e" not in m.group(2)[1:]:
        return []
    later = [j for j in commands if j > i]
    relies = any(_relies_on_errexit(lines[j]) for j in later[:-1])
    if not relies:
        return []
    flags = "-" + m.group(2)[1:].replace("e", "")
    rest = lines[i][m.end() :]
    new = (m.group(1) + flags + rest) if flags != "-" else (m.group(1) + rest.lstrip())
    if not new.strip() or new.strip() == "set":
        new = m.group(1)[: len(m.group(1)) - len(m.group(1).lstrip())] + ":"
    return [Edit("drop-set-e", i + 1, at, at + len(lines[i].encode()), new.rstrip())]


def _relies_on_errexit(line: str) -> bool:
    """A check whose failure only stops the script because of `set -e`."""
    cmd = _command(line)
    return bool(cmd) and _is_check(cmd) and not cmd.startswith(_OPENERS) and "||" not in cmd


def _mutable_lines(lines: list[str]) -> list[int]:
    """Indexes of lines that are neither inside a here-document nor part of a continuation."""
    out: list[int] = []
    heredoc: tuple[bool, str] | None = None
    cont = False
    for i, line in enumerate(lines):
        if heredoc is not None:
            strip_tabs, word = heredoc
            if (line.lstrip("\t") if strip_tabs else line) == word:
                heredoc = None
            continue
        joined = line.rstrip().endswith("\\")
        if not cont and not joined and not (i == 0 and line.startswith("#!")):
            out.append(i)
        cont = joined
        m = _HEREDOC.search(line)
        if m:
            heredoc = (m.group(1) == "-", m.group(3))
    return out


def _command(line: str) -> str:
    """The line's command text without leading whitespace and trailing comment; "" if none."""
    s = line.strip()
    if not s or s.startswith("#"):
        return ""
    return re.sub(r"\s+#[^'\"]*$", "", s)


def _structural(cmd: str) -> bool:
    first = cmd.split(None, 1)[0]
    return (
        first in _STRUCTURAL
        or cmd.endswith(("then", "do", "{", ";;"))
        or bool(re.match(r"^[^\s()]+\)", cmd))
    )


def _is_check(cmd: str) -> bool:
    s = cmd
    while True:
        m = _PREFIX.match(s)
        if not m:
            break
        s = s[m.end() :]
    words = s.split()
    if not words:
        return False
    word = words[0].rsplit("/", 1)[-1]
    if word == "grep":
        return any(re.match(r"^-[A-Za-z]*q", w) or w == "--quiet" for w in words[1:])
    if word in ("uvx", "uv"):
        return "pytest" in words
    return bool(_CHECK.match(word))
