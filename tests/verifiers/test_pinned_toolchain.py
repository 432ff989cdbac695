"""The verifier's own tools are pinned in full-state scope (real Docker, traced).

A full-state verification runs on the solver's whole filesystem, so a solver can replace
a module the verifier's interpreter loads; no verifier can defend itself against that.
The files the traced verification of the oracle loaded from the image are pinned: a state
that changes one has tamper evidence (reward 0, the verifier not run). A probe that plants
there (`traced-overwrite`) then no longer blames the task for what only the runtime can
prevent, and the sound task is accepted. Regression: a sound HTTP task was rejected by
`traced-overwrite@no-op` planting over the distribution's Perl modules.
"""

from __future__ import annotations

import pytest

from envfactory.core.models import (
    BuildContext,
    EnvironmentSpec,
    Step,
    TaskVerdict,
    VerifyScope,
    counts,
)

from .gate_tasks import context_tar, gate_shell

pytestmark = [pytest.mark.docker, pytest.mark.slow]

#: a library of the image's, where the distribution's Perl modules live (perl-modules):
#: not a place the tamper net watches by class
LIBRARY = (
    "package Check::Exact;\n"
    "sub same { my ($path, $want) = @_; open(my $f, '<', $path) or return 0;\n"
    "  local $/; my $got = <$f>; return $got eq $want; }\n1;\n"
)
DOCKERFILE = (
    "FROM python:3.12-slim\nWORKDIR /app\nRUN touch /app/.keep\n"
    "COPY Exact.pm /usr/share/perl5/Check/Exact.pm\n"
)
#: sound: the exact output, checked through the image's Perl library
VERIFIER = """#!/bin/sh
exec perl -MCheck::Exact -e 'exit(Check::Exact::same("/app/out.json", q({"total": 42})) ? 0 : 1)'
"""


def _gate(engine, env_id: str, verifier: str):  # type: ignore[no-untyped-def]
    """The full-state task (writing `out.json`) gated, traced, with `verifier`."""
    files = {"Dockerfile": DOCKERFILE, "Exact.pm": LIBRARY}
    image = engine.build(context_tar(files)).image
    spec = EnvironmentSpec(
        id=env_id,
        name="pinned",
        instruction='Write {"total": 42} to /app/out.json.',
        build=BuildContext(files=()),
        workdir="/app",
        workspace_paths=("/app",),
        verify_scope=VerifyScope.FULL_STATE,
        reference_solution=(
            Step(title="write", script="printf '{\"total\": 42}' > /app/out.json"),
        ),
    )
    return gate_shell(engine, image, spec, verifier.encode(), traced=True)


def test_a_planted_system_module_is_tamper_evidence_and_the_sound_task_is_accepted(
    docker_engine, base_image
) -> None:  # type: ignore[no-untyped-def]
    report = _gate(docker_engine, "env-pinned-tools", VERIFIER)
    assert any("pinned" in n for n in report.notes), report.notes
    planted = [
        c
        for c in report.checks
        if c.name.startswith("probe:traced-overwrite")
        and any(t.path == "/usr/share/perl5/Check/Exact.pm" for t in c.tamper)
    ]
    assert planted, [(c.name, c.tamper) for c in report.checks if "traced" in c.name]
    assert all(c.observed and set(c.observed) == {0} for c in planted)
    assert report.outcome == TaskVerdict.PASSED, report.reasons


#: weak: any file at the output path will do, read through the same library
WEAK = """#!/bin/sh
exec perl -MCheck::Exact -e 'exit(-s "/app/out.json" ? 0 : 1)'
"""


def test_a_weak_full_state_verifier_is_still_caught_by_a_row_without_tamper(
    docker_engine, base_image
) -> None:  # type: ignore[no-untyped-def]
    report = _gate(docker_engine, "env-pinned-tools-weak", WEAK)
    caught = [c for c in report.checks if c.kind.value == "probe" and not c.passed and counts(c)]
    assert caught and all(not c.tamper for c in caught), [(c.name, c.tamper) for c in caught]
    # the probes built from the oracle's outputs run in full-state scope too
    assert {"probe:truncated-outputs@oracle", "probe:fields-dropped@oracle"} & {
        c.name for c in caught
    }, [c.name for c in caught]
    assert not any("probes built from the oracle's outputs" in n for n in report.notes)
    assert report.outcome == TaskVerdict.REJECTED
