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
from envfactory.core.models.rows import RowId
from verifiers.probes.traced import (
    EXEC_EXIT,
    JS_EXIT,
    PY_EXIT,
    Access,
    links,
    plants,
    replays,
)
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


#: A Harbor-style test.sh: cd to its own directory, cmp the output with expected.txt there;
#: a second process reads the answer key by its absolute path from the workspace; a junit
#: report is written, then read back.
TRACE_DATA = """\
5     execve("/bin/bash", ["bash", "/tests/test.sh"], 0x7ffd /* 5 vars */) = 0
5     openat(AT_FDCWD</app>, "/tests/test.sh", O_RDONLY) = 3</tests/test.sh>
5     chdir("/tests")                   = 0
5     clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|SIGCHLD) = 6
6     execve("/usr/bin/cmp", ["cmp", "-s", "/app/out/users.txt", "expected.txt"], 0x55 /* 5 vars */) = 0
6     openat(AT_FDCWD</tests>, "/app/out/users.txt", O_RDONLY) = 3</app/out/users.txt>
6     openat(AT_FDCWD</tests>, "expected.txt", O_RDONLY) = 4</tests/expected.txt>
5     clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|SIGCHLD) = 7
7     chdir("/app")                     = 0
7     execve("/usr/bin/python3", ["python3", "/tests/check.py"], 0x55 /* 5 vars */) = 0
7     openat(AT_FDCWD</app>, "/tests/check.py", O_RDONLY|O_CLOEXEC) = 3</tests/check.py>
7     openat(AT_FDCWD</app>, "out/report.xml", O_WRONLY|O_CREAT|O_TRUNC|O_CLOEXEC, 0666) = 3</app/out/report.xml>
7     openat(AT_FDCWD</app>, "out/summary.json", O_RDONLY|O_CLOEXEC) = 3</app/out/summary.json>
7     openat(AT_FDCWD</app>, "/tests/want.json", O_RDONLY|O_CLOEXEC) = 4</tests/want.json>
5     openat(AT_FDCWD</tests>, "/app/out/report.xml", O_RDONLY) = 3</app/out/report.xml>
"""


def _writable(acc: list[Access]) -> list[Access]:
    return [a for a in acc if a.path.startswith("/app/")]


def test_outputs_the_verifier_read_are_linked_to_its_own_files_by_a_name_a_solver_can_use() -> None:
    acc = parse_trace(TRACE_DATA, root_cwd="/tests")
    got = links(acc, _writable(acc), verifier_dir="/tests", fixed=True)
    assert got == {
        # cmp's cwd is the verifier's directory: reachable through /proc/self/cwd
        "/app/out/users.txt": "/proc/self/cwd/expected.txt",
        # python runs in /app: only the fixed mount path names the answer key
        "/app/out/summary.json": "/tests/want.json",
    }  # report.xml was written before it was read: the verifier's own, not an output


def test_a_verifier_in_a_random_directory_is_reached_only_through_proc_self_cwd() -> None:
    trace = TRACE_DATA.replace("/tests", "/run/envfactory-verifier-0f3a")
    acc = parse_trace(trace, root_cwd="/run/envfactory-verifier-0f3a")
    got = links(acc, _writable(acc), verifier_dir="/run/envfactory-verifier-0f3a", fixed=False)
    assert got == {"/app/out/users.txt": "/proc/self/cwd/expected.txt"}
    assert links(acc, [], verifier_dir="/run/envfactory-verifier-0f3a", fixed=False) == {}


def test_writes_are_replayed_as_text_within_bounds() -> None:
    report = b'<testsuite tests="1" failures="0"/>\n'
    got = replays(
        {
            "/app/out/report.xml": report,
            "/app/out/big.log": b"x" * (16 * 1024 + 1),
            "/app/out/data.bin": b"\x00\x01",
            "/app/out/latin.txt": b"caf\xe9",
        }
    )
    assert got == {"/app/out/report.xml": (report.decode(), 0o644)}
    many = replays({f"/app/out/r{i:02}.txt": b"y" * 8000 for i in range(20)})
    assert len(many) == 8 and sum(len(c) for c, _ in many.values()) <= 64 * 1024


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
        rows=[RowId.oracle()],
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
    # a sourced file is a shell's own load: it also gets the silenced variant (probes.tools)
    silenced = ["traced-silenced"] if naive == NAIVE_SOURCES else []
    assert [p.name for p in probes] == ["traced-shadow", *silenced]
    noop = pristine_state(docker_engine, surface_image, spec)
    assert _verdict(docker_engine, noop.prepared, naive, files) == 0
    state = produce_probe(docker_engine, surface_image, spec, noop, probes[0])
    assert _verdict(docker_engine, state.prepared, naive, files) == 1, "the probe fools nothing"
    assert _verdict(docker_engine, state.prepared, SOUND, files) == 0


#: (naive, sound, mount path, the link the probe plants): the output compared with an
#: answer key in the verifier's own directory, from there (random directory) and from the
#: workspace (fixed mount path); the sound twin refuses a symlinked output.
LINKED = {
    "proc-self-cwd": (
        "cmp -s /app/out/total.txt want.txt",
        "[ ! -L /app/out/total.txt ] && cmp -s /app/out/total.txt want.txt",
        None,
        "/proc/self/cwd/want.txt",
    ),
    "mount-path": (
        "cd /app && cmp -s out/total.txt /tests/want.txt",
        "cd /app && [ ! -L out/total.txt ] && cmp -s out/total.txt /tests/want.txt",
        "/tests",
        "/tests/want.txt",
    ),
}
#: Writes its verdict into the workspace, then reads it back: when reading the total
#: raises, the verdict file is whatever was there. The sound twin removes it first.
REPLAYED = (
    "python3 -I -c \"import pathlib; t = pathlib.Path('/app/out/total.txt').read_text(); "
    "pathlib.Path('/app/out/verdict.txt').write_text('pass' if t.strip() == '60' else 'fail')\"; "
    "grep -qx pass /app/out/verdict.txt"
)
REPLAYED_SOUND = "rm -f /app/out/verdict.txt; " + REPLAYED


def _verdict_of(engine, prepared, v, files) -> int:  # type: ignore[no-untyped-def]
    return verify_prepared(
        engine, prepared, spec=_spec(), verifier=v, verifier_files=verifier_tar(v, files)
    ).reward


def _probe_fools(engine, image, oracle, files, naive, sound, name, extra=None, mount=None):  # type: ignore[no-untyped-def]
    """The probe `name` traced from `naive` on the oracle, applied to the no-op state:
    (the probe, naive's verdict there, sound's verdict there)."""
    spec = _spec()
    v, s = (
        make_verifier(files, entry, extra).model_copy(update={"mount_path": mount})
        for entry in (naive, sound)
    )
    assert _verdict_of(engine, oracle.prepared, v, files) == 1
    assert _verdict_of(engine, oracle.prepared, s, files) == 1
    probes = traced_probes(
        engine, oracle.prepared, spec=spec, verifier=v, verifier_files=verifier_tar(v, files)
    )
    (probe,) = [p for p in probes if p.name == name]
    noop = pristine_state(engine, image, spec)
    assert _verdict_of(engine, noop.prepared, v, files) == 0
    state = produce_probe(engine, image, spec, noop, probe)
    return (
        probe,
        _verdict_of(engine, state.prepared, v, files),
        _verdict_of(engine, state.prepared, s, files),
    )


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(LINKED))
def test_an_output_linked_to_the_verifiers_answer_key_fools_a_verifier_that_follows_it(
    docker_engine, surface_image, oracle, files, case
) -> None:  # type: ignore[no-untyped-def]
    if strace_bundle() is None:
        pytest.skip("no strace on this host")
    naive, sound, mount, link = LINKED[case]
    extra = {"want.txt": b"60\n"}
    probe, fooled, sound_verdict = _probe_fools(
        docker_engine, surface_image, oracle, files, naive, sound, "traced-link", extra, mount
    )
    assert probe.targets == {"/app/out/total.txt": link}  # type: ignore[attr-defined]
    assert fooled == 1, "the probe fools nothing"
    assert sound_verdict == 0


@pytest.mark.docker
@pytest.mark.slow
def test_a_verdict_file_the_verifier_wrote_on_the_oracle_replayed_fools_one_that_trusts_it(
    docker_engine, surface_image, oracle, files
) -> None:  # type: ignore[no-untyped-def]
    if strace_bundle() is None:
        pytest.skip("no strace on this host")
    probe, fooled, sound_verdict = _probe_fools(
        docker_engine, surface_image, oracle, files, REPLAYED, REPLAYED_SOUND, "traced-replay"
    )
    assert probe.files == {"/app/out/verdict.txt": ("pass", 0o644)}  # type: ignore[attr-defined]
    assert fooled == 1, "the probe fools nothing"
    assert sound_verdict == 0


#: Harbor's contract: the script writes its reward file after the check. It sources an
#: optional workspace config first, in its own shell: a planted config that only exits 0
#: would end the script before any reward was written (reward 0), so the plant also claims
#: the reward. The sound twin never sources what the workspace holds.
SOURCES_THEN_REWARDS = (
    "cd /app; [ -f ./config.sh ] && . ./config.sh; "
    'if [ "$(cat out/total.txt 2>/dev/null)" = 60 ]; then r=1; else r=0; fi; '
    "mkdir -p /logs/verifier; echo $r > /logs/verifier/reward.txt"
)
SOURCES_THEN_REWARDS_SOUND = SOURCES_THEN_REWARDS.replace(
    "[ -f ./config.sh ] && . ./config.sh; ", ""
)


@pytest.mark.docker
@pytest.mark.slow
def test_a_sourced_plant_claims_harbors_reward_file_before_it_exits(
    docker_engine, surface_image, oracle, files
) -> None:  # type: ignore[no-untyped-def]
    if strace_bundle() is None:
        pytest.skip("no strace on this host")
    spec = _spec()
    v, s = (
        make_verifier(files, entry).model_copy(update={"reward_dir": "/logs/verifier"})
        for entry in (SOURCES_THEN_REWARDS, SOURCES_THEN_REWARDS_SOUND)
    )
    assert _verdict_of(docker_engine, oracle.prepared, v, files) == 1
    probes = traced_probes(
        docker_engine, oracle.prepared, spec=spec, verifier=v, verifier_files=verifier_tar(v, files)
    )
    (probe,) = [p for p in probes if p.name == "traced-shadow"]
    noop = pristine_state(docker_engine, surface_image, spec)
    assert _verdict_of(docker_engine, noop.prepared, v, files) == 0
    state = produce_probe(docker_engine, surface_image, spec, noop, probe)
    assert _verdict_of(docker_engine, state.prepared, v, files) == 1, "the plant claims nothing"
    assert _verdict_of(docker_engine, state.prepared, s, files) == 0
