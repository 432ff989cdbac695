"""Bad input, measured: every hostile or malformed input from issue 15 and from the loader
fuzz tests (tests/seeds/test_fuzz_seeds.py, tests/verifiers/formats/test_fuzz_formats.py),
one process each.

    python benchmarks/bad_input.py [--only NAME ...] [--json] [--keep]

For each case it prints the error the user sees, the wall time, the peak memory of the
process (resource.getrusage(RUSAGE_CHILDREN).ru_maxrss, taken in a fresh helper process
whose only child is the case, so cases do not share a peak), the bytes it wrote (wchar
from /proc, polled while it runs; stdout included), and what it left behind: rows in its
store and files in its TMPDIR. Goal: every case under 5 s and 300 MB, nothing stored,
nothing left in TMPDIR. Each case runs with its own ENVFACTORY_HOME and TMPDIR under one
scratch folder, removed at the end (--keep keeps it). Building the inputs takes a minute:
two of them are 14 MB .tar.gz files holding 3 GiB of zeros. The list cases (200 concurrent
`GET /api/seeds` over 1,000 long seeds) start the API as a uvicorn child of the case and
also print the server's RSS just before the burst and its peak during it. A benchmark
prints numbers; it asserts nothing.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import json
import os
import resource
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
PY = sys.executable
GIB3 = 3 << 30
BOMB = "".join(
    f"{k}: &{k} [{', '.join([f'*{p}'] * 9)}]\n" if p else f"{k}: &{k} [{', '.join(['lol'] * 9)}]\n"
    for k, p in zip("abcdefgh", ["", *"abcdefg"], strict=True)
)
SEED_BOMB = BOMB + "title: *h\ndescription: d\ndomain: x\n"


@dataclass
class Case:
    name: str
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)


# ---------------------------------------------------------------- inputs


def _write(path: Path, data: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def _deep(top: Path, levels: int, name: str = "d") -> Path:
    """`levels` directories called `name` under `top` (made step by step: the whole path
    may pass PATH_MAX), one file at the bottom. Returns `top`."""
    top.mkdir(parents=True, exist_ok=True)
    here = os.getcwd()
    os.chdir(top)
    try:
        for _ in range(levels):
            os.mkdir(name)
            os.chdir(name)
        Path("leaf.txt").write_text("x\n")
    finally:
        os.chdir(here)
    return top


HEAD = "title: t\ndescription: d\ndomain: x\n"


def _seed_dir(d: Path, files: dict[bytes, bytes]) -> Path:
    """A seed directory holding `files`, named as raw bytes (they need not be UTF-8)."""
    _write(d / "seed.yaml", HEAD)
    for name, data in files.items():
        _write(Path(os.fsdecode(os.fsencode(d) + b"/" + name)), data)
    return d


def _seed_inputs(d: Path) -> dict[str, Path]:
    return {
        "alias-bomb": _write(d / "bomb/seed.yaml", SEED_BOMB),
        "deep-nesting": _write(d / "deep/seed.yaml", "title: " + "[" * 100_000 + "]" * 100_000),
        "nul": _write(d / "nul/seed.yaml", 'title: "a\\0b"\ndescription: d\ndomain: x\n'),
        "complex key": _write(d / "complex/seed.yaml", "? [a, b]\n: 1\n" + HEAD),
        "int of 4301 digits": _write(
            d / "int4301/seed.yaml", HEAD + "constraints:\n  max_turns: " + "9" * 4301 + "\n"
        ),
        "int of 1,000,000 digits": _write(
            d / "int1m/seed.yaml", HEAD + "constraints:\n  max_turns: " + "9" * 1_000_000 + "\n"
        ),
        "date 2001-13-45": _write(
            d / "date/seed.yaml", "title: 2001-13-45\ndescription: d\ndomain: x\n"
        ),
        "!!int abc": _write(d / "tag/seed.yaml", HEAD + "constraints: {max_turns: !!int abc}\n"),
        "!!map on a scalar": _write(d / "map/seed.yaml", "title: !!map x\n"),
        "escaped lone surrogate path": _write(
            d / "surrogate/seed.yaml", HEAD + 'attachments: ["a\\ud800"]\n'
        ),
        "file name not UTF-8": _seed_dir(d / "latin1", {b"caf\xe9.csv": b"x\n"}),
        "file name ' '": _seed_dir(d / "space", {b" ": b"x\n"}),
        "attachments 1,100 levels deep": _seed_dir(_deep(d / "deep1100/data", 1100).parent, {}),
        "path past PATH_MAX": _seed_dir(_deep(d / "long", 20, "n" * 250), {}),
    }


def _task_inputs(d: Path) -> dict[str, Path]:
    out = {}
    for name, text in (
        ("yaml-alias-bomb", BOMB + "instruction: x\n"),
        ("yaml-deep", "instruction: " + "[" * 100_000 + "]" * 100_000),
    ):
        shutil.copytree(REPO / "examples/tasks-tb/error-summary", d / name)
        _write(d / name / "task.yaml", text)
        out[name] = d / name
    shutil.copytree(REPO / "examples/tasks/csv-report", d / "toml-deep")
    _write(d / "toml-deep/task.toml", "x = " + "[" * 100_000 + "]" * 100_000 + "\n")
    out["toml-deep"] = d / "toml-deep"
    return out | _fuzz_task_inputs(d)


def _task_copy(d: Path, name: str, example: str, files: dict[str, bytes]) -> Path:
    shutil.copytree(REPO / example, d / name)
    for rel, data in files.items():
        _write(d / name / rel, data)
    return d / name


def _fuzz_task_inputs(d: Path) -> dict[str, Path]:
    """What the format fuzz tests found, one task each."""
    harbor, tb = "examples/tasks/csv-report", "examples/tasks-tb/error-summary"
    compose = b"services:\n  main: {build: .}\n  db: {build: ., command: 5}\n"
    latin1 = _task_copy(d, "latin1-name", harbor, {})
    _write(Path(os.fsdecode(os.fsencode(latin1) + b"/tests/caf\xe9.txt")), b"x\n")
    return {
        "toml int of 4301 digits": _task_copy(
            d, "toml-int", harbor, {"task.toml": b"x = " + b"9" * 4301 + b"\n"}
        ),
        "yaml int of 4301 digits": _task_copy(
            d,
            "yaml-int",
            tb,
            {"task.yaml": b"instruction: x\nmax_test_timeout_sec: " + b"9" * 4301},
        ),
        "yaml complex key": _task_copy(
            d, "yaml-key", tb, {"task.yaml": b"? [a]\n: 1\ninstruction: x\n"}
        ),
        "yaml date 2001-13-45": _task_copy(
            d, "yaml-date", tb, {"task.yaml": b"instruction: x\nwhen: 2001-13-45\n"}
        ),
        "memory = 'infG'": _task_copy(
            d, "mem-inf", harbor, {"task.toml": b'[environment]\nmemory = "infG"\n'}
        ),
        "instruction.md not UTF-8": _task_copy(
            d, "instr-latin1", harbor, {"instruction.md": b"caf\xe9\n"}
        ),
        "NUL in solve.sh": _task_copy(
            d, "solve-nul", harbor, {"solution/solve.sh": b"echo a\x00b\n"}
        ),
        "compose command: 5": _task_copy(
            d, "compose-int", harbor, {"environment/docker-compose.yaml": compose}
        ),
        "file name not UTF-8": latin1,
        "tests 1,100 levels deep": _deep(
            _task_copy(d, "deep1100", harbor, {}) / "tests", 1100
        ).parent,
    }


def _good_pack(d: Path) -> Path:
    """A real, gated pack (the test suite's example environment), as a tar."""
    sys.path.insert(0, str(REPO))
    from envfactory.packs import export_pack
    from tests.packs.conftest import DictArtifacts, make_item

    arts = DictArtifacts()
    out = d / "good.tar"
    export_pack([make_item(arts)], out, artifacts=arts, created_by="bench")
    return out


def _members(tar: Path) -> list[tuple[str, bytes]]:
    with tarfile.open(tar) as tf:
        return [(i.name, tf.extractfile(i).read()) for i in tf]  # type: ignore[union-attr]


def _add(tf: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    tf.addfile(info, io.BytesIO(data))


class _Zeros(io.RawIOBase):
    def __init__(self, n: int) -> None:
        self.left = n

    def readinto(self, b: bytearray | memoryview) -> int:  # type: ignore[override]
        n = min(len(b), self.left)
        b[:n] = bytes(n)
        self.left -= n
        return n


def _zeros_sha(n: int) -> str:
    h, block = hashlib.sha256(), bytes(1 << 20)
    for _ in range(n >> 20):
        h.update(block)
    return h.hexdigest()


def _tar_gz(path: Path, entries: list[tuple[str, bytes]], zeros_name: str) -> Path:
    """`entries`, then `zeros_name` holding 3 GiB of zeros: about 14 MB on disk."""
    with gzip.open(path, "wb", compresslevel=1) as gz, tarfile.open(fileobj=gz, mode="w") as tf:
        for name, data in entries:
            _add(tf, name, data)
        info = tarfile.TarInfo(zeros_name)
        info.size = GIB3
        tf.addfile(info, _Zeros(GIB3))  # type: ignore[arg-type]
    return path


def _lying_manifest(raw: bytes, zeros_name: str) -> bytes:
    doc = json.loads(raw)
    doc["members"].append(
        {"path": zeros_name, "sha256": _zeros_sha(GIB3), "size": GIB3, "visibility": "solver"}
    )
    return json.dumps(doc).encode()


def _pack_inputs(d: Path) -> dict[str, Path]:
    good = _good_pack(d)
    entries = _members(good)
    zeros = "envs/env-hello/solver/context/zeros.bin"
    lying = [("pack.json", _lying_manifest(entries[0][1], zeros)), *entries[1:]]
    out = {
        "unlisted-3gib-member": _tar_gz(d / "unlisted.tar.gz", entries, zeros),
        "listed-3gib-bomb": _tar_gz(d / "lying.tar.gz", lying, zeros),
    }
    for name, extra in (
        ("file-then-path", [("x", b"1"), ("x/y", b"2")]),
        ("300-char-name", [("envs/" + "n" * 300, b"x")]),
    ):
        with tarfile.open(d / f"{name}.tar", "w") as tf:
            for n, data in [*entries, *extra]:
                _add(tf, n, data)
        out[name] = d / f"{name}.tar"
    data = good.read_bytes()
    out["truncated-tar"] = _write(d / "cut.tar", data[: len(data) * 2 // 3])
    with tarfile.open(d / "good.tar.gz", "w:gz") as tf:
        for n, blob in entries:
            _add(tf, n, blob)
    gz = (d / "good.tar.gz").read_bytes()
    out["truncated-tar.gz"] = _write(d / "cut.tar.gz", gz[: len(gz) * 2 // 3])
    return out | _signed_inputs(d, entries)


def _signed_inputs(d: Path, entries: list[tuple[str, bytes]]) -> dict[str, Path]:
    from envfactory.packs.signing import generate_keypair, load_private_key, sign_manifest

    private, public, _ = generate_keypair(d / "keys")
    forged = d / "forged"
    for name, data in entries:
        _write(forged / name, data)
    sig = sign_manifest((forged / "pack.json").read_bytes(), load_private_key(private))
    _write(forged / "pack.sig", sig.model_dump_json())
    test_sh = "envs/env-hello/verifier/files/test.sh"
    _write(forged / test_sh, "exit 0\n")  # the forger's change, rehashed into pack.json
    doc = json.loads((forged / "pack.json").read_text())
    for m in doc["members"]:
        if m["path"] == test_sh:
            m["sha256"], m["size"] = hashlib.sha256(b"exit 0\n").hexdigest(), 7
    _write(forged / "pack.json", json.dumps(doc, indent=2))
    trust = d / "trusted"
    _write(trust / "alice.pub", public.read_bytes())
    return {
        "forged-pack": forged,
        "trust-dir": trust,
        "public-key": public,
        "unsigned-pack": d / "good.tar",
    }


def build_cases(inputs: Path) -> list[Case]:
    cli = [PY, "-m", "envfactory.cli"]
    seeds, tasks = _seed_inputs(inputs / "seeds"), _task_inputs(inputs / "tasks")
    packs = _pack_inputs(inputs / "packs")
    cases = [
        Case("baseline: envfactory --help (CLI start-up)", [*cli, "--help"]),
        Case("baseline: api GET /api/health (app start-up)", [PY, __file__, "--api", "health"]),
    ]
    cases += [
        Case(f"seed submit: {k}", [*cli, "seed", "submit", str(p), "--no-start"])
        for k, p in seeds.items()
    ]
    cases += [Case(f"task import: {k}", [*cli, "task", "import", str(p)]) for k, p in tasks.items()]
    cases += [Case(f"api: {k}", [PY, __file__, "--api", k]) for k in (*API_CASES, *UPLOAD_CASES)]
    cases += [Case(f"api: {k}", [PY, __file__, "--api", k]) for k in LIST_CASES]
    for k in (
        "unlisted-3gib-member",
        "listed-3gib-bomb",
        "file-then-path",
        "300-char-name",
        "truncated-tar",
        "truncated-tar.gz",
    ):
        cases.append(
            Case(f"pack import: {k}", [*cli, "pack", "import", str(packs[k]), "--no-build"])
        )
    cases.append(
        Case(
            "pack verify --trust: forged (manifest rehashed)",
            [
                *cli,
                "pack",
                "verify",
                str(packs["forged-pack"]),
                "--trust",
                str(packs["public-key"]),
            ],
        )
    )
    cases.append(
        Case(
            "pack import: unsigned, trust dir set",
            [*cli, "pack", "import", str(packs["unsigned-pack"]), "--no-build"],
            {"ENVFACTORY_PACKS__TRUST_DIR": str(packs["trust-dir"])},
        )
    )
    return cases


# ---------------------------------------------------------------- API cases (own process)

API_CASES = {
    "10 MB review comment": lambda: {"decision": "confirm", "comment": "x" * 10_000_000},
    "2 MB comment, chunked (no length)": lambda: {
        "decision": "confirm",
        "comment": "x" * 2_000_000,
    },
    "NUL in a review comment": lambda: {"decision": "confirm", "comment": "ok\x00"},
    "NUL in a seed title": lambda: {"title": "a\x00b", "description": "d", "domain": "x"},
}
#: multipart seed uploads: the seed.yaml and the files, each (name, bytes)
UPLOAD_CASES = {
    "upload holding both a and a/b": [("a", b"1\n"), ("a/b", b"2\n")],
}


#: many concurrent list calls from a viewer over a store of long seeds: name → page size
#: ("default": none given; "largest": the `limit` maximum the served OpenAPI states)
LIST_CASES = {
    "200 concurrent GET /api/seeds, default page": "default",
    "200 concurrent GET /api/seeds, largest page": "largest",
}
LIST_SEEDS, LIST_DESCRIPTION, LIST_CALLS = 1000, 20_000, 200


def asgi_app() -> Any:
    """The API as `envfactory review serve` builds it from the environment (for uvicorn)."""
    from envfactory.api import create_app
    from envfactory.core.settings import load_settings

    return create_app(load_settings())


def _vm_kb(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    return 0


def _fill_seeds() -> tuple[str, int]:
    """1,000 seeds with 20 kB descriptions and a viewer in the case's store: (the viewer's
    token, the largest `limit` GET /api/seeds accepts)."""
    from datetime import UTC, datetime, timedelta

    from envfactory.api import create_app
    from envfactory.core.models import ReviewerRole, TaskSeed
    from envfactory.core.settings import load_settings
    from envfactory.store import Store

    settings = load_settings()
    t0 = datetime(2026, 12, 1, tzinfo=UTC)
    with Store.from_settings(settings) as store:
        with store.session() as tx:
            for i in range(LIST_SEEDS):
                tx.seeds.add(
                    TaskSeed(
                        id=f"seed-{i:04d}",
                        title=f"seed {i}",
                        description=f"{i} " + "x" * LIST_DESCRIPTION,
                        domain="load",
                        content_hash=f"{i:064x}",
                        created_at=t0 + timedelta(seconds=i),
                    )
                )
        token = store.reviewers.add("vic", ReviewerRole.VIEWER)
        spec = create_app(settings, store=store).openapi()
    (limit,) = [p for p in spec["paths"]["/api/seeds"]["get"]["parameters"] if p["name"] == "limit"]
    return token, int(limit["schema"]["maximum"])


def _list_burst(port: int, path: str, token: str) -> tuple[list[int], int]:
    """LIST_CALLS requests leaving together, each on its own connection; their statuses and
    the largest body (read and dropped in chunks: the client holds none of them)."""
    import http.client
    import threading

    barrier = threading.Barrier(LIST_CALLS)
    codes, sizes = [0] * LIST_CALLS, [0] * LIST_CALLS

    def call(i: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
        conn.request("GET", "/api/health")
        conn.getresponse().read()
        barrier.wait()
        conn.request("GET", path, headers={"Authorization": f"Bearer {token}"})
        res = conn.getresponse()
        while chunk := res.read(1 << 16):
            sizes[i] += len(chunk)
        codes[i] = res.status
        conn.close()

    threads = [threading.Thread(target=call, args=(i,)) for i in range(LIST_CALLS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return codes, max(sizes)


def run_list_case(name: str) -> None:
    """Runs inside the measured process: the API as its own uvicorn process (a child, so
    the case's peak includes it), 200 concurrent list calls, the server's RSS around them
    (VmHWM reset just before the burst)."""
    import socket

    token, largest = _fill_seeds()
    path = "/api/seeds" if LIST_CASES[name] == "default" else f"/api/seeds?limit={largest}"
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    argv = [PY, "-m", "uvicorn", "benchmarks.bad_input:asgi_app", "--factory", "--port", str(port)]
    server = subprocess.Popen(
        [*argv, "--log-level", "warning", "--timeout-keep-alive", "600"], cwd=REPO
    )
    try:
        import httpx

        for _ in range(300):
            try:
                if httpx.get(f"http://127.0.0.1:{port}/api/health").status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.2)
        httpx.get(f"http://127.0.0.1:{port}{path}", headers={"Authorization": f"Bearer {token}"})
        Path(f"/proc/{server.pid}/clear_refs").write_text("5")  # VmHWM starts again here
        before = _vm_kb(server.pid, "VmRSS")
        start = time.perf_counter()
        codes, biggest = _list_burst(port, path, token)
        seconds = time.perf_counter() - start
        peak = _vm_kb(server.pid, "VmHWM")
    finally:
        server.terminate()
        server.wait(30)
    print(
        f"HTTP {sorted(set(codes))} x{len(codes)} for {path} ({biggest / 2**20:.2f} MB each, "
        f"{seconds:.1f} s): server RSS {before / 1024:.0f} MB before, peak {peak / 1024:.0f} MB"
    )


def run_api_case(name: str) -> None:
    """Runs inside the measured process: an app over a fresh SQLite store, one request."""
    from fastapi.testclient import TestClient

    from envfactory.api import create_app
    from envfactory.core.models import Evidence, ReviewerRole, ReviewItem, ShortcutFinding
    from envfactory.core.settings import load_settings
    from envfactory.store import Store

    settings = load_settings()
    store = Store.from_settings(settings)
    store.findings.add(
        ShortcutFinding(
            id="f1", env_id="env-a", source="probe", rule="r", evidence=Evidence(summary="s")
        )
    )
    store.reviews.add(ReviewItem(id="rev-1", finding_id="f1", env_id="env-a"))
    auth = {"Authorization": f"Bearer {store.reviewers.add('ana', ReviewerRole.REVIEWER)}"}
    app = create_app(settings, store=store)  # no pipeline: decisions and seeds stored only
    with TestClient(app) as client:
        if name == "health":
            print(f"HTTP {client.get('/api/health').status_code}")
            return
        if name in UPLOAD_CASES:
            parts = [("seed", ("seed.yaml", HEAD.encode()))]
            parts += [("files", (n, data)) for n, data in UPLOAD_CASES[name]]
            _print_response(client.post("/api/seeds/upload", files=parts, headers=auth))
            return
        body = API_CASES[name]()
        path = "/api/seeds" if "seed" in name else "/api/reviews/rev-1/decision"
        if "chunked" in name:
            raw = json.dumps(body).encode()
            chunks = (raw[i : i + 65536] for i in range(0, len(raw), 65536))
            res = client.post(
                path, content=chunks, headers=auth | {"content-type": "application/json"}
            )
        else:
            res = client.post(path, json=body, headers=auth)
    _print_response(res)


def _print_response(res: Any) -> None:
    detail = (
        res.json().get("detail")
        if res.headers.get("content-type", "").startswith("application/json")
        else res.text
    )
    print(f"HTTP {res.status_code}: {json.dumps(detail)[:200]}")


# ---------------------------------------------------------------- measuring


def _wchar(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/io").read_text().splitlines():
            if line.startswith("wchar:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def measure(spec: dict[str, object]) -> dict[str, object]:
    """Runs in a fresh helper process: start the case, poll its writes, wait, report."""
    out_dir = Path(str(spec["dir"]))
    start = time.perf_counter()
    with open(out_dir / "stdout", "wb") as so, open(out_dir / "stderr", "wb") as se:
        proc = subprocess.Popen(spec["argv"], env=spec["env"], cwd=out_dir, stdout=so, stderr=se)  # type: ignore[call-overload]
        written = 0
        while proc.poll() is None:
            written = max(written, _wchar(proc.pid) or 0)
            if time.perf_counter() - start > float(spec["timeout"]):  # type: ignore[arg-type]
                proc.kill()
            time.sleep(0.02)
    seconds = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {
        "rc": proc.returncode,
        "seconds": seconds,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "peak_mb": usage.ru_maxrss / 1024,
        "written_mb": written / 2**20,
    }


def _stored(home: Path) -> str:
    if not (home / "envfactory.db").exists():
        return "nothing (no database)"
    from envfactory.core.models import ReviewState
    from envfactory.core.settings import Settings
    from envfactory.store import Store

    with Store.from_settings(Settings(home=home, database_url=None)) as store:
        rows = {
            "seeds": store.seeds.count(),
            "environments": len(store.environments.list()),
            "packs": len(store.packs.list()),
            "decisions": len([r for r in store.reviews.list() if r.state != ReviewState.OPEN]),
        }
    kept = {k: v for k, v in rows.items() if v}
    return "nothing" if not kept else ", ".join(f"{v} {k}" for k, v in kept.items())


def _message(case_dir: Path, rc: object) -> str:
    text = (case_dir / "stderr").read_text(errors="replace") + (case_dir / "stdout").read_text(
        errors="replace"
    )
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for ln in lines:
        if ln.startswith(("error:", "HTTP ", "failed")) or "Traceback" in ln:
            return ln[:220]
    return "ok" if rc == 0 else (lines[-1] if lines else "(no output)")[:220]


def run_case(case: Case, scratch: Path, index: int, timeout: float) -> dict[str, object]:
    case_dir = scratch / f"case-{index:02d}"
    (case_dir / "tmp").mkdir(parents=True)
    env = (
        dict(os.environ)
        | {
            "ENVFACTORY_HOME": str(case_dir / "home"),
            "TMPDIR": str(case_dir / "tmp"),
            "PYTHONPATH": str(REPO),
            "COLUMNS": "250",
        }
        | case.env
    )
    env.pop("ENVFACTORY_DATABASE_URL", None)
    spec = {"argv": case.argv, "env": env, "dir": str(case_dir), "timeout": timeout}
    helper = subprocess.run(
        [PY, __file__, "--measure", json.dumps(spec)], capture_output=True, text=True, check=True
    )
    result: dict[str, object] = json.loads(helper.stdout)
    left = [p for p in (case_dir / "tmp").rglob("*")]
    return {
        "case": case.name,
        **result,
        "error": _message(case_dir, result["rc"]),
        "stored": _stored(case_dir / "home"),
        "tmp_left": len(left),
    }


def report(rows: list[dict[str, object]]) -> str:
    lines = [
        f"{'case':<48} {'exit':>4} {'wall':>7} {'cpu':>6} {'peak':>7} {'written':>9}  "
        "stored / tmp left"
    ]
    for r in rows:
        lines.append(
            f"{r['case']:<48} {r['rc']:>4} {r['seconds']:>6.2f}s {r['cpu_s']:>5.2f}s "
            f"{r['peak_mb']:>5.0f}MB {r['written_mb']:>7.2f}MB  {r['stored']} / "
            f"{r['tmp_left']} files"
        )
        lines.append(f"    {r['error']}")
    cases = [r for r in rows if not str(r["case"]).startswith("baseline")]
    base = max((float(r["seconds"]) for r in rows if r not in cases), default=0.0)  # type: ignore[arg-type]
    worst = max(cases, key=lambda r: float(r["seconds"]))  # type: ignore[arg-type]
    big = max(cases, key=lambda r: float(r["peak_mb"]))  # type: ignore[arg-type]
    lines.append(
        f"{len(cases)} cases; slowest {worst['seconds']:.2f} s wall / {worst['cpu_s']:.2f} s "
        f"cpu ({worst['case']}; start-up alone {base:.2f} s here); highest peak "
        f"{big['peak_mb']:.0f} MB ({big['case']}); stored anything: "
        f"{sum(1 for r in cases if not str(r['stored']).startswith('nothing'))}; "
        f"left files in TMPDIR: {sum(1 for r in cases if r['tmp_left'])}"
    )
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--only", nargs="*", help="substrings of case names to run")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--keep", action="store_true", help="keep the scratch folder")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds before a case is killed")
    ap.add_argument("--measure", help=argparse.SUPPRESS)
    ap.add_argument("--api", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.measure:
        print(json.dumps(measure(json.loads(args.measure))))
        return
    if args.api in LIST_CASES:
        run_list_case(args.api)
        return
    if args.api:
        run_api_case(args.api)
        return
    scratch = Path(tempfile.mkdtemp(prefix="bad-input-"))
    try:
        print(f"building inputs under {scratch} …", file=sys.stderr)
        cases = build_cases(scratch / "inputs")
        if args.only:
            cases = [c for c in cases if any(o in c.name for o in args.only)]
        rows = [run_case(c, scratch, i, args.timeout) for i, c in enumerate(cases)]
        print(json.dumps(rows, indent=2) if args.json else report(rows))
    finally:
        if not args.keep:  # rm, not shutil.rmtree: that recurses, and 1,100 levels overflow it
            subprocess.run(["rm", "-rf", "--", str(scratch)], check=False)


if __name__ == "__main__":
    main()
