"""The probe library's static properties: documented classes, valid shell, path extraction."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from envfactory.core.models import BuildContext, EnvironmentSpec, Step
from verifiers.probes import PROBES, by_name, mentioned_paths, probes_for, verifier_imports
from verifiers.probes.traced import EXEC_EXIT, PY_EXIT, planting_script

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
        "reward-file",
        "forged-output",
        "conftest-pass",
        "startup-hook",
        "path-hijack",
        "delete-tests",
        "empty-tests",
        "placeholder-outputs",
        "break-collection",
        "git-reset",
        "delayed-rewrite",
    }
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


def test_the_static_module_shadow_also_covers_what_the_verifier_itself_imports() -> None:
    files = {
        "check.py": (
            b"import numpy as np\nfrom scipy.stats import norm\nfrom . import x\nimport helpers\n",
            0o644,
        ),
        "helpers.py": (b"import json\n", 0o644),
        "broken.py": (b"def (:\n", 0o644),
    }
    assert verifier_imports(files) == {"numpy", "scipy", "json"}  # helpers is its own
    shadow = next(p for p in probes_for(files) if p.name == "module-shadow")
    assert {"scipy", "numpy", "json", "csv", "pytest"} <= set(shadow.modules)  # type: ignore[attr-defined]
    assert [p.name for p in probes_for(files)] == [p.name for p in PROBES]


def _run_in(tmp_path: Path, script: str) -> None:
    res = subprocess.run(["sh", "-c", script], capture_output=True, text=True, cwd=tmp_path)
    assert res.returncode == 0, res.stderr


def _input_spec(root: Path) -> EnvironmentSpec:
    return EnvironmentSpec(
        id="env-inputs",
        name="t",
        build=BuildContext(files=()),
        workdir=str(root),
        workspace_paths=(str(root),),
        reference_solution=(Step(script="true"),),
        instruction="Total the amount column of data/sales.csv using rates.json; write out/total.txt, out/rows.csv and out/summary.json.",
    )


def _inputs(root: Path) -> None:
    (root / "data").mkdir()
    (root / "data/sales.csv").write_text("region,amount\nn,3\ns,4\n")
    (root / "rates.json").write_text('[{"r": 1}]')


def test_minimal_inputs_keep_the_type_and_outputs_match_the_degenerate_input(
    tmp_path: Path,
) -> None:
    _inputs(tmp_path)
    _run_in(tmp_path, by_name("inputs-minimal").script(_input_spec(tmp_path)))
    assert (tmp_path / "data/sales.csv").read_text() == "region,amount\n"
    assert (tmp_path / "rates.json").read_text().strip() == "[]"
    assert (tmp_path / "out/total.txt").read_text().strip() == "0"
    assert (tmp_path / "out/rows.csv").read_text() == "region,amount\n"
    assert (tmp_path / "out/summary.json").read_text().strip() == "[]"


def test_emptied_inputs_leave_zero_byte_inputs_and_zero_answers(tmp_path: Path) -> None:
    _inputs(tmp_path)
    _run_in(tmp_path, by_name("inputs-emptied").script(_input_spec(tmp_path)))
    assert (tmp_path / "data/sales.csv").read_bytes() == b""
    assert (tmp_path / "out/total.txt").read_text().strip() == "0"
    assert (tmp_path / "out/rows.csv").read_bytes() == b""


def test_without_a_named_input_every_workspace_file_but_tests_and_git_is_an_input(
    tmp_path: Path,
) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git/HEAD").write_text("ref: x\n")
    (tmp_path / "numbers.dat").write_text("1 2 3\n")
    (tmp_path / "test_numbers.py").write_text("def test(): pass\n")
    spec = _input_spec(tmp_path).model_copy(
        update={"instruction": "Write the total to out/total.txt."}
    )
    _run_in(tmp_path, by_name("inputs-emptied").script(spec))
    assert (tmp_path / "numbers.dat").read_bytes() == b""
    assert (tmp_path / ".git/HEAD").read_text() == "ref: x\n"
    assert (tmp_path / "test_numbers.py").read_text() != ""


def test_a_planting_script_writes_each_file_with_its_mode_and_skips_directories(
    tmp_path: Path,
) -> None:
    (tmp_path / "pkg").mkdir()
    files = {
        str(tmp_path / "a/json.py"): (PY_EXIT, 0o644),
        str(tmp_path / "bin/it's"): (EXEC_EXIT, 0o755),
        str(tmp_path / "pkg"): (EXEC_EXIT, 0o755),
    }
    _run_in(tmp_path, planting_script(files))
    assert (tmp_path / "a/json.py").read_text() == PY_EXIT
    assert (tmp_path / "bin/it's").stat().st_mode & 0o777 == 0o755
    assert (tmp_path / "pkg").is_dir()
    res = subprocess.run(
        ["python3", "-c", "import json"], cwd=tmp_path / "a", capture_output=True, text=True
    )
    assert res.returncode == 0 and res.stdout == "1 passed\n"
