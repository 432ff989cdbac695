"""What an untrusted Dockerfile may make the Docker daemon fetch: nothing.

A build's `RUN` steps run in containers on the build network (`build_network.py`), but
three instructions are carried out by dockerd itself, on the host's network and with the
host's view of local images: `ADD <url>` (an HTTP GET from the host: its loopback,
Temporal, the API, the database, metadata endpoints), `FROM <image>` and
`COPY --from=<image>` (any local image, a private one included, or a pull from any
registry host). For contexts envfactory did not write (packs, imported suites, mined
repositories, agents' environments) `check_untrusted` refuses:

- `ADD` of a URL (any `scheme://`, `git@`), or of a source with a variable (`$X` could be
  a URL the Dockerfile's ARG or ENV spells): fetch it in a `RUN` step, whose traffic goes
  through the build network's egress (package registries), or add the file to the context;
- `FROM` of anything but the context's own earlier stages, `scratch` and what `allowed`
  accepts (envfactory's base images and the stand-ins the FROM substitution maps to);
  a reference with a variable is refused, since it is what the daemon would pull;
- `COPY --from=` of anything but an earlier stage (by name or index);
- the same inside `ONBUILD`, whose trigger runs in a later stage.

Every refusal is an `ImageBuildFailed` naming the Dockerfile and line and how to fix it.
The check reads the Dockerfile as written (heredoc bodies skipped), before the classic
translation, so the line numbers are the author's.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from envfactory.core.errors import ImageBuildFailed

from .dockerfile_classic import instructions, shell_words

_URL_RE = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.-]*://|git@)")
_ADD_HINT = (
    "untrusted builds may not make the Docker daemon fetch URLs (it would fetch them from "
    "the host's network): download it in a RUN step (pip, apt-get and curl there go "
    "through the build network), or put the file in the build context and COPY it"
)


@dataclass
class _Stages:
    names: set[str] = field(default_factory=set)
    count: int = 0

    def known(self, ref: str) -> bool:
        ref = ref.lower()
        return ref in self.names or (ref.isdigit() and int(ref) < self.count)


def check_untrusted(
    text: str, allowed: Callable[[str], bool], *, where: str = "Dockerfile"
) -> None:
    """Raise `ImageBuildFailed` at the first instruction that would make dockerd fetch
    something: a URL, or an image that is neither a stage of this Dockerfile nor one
    `allowed` accepts (envfactory's base images and FROM stand-ins)."""
    stages = _Stages()
    for line, logical in instructions(text, where=where):
        _check(logical, line, stages, allowed, where)


def _check(
    logical: str, line: int, stages: _Stages, allowed: Callable[[str], bool], where: str
) -> None:
    words = shell_words(logical)
    op = words[0].upper() if words else ""
    if op == "ONBUILD" and len(words) > 1:
        _check(logical[len(words[0]) :].strip(), line, stages, allowed, where)
    elif op == "FROM":
        _check_from(words[1:], line, stages, allowed, where)
    elif op in ("ADD", "COPY"):
        _check_copy(op, logical[len(words[0]) :].strip(), line, stages, where)


def _fail(where: str, line: int, problem: str, hint: str) -> ImageBuildFailed:
    return ImageBuildFailed(f"{where} line {line}: {problem}", hint=hint)


def _check_from(
    args: list[str], line: int, stages: _Stages, allowed: Callable[[str], bool], where: str
) -> None:
    args = [a for a in args if not a.startswith("--")]
    if not args:
        raise _fail(where, line, "FROM names no image", "write FROM IMAGE")
    ref = args[0]
    ok = ref.lower() == "scratch" or stages.known(ref) or ("$" not in ref and allowed(ref))
    if not ok:
        problem = (
            f"FROM {ref} names an image through a variable"
            if "$" in ref
            else f"FROM {ref} is not one of envfactory's base images"
        )
        raise _fail(
            where,
            line,
            problem,
            "untrusted builds start from envfactory's local base images: write a public "
            "Debian or Python image literally (python:3.11-slim, debian:12, ubuntu:24.04), "
            "which is built on a local base, or a stage of this Dockerfile",
        )
    if len(args) >= 3 and args[1].lower() == "as":
        stages.names.add(args[2].lower())
    stages.count += 1


def _check_copy(op: str, rest: str, line: int, stages: _Stages, where: str) -> None:
    flags: list[str] = []
    while rest.startswith("--"):
        word = shell_words(rest)[0]
        flags.append(word)
        rest = rest[len(word) :].lstrip()
    for flag in flags:
        if flag.startswith("--from="):
            source = flag[len("--from=") :].strip("\"'")
            if not stages.known(source):
                raise _fail(
                    where,
                    line,
                    f"{op} --from={source} names an image, not an earlier stage",
                    "untrusted builds copy only from a stage of their own Dockerfile "
                    "(FROM ... AS NAME before it)",
                )
    if op == "ADD":
        for source in _sources(rest)[:-1]:
            _check_add_source(source, line, where)


def _sources(rest: str) -> list[str]:
    if rest.startswith("["):
        try:
            words = json.loads(rest)
        except ValueError:
            words = None
        if isinstance(words, list) and all(isinstance(w, str) for w in words):
            return words
    return rest.split()  # the classic builder splits at whitespace


def _check_add_source(source: str, line: int, where: str) -> None:
    bare = source.strip("\"'")
    if bare.startswith("<<"):
        return  # a heredoc: its body becomes a context file
    if _URL_RE.match(bare):
        raise _fail(where, line, f"ADD {bare} fetches a URL", _ADD_HINT)
    if "$" in bare:
        raise _fail(
            where,
            line,
            f"ADD {bare} names its source through a variable, which may spell a URL",
            "write the context path literally (or use COPY, which never fetches)",
        )
