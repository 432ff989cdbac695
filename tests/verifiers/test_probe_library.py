"""The probe library's static properties: documented classes, valid shell, path extraction."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from envfactory.core.models import BuildContext, EnvironmentSpec, Step
from verifiers.probes import PROBES, by_name, mentioned_paths

SPEC = EnvironmentSpec(
    id="env-test",
    name="t",
    instruction="Write the total of `data/nums.txt` to /workspace/out/total.txt and a summary to report.md.",
    build=BuildContext(files=()),
    reference_solution=(Step(script="true"),),
)


def test_every_probe_has_a_unique_name_and_documents_its_attack_class() -> None:
    names = [p.name for p in PROBES]
    assert len(names) == len(set(names))
    for p in PROBES:
        assert len(p.doc) > 80, f"{p.name} needs a docstring naming its attack class"
        assert by_name(p.name) is p


def test_the_library_covers_every_attack_class_the_issue_names() -> None:
    required = {
        "reward-file", "forged-output", "conftest-pass", "startup-hook", "path-hijack", "delete-tests",
        "empty-tests", "placeholder-outputs", "break-collection", "git-reset", "delayed-rewrite",
    }  # fmt: skip
    assert required <= {p.name for p in PROBES}


@pytest.mark.parametrize("probe", PROBES, ids=lambda p: p.name)
def test_every_probe_script_is_valid_posix_shell(probe) -> None:  # type: ignore[no-untyped-def]
    sh = shutil.which("dash") or shutil.which("sh")
    assert sh
    res = subprocess.run([sh, "-n", "-c", probe.script(SPEC)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr


def test_an_unknown_probe_name_lists_the_known_ones() -> None:
    with pytest.raises(KeyError, match="reward-file"):
        by_name("nope")


def test_paths_mentioned_in_an_instruction_are_made_absolute_against_the_workdir() -> None:
    got = mentioned_paths(SPEC.instruction, "/workspace")
    assert got == ["/workspace/data/nums.txt", "/workspace/out/total.txt", "/workspace/report.md"]


def test_words_versions_and_urls_are_not_taken_for_paths() -> None:
    text = (
        "Use python3.11 and version 1.2 from https://example.com/a.txt; see e.g. the docs and /etc."
    )
    assert mentioned_paths(text, "/w") == []
