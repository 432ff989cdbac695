"""Fuzzing the seed loaders: whatever a seed file, a seed directory or an upload holds,
`load_seed` and `draft_from_upload` return a draft that stores, or raise `InvalidSeed`
with a message; never another exception. Each `@example` is a crash the fuzzer found,
kept as a regression."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from envfactory.core.errors import InvalidInput, InvalidSeed
from envfactory.core.settings import SeedLimits
from envfactory.seeds import SeedDraft, Upload, draft_from_upload, load_seed, store_draft
from envfactory.seeds.files import TEXT_SUFFIXES
from envfactory.seeds.format import ALLOWED_KEYS
from envfactory.seeds.intake import SEED_FILE_NAMES
from envfactory.store import ArtifactStore, Store
from envfactory.store.migrate import upgrade
from tests.hostile_inputs import (
    EXAMPLES,
    deep_tree,
    file_names,
    json_documents,
    odd_text,
    refused_or_accepted,
    relative_paths,
    remove_deep,
    yaml_documents,
)

LIMITS = SeedLimits(max_attachments=6, max_attachment_bytes=4_000, max_total_bytes=10_000)
HEAD = "title: t\ndescription: d\ndomain: x\n"
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

_SECTIONS = {"constraints": ALLOWED_KEYS["constraints"]}
seed_documents = st.one_of(
    yaml_documents(ALLOWED_KEYS[""], _SECTIONS), json_documents(ALLOWED_KEYS[""], _SECTIONS)
)
#: what a FILE seed may be called: any name is read as YAML
seed_file_names = st.sampled_from((*SEED_FILE_NAMES, "seed.json", "README.md", "seed"))
suffixes = st.sampled_from(sorted(TEXT_SUFFIXES) + ["", ".bin", ".tar.gz", ".PY"])


class Stores:
    def __init__(self, root: Path) -> None:
        url = f"sqlite:///{root / 'store.db'}"
        upgrade(url)
        self.store = Store.open(url)
        self.artifacts = ArtifactStore(root / "artifacts")
        self.scratch = root / "inputs"
        self.scratch.mkdir()

    def fresh_dir(self) -> Path:
        return Path(tempfile.mkdtemp(dir=self.scratch))

    def stores(self, draft: SeedDraft | None) -> None:
        """A draft the loader accepted must store, or be refused with the project's own
        error (a duplicate)."""
        assert draft is None or isinstance(draft, SeedDraft)
        if draft is not None:
            refused_or_accepted(
                lambda: store_draft(draft, store=self.store, artifacts=self.artifacts),
                InvalidInput,
            )


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stores]:
    s = Stores(tmp_path_factory.mktemp("fuzz-seeds"))
    with s.store:
        yield s


def _every_way(stores: Stores, data: bytes, name: str) -> None:
    """The bytes as a FILE seed, as a DIR seed (where the name is one), and as an upload."""
    d = stores.fresh_dir()
    (d / name).write_bytes(data)
    stores.stores(refused_or_accepted(lambda: load_seed(d / name, LIMITS), InvalidSeed))
    if name in SEED_FILE_NAMES:
        stores.stores(refused_or_accepted(lambda: load_seed(d, LIMITS), InvalidSeed))
    stores.stores(refused_or_accepted(lambda: draft_from_upload(data, [], LIMITS), InvalidSeed))


@FUZZ
@given(data=st.binary(max_size=400), name=seed_file_names)
def test_any_bytes_in_a_seed_file_are_loaded_or_refused_by_name(
    stores: Stores, data: bytes, name: str
) -> None:
    _every_way(stores, data, name)


@FUZZ
@given(text=st.text(max_size=400), head=st.booleans(), name=seed_file_names)
def test_any_text_in_a_seed_file_is_loaded_or_refused_by_name(
    stores: Stores, text: str, head: bool, name: str
) -> None:
    _every_way(stores, ((HEAD if head else "") + text).encode(), name)


@FUZZ
@given(doc=seed_documents, head=st.booleans())
# a date that does not exist, as a value and as a key (ValueError from datetime)
@example(doc="title: 2001-13-45\n", head=False)
@example(doc="2001-02-30: x\n", head=True)
# explicit tags on values that do not fit them (ValueError, IndexError, KeyError, ...)
@example(doc="constraints: {max_turns: !!int abc}\n", head=True)
@example(doc="title: !!float ''\n", head=False)
@example(doc="title: !!bool maybe\n", head=False)
@example(doc="title: !!timestamp nonsense\n", head=False)
# `!!map` on a scalar or a list reached the duplicate-key check (ValueError, TypeError)
@example(doc="title: !!map x\n", head=False)
@example(doc="title: !!map [a, b]\n", head=False)
# an escaped lone surrogate in a path reached lstat (UnicodeEncodeError)
@example(doc='attachments: ["a\\ud800"]\n', head=True)
def test_a_seed_of_the_right_keys_with_values_of_any_shape_is_loaded_or_refused(
    stores: Stores, doc: str, head: bool
) -> None:
    _every_way(stores, ((HEAD if head else "") + doc).encode(), "seed.yaml")


def _make_tree(root: Path, files: dict[str, bytes]) -> list[str]:
    """Write what the filesystem accepts (a name cannot be a file and a directory)."""
    made = []
    for rel, data in files.items():
        target = root / rel
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        except OSError:
            continue
        made.append(rel)
    return made


tree_files = st.dictionaries(
    st.builds(lambda p, s: p + s, relative_paths, suffixes), st.binary(max_size=300), max_size=5
)


@FUZZ
@given(files=tree_files, listing=st.sampled_from(("none", "all", "top", "each")))
# a file name that is not UTF-8 reached the content hash (UnicodeEncodeError)
@example(files={"caf\udce9.csv": b"x"}, listing="none")
@example(files={"data/\udcff": b"x"}, listing="top")
# a stored attachment's path is trimmed: " " failed to store, " a.txt" became "a.txt"
@example(files={" ": b"x"}, listing="none")
@example(files={" a.txt": b"x"}, listing="each")
def test_a_seed_directory_with_odd_file_names_is_loaded_or_refused(
    stores: Stores, files: dict[str, bytes], listing: str
) -> None:
    d = stores.fresh_dir()
    made = _make_tree(d, files)
    listed = {
        "none": None,
        "all": [],
        "top": sorted({m.split("/")[0] for m in made}),
        "each": made,
    }[listing]
    text = HEAD
    if listed is not None:
        # JSON strings are YAML double-quoted strings: a name survives whatever it holds
        text += "attachments: [" + ", ".join(json.dumps(p) for p in listed) + "]\n"
    (d / "seed.yaml").write_text(text)
    stores.stores(refused_or_accepted(lambda: load_seed(d, LIMITS), InvalidSeed))


upload_names = st.one_of(
    relative_paths,
    odd_text,
    st.sampled_from(("a", "a/b", "a/b/c", "", " ", "/etc/passwd", "../x", "a//b", "./a", "a\\b")),
)


@FUZZ
@given(
    uploads=st.lists(st.tuples(upload_names, st.binary(max_size=200)), max_size=5),
    listed=st.one_of(st.none(), st.lists(upload_names, max_size=3)),
)
# a name that is not UTF-8 (an undecodable byte, a lone surrogate) reached the content hash
@example(uploads=[("a\udcff", b"x")], listed=None)
@example(uploads=[("a\ud800.txt", b"x")], listed=["a\ud800.txt"])
@example(uploads=[("a", b"1"), ("a/b", b"2")], listed=None)
def test_an_upload_with_odd_names_is_loaded_or_refused(
    stores: Stores, uploads: list[tuple[str, bytes]], listed: list[str] | None
) -> None:
    text = HEAD
    if listed is not None:
        text += "attachments: " + json.dumps(listed) + "\n"
    parts = [Upload(name=n, size=len(b), data=b) for n, b in uploads]
    stores.stores(
        refused_or_accepted(lambda: draft_from_upload(text.encode(), parts, LIMITS), InvalidSeed)
    )


@FUZZ
@given(name=file_names)
def test_one_attachment_of_any_name_is_loaded_or_refused(stores: Stores, name: str) -> None:
    d = stores.fresh_dir()
    made = _make_tree(d, {name: b"x\n"})
    (d / "seed.yaml").write_text(HEAD)
    stores.stores(refused_or_accepted(lambda: load_seed(d, LIMITS), InvalidSeed))
    if made:
        listed = HEAD + "attachments: [" + json.dumps(name) + "]\n"
        (d / "seed.yaml").write_text(listed)
        stores.stores(refused_or_accepted(lambda: load_seed(d, LIMITS), InvalidSeed))


def test_the_fuzz_strategies_reach_a_valid_seed(stores: Stores) -> None:
    """The properties above are only worth something if valid drafts come out too."""
    d = stores.fresh_dir()
    (d / "seed.yaml").write_text(HEAD + "attachments: [data]\n")
    os.mkdir(d / "data")
    (d / "data" / "a.csv").write_text("x\n")
    draft = load_seed(d, LIMITS)
    assert [f.path for f in draft.files] == ["data/a.csv"]
    stores.stores(draft)


def test_a_path_past_path_max_in_a_seed_directory_is_refused_by_name_not_an_os_error(
    stores: Stores,
) -> None:
    """Regression: lstat failed with ENAMETOOLONG (and os.walk skipped the directory it
    could not list without a word)."""
    d = stores.fresh_dir()
    (d / "seed.yaml").write_text(HEAD)
    deep_tree(d, 20, "n" * 250)
    with pytest.raises(InvalidSeed, match=r"cannot be read \(File name too long\)"):
        load_seed(d, LIMITS)


@pytest.mark.parametrize(
    ("entry", "says"),
    [
        ("job.py/x", "not found in the seed directory"),  # NotADirectoryError
        ("x" * 300, "cannot be read (File name too long)"),  # OSError ENAMETOOLONG
    ],
)
def test_a_listed_attachment_through_a_file_or_past_name_max_is_refused_by_name(
    stores: Stores, entry: str, says: str
) -> None:
    d = stores.fresh_dir()
    (d / "job.py").write_text("print(1)\n")
    (d / "seed.yaml").write_text(HEAD + f"attachments: [{entry}]\n")
    with pytest.raises(InvalidSeed) as info:
        load_seed(d, LIMITS)
    assert says in str(info.value) and info.value.where.startswith("attachment '")


def test_a_seed_directory_nested_1100_levels_names_the_directory_not_dot(
    stores: Stores,
) -> None:
    """With no `attachments:` the walk starts at the seed directory: the too-deep
    attachment was named '.'."""
    d = stores.fresh_dir()
    (d / "seed.yaml").write_text(HEAD)
    (d / "data").mkdir()
    deep_tree(d / "data", 1100)
    try:
        with pytest.raises(InvalidSeed, match="attachment 'data': has directories nested deeper"):
            load_seed(d, LIMITS)
    finally:
        remove_deep(d / "data" / "d")
