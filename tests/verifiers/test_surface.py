"""The traced search surface: what a verifier looks up where the solver can write, and the
probes planted there.

Parsing and planting rules are checked on literal strace lines; the surface itself on a
real container of a small task whose workspace is /app, traced with the host's strace.
"""

from __future__ import annotations

import io
import tarfile

import pytest

from envfactory.core.models import BuildContext, EnvironmentSpec, Step
from verifiers.probes.traced import EXEC_EXIT, JS_EXIT, PY_EXIT, Access, plants
from verifiers.runner import verifier_tar, verify_prepared
from verifiers.states import pristine_state, produce_chain, produce_probe
from verifiers.surface import (
    parse_trace,
    solver_writable,
    strace_bundle,
    trace_surface,
    traced_probes,
)

from .sumtask import MemoryFiles, make_verifier

TRACE = """\
7     execve("/bin/sh", ["/bin/sh", "-c", "x"], 0x7ffd /* 5 vars */) = 0
7     chdir("/app")                     = 0
7     vfork( <unfinished ...>
7     <... vfork resumed>)              = 8
8     execve("/usr/local/bin/python3", ["python3", "-c", "import json"], 0x55 /* 5 vars */ <unfinished ...>
8     <... execve resumed>)             = 0
8     openat(AT_FDCWD</app>, "/app", O_RDONLY|O_NONBLOCK|O_CLOEXEC|O_DIRECTORY) = 3</app>
8     newfstatat(AT_FDCWD</app>, "/usr/lib/python3.11/json/__init__.py", {st_mode=S_IFREG|0644, ...}, 0) = 0
8     openat(AT_FDCWD</app>, "/usr/lib/python3.11/json/__pycache__/__init__.cpython-311.pyc", O_RDONLY|O_CLOEXEC) = 3</usr/lib/python3.11/json/__pycache__/__init__.cpython-311.pyc>
8     openat(AT_FDCWD</app>, "/usr/lib/python3.11/__pycache__/enum.cpython-311.pyc", O_RDONLY|O_CLOEXEC) = 3</x>
8     openat(AT_FDCWD</app>, "out/result.json", O_WRONLY|O_CREAT|O_TRUNC|O_CLOEXEC, 0666) = 3</app/out/result.json>
7     openat(AT_FDCWD</app>, "./config.sh", O_RDONLY) = -1 ENOENT (No such file or directory)
7     execve("./bin/check", ["./bin/check"], 0x55 /* 5 vars */) = -1 ENOENT (No such file or directory)
"""


def test_a_trace_is_parsed_into_absolute_lookups_with_the_program_that_made_them() -> None:
    got = parse_trace(TRACE, root_cwd="/run/v")
    by_path = {(a.path, a.op): a for a in got}
    listing = by_path[("/app", "list")]
    assert listing.ok and listing.exe == "/usr/local/bin/python3"  # resumed execve joined
    assert by_path[("/app/out/result.json", "write")].ok
    sourced = by_path[("/app/config.sh", "open")]
    assert not sourced.ok and sourced.errno == "ENOENT" and sourced.exe == "/bin/sh"
    assert not by_path[("/app/bin/check", "exec")].ok  # relative to the chdir'd cwd


def test_plants_shadow_imported_modules_sourced_files_and_programs_by_type() -> None:
    acc = parse_trace(TRACE, root_cwd="/run/v")
    shadow, overwrite = plants(acc, [a for a in acc if a.path.startswith("/app")])
    assert shadow["/app/json.py"] == (PY_EXIT, 0o644)
    assert "/app/enum.py" in shadow and "/app/sitecustomize.py" in shadow
    assert shadow["/app/config.sh"] == (EXEC_EXIT, 0o755)
    assert shadow["/app/bin/check"] == (EXEC_EXIT, 0o755)
    assert "/app/out/result.json" not in shadow and overwrite == {}  # a write is no lookup


def test_node_lookups_get_a_module_that_exits_and_directories_on_the_way_are_skipped() -> None:
    node = "/usr/bin/node"
    acc = [
        Access("/srv/project/node_modules", "stat", False, "ENOENT", node),
        Access("/srv/project/node_modules/left-pad", "stat", False, "ENOENT", node),
        Access("/srv/project/lib/check", "stat", False, "ENOENT", node),
        Access("/srv/project/lib/check.js", "open", True, "", node),
        Access("/srv/project/package.json", "open", False, "ENOENT", node),
    ]
    shadow, overwrite = plants(acc, acc)
    assert shadow == {
        "/srv/project/lib/check": (JS_EXIT, 0o644),
        "/srv/project/node_modules/left-pad": (JS_EXIT, 0o644),
    }
    assert overwrite == {"/srv/project/lib/check.js": (JS_EXIT, 0o644)}


def test_pytest_configuration_lookups_get_a_passing_conftest_and_a_collect_only_config() -> None:
    py = "/usr/local/bin/python3"
    acc = [
        Access("/app/conftest.py", "stat", False, "ENOENT", py),
        Access("/app/pyproject.toml", "stat", False, "ENOENT", py),
        Access("/app/setup.cfg", "open", True, "", py),
    ]
    shadow, overwrite = plants(acc, acc)
    assert "pytest_sessionfinish" in shadow["/app/conftest.py"][0]
    assert "--co" in shadow["/app/pyproject.toml"][0]
    assert overwrite["/app/setup.cfg"][0].startswith("[tool:pytest]")


def test_full_state_scope_counts_what_tamper_evidence_would_not_catch_as_writable() -> None:
    ws = _spec(verify_scope="workspace")
    full = _spec(verify_scope="full-state")
    assert solver_writable("/app/json.py", ws) and not solver_writable("/tmp/json.py", ws)
    assert solver_writable("/tmp/json.py", full) and solver_writable("/root/x.sh", full)
    for caught in ("/usr/local/bin/python3", "/usr/lib/python3.11/json.py", "/tests/x"):
        assert not solver_writable(caught, full), caught
    assert not solver_writable("/proc/self/status", full)
    assert not solver_writable("/run/envfactory-verifier-ab/x.py", full)


# ----------------------------------------------------------------------------- Docker

DOCKERFILE = b"""\
FROM python:3.11-slim
RUN mkdir -p /app && printf 'region,amount\\nn,10\\ns,20\\ne,30\\n' > /app/input.csv
WORKDIR /app
"""
INSTRUCTION = "Sum the amount column of /app/input.csv and write the total to /app/out/total.txt."


def _spec(verify_scope: str = "workspace") -> EnvironmentSpec:
    return EnvironmentSpec(
        id="env-surface",
        name="surface",
        instruction=INSTRUCTION,
        build=BuildContext(files=()),
        workdir="/app",
        workspace_paths=("/app",),
        verify_scope=verify_scope,  # type: ignore[arg-type]
        reference_solution=(Step(title="total", script="mkdir -p out && echo 60 > out/total.txt"),),
    )


#: Reads the answer with `json`/`re` imported while /app is on sys.path (`-c` from /app).
NAIVE_IMPORTS = (
    'cd /app && python3 -c "import re, sys; '
    "sys.exit(0 if re.fullmatch(r'60', open('out/total.txt').read().strip()) else 1)\""
)
#: The same check isolated: `-I -S`, run from the verifier's own directory.
SOUND = (
    '/usr/local/bin/python3 -I -S -c "import sys; '
    "sys.exit(0 if open('/app/out/total.txt').read().strip() == '60' else 1)\""
)
#: Sources an optional config from the workspace before checking.
NAIVE_SOURCES = (
    'cd /app && { [ -f ./config.sh ] && . ./config.sh; true; } && test "$(cat out/total.txt)" = 60'
)


@pytest.fixture(scope="module")
def surface_image(docker_engine, base_image) -> str:  # type: ignore[no-untyped-def]
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        info = tarfile.TarInfo("Dockerfile")
        info.size = len(DOCKERFILE)
        tf.addfile(info, io.BytesIO(DOCKERFILE))
    return docker_engine.build(buf.getvalue()).image


@pytest.fixture(scope="module")
def oracle(docker_engine, surface_image):  # type: ignore[no-untyped-def]
    from envfactory.core.models import StateKind

    spec = _spec()
    (state,) = produce_chain(
        docker_engine,
        surface_image,
        spec,
        spec.reference_solution,
        names=["oracle"],
        kinds=[StateKind.ORACLE],
        want_diff=False,
    )
    return state


def _verdict(engine, prepared, entry: str, files: MemoryFiles) -> int:  # type: ignore[no-untyped-def]
    v = make_verifier(files, entry)
    return verify_prepared(
        engine, prepared, spec=_spec(), verifier=v, verifier_files=verifier_tar(v, files)
    ).reward


@pytest.mark.docker
@pytest.mark.slow
def test_the_surface_of_python_c_run_from_the_workspace_finds_app_json_py(
    docker_engine, oracle, files
) -> None:  # type: ignore[no-untyped-def]
    if strace_bundle() is None:
        pytest.skip("no strace on this host")
    spec, v = _spec(), make_verifier(files, NAIVE_IMPORTS)
    assert _verdict(docker_engine, oracle.prepared, NAIVE_IMPORTS, files) == 1  # sane verifier
    surface = trace_surface(
        docker_engine, oracle.prepared, spec=spec, verifier=v, verifier_files=verifier_tar(v, files)
    )
    assert surface.traced and surface.exit_code == 0
    assert any(a.path == "/app" and a.op == "list" for a in surface.writable)
    shadow, _ = plants(surface.accesses, surface.writable)
    assert {"/app/re.py", "/app/sitecustomize.py"} <= set(shadow)


@pytest.mark.docker
@pytest.mark.slow
def test_an_isolated_verifier_run_from_its_own_dir_has_no_shadowing_surface(
    docker_engine, oracle, files
) -> None:  # type: ignore[no-untyped-def]
    if strace_bundle() is None:
        pytest.skip("no strace on this host")
    v = make_verifier(files, SOUND)
    got = traced_probes(
        docker_engine,
        oracle.prepared,
        spec=_spec(),
        verifier=v,
        verifier_files=verifier_tar(v, files),
    )
    assert got == ()


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.parametrize(
    "naive", [NAIVE_IMPORTS, NAIVE_SOURCES], ids=["imports-re", "sources-config"]
)
def test_traced_probes_fool_the_naive_verifier_and_the_sound_one_rejects_them(
    docker_engine, surface_image, oracle, files, naive
) -> None:  # type: ignore[no-untyped-def]
    if strace_bundle() is None:
        pytest.skip("no strace on this host")
    spec, v = _spec(), make_verifier(files, naive)
    probes = traced_probes(
        docker_engine, oracle.prepared, spec=spec, verifier=v, verifier_files=verifier_tar(v, files)
    )
    assert [p.name for p in probes] == ["traced-shadow"]
    noop = pristine_state(docker_engine, surface_image, spec)
    assert _verdict(docker_engine, noop.prepared, naive, files) == 0
    state = produce_probe(docker_engine, surface_image, spec, noop, probes[0])
    assert _verdict(docker_engine, state.prepared, naive, files) == 1, "the probe fools nothing"
    assert _verdict(docker_engine, state.prepared, SOUND, files) == 0
