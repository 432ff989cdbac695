"""Amounts ten cents off (`perturbed-numbers-cents`): a verifier whose tolerance on money
is wider than the cent the task asks for.

Without Docker: the rewrite touches only two-decimal amounts, and the row is a probe
(a rejection) where the instruction asks for cents or decimal places, a tolerance (a
warning) elsewhere. On real Docker: a verifier allowing ±1.00 on a ledger due to the cent
is rejected by that row; the exact one passes.
"""

from __future__ import annotations

import pytest

from envfactory.core.models import EnvironmentSpec, TaskVerdict
from verifiers.gate.plan import oracle_probes
from verifiers.probes import PROBES, by_name
from verifiers.probes.numbers import CentsOff, asks_for_cents

from .gate_tasks import app_spec, context_tar, gate_shell, workspace_of

LEDGER = "account,balance\ncash,645.00\nbank,1200.35\nfees,-3.50\n"
INSTRUCTION = (
    "Write /app/out/balances.csv: the closing balance of each account in "
    "/app/data/entries.csv, to the cent, with the header account,balance."
)


def test_only_two_decimal_amounts_move_by_ten_cents() -> None:
    assert [CentsOff.rewrite(n) for n in ("645.00", "-3.50", "99.95", "7", "1.234", "1.5e3")] == [
        "645.10",
        "-3.40",
        "100.05",
        "7",
        "1.234",
        "1.5e3",
    ]


@pytest.mark.parametrize(
    ("instruction", "row"),
    [
        (INSTRUCTION, "probe"),
        (INSTRUCTION.replace("to the cent, ", "rounded to two decimals, "), "probe"),
        (INSTRUCTION.replace(", to the cent,", ","), "tolerance"),
    ],
)
def test_the_row_is_a_rejection_only_where_the_instruction_asks_for_cents(
    instruction: str, row: str
) -> None:
    spec = _spec(instruction)
    pristine = workspace_of({"data/entries.csv": b"account,amount\ncash,645.00\n"}, "/app")
    oracle = workspace_of(
        {"data/entries.csv": b"account,amount\ncash,645.00\n", "out/balances.csv": LEDGER.encode()},
        "/app",
    )
    made = oracle_probes(oracle, pristine, spec, PROBES)
    on_oracle = [p.name for p in made.on_oracle if isinstance(p, CentsOff)]
    tolerated = [p.name for p in made.tolerances if isinstance(p, CentsOff)]
    want = ["perturbed-numbers-cents"]
    assert (on_oracle, tolerated) == ((want, []) if row == "probe" else ([], want))
    assert asks_for_cents(instruction) == (row == "probe")


def _spec(instruction: str = INSTRUCTION) -> EnvironmentSpec:
    write = f"mkdir -p out && printf '%s' '{LEDGER}' > out/balances.csv"
    return app_spec("cents", instruction, ("balances", write))


#: compares each balance within 1.00: loose for a ledger due to the cent
LOOSE = b"""#!/bin/sh
exec python3 -c '
import csv, sys
want = {"cash": 645.00, "bank": 1200.35, "fees": -3.50}
got = {r["account"]: float(r["balance"]) for r in csv.DictReader(open("/app/out/balances.csv"))}
ok = got.keys() == want.keys() and all(abs(got[k] - want[k]) <= 1.00 for k in want)
sys.exit(0 if ok else 1)
'
"""
EXACT = LOOSE.replace(b"<= 1.00", b"< 0.005")


@pytest.mark.docker
@pytest.mark.slow
def test_a_tolerance_of_a_whole_unit_on_amounts_due_to_the_cent_is_rejected(  # type: ignore[no-untyped-def]
    docker_engine, base_image
) -> None:
    files = {"Dockerfile": "FROM python:3.12-slim\nWORKDIR /app\nRUN mkdir -p /app/data\n"}
    image = docker_engine.build(context_tar(files)).image
    probes = (by_name("reward-file"),)
    loose = gate_shell(docker_engine, image, _spec(), LOOSE, probes=probes, omissions=False)
    row = {c.name: c for c in loose.checks}["probe:perturbed-numbers-cents@oracle"]
    assert row.observed == (1,)
    assert loose.outcome == TaskVerdict.REJECTED
    exact = gate_shell(docker_engine, image, _spec(), EXACT, probes=probes, omissions=False)
    assert exact.outcome == TaskVerdict.PASSED, exact.reasons
