"""The row, record and applicability rules on literal inputs (no Docker): an SQLite
database's diff and its rewrites through SQLite, the instruction's words that make order
or uniqueness required, the records rewritten, and when a traced run shows a probe's
files were never read."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from envfactory.core.models import BuildContext, EnvironmentSpec, Step
from verifiers.probes.applicability import never_read, not_applicable, read_log
from verifiers.probes.database import database_changes
from verifiers.probes.records import order_required, record_probes, uniqueness_required
from verifiers.probes.rows import row_probes
from verifiers.probes.traced import Access
from verifiers.probes.undone import undone_files
from verifiers.probes.workspace import TruncatedOutputs
from verifiers.surface import parse_trace

from .gate_tasks import workspace_of

SCHEMA = (
    "CREATE TABLE orders (id INTEGER PRIMARY KEY, status TEXT NOT NULL "
    "CHECK (status IN ('paid', 'shipped')), shipped_at TEXT, cents INTEGER);"
    "CREATE TABLE events (id INTEGER PRIMARY KEY, order_id INTEGER REFERENCES orders(id), "
    "status TEXT);"
    "CREATE TRIGGER audit AFTER UPDATE OF status ON orders BEGIN "
    "INSERT INTO events (order_id, status) VALUES (NEW.id, NEW.status); END;"
)
ORDERS = [
    (1, "paid", None, 100),
    (2, "paid", None, 250),
    (3, "paid", None, 75),
    (4, "paid", None, 10),
]


def _db(tmp: Path, name: str, ship: tuple[int, ...]) -> bytes:
    path = tmp / name
    db = sqlite3.connect(path)
    db.executescript(SCHEMA)
    db.executemany("INSERT INTO orders VALUES (?, ?, ?, ?)", ORDERS)
    db.commit()
    with db:
        for i in ship:
            db.execute(
                "UPDATE orders SET status = 'shipped', shipped_at = 'today', cents = cents + 1 WHERE id = ?",
                (i,),
            )
    db.close()
    return path.read_bytes()


def _workspace(files: dict[str, bytes]) -> list[tuple[str, bytes | None]]:
    return workspace_of(files, "/app")


def _rows(data: bytes, tmp: Path, table: str) -> list[tuple[object, ...]]:
    path = tmp / "read.db"
    path.write_bytes(data)
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    rows = db.execute(f"SELECT * FROM {table} ORDER BY id").fetchall()
    db.close()
    return rows


def _states(tmp_path: Path):  # type: ignore[no-untyped-def]
    pristine = _workspace({"shop.db": _db(tmp_path, "p.db", ())})
    oracle = _workspace({"shop.db": _db(tmp_path, "o.db", (1, 2))})
    return oracle, pristine


def test_the_diff_names_the_rows_the_reference_changed_and_the_trigger_inserted(
    tmp_path: Path,
) -> None:
    oracle, pristine = _states(tmp_path)
    (db,) = database_changes(oracle, pristine)
    tables = {t.name: t for t in db.tables}
    assert tables["orders"].changed == (1, 2) and tables["orders"].inserted == ()
    assert tables["events"].inserted == (1, 2)
    assert TruncatedOutputs.for_oracle(oracle, pristine).paths == ()  # never its bytes


def test_each_row_probe_is_a_valid_database_changing_only_what_it_says(tmp_path: Path) -> None:
    oracle, pristine = _states(tmp_path)
    probes = {p.name: p for p in row_probes(database_changes(oracle, pristine))}
    orders = {n: _rows(p.files["/app/shop.db"], tmp_path, "orders") for n, p in probes.items()}  # type: ignore[attr-defined]
    shipped = (1, "shipped", "today", 101)
    assert orders["truncated-rows"] == [shipped, *ORDERS[1:]]
    assert orders["perturbed-cells-zero"][:2] == [
        (1, "shipped", "today", 0),
        (2, "shipped", "today", 0),
    ]
    assert orders["perturbed-cells-scaled"][1] == (2, "shipped", "today", 377)
    # the status's CHECK refuses a placeholder: only the free text cell takes it
    assert orders["placeholder-cells"][0] == (1, "shipped", "placeholder", 101)
    assert orders["columns-reverted"][0] == (1, "shipped", "today", 100)
    # the amounts the reference set swap rows: count, sum and max as the oracle's
    assert orders["permuted-cells"] == [
        (1, "shipped", "today", 251),
        (2, "shipped", "today", 101),
        *ORDERS[2:],
    ]
    assert [r[1] for r in orders["superset-rows"]] == ["shipped"] * 4
    other = orders["other-records-changed"]
    assert [r[1] for r in other] == ["paid", "paid", "shipped", "shipped"]
    # the trigger fired for the other rows, as it would for a solver's UPDATE
    events = _rows(probes["other-records-changed"].files["/app/shop.db"], tmp_path, "events")  # type: ignore[attr-defined]
    assert [e[1] for e in events] == [3, 4]
    # triggers suspended for the in-place probes: events are the reference's
    events = _rows(probes["truncated-rows"].files["/app/shop.db"], tmp_path, "events")  # type: ignore[attr-defined]
    assert [e[1] for e in events] == [1]


def test_order_and_uniqueness_are_required_only_by_the_instructions_words() -> None:
    assert order_required("one name per line, sorted, without duplicates")
    assert order_required("list them in the order they appear")
    assert order_required("rows ordered by date, newest first")
    assert not order_required("write the names of the users, one per line")
    assert uniqueness_required("without duplicates")
    assert uniqueness_required("each address exactly once")
    assert uniqueness_required("the distinct hosts")
    assert not uniqueness_required("write the names of the users, one per line")


def _spec(instruction: str) -> EnvironmentSpec:
    return EnvironmentSpec(
        id="env-x",
        name="x",
        instruction=instruction,
        build=BuildContext(files=()),
        workdir="/app",
        workspace_paths=("/app",),
        reference_solution=(Step(title="a", script="true"),),
    )


def test_records_are_reversed_or_doubled_below_a_header_and_in_json_arrays() -> None:
    pristine = _workspace({"in.txt": b"x\n"})
    oracle = _workspace(
        {
            "in.txt": b"x\n",
            "out/t.csv": b"name,n\na,1\nb,2\n",
            "out/l.json": b'{"total": 2, "items": ["a", "b"]}\n',
            "out/report.md": b"The quarter closed with revenue above the plan in every region we track.\n",
        }
    )
    required, tolerated = record_probes(oracle, pristine, _spec("Write the outputs, sorted."), ())
    assert [p.name for p in required] == ["records-reordered"]
    assert [p.name for p in tolerated] == ["record-duplicated"]
    assert required[0].files == {
        "/app/out/t.csv": b"name,n\nb,2\na,1\n",
        "/app/out/l.json": b'{"total": 2, "items": ["b", "a"]}\n',
    }
    assert tolerated[0].files["/app/out/t.csv"] == b"name,n\na,1\na,1\nb,2\n"


def test_an_order_word_about_one_output_does_not_require_the_order_of_another() -> None:
    pristine = _workspace({"in.txt": b"x\n"})
    oracle = _workspace(
        {
            "in.txt": b"x\n",
            "out/totals.csv": b"region,total\nnorth,17\nsouth,5\n",
            "out/regions.json": b'{"regions": ["south", "north"]}\n',
        }
    )
    instruction = (
        "Write /app/out/regions.json listing the regions. Write out/totals.csv with one "
        "row per region in alphabetical order."
    )
    required, tolerated = record_probes(oracle, pristine, _spec(instruction), ())
    assert [(p.name, sorted(p.files)) for p in required] == [
        ("records-reordered", ["/app/out/totals.csv"])
    ]
    assert [p.name for p in tolerated] == ["record-duplicated"]
    # a sentence naming no file speaks of every output; so does an instruction naming none
    general = "Write /app/out/regions.json and out/totals.csv. Keep every list sorted."
    (reordered,), _ = record_probes(oracle, pristine, _spec(general), ())
    assert sorted(reordered.files) == ["/app/out/regions.json", "/app/out/totals.csv"]


def _log(*accesses: Access):  # type: ignore[no-untyped-def]
    return read_log(accesses)


PY = "/usr/local/bin/python3"


def test_a_probe_whose_files_the_verifier_never_read_is_not_applicable() -> None:
    touched = ("/app/out/a.txt",)
    assert not_applicable(touched, _log(Access("/app/in.txt", "open", True, exe=PY, mode="read")))
    reset = _log(
        Access("/app/out/a.txt", "stat", True, exe="/usr/bin/git"),
        Access("/app/out/a.txt", "write", True, exe="/usr/bin/git", mode="reset"),
        Access("/app/out/a.txt", "open", True, exe=PY, mode="read"),
    )
    assert "overwrote" in (not_applicable(touched, reset) or "")


def test_in_doubt_the_row_stays() -> None:
    touched = ("/app/out/a.txt",)
    assert not_applicable(touched, None) is None  # no trace
    assert not_applicable(None, _log()) is None  # the probe's files are unknown
    read = _log(Access("/app/out/a.txt", "open", True, exe=PY, mode="read"))
    assert not_applicable(touched, read) is None
    sized = _log(Access("/app/out/a.txt", "stat", True, exe="/usr/bin/stat"))
    assert not_applicable(touched, sized) is None  # a size check sees a cut file
    listed = _log(Access("/app/out", "list", True, exe="/bin/cp"))
    assert not_applicable(touched, listed) is None
    objects = _log(
        Access("/app/.git/objects/ab/cdef", "open", True, exe="/usr/bin/git", mode="read")
    )
    assert not_applicable(touched, objects) is None
    proc = _log(Access("/proc/self/cwd/out/a.txt", "open", True, exe=PY, mode="read"))
    assert not_applicable(touched, proc) is None
    rw = _log(Access("/app/out/a.txt", "write", True, exe=PY, mode="read"))  # O_RDWR: sqlite
    assert not_applicable(touched, rw) is None


def test_the_trace_tells_an_open_that_reads_from_one_that_starts_the_file_anew() -> None:
    trace = (
        '9 openat(AT_FDCWD</app>, "a.txt", O_RDONLY|O_CLOEXEC) = 3</app/a.txt>\n'
        '9 openat(AT_FDCWD</app>, "b.txt", O_WRONLY|O_CREAT|O_TRUNC|O_CLOEXEC, 0666) = 3</app/b.txt>\n'
        '9 openat(AT_FDCWD</app>, "c.db", O_RDWR|O_CREAT|O_CLOEXEC, 0644) = 3</app/c.db>\n'
        '9 openat(AT_FDCWD</app>, "d.txt", O_WRONLY|O_CREAT|O_EXCL, 0666) = 3</app/d.txt>\n'
        '9 openat(AT_FDCWD</app>, "e.log", O_WRONLY|O_APPEND) = 3</app/e.log>\n'
    )
    modes = {a.path: a.mode for a in parse_trace(trace, root_cwd="/app")}
    assert modes == {
        "/app/a.txt": "read",
        "/app/b.txt": "reset",
        "/app/c.db": "read",
        "/app/d.txt": "reset",
        "/app/e.log": "append",
    }


def test_only_a_program_the_instruction_names_is_a_finding_when_never_read() -> None:
    """An undone file the verifier never read is a finding only where it is a program the
    instruction names itself; a data file, or a program inside a named directory, stays
    not applicable (the trace shows the row cannot judge the verifier)."""
    pristine = workspace_of({}, root="/app")
    oracle = workspace_of(
        {
            "report.sh": b"#!/bin/sh\necho done\n",
            "out/total.txt": b"42\n",
            "lib/helper.py": b"print(1)\n",
        },
        root="/app",
    )
    instruction = "Write /app/report.sh, run it to write /app/out/total.txt; keep /app/lib."
    probes = {p.path: p for p in undone_files(oracle, pristine, instruction, "/app")}
    never = _log(Access("/app/in.txt", "open", True, exe=PY, mode="read"))
    findings = {path: p.unread_finding for path, p in probes.items()}
    assert findings == {
        "/app/report.sh": (
            "the verifier never runs or reads /app/report.sh, a program the task asks for"
        ),
        "/app/out/total.txt": None,
        "/app/lib/helper.py": None,
    }
    assert never_read(("/app/report.sh",), never)
    ran = _log(Access("/app/report.sh", "exec", True, exe="/bin/sh"))
    assert not never_read(("/app/report.sh",), ran) and not never_read(("/app/report.sh",), None)
