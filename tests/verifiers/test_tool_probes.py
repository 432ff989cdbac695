"""The tools' own files in the solver's space, through real Docker: a verifier whose tool
looks its code up where the solver writes is caught by a payload in that tool's language,
and a sound twin of it stays at 0 on the same states (and at 1 on the oracle).

Two tools: Perl (``-I.``: ``./strict.pm`` before the real one; a small image) and TeX
(kpathsea: ``./article.cls`` before the distribution's; Debian's texlive-latex-base, slow).
Each probe is traced from the weak verifier on the oracle state, applied to the no-op state,
and both verifiers judge the result; for TeX the whole gate run (traced probes included)
rejects the weak verifier and accepts the sound one.
"""

from __future__ import annotations

import io
import tarfile

import pytest

from envfactory.core.models import (
    CheckKind,
    EnvironmentSpec,
    GateVerdict,
    StateKind,
)
from envfactory.core.models.rows import RowId
from verifiers.battery import gate_input
from verifiers.gates import run_gates
from verifiers.probes.base import Probe
from verifiers.probes.tools import ToolReplay, loads_of
from verifiers.probes.workspace import file_bytes
from verifiers.runner import verifier_tar, verify_prepared
from verifiers.states import pristine_state, produce_chain, produce_probe
from verifiers.surface import strace_bundle, traced_probes

from .gate_tasks import app_spec
from .sumtask import MemoryFiles, make_verifier

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def _image(engine, dockerfile: str, context: dict[str, bytes] | None = None) -> str:  # type: ignore[no-untyped-def]
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        for name, data in {"Dockerfile": dockerfile.encode(), **(context or {})}.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return str(engine.build(buf.getvalue()).image)


def _spec(name: str, instruction: str, script: str) -> EnvironmentSpec:
    return app_spec(name, instruction, ("solve", script))


def _verdict(engine, prepared, spec, v, files) -> int:  # type: ignore[no-untyped-def]
    return verify_prepared(
        engine, prepared, spec=spec, verifier=v, verifier_files=verifier_tar(v, files)
    ).reward


def _judged(engine, image, spec, weak: str, sound: str, extra=None):  # type: ignore[no-untyped-def]
    """{probe name: (weak verdict, sound verdict)} for the tool probes traced from `weak` on
    the oracle and applied to the no-op state, with the probes themselves."""
    if strace_bundle() is None:
        pytest.skip("no strace on this host")
    files = MemoryFiles()
    w, s = (make_verifier(files, entry, extra) for entry in (weak, sound))
    (oracle,) = produce_chain(
        engine,
        image,
        spec,
        spec.reference_solution,
        rows=[RowId.oracle()],
        kinds=[StateKind.ORACLE],
        want_diff=False,
    )
    noop = pristine_state(engine, image, spec)
    for v in (w, s):
        assert _verdict(engine, oracle.prepared, spec, v, files) == 1, v.entry
        assert _verdict(engine, noop.prepared, spec, v, files) == 0, v.entry
    traced = traced_probes(
        engine, oracle.prepared, spec=spec, verifier=w, verifier_files=verifier_tar(w, files)
    )
    replay = ToolReplay.for_states(
        loads_of(traced),
        file_bytes(oracle.prepared.workspace),
        file_bytes(noop.prepared.workspace),
    )
    probes: dict[str, Probe] = {p.name: p for p in (*traced, replay) if p.name != "traced-link"}
    out = {}
    for name, probe in probes.items():
        state = produce_probe(engine, image, spec, noop, probe)
        out[name] = (
            _verdict(engine, state.prepared, spec, w, files),
            _verdict(engine, state.prepared, spec, s, files),
        )
    return out, probes


# ----------------------------------------------------------------------------- Perl

PERL_SPEC = _spec(
    "perl-total",
    "Write the sum of the amount column of /app/input.csv to /app/out/total.txt.",
    "mkdir -p out && echo 60 > out/total.txt",
)
PERL_DOCKERFILE = """FROM python:3.11-slim
RUN mkdir -p /app && printf 'region,amount\\nn,10\\ns,20\\ne,30\\n' > /app/input.csv
WORKDIR /app
"""
_CHECK = (
    "open(my $f, q(<), q(/app/out/total.txt)) or exit 1; my $t = <$f>; "
    "exit($t eq qq(60\\n) ? 0 : 1)"
)
#: runs from the workspace with `-I.`: `use strict` finds ./strict.pm first
PERL_WEAK = f"cd /app && perl -I. -e 'use strict; {_CHECK}'"
#: the same check from the verifier's own directory, no workspace on @INC
PERL_SOUND = f"perl -e 'use strict; {_CHECK}'"


@pytest.fixture(scope="module")
def perl_image(docker_engine, base_image) -> str:  # type: ignore[no-untyped-def]
    return _image(docker_engine, PERL_DOCKERFILE)


def test_a_perl_module_looked_up_in_the_workspace_is_caught_and_the_sound_twin_is_not_fooled(
    docker_engine, perl_image
) -> None:  # type: ignore[no-untyped-def]
    got, probes = _judged(docker_engine, perl_image, PERL_SPEC, PERL_WEAK, PERL_SOUND)
    assert (
        "/app/strict.pm (perl: Perl module, looked up there first)"
        in probes["traced-tool-replay"].detail
    )
    assert got["traced-shadow"] == (1, 0)  # exits 0 at load
    assert got["traced-tool-replay"] == (1, 0)  # writes out/total.txt, loads the real strict
    assert got["traced-silenced"] == (0, 0)  # warnings off and the real strict: nothing gained


# ----------------------------------------------------------------------------- TeX

TEX_DOCKERFILE = """FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends texlive-latex-base \\
 && rm -rf /var/lib/apt/lists/*
COPY main.tex input.tex /app/
WORKDIR /app
"""
TEX_MAIN = (
    b"\\documentclass{article}\n\\setlength{\\textwidth}{2.5in}\n\\begin{document}\n"
    b"\\input{input.tex}\n\\end{document}\n"
)
#: digits are never hyphenated: the serial number overflows the 2.5in column
TEX_INPUT = b"The part has serial 12345678901234567890123456789012345678901234567890 on it.\n"
TEX_SPEC = _spec(
    "tex-overfull",
    "Make /app/main.tex compile with pdflatex without an overfull hbox by replacing the long "
    "serial number in /app/input.tex with the word 'unknown'. Do not edit main.tex.",
    "sed -i 's/[0-9]\\{50\\}/unknown/' input.tex",
)
_LOG_OK = "grep -q 'Output written on main.pdf' main.log && ! grep -q 'Overfull' main.log"
#: compiles in the workspace: kpathsea finds ./article.cls there before the real one
TEX_WEAK = f"cd /app && pdflatex -interaction=nonstopmode main.tex >/dev/null 2>&1; {_LOG_OK}"
#: its own main.tex and a copy of input.tex (the text the task asks for) in a private directory
TEX_SOUND = (
    'v=$PWD; t=$(mktemp -d) && cp "$v/main.tex" /app/input.tex "$t/" && cd "$t" '
    "&& [ \"$(cat input.tex)\" = 'The part has serial unknown on it.' ] "
    f"&& {{ pdflatex -no-shell-escape -interaction=nonstopmode main.tex >/dev/null 2>&1; "
    f"{_LOG_OK}; }}"
)


@pytest.fixture(scope="module")
def tex_image(docker_engine) -> str:  # type: ignore[no-untyped-def]
    return _image(docker_engine, TEX_DOCKERFILE, {"main.tex": TEX_MAIN, "input.tex": TEX_INPUT})


def test_a_tex_class_in_the_workspace_is_caught_naming_the_class_and_pdflatex(
    docker_engine, tex_image
) -> None:  # type: ignore[no-untyped-def]
    got, probes = _judged(
        docker_engine, tex_image, TEX_SPEC, TEX_WEAK, TEX_SOUND, {"main.tex": TEX_MAIN}
    )
    named = "/app/article.cls (pdflatex: TeX class, looked up there first)"
    assert named in probes["traced-silenced"].detail
    assert named in probes["traced-tool-replay"].detail
    assert got["traced-silenced"] == (1, 0)  # \hfuzz=\maxdimen around the real article.cls
    assert got["traced-tool-replay"] == (1, 0)  # input.tex rewritten by \openout, then compiled
    assert got["traced-shadow"][1] == 0


@pytest.mark.parametrize(("entry", "passed"), [(TEX_WEAK, False), (TEX_SOUND, True)])
def test_the_gates_reject_the_tex_verifier_in_the_workspace_and_accept_its_sound_twin(
    docker_engine, tex_image, entry, passed
) -> None:  # type: ignore[no-untyped-def]
    if strace_bundle() is None:
        pytest.skip("no strace on this host")
    files = MemoryFiles()
    v = make_verifier(files, entry, {"main.tex": TEX_MAIN})
    inp, _ = gate_input(
        docker_engine, spec=TEX_SPEC, verifier=v, files=files, image=tex_image, repeats=1
    )
    report = run_gates(inp)
    assert (report.verdict == GateVerdict.PASSED) is passed, report.reasons
    failing = {c.name for c in report.checks if c.kind == CheckKind.PROBE and not c.passed}
    if passed:
        assert failing == set()
        return
    assert "probe:traced-silenced@no-op" in failing
    assert "probe:traced-tool-replay@no-op" in failing
    note = next(n for n in report.notes if n.startswith("the verifier's tools load"))
    assert "/app/article.cls (pdflatex: TeX class, looked up there first)" in note
