"""The payloads of `verifiers.probes.tools` run by the real tools on this machine (Python,
Perl, Node, make, sh): planted where the tool looks first, each replay writes the reference's
bytes exactly and the tool then goes on with its real file; each silence does what it says.
TeX's run in Docker (tests/verifiers/test_tool_probes.py). A tool this host lacks is skipped.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from verifiers.probes.loads import Load
from verifiers.probes.tools import replay, silence

WANT = b"caf\xc3\xa9 {%} $x 'q' \\n\ttab\n"


def _tool(name: str) -> str:
    exe = shutil.which(name)
    if exe is None:
        pytest.skip(f"no {name} on this host")
    return exe


def _run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=60, check=False)


def _plant(tmp_path: Path, name: str, lang: str, what: str, real: str = "") -> Path:
    path = tmp_path / name
    load = Load(str(path), lang, lang, what, False, str(tmp_path), real)
    content = replay(load, {str(tmp_path / "out" / "x.txt"): WANT})
    assert content is not None
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content)
    return path


def test_a_python_module_shadow_writes_the_files_then_hands_over_the_real_module(
    tmp_path: Path,
) -> None:
    py = _tool("python3")
    _plant(tmp_path, "json.py", "python", "Python module")
    res = _run([py, "-c", "import json; print(json.dumps({'a': 1}))"], tmp_path)
    assert res.stdout.strip() == '{"a": 1}', res.stderr
    assert (tmp_path / "out" / "x.txt").read_bytes() == WANT


def test_a_perl_module_shadow_writes_the_files_then_loads_the_real_module(tmp_path: Path) -> None:
    perl = _tool("perl")
    real = _run([perl, "-e", 'require strict; print $INC{"strict.pm"}'], tmp_path).stdout
    _plant(tmp_path, "strict.pm", "perl", "Perl module", real)
    res = _run([perl, "-I.", "-e", 'use strict; my $x = 1; print "ok $x\\n"'], tmp_path)
    assert res.stdout == "ok 1\n", res.stderr
    assert (tmp_path / "out" / "x.txt").read_bytes() == WANT


def test_a_node_module_shadow_writes_the_files_then_exports_the_real_module(
    tmp_path: Path,
) -> None:
    node = _tool("node")
    real = tmp_path / "real" / "left.js"
    real.parent.mkdir()
    real.write_text("module.exports = 42;\n")
    _plant(tmp_path, "node_modules/left", "node", "Node module", str(real))
    res = _run([node, "-e", "console.log(require('left'))"], tmp_path)
    assert res.stdout.strip() == "42", res.stderr
    assert (tmp_path / "out" / "x.txt").read_bytes() == WANT


def test_a_gnumakefile_writes_the_files_then_includes_the_real_makefile(tmp_path: Path) -> None:
    make = _tool("make")
    (tmp_path / "Makefile").write_text("all:\n\t@cat out/x.txt\n")
    _plant(tmp_path, "GNUmakefile", "make", "makefile", str(tmp_path / "Makefile"))
    res = _run([make, "-s"], tmp_path)
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "out" / "x.txt").read_bytes() == WANT
    assert res.stdout.encode() == WANT


def test_a_sourced_shell_file_writes_the_files_and_the_script_goes_on(tmp_path: Path) -> None:
    sh = _tool("sh")
    _plant(tmp_path, "config.sh", "shell", "sourced shell file")
    res = _run([sh, "-c", ". ./config.sh; echo after"], tmp_path)
    assert res.stdout == "after\n", res.stderr
    assert (tmp_path / "out" / "x.txt").read_bytes() == WANT


def test_silenced_make_ignores_failing_recipes_and_silenced_perl_drops_warnings(
    tmp_path: Path,
) -> None:
    make, perl = _tool("make"), _tool("perl")
    (tmp_path / "Makefile").write_text("check:\n\tfalse\n\t@echo checked\n")
    assert _run([make], tmp_path).returncode != 0  # the check fails on its own
    gnu = Load(
        str(tmp_path / "GNUmakefile"),
        "make",
        "make",
        "makefile",
        False,
        real=f"{tmp_path}/Makefile",
    )
    (tmp_path / "GNUmakefile").write_text(silence(gnu) or "")
    res = _run([make], tmp_path)
    assert res.returncode == 0 and "checked" in res.stdout
    real = _run([perl, "-e", 'require strict; print $INC{"strict.pm"}'], tmp_path).stdout
    pm = Load(str(tmp_path / "strict.pm"), "perl", "perl", "Perl module", False, real=real)
    (tmp_path / "strict.pm").write_text(silence(pm) or "")
    res = _run([perl, "-I.", "-e", 'use strict; warn "boo\\n"; print "ok\\n"'], tmp_path)
    assert res.stdout == "ok\n" and res.stderr == ""


def test_a_tex_class_replay_typesets_the_reference_documents_body_in_place_of_the_solvers() -> None:
    load = Load(
        "/app/article.cls", "pdflatex", "tex", "TeX class", False, "/app", "/usr/share/article.cls"
    )
    report = b"\\documentclass{article}\n\\begin{document}\nNorth & 412 \\\\\n\\end{document}\n"
    payload = replay(load, {"/app/report.tex": report})
    assert payload is not None
    assert "\\immediate\\openout15=report.tex\\relax" in payload
    assert "\\immediate\\openout15=report.efcbody.tex\\relax" in payload
    head, _, tail = payload.partition("\\input /usr/share/article.cls")
    assert tail.strip() == "\\AtBeginDocument{\\input{report.efcbody.tex}\\end{document}}"
