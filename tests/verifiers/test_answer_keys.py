"""Answer keys within reach (`verifiers/probes/answer_keys.py`): the reference's answers
found in what a solver can read of the environment become a probe row on the no-op.

On real Docker, one task two ways: its image holds a helper script with the expected
totals baked in (rejected: the row earns 1 and names the helper); the same image with an
instruction that points to the helper (no row: it is the intended source; accepted).
Tasks whose image holds no answer are the precision set and the examples (no row there).
Then the search's pieces without Docker.
"""

from __future__ import annotations

import gzip

import pytest

from envfactory.core.models import EnvironmentSpec, TaskVerdict
from verifiers.probes import by_name
from verifiers.probes.answer_keys import answers, parse_found, within_reach

from .gate_tasks import app_spec, context_tar, gate_shell, workspace_of

ORDERS = "customer,amount\nalice,10\nalice,20\nbob,5\nbob,7\ncarol,3\ncarol,4\n"
TOTALS = "alice,30\nbob,12\ncarol,7\n"
HELPER = f"#!/bin/sh\n# the expected totals, for checking by hand\ncat <<'EOF'\n{TOTALS}EOF\n"
DOCKERFILE = "FROM python:3.12-slim\nWORKDIR /app\nCOPY orders.csv /app/data/orders.csv\n"
LEAKY = DOCKERFILE + "COPY helper.sh /usr/local/bin/orders-helper\n"
INSTRUCTION = (
    "Sum the amounts per customer in /app/data/orders.csv and write /app/out/totals.csv: "
    "one `customer,total` line per customer, sorted by customer, no header."
)
SOLVE = (
    "mkdir -p out && awk -F, 'NR>1{t[$1]+=$2} END{for(k in t) print k\",\"t[k]}' "
    "data/orders.csv | sort > out/totals.csv"
)
#: checks the output exactly, and nothing else: sound unless the answer is in reach
VERIFIER = (
    b'#!/bin/sh\n[ "$(cat /app/out/totals.csv)" = "$(printf \'alice,30\\nbob,12\\ncarol,7\')" ]\n'
)


def _spec(instruction: str = INSTRUCTION) -> EnvironmentSpec:
    return app_spec("answer-keys", instruction, ("sum", SOLVE))


@pytest.fixture(scope="module")
def leaky_image(docker_engine, base_image) -> str:  # type: ignore[no-untyped-def]
    files = {"orders.csv": ORDERS, "helper.sh": HELPER, "Dockerfile": LEAKY}
    image: str = docker_engine.build(context_tar(files)).image
    return image


def _gate(engine, image: str, spec: EnvironmentSpec):  # type: ignore[no-untyped-def]
    return gate_shell(engine, image, spec, VERIFIER, probes=(by_name("reward-file"),))


@pytest.mark.docker
@pytest.mark.slow
def test_an_answer_baked_into_a_helper_script_is_a_rejection_naming_it(  # type: ignore[no-untyped-def]
    docker_engine, leaky_image
) -> None:
    report = _gate(docker_engine, leaky_image, _spec())
    rows = {c.name: c for c in report.checks}
    row = rows["probe:answer-in-reach@no-op"]
    assert row.observed == (1,), row
    assert any("/usr/local/bin/orders-helper" in e for e in row.evidence), row.evidence
    assert report.outcome == TaskVerdict.REJECTED
    assert report.reasons == ("probe probe:answer-in-reach@no-op: expected 0, got [1]",)


@pytest.mark.docker
@pytest.mark.slow
def test_no_row_where_the_instruction_points_to_the_file_holding_the_answer(  # type: ignore[no-untyped-def]
    docker_engine, leaky_image
) -> None:
    spec = _spec(INSTRUCTION + " /usr/local/bin/orders-helper prints the expected lines.")
    report = _gate(docker_engine, leaky_image, spec)
    assert not [c for c in report.checks if "answer-in-reach" in c.name], report.checks
    assert report.outcome == TaskVerdict.PASSED, report.reasons


def test_only_outputs_with_enough_distinctive_lines_are_searched_for() -> None:
    spec = _spec()
    pristine = workspace_of({"data/orders.csv": ORDERS.encode()}, "/app")
    oracle = workspace_of(
        {
            "data/orders.csv": ORDERS.encode(),
            "out/totals.csv": TOTALS.encode(),
            "out/count.txt": b"42\n",  # too short to recognise anywhere
            "out/copy.csv": ORDERS.encode(),  # nothing in it the starting files lack
            "bin/sum.py": b"print('alice,30 bob,12 carol,7 and more')\n",  # a program
        },
        "/app",
    )
    (found,) = answers(oracle, pristine, spec)
    assert found.path == "/app/out/totals.csv"
    assert found.lines == ("alice,30", "bob,12", "carol,7")


def test_a_file_holding_every_distinctive_line_is_a_source_unless_named() -> None:
    spec = _spec(INSTRUCTION + " A backup lies in /var/backups/.")
    pristine = workspace_of({"data/orders.csv": ORDERS.encode()}, "/app")
    oracle = workspace_of({"out/totals.csv": TOTALS.encode()}, "/app")
    found = answers(oracle, pristine, spec)
    files = {
        "/opt/partial.txt": b"alice,30\nbob,12\n",  # not every line
        "/var/backups/totals.csv": TOTALS.encode(),  # under a named directory
        "/usr/local/share/key.txt": b"x alice,30 y\nbob,12\ncarol,7 z\n",
    }
    assert within_reach(found, files, spec) == {"/app/out/totals.csv": "/usr/local/share/key.txt"}
    assert within_reach(found, {k: files[k] for k in list(files)[:2]}, spec) == {}


def test_the_search_output_is_read_back_gzip_decompressed_and_only_when_complete() -> None:
    import base64

    packed = base64.b64encode(gzip.compress(TOTALS.encode())).decode()
    plain = base64.b64encode(b"abc").decode()
    text = f"FOUND /opt/a.gz\n{packed}\nFOUND /opt/b\n{plain}\nEND\n"
    assert parse_found(text) == {"/opt/a.gz": TOTALS.encode(), "/opt/b": b"abc"}
    assert parse_found(text.replace("END\n", "")) == {}
