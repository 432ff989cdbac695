"""The number-rewriting and candidate-flood probes, built from workspace tars in memory."""

from __future__ import annotations

import shutil
import subprocess
from decimal import Decimal

import pytest

from verifiers.archives import tar_of
from verifiers.probes.inputs import changed_outputs
from verifiers.probes.numbers import (
    FLOOD_PROGRAMS,
    MAX_EMBEDDED,
    MAX_FLOOD_EMBEDDED,
    CandidateFlood,
    DoubledNumbers,
    NanNumbers,
    OneNumbers,
    PlaceholderLines,
    ScaledNumbers,
    ZeroedNumbers,
    _packed,
    flood_lines,
    mentions,
    output_flood,
    perturbed_numbers,
    rewrite_numbers,
    scaled,
    within_budget,
    zeroed,
)

from .sumtask import SPEC

INSTRUCTION = (
    "Summarise /app/data/sales.csv into /app/out/summary.json and /app/out/report.md, "
    "set the rate in /app/config.yaml, and fix /app/calc.py."
)


def _ws(files: dict[str, bytes | tuple[bytes, int]]) -> list[tuple[str, bytes | None]]:
    return [
        (
            "/app",
            tar_of(
                {f"app/{p}": (d if isinstance(d, tuple) else (d, 0o644)) for p, d in files.items()}
            ),
        )
    ]


PRISTINE = _ws(
    {
        "data/sales.csv": b"region,amount\neu,120.50\nna,99.99\n",
        "config.yaml": b"port: 8080\nrate: 1\n",
        "calc.py": b"print(1)\n",
    }
)
ORACLE = _ws(
    {
        "data/sales.csv": b"region,amount\neu,120.50\nna,99.99\n",  # unchanged input
        "config.yaml": b"port: 8080\nrate: 3\n",  # one line changed
        "calc.py": b"print(2)\n",
        "out/summary.json": b'{"regions": {"eu": 120.50, "na": 99.99}, "total": 220.49, "rows": 2}\n',
        "out/report.md": b"# Sales (generated 2026-11-30 12:30)\n\nTotal: 220.49 over 2 rows, v1.2.3.\n",
        "out/debug.log": b"took 12 ms\n",  # not named: left alone
        "out/notes.txt": b"total 5\n",  # not named either
    }
)


@pytest.mark.parametrize(
    ("number", "zero", "times_1_5"),
    [
        ("645.00", "0.00", "967.50"),
        ("8", "0", "12"),
        ("7", "0", "11"),  # 10.5: rounds half away from zero, stays an integer
        ("-0.01", "0.00", "-0.02"),
        ("-3", "0", "-5"),
        ("007", "000", "011"),  # zero-padding kept
        ("1.5e3", "0.0e3", "2.3e3"),  # exponent kept
        ("0.001", "0.000", "0.002"),
        ("0", "0", "0"),
    ],
)
def test_a_rewritten_number_keeps_its_format(number: str, zero: str, times_1_5: str) -> None:
    assert zeroed(number) == zero
    assert scaled(number) == times_1_5


def test_scaling_changes_every_non_zero_number_whatever_its_precision() -> None:
    for d in range(4):
        for i in [*range(-200, 0), *range(1, 200)]:
            n = f"{Decimal(i).scaleb(-d):.{d}f}"
            assert scaled(n) != n and len(scaled(n).partition(".")[2]) == d, n


def test_numbers_inside_identifiers_dates_versions_and_kept_lines_stay() -> None:
    text = "user1 x86_64 v1.2.3 2024-01-31 12:30 pages 3-5 sha256\ntotal 42, mean -3.5.\nkept 7\n"
    out = rewrite_numbers(text, zeroed, frozenset({"kept 7"}))
    assert out == (
        "user1 x86_64 v1.2.3 2024-01-31 12:30 pages 3-5 sha256\ntotal 0, mean 0.0.\nkept 7\n"
    )


def test_perturbed_numbers_rewrite_only_named_data_the_oracle_wrote() -> None:
    zero, one, scale, doubled, nan, lines, cents = perturbed_numbers(
        ORACLE, PRISTINE, INSTRUCTION, "/app"
    )
    # only the two-decimal amounts move, by ten cents; the count of rows stays
    assert cents.files["/app/out/summary.json"] == (
        b'{"regions": {"eu": 120.60, "na": 100.09}, "total": 220.59, "rows": 2}\n'
    )
    assert isinstance(doubled, DoubledNumbers) and set(doubled.files) == set(zero.files)
    assert isinstance(zero, ZeroedNumbers) and isinstance(scale, ScaledNumbers)
    assert isinstance(one, OneNumbers) and isinstance(lines, PlaceholderLines)
    assert isinstance(nan, NanNumbers) and set(nan.files) == set(zero.files)
    assert nan.files["/app/out/summary.json"] == (
        b'{"regions": {"eu": NaN, "na": NaN}, "total": NaN, "rows": NaN}\n'
    )
    assert one.files["/app/out/summary.json"] == (
        b'{"regions": {"eu": 1.00, "na": 1.00}, "total": 1.00, "rows": 1}\n'
    )
    # the same files, each written line a placeholder (a line the file started with kept)
    assert set(lines.files) == set(zero.files)
    assert lines.files["/app/config.yaml"] == b"port: 8080\nplaceholder-2\n"
    # the program, the unchanged input and the files the instruction never names are left
    assert set(zero.files) == {"/app/config.yaml", "/app/out/report.md", "/app/out/summary.json"}
    assert zero.files["/app/out/summary.json"] == (
        b'{"regions": {"eu": 0.00, "na": 0.00}, "total": 0.00, "rows": 0}\n'
    )
    # in a file the task started with, only the lines the oracle changed
    assert zero.files["/app/config.yaml"] == b"port: 8080\nrate: 0\n"
    assert scale.files["/app/config.yaml"] == b"port: 8080\nrate: 5\n"
    assert scale.files["/app/out/report.md"] == (
        b"# Sales (generated 2026-11-30 12:30)\n\nTotal: 330.74 over 3 rows, v1.2.3.\n"
    )


def test_sentences_keep_the_numbers_the_task_gave_and_lose_the_ones_the_solver_computed() -> None:
    # a root-cause note (prose citing releases the task's files name) beside a figure line,
    # computed figures told in sentences, and a JSON record: a sound verifier greps the note
    # for the release, so rewriting "3.0" would be a false finding; a figure the solver
    # worked out is an answer wherever it stands, and a loose check of it must be caught
    given = _ws(
        {
            "ci/build.log": b"Successfully installed Flask-2.2.5 Werkzeug-3.0.4\n",
            "requirements.txt": b"Flask==2.2.5\n",
            "data/ledger.csv": b"month,amount\nmarch,600.25\nmarch,634.25\n",
        }
    )
    note = (
        b"# Why the 2026-11-27 build broke\n\n"
        b"Werkzeug 3.0 removed url_quote, which Flask 2.2 still imports at start-up time.\n"
        b"release, Werkzeug 3.0.4. Werkzeug 3.0 removed `werkzeug.urls.url_quote`, which Flask 2.2\n"
        b"Total failing builds: 4\n"
        b"Die Version 2 von Paket X hat 3 Funktionen und 12 Klassen\n"  # numbers dense: data
        b"The total revenue for March came to 1234.50 across every region we sell in.\n"
        b"Apres correction, le chiffre d'affaires de mars atteint 1234.50 euros au total.\n"
        b"In the ledger the 600.25 entry was entered twice, so we removed one of them.\n"
        b"We removed 2 duplicate payments in March, which the ledger rows also show.\n"
    )
    record = b'{"why": "Werkzeug 3.0 removed url_quote which Flask 2.2 imports", "builds": 4}\n'
    oracle = _ws({"ROOT_CAUSE.md": note, "out/why.json": record})
    instruction = "Explain in /app/ROOT_CAUSE.md and /app/out/why.json."
    zero = perturbed_numbers(oracle, given, instruction, "/app")[0]
    assert zero.files["/app/ROOT_CAUSE.md"] == (
        b"# Why the 2026-11-27 build broke\n\n"
        b"Werkzeug 3.0 removed url_quote, which Flask 2.2 still imports at start-up time.\n"
        b"release, Werkzeug 3.0.4. Werkzeug 3.0 removed `werkzeug.urls.url_quote`, which Flask 2.2\n"
        b"Total failing builds: 0\n"
        b"Die Version 0 von Paket X hat 0 Funktionen und 0 Klassen\n"
        b"The total revenue for March came to 0.00 across every region we sell in.\n"
        b"Apres correction, le chiffre d'affaires de mars atteint 0.00 euros au total.\n"
        b"In the ledger the 600.25 entry was entered twice, so we removed one of them.\n"
        b"We removed 0 duplicate payments in March, which the ledger rows also show.\n"
    )
    assert zero.files["/app/out/why.json"] == (
        b'{"why": "Werkzeug 0.0 removed url_quote which Flask 0.0 imports", "builds": 0}\n'
    )


def test_mentions_are_the_numbers_of_the_instruction_and_the_given_files() -> None:
    given = _ws(
        {"wheels/werkzeug-3.0.4-py3-none-any.whl": b"PK\0 1234.50", "notes.txt": b"port 8080\n"}
    )
    found = mentions(given, "Flask 2.2 must keep working; see /app/notes.txt.")
    assert {"3.0", "3.0.4", "8080", "2.2"} <= found  # paths, text and instruction
    assert "1234.50" not in found and "4" not in found  # not binary data, not a version's tail
    assert "3" not in found and "2" not in found  # single digits: in any input


def test_a_file_the_rewrite_leaves_as_it_was_is_skipped() -> None:
    zeros = _ws({"out/summary.json": b'{"total": 0, "rows": 0}\n'})
    built = perturbed_numbers(zeros, _ws({}), "Write /app/out/summary.json.", "/app")
    # zeros stay zeros, and so does a scaled zero: only ones, NaNs and placeholders are built
    assert [type(p) for p in built] == [OneNumbers, NanNumbers, PlaceholderLines]


def test_the_embedded_files_stay_within_the_argv_budget() -> None:
    # incompressible-ish figures, far more than one script can carry
    big = {
        f"/app/out/part{k}.csv": "".join(
            f"{(i * 7919 + k) % 100003}\n" for i in range(20_000)
        ).encode()
        for k in range(8)
    }
    kept = within_budget(big)
    assert kept and len(kept) < len(big)
    assert len(ZeroedNumbers(kept).edits(spec=None)) <= MAX_EMBEDDED  # type: ignore[arg-type]
    # the whole script, with the commit-through wrapper, is one argv string (128 KiB)
    assert len(ZeroedNumbers(kept).script(SPEC).encode()) < 128 * 1024


def test_the_rewritten_files_round_trip_through_the_shell(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "out" / "a.csv"
    path.parent.mkdir()
    path.write_bytes(b"x,0\ny,1.50\n")
    new = rewrite_numbers(path.read_text(), scaled, frozenset()).encode()
    script = ScaledNumbers({str(path): new}).script(SPEC)
    res = subprocess.run(["sh", "-c", script], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert path.read_bytes() == b"x,0\ny,2.25\n"


def test_the_flood_holds_integers_negatives_and_up_to_three_decimals_in_a_few_mb() -> None:
    lines = flood_lines()
    seen = set(lines)
    assert {"42", "-17", "100000", "3.5", "-0.1", "35.33", "-999.99", "3.875", "-0.001"} <= seen
    assert 1_000_000 < sum(len(x) + 1 for x in lines) < 5_000_000


@pytest.mark.parametrize(
    ("lang", "argv"),
    [
        ("python", ["python3", "-c"]),
        ("shell", ["sh", "-c"]),
        ("perl", ["perl", "-e"]),
        ("js", ["node", "-e"]),
    ],
)
def test_each_flood_program_prints_the_flood(lang: str, argv: list[str]) -> None:
    if shutil.which(argv[0]) is None:
        pytest.skip(f"{argv[0]} is not installed here")
    res = subprocess.run([*argv, FLOOD_PROGRAMS[lang]], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert res.stdout == "".join(f"{x}\n" for x in flood_lines())


def test_the_flood_replaces_every_program_the_oracle_wrote_keeping_its_language_and_mode() -> None:
    oracle = _ws(
        {
            "calc.py": b"#!/usr/bin/env python3\nprint(2)\n",
            "bin/run": (b"#!/bin/bash\necho hi\n", 0o755),  # no extension: the shebang says
            "bin/tool": (b"\x7fELF...", 0o755),  # executable: a shell flood printer
            "lib/util.js": b"module.exports = 1;\n",
            "out/answer.txt": b"42\n",  # named: flooded as content
            "out/scratch.txt": b"1\n",  # not named: left alone
        }
    )
    instruction = "Fix /app/calc.py and write the answer to /app/out/answer.txt."
    probe = CandidateFlood.for_oracle(oracle, _ws({"calc.py": b"print(1)\n"}), instruction, "/app")
    assert set(probe.programs) == {
        "/app/calc.py",
        "/app/bin/run",
        "/app/bin/tool",
        "/app/lib/util.js",
    }
    calc, mode = probe.programs["/app/calc.py"]
    assert calc.startswith("#!/usr/bin/env python3\n") and "sys.stdout.write" in calc
    assert mode == 0o644
    assert probe.programs["/app/bin/run"][0].startswith("#!/bin/bash\nawk")
    assert probe.programs["/app/bin/tool"] == (f"#!/bin/sh\n{FLOOD_PROGRAMS['shell']}", 0o755)
    assert "console.log" not in probe.programs["/app/lib/util.js"][0]
    assert probe.outputs == ("/app/out/answer.txt",)


def test_the_flood_script_writes_programs_and_outputs(tmp_path) -> None:  # type: ignore[no-untyped-def]
    prog, out = str(tmp_path / "calc.sh"), str(tmp_path / "out" / "answer.txt")
    probe = CandidateFlood({prog: (f"#!/bin/sh\n{FLOOD_PROGRAMS['shell']}", 0o750)}, [out])
    res = subprocess.run(["sh", "-c", probe.script(spec=None)], capture_output=True, text=True)  # type: ignore[arg-type]
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "calc.sh").stat().st_mode & 0o777 == 0o750
    printed = subprocess.run([prog], capture_output=True, text=True).stdout
    assert printed == "".join(f"{x}\n" for x in flood_lines())
    assert (tmp_path / "out" / "answer.txt").read_bytes() == output_flood()


def test_an_output_flood_holds_every_figure_the_oracle_wrote_as_written() -> None:
    # large integers, long decimals, thousands separators, exponents: what the program
    # flood lacks; the smaller range of candidates around them; programs' figures too
    oracle = _ws(
        {
            "out/report.txt": b"total 1,234.56 over 123456 rows; mean 0.333333; 6.02e23\n",
            "out/answer.txt": b"-42\n",
            "calc.py": b"print(7 * 1001)\n",
        }
    )
    instruction = "Write /app/out/report.txt and /app/out/answer.txt."
    probe = CandidateFlood.for_oracle(oracle, PRISTINE, instruction, "/app")
    assert set(probe.outputs) == {"/app/out/report.txt", "/app/out/answer.txt"}
    lines = probe.content.decode().splitlines()
    assert len(lines) == len(set(lines))
    assert {"1,234.56", "123456", "0.333333", "6.02e23", "-42", "1001"} <= set(lines)
    assert {"-1000", "1000", "99.9", "-9.99", "0.001", "0.5", "3.0"} <= set(lines)
    values = [float(x.replace(",", "")) for x in lines]
    assert values == sorted(values)
    assert 30_000 < len(probe.content) < 100_000  # the program flood is ~4 MB


def test_an_output_flood_drops_figures_past_its_budget_and_keeps_the_named_outputs_first() -> None:
    many = " ".join(str(1_000_000 + 7919 * i) for i in range(100_000)).encode()  # < 1 MiB
    oracle = _ws({"out/answer.txt": b"31337\n", "out/zz-log.txt": many})
    instruction = "Write the answer to /app/out/answer.txt."
    probe = CandidateFlood.for_oracle(oracle, PRISTINE, instruction, "/app")
    lines = set(probe.content.decode().splitlines())
    assert "31337" in lines and "1000000" in lines  # the named output's first
    assert str(1_000_000 + 7919 * 99_999) not in lines  # the last cut
    assert len(_packed(probe.content)) <= MAX_FLOOD_EMBEDDED
    assert len(probe.script(spec=None)) < 64_000  # type: ignore[arg-type]


def test_nothing_written_means_no_flood() -> None:
    assert not CandidateFlood.for_oracle(PRISTINE, PRISTINE, INSTRUCTION, "/app").applies


def test_the_outputs_differ_by_what_the_solution_wrote_never_by_its_bytecode() -> None:
    # the reference compiled its program: the .pyc records the source's mtime, so a rerun
    # on altered inputs writes other bytecode bytes although the answer is the same
    oracle = _ws(
        {"out/summary.json": b'{"total": 3}\n', "__pycache__/calc.cpython-311.pyc": b"\x00one"}
    )
    same_answer = _ws(
        {"out/summary.json": b'{"total": 3}\n', "__pycache__/calc.cpython-311.pyc": b"\x00two"}
    )
    other_answer = _ws(
        {"out/summary.json": b'{"total": 4}\n', "__pycache__/calc.cpython-311.pyc": b"\x00one"}
    )
    assert changed_outputs(same_answer, oracle, PRISTINE) == []
    assert changed_outputs(other_answer, oracle, PRISTINE) == ["/app/out/summary.json"]


def test_a_tables_header_is_kept_by_every_rewrite() -> None:
    table = _ws({"out/stock.csv": b"sku,qty\nA1,5\nB2,7\n"})
    by = {p.name: p for p in perturbed_numbers(table, _ws({}), "Write /app/out/stock.csv.", "/app")}
    # the header and the row count stay: a check of those alone cannot reject it
    assert by["placeholder-lines"].files["/app/out/stock.csv"] == (
        b"sku,qty\nplaceholder-2\nplaceholder-3\n"
    )
    assert by["perturbed-numbers-zero"].files["/app/out/stock.csv"] == b"sku,qty\nA1,0\nB2,0\n"
