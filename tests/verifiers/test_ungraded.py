"""Files a task does not grade (`EnvironmentSpec.ungraded_paths`: a mined fix's
documentation and type stubs) are left out of the probes built from the oracle's outputs,
and nothing else is."""

from __future__ import annotations

from verifiers.gate.plan import oracle_probes
from verifiers.probes import PROBES
from verifiers.probes.workspace import file_bytes, without_paths

from .gate_tasks import workspace_of
from .sumtask import SPEC

PRISTINE = {"calc.py": b"def f():\n    return 1\n", "docs/versions.rst": b"1.0\n"}
ORACLE = {"calc.py": b"def f():\n    return 2\n", "docs/versions.rst": b"1.0\n1.1: f\n"}


def _cut(spec) -> tuple[str, ...]:  # type: ignore[no-untyped-def]
    made = oracle_probes(workspace_of(ORACLE), workspace_of(PRISTINE), spec, PROBES)
    return next((p.touched for p in made.on_oracle if p.name == "truncated-outputs"), ())


def test_without_paths_leaves_out_only_the_files_named():
    kept = file_bytes(without_paths(workspace_of(ORACLE), ["/workspace/docs/versions.rst"]))
    assert kept == {"/workspace/calc.py": ORACLE["calc.py"]}
    assert without_paths(workspace_of(ORACLE), []) == workspace_of(ORACLE)


def test_an_ungraded_file_is_not_cut_and_a_graded_one_still_is():
    assert "/workspace/docs/versions.rst" in _cut(SPEC)
    ungraded = SPEC.model_copy(update={"ungraded_paths": ("/workspace/docs/versions.rst",)})
    assert _cut(ungraded) == ("/workspace/calc.py",)
