"""Fuzzing the task importers: whatever a Harbor or Terminal-Bench task folder holds,
`load_task` returns a task that stores, or raises `InvalidTask` with a message; never
another exception. Each `@example` is a crash the fuzzer found, kept as a regression."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from envfactory.core.errors import InvalidInput, InvalidTask
from envfactory.store import ArtifactStore, Store
from envfactory.store.migrate import upgrade
from envfactory.suites.intake import import_one
from tests.hostile_inputs import (
    EXAMPLES,
    deep_tree,
    json_documents,
    refused_or_accepted,
    relative_paths,
    remove_deep,
    toml_documents,
    yaml_documents,
    yaml_scalars,
    yaml_values,
)
from verifiers.formats import ImportedTask, load_task
from verifiers.formats.options import EnvfactoryOptions

from .formats_helpers import HARBOR_MIN, TB_MIN

FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
OPTIONS = tuple(EnvfactoryOptions.model_fields)
HARBOR_TABLES = {
    "verifier": ("timeout_sec", "env", "verify_scope"),
    "verifier.env": ("A", "PATH", "1x"),
    "agent": ("timeout_sec",),
    "environment": ("cpus", "memory_mb", "memory", "storage_mb", "storage", "allow_internet"),
    "solution": ("env",),
    "solution.env": ("A", "B"),
    "task": ("name",),
    "envfactory": OPTIONS,
}
TB_KEYS = ("instruction", "descriptions", "max_agent_timeout_sec", "max_test_timeout_sec")
FORMATS = {"harbor": HARBOR_MIN, "terminal-bench": TB_MIN}
#: the files of each layout, and where a compose file goes
FILES = {
    "harbor": (*HARBOR_MIN, "solution/partial/half.sh", "environment/docker-compose.yaml"),
    "terminal-bench": (*TB_MIN, "docker-compose.yaml"),
}
#: where odd names go: the build context, the verifier's files, the solution
PLACES = {
    "harbor": ("environment", "tests", "solution/partial", "solution"),
    "terminal-bench": ("", "tests"),
}


class Stores:
    def __init__(self, root: Path) -> None:
        url = f"sqlite:///{root / 'store.db'}"
        upgrade(url)
        self.store = Store.open(url)
        self.artifacts = ArtifactStore(root / "artifacts")
        self.scratch = root / "tasks"
        self.scratch.mkdir()

    def task(self, kind: str, changes: dict[str, bytes]) -> Path:
        """A fresh minimal task of `kind`, with `changes` written over it (what the
        filesystem accepts: a name cannot be both a file and a directory)."""
        root = Path(tempfile.mkdtemp(dir=self.scratch)) / "task"
        files = {rel: text.encode() for rel, text in FORMATS[kind].items()} | changes
        for rel, data in files.items():
            target = root / rel
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
            except OSError:
                continue
        return root

    def imports(self, root: Path) -> None:
        """Loaded, or refused by name; a task that loads also stores."""
        task = refused_or_accepted(lambda: load_task(root, self.artifacts), InvalidTask)
        assert task is None or isinstance(task, ImportedTask)
        if task is not None:
            refused_or_accepted(
                lambda: import_one(root, self.store, self.artifacts, suite="fuzz"), InvalidInput
            )


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stores]:
    s = Stores(tmp_path_factory.mktemp("fuzz-formats"))
    with s.store:
        yield s


@FUZZ
@given(doc=toml_documents(HARBOR_TABLES))
# a size past float's range (OverflowError), below what Limits takes (raw ValidationError)
@example(doc='[environment]\nmemory = "infG"\n')
@example(doc='[environment]\nstorage = "1e400G"\n')
@example(doc='[environment]\nmemory = "-5G"\n')
@example(doc='[environment]\nstorage = "0.01M"\n')
def test_a_harbor_task_toml_of_any_shape_is_loaded_or_refused(stores: Stores, doc: str) -> None:
    stores.imports(stores.task("harbor", {"task.toml": doc.encode("utf-8", "surrogatepass")}))


tb_documents = st.one_of(
    yaml_documents(TB_KEYS, {"envfactory": OPTIONS}),
    json_documents(TB_KEYS, {"envfactory": OPTIONS}),
)


@FUZZ
@given(doc=tb_documents, instruction=st.booleans())
# a date that does not exist, a tag its value does not fit (ValueError from PyYAML)
@example(doc="when: 2001-13-45\n", instruction=True)
@example(doc="max_test_timeout_sec: !!int x\n", instruction=True)
def test_a_terminal_bench_task_yaml_of_any_shape_is_loaded_or_refused(
    stores: Stores, doc: str, instruction: bool
) -> None:
    text = ("instruction: Write hello.\n" if instruction else "") + doc
    stores.imports(stores.task("terminal-bench", {"task.yaml": text.encode()}))


def _any_file(kind: str) -> st.SearchStrategy[tuple[str, str]]:
    return st.tuples(st.just(kind), st.sampled_from(FILES[kind]))


task_files = st.one_of(*(_any_file(k) for k in FORMATS))


@FUZZ
@given(
    where=task_files,
    data=st.one_of(st.binary(max_size=300), st.text(max_size=300).map(str.encode)),
)
# a file read as text that is not UTF-8 (UnicodeDecodeError)
@example(where=("harbor", "instruction.md"), data=b"caf\xe9\n")
@example(where=("harbor", "solution/solve.sh"), data=b"echo caf\xe9\n")
@example(where=("harbor", "solution/partial/half.sh"), data=b"\x80")
@example(where=("terminal-bench", "task.yaml"), data=b"instruction: caf\xe9\n")
@example(where=("terminal-bench", "solution.sh"), data=b"echo \xe9\n")
# a NUL in a solution script (raw ValidationError from Step)
@example(where=("harbor", "solution/solve.sh"), data=b"echo a\x00b\n")
def test_any_bytes_in_any_file_of_a_task_are_loaded_or_refused(
    stores: Stores, where: tuple[str, str], data: bytes
) -> None:
    kind, rel = where
    stores.imports(stores.task(kind, {rel: data}))


def _odd_files(kind: str) -> st.SearchStrategy[tuple[str, dict[str, bytes]]]:
    place = st.sampled_from(PLACES[kind])
    names = st.dictionaries(relative_paths, st.binary(max_size=50), min_size=1, max_size=3)
    return st.tuples(
        st.just(kind),
        st.builds(
            lambda p, files: {f"{p}/{n}" if p else n: b for n, b in files.items()}, place, names
        ),
    )


@FUZZ
@given(case=st.one_of(*(_odd_files(k) for k in FORMATS)))
# a file name that is not UTF-8, or all whitespace (raw ValidationError from FileEntry)
@example(case=("harbor", {"tests/caf\udcc3.txt": b"x"}))
@example(case=("terminal-bench", {"tests/\udcff": b"x"}))
@example(case=("harbor", {"environment/ ": b"x"}))
# a partial solution whose file name gives no name (raw ValidationError)
@example(case=("harbor", {"solution/partial/ .sh": b"echo a\n"}))
def test_a_task_with_odd_file_names_is_loaded_or_refused(
    stores: Stores, case: tuple[str, dict[str, bytes]]
) -> None:
    kind, files = case
    stores.imports(stores.task(kind, files))


SERVICE_KEYS = ("build", "command", "environment", "healthcheck", "image", "ports", "depends_on")
service_names = st.one_of(
    st.sampled_from(("db", "DB_X", "cache-1", "x" * 40, "main")), yaml_scalars
)


def _service(name: str, body: list[tuple[str, str]]) -> str:
    return (
        f"  {name}:\n" + "".join(f"    {k}: {v}\n" for k, v in body)
        if body
        else f"  {name}: {{}}\n"
    )


compose_documents = st.builds(
    lambda services: "services:\n  main:\n    build: .\n" + "".join(services),
    st.lists(
        st.builds(
            _service,
            service_names,
            st.lists(st.tuples(st.sampled_from(SERVICE_KEYS), yaml_values), max_size=4),
        ),
        max_size=3,
    ),
)


def _compose(service: str) -> str:
    return "services:\n  main: {build: .}\n  " + service + "\n"


@FUZZ
@given(doc=st.one_of(compose_documents, yaml_documents(("services", "version"), {})))
# `command` of no list type (TypeError), a healthcheck test led by a list (unhashable) or
# `CMD-SHELL` alone (IndexError), a name no host may have (raw ValidationError), a date
# that does not exist (ValueError)
@example(doc=_compose("db: {build: db, command: 5}"))
@example(doc=_compose("db: {build: db, healthcheck: {test: [[1]]}}"))
@example(doc=_compose("db: {build: db, healthcheck: {test: [CMD-SHELL]}}"))
@example(doc=_compose("DB_X: {build: db}"))
@example(doc=_compose("db: {build: db, x: 2001-13-40}"))
def test_a_compose_file_of_any_shape_is_loaded_or_refused(stores: Stores, doc: str) -> None:
    changes = {
        "environment/docker-compose.yaml": doc.encode(),
        "environment/db/Dockerfile": b"FROM debian\n",
    }
    stores.imports(stores.task("harbor", changes))


@pytest.mark.parametrize("kind", FORMATS)
def test_the_fuzz_base_tasks_load(stores: Stores, kind: str) -> None:
    """The properties above are only worth something if the untouched tasks load."""
    root = stores.task(kind, {})
    assert load_task(root, stores.artifacts).format == kind
    stores.imports(root)


@pytest.mark.parametrize("kind", FORMATS)
def test_tests_nested_1100_directories_deep_are_refused_not_a_recursion_error(
    stores: Stores, kind: str
) -> None:
    """Regression: `rglob` recursed past Python's stack (RecursionError)."""
    root = stores.task(kind, {})
    deep_tree(root / "tests", 1100)
    try:
        with pytest.raises(InvalidTask, match="nested deeper than 64 levels"):
            load_task(root, stores.artifacts)
    finally:
        remove_deep(root / "tests" / "d")


def test_a_path_past_path_max_in_a_task_is_refused_by_name_not_an_os_error(
    stores: Stores,
) -> None:
    """Regression: `is_symlink` failed with ENAMETOOLONG."""
    root = stores.task("harbor", {})
    deep_tree(root / "environment", 20, "n" * 250)
    with pytest.raises(InvalidTask, match=r"cannot be read \(File name too long\)"):
        load_task(root, stores.artifacts)
