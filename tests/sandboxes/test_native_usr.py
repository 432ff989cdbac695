"""Kernel-overlay /usr/lib and /usr/local for verification containers (`native_usr.py`).

On the real engine: the view is the image's own, file for file (listing and contents,
against a container without it), including images whose layers override files, change
modes and owners, link files; a layer that deletes something keeps the storage driver's
view for that directory; writes there count against the disk quota and vanish with the
container; nothing is left behind. The layer rules themselves are checked on trees made
here (no engine).
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from envfactory.core.errors import SandboxBroken
from envfactory.core.models import Limits, Purpose
from envfactory.core.settings import SandboxSettings
from sandboxes import DockerEngine
from sandboxes import native_usr as NU
from sandboxes.native_usr import NativeUsr, layer_dirs
from tests.native_view import skip_unless_native

#: names, types, modes, owners, sizes, times, link targets; contents. Not link counts:
#: overlayfs reports 1 for a directory more than one layer holds ("not counted") and a
#: lower file's own count where a later layer replaced its hard-link partner.
LISTING = (
    "find /usr/lib /usr/local -printf '%p %y %m %U %G %s %T@ %l\\n' | sort | md5sum; "
    "find /usr/lib /usr/local -type f -print0 | sort -z | xargs -0 md5sum | md5sum; "
    "find /usr/lib /usr/local | wc -l; "
    "find /usr/local/lib/ef /usr/lib/ef /usr/lib/ef-x -printf '%p %y %m %U %G %s %l\\n' "
    "2>/dev/null | sort"
)
NATIVE = "grep -o ' /usr/[a-z]* overlay ' /proc/mounts | sort"

ADDS_AND_CHANGES = """\
FROM {base}
RUN mkdir -p /usr/local/lib/ef/sub /usr/lib/ef && echo one > /usr/local/lib/ef/a \\
 && ln -s a /usr/local/lib/ef/link && ln /usr/local/lib/ef/a /usr/local/lib/ef/hard \\
 && echo lib > /usr/lib/ef/x && chown -R 1000:1000 /usr/local/lib/ef/sub
RUN echo two > /usr/local/lib/ef/a && chmod 4750 /usr/local/lib/ef/a \\
 && touch -d 2001-02-03 /usr/lib/ef/x && mkdir /usr/local/lib/ef/new && chmod 700 /usr/local/lib/ef
"""
DELETES = """\
FROM {base}
RUN mkdir -p /usr/local/lib/ef/gone && echo one > /usr/local/lib/ef/a && echo b > /usr/local/lib/ef/b
RUN rm /usr/local/lib/ef/a && rm -r /usr/local/lib/ef/gone && echo lib > /usr/lib/ef-x
"""


def _image(engine: DockerEngine, tmp: Path, dockerfile: str, base: str) -> str:
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "Dockerfile").write_text(dockerfile.format(base=base))
    return engine.build_dir(tmp).image


@pytest.fixture
def engine(docker_engine: DockerEngine, tmp_path: Path) -> Iterator[DockerEngine]:
    e = DockerEngine(
        SandboxSettings(pool_size=2, disk_poll_s=0.2, scratch_dir=tmp_path / "scratch"),
        client=docker_engine.client,
        run_id=docker_engine.run_id,
    )
    if not e.native.enabled:
        pytest.skip("not root: kernel-overlay volumes are off")
    yield e
    e.close()


def _run(engine: DockerEngine, image: str, script: str, *, native: bool) -> str:
    with engine.sandbox(image, purpose=Purpose.VERIFY, network=False, native_usr=native) as box:
        res = box.exec(["/bin/sh", "-c", script], timeout=300)
        assert res.ok, res.stderr
        return res.stdout


def _fuse(engine: DockerEngine) -> None:
    skip_unless_native(engine)


@pytest.mark.docker
@pytest.mark.slow
def test_the_kernel_view_lists_and_reads_exactly_as_the_image(
    engine: DockerEngine, base_image: str, tmp_path: Path
) -> None:
    _fuse(engine)
    for image in (base_image, _image(engine, tmp_path / "ctx", ADDS_AND_CHANGES, base_image)):
        assert _run(engine, image, NATIVE, native=True).split() == [
            "/usr/lib",
            "overlay",
            "/usr/local",
            "overlay",
        ]
        assert _run(engine, image, NATIVE, native=False) == ""
        plain = _run(engine, image, LISTING, native=False)
        assert _run(engine, image, LISTING, native=True) == plain
        if image != base_image:
            assert "/usr/local/lib/ef/a f 4750 0 0 4 " in plain  # the overriding layer's file
            assert "/usr/local/lib/ef/link l 777 0 0 1 a" in plain


@pytest.mark.docker
@pytest.mark.slow
def test_a_layer_that_deletes_keeps_the_drivers_view_for_that_directory_only(
    engine: DockerEngine, base_image: str, tmp_path: Path
) -> None:
    _fuse(engine)
    image = _image(engine, tmp_path / "ctx", DELETES, base_image)
    assert _run(engine, image, NATIVE, native=True).split() == ["/usr/lib", "overlay"]
    listing = _run(engine, image, LISTING, native=True)
    assert listing == _run(engine, image, LISTING, native=False)
    assert "/usr/local/lib/ef/b " in listing and "/usr/local/lib/ef/a " not in listing
    assert "/usr/local/lib/ef/gone" not in listing


@pytest.mark.docker
@pytest.mark.slow
def test_writes_there_are_fresh_per_container_counted_and_removed(
    engine: DockerEngine, base_image: str, tmp_path: Path
) -> None:
    _fuse(engine)
    write = "test ! -e /usr/local/lib/mark && echo x > /usr/local/lib/mark && echo wrote"
    assert _run(engine, base_image, write, native=True).strip() == "wrote"
    assert _run(engine, base_image, write, native=True).strip() == "wrote"  # not the last one's
    # /usr/lib alone is far over 64 MiB: the watchdog counts what was written, not the view
    limits = Limits(disk_mb=64)
    with engine.sandbox(base_image, limits=limits, purpose=Purpose.VERIFY, native_usr=True) as box:
        assert box.exec("sleep 1.5; echo alive").stdout.strip() == "alive"
        res = box.exec("dd if=/dev/zero of=/usr/lib/fill bs=1M count=1024 status=none", timeout=120)
        assert res.disk_exceeded
        with pytest.raises(SandboxBroken):
            box.exec("true")
    assert list((tmp_path / "scratch").iterdir()) == []
    volumes = engine.client.api.volumes(filters={"label": f"envfactory.run_id={engine.run_id}"})
    assert not volumes.get("Volumes")


@pytest.mark.docker
def test_a_scratch_directory_whose_container_is_gone_is_swept_by_gc(
    engine: DockerEngine, base_image: str, tmp_path: Path
) -> None:
    _fuse(engine)
    scratch = tmp_path / "scratch"
    with engine.sandbox(base_image, purpose=Purpose.VERIFY, native_usr=True) as box:
        name = engine.client.api.inspect_container(box.id)["Name"].lstrip("/")
        (orphan := scratch / "envfactory-verify-gone000000" / "usr-lib" / "u").mkdir(parents=True)
        old = time.time() - 3600
        for path in (scratch / name, orphan.parents[1]):
            os.utime(path, (old, old))
        removed = engine.gc(run_id="no-such-run")
        assert "scratch:envfactory-verify-gone000000" in removed
        assert (scratch / name).is_dir()  # its container is alive


# -- the layer rules, on trees made here --------------------------------------------------


def _layers(tmp: Path, *trees: dict[str, str | None]) -> dict[str, object]:
    """A fuse-overlayfs GraphDriver section over layer directories (top first): each tree
    maps a path to file content, or None for a directory."""
    tmp.mkdir(parents=True, exist_ok=True)
    dirs = []
    for i, tree in enumerate(trees):
        root = tmp / f"layer{i}"
        root.mkdir()
        for rel, content in tree.items():
            path = root / rel
            if content is None:
                path.mkdir(parents=True, exist_ok=True)
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(content)
        dirs.append(str(root))
    return {
        "Name": "fuse-overlayfs",
        "Data": {"UpperDir": dirs[0], "LowerDir": ":".join(dirs[1:])},
    }


def test_layers_are_listed_top_first_and_layers_without_the_directory_skipped(
    tmp_path: Path,
) -> None:
    g = _layers(tmp_path, {"usr/local/a": "2"}, {"etc/x": "1"}, {"usr/local/a": "1"})
    data = g["Data"]
    assert isinstance(data, dict)
    top, bottom = data["UpperDir"], data["LowerDir"].split(":")[1]
    assert layer_dirs(g, "/usr/local") == (f"{top}/usr/local", f"{bottom}/usr/local")
    assert layer_dirs(g, "/usr/lib") is None  # no layer has it


@pytest.mark.parametrize(
    "top",
    [
        {"usr/local/lib/.wh.gone": ""},  # a deleted file
        {"usr/local/.wh..wh..opq": ""},  # an opaque directory
        {"usr/.wh.local": ""},  # the directory itself deleted
        {".wh.usr": ""},  # an ancestor deleted
        {".wh..wh..opq": ""},  # the whole root made opaque
        {"usr/local": "a file now"},  # replaced by a file
        {"usr": "a file now"},  # an ancestor replaced by a file
    ],
    ids=[
        "whiteout",
        "opaque",
        "deleted",
        "ancestor-deleted",
        "root-opaque",
        "file",
        "ancestor-file",
    ],
)
def test_any_deletion_or_type_change_keeps_the_drivers_view(
    tmp_path: Path, top: dict[str, str | None]
) -> None:
    g = _layers(tmp_path, top, {"usr/local/lib/gone": "1", "usr/local/keep": "1"})
    assert layer_dirs(g, "/usr/local") is None


def test_an_overlay_attribute_or_a_character_device_whiteout_keeps_the_drivers_view(
    tmp_path: Path,
) -> None:
    g = _layers(tmp_path, {"usr/local/lib": None}, {"usr/local/lib/x": "1"})
    data = g["Data"]
    assert isinstance(data, dict)
    lib = Path(data["UpperDir"]) / "usr/local/lib"
    assert layer_dirs(g, "/usr/local") is not None
    os.setxattr(lib, "user.overlay.opaque", b"y")
    assert layer_dirs(g, "/usr/local") is None
    os.removexattr(lib, "user.overlay.opaque")
    if os.geteuid() == 0:
        os.mknod(lib / "x", 0o600 | 0o020000, os.makedev(0, 0))  # the kernel's whiteout
        assert layer_dirs(g, "/usr/local") is None


def test_other_drivers_and_unreadable_layers_keep_the_drivers_view(tmp_path: Path) -> None:
    g = _layers(tmp_path, {"usr/lib/x": "1"})
    assert layer_dirs({**g, "Name": "overlay2"}, "/usr/lib") is None
    assert layer_dirs({**g, "Data": {"UpperDir": str(tmp_path / "absent")}}, "/usr/lib") is None
    assert layer_dirs(g, "/usr/lib") is not None


def test_a_plan_gives_the_mount_point_the_top_layers_attributes(tmp_path: Path) -> None:
    native = NativeUsr(tmp_path / "scratch")
    if not native.enabled:
        pytest.skip("not root")
    g = _layers(tmp_path, {"usr/lib/x": "1"}, {"usr/local/y": "1"})
    data = g["Data"]
    assert isinstance(data, dict)
    top_lib = Path(data["UpperDir"]) / "usr/lib"
    os.chmod(top_lib, 0o751)
    os.utime(top_lib, (1_000_000, 1_000_000))
    plan = native.plan({"Id": "sha256:x", "GraphDriver": g}, "box", {"l": "v"})
    assert plan is not None and set(plan.uppers) == {"/usr/lib", "/usr/local"}
    st = os.stat(plan.uppers["/usr/lib"])
    assert (st.st_mode & 0o7777, st.st_mtime) == (0o751, 1_000_000)
    native.release(plan.scratch)
    assert not plan.scratch.exists()


class _Unmountable(NativeUsr):
    """Plans volumes whose lower directory does not exist: the engine refuses to start."""

    def plan(self, image_info, name, labels):  # type: ignore[no-untyped-def]
        planned = super().plan(image_info, name, labels)
        if planned is None or self._layers.get(str(image_info.get("Id"))) == {}:
            return planned
        broken = [
            NU._volume(
                m["Target"], f"lowerdir={self.scratch_root}/absent,upperdir={u},workdir={u}w", {}
            )
            for m, u in zip(planned.mounts, planned.uppers.values(), strict=True)
        ]
        return replace(planned, mounts=tuple(broken))


@pytest.mark.docker
def test_volumes_the_engine_refuses_fall_back_to_the_drivers_view(
    engine: DockerEngine, base_image: str, tmp_path: Path
) -> None:
    _fuse(engine)
    engine.native = _Unmountable(tmp_path / "scratch")
    assert _run(engine, base_image, "echo ran", native=True).strip() == "ran"
    assert engine.native.last_refusal is not None
    assert _run(engine, base_image, NATIVE, native=True) == ""  # the image keeps the plain view
    assert list((tmp_path / "scratch").iterdir()) == []


# -- the scratch root and the layer cache (an attacker pass found each) -------------------


def _native(root: Path) -> NativeUsr:
    native = NativeUsr(root)
    if not native.enabled:
        pytest.skip("not root")
    return native


def _info(g: dict[str, object], image_id: str = "sha256:x") -> dict[str, object]:
    return {"Id": image_id, "GraphDriver": g}


def test_a_scratch_root_made_here_is_private(tmp_path: Path) -> None:
    native = _native(tmp_path / "deep" / "scratch")
    plan = native.plan(_info(_layers(tmp_path, {"usr/lib/x": "1"})), "box", {})
    assert plan is not None
    st = os.lstat(tmp_path / "deep" / "scratch")
    assert (st.st_uid, st.st_mode & 0o777) == (0, 0o700)


@pytest.mark.parametrize("kind", ["link", "open", "foreign", "file"])
def test_a_scratch_root_others_could_reach_turns_the_volumes_off(tmp_path: Path, kind: str) -> None:
    """A host user who can reach it could read a verification's writes, plant files in a
    running one, or swap an upper directory for a link; gc must not delete through it."""
    root, victim = tmp_path / "scratch", tmp_path / "victim"
    (victim / "data").mkdir(parents=True)
    old = time.time() - 3600
    os.utime(victim / "data", (old, old))
    if kind == "link":
        root.symlink_to(victim)
    elif kind == "file":
        root.write_text("")
    else:
        root.mkdir(mode=0o755 if kind == "open" else 0o700)
        os.chmod(root, 0o755 if kind == "open" else 0o700)
        if kind == "foreign":
            os.chown(root, 65534, 65534)
    native = _native(root)
    assert native.plan(_info(_layers(tmp_path, {"usr/lib/x": "1"})), "box", {}) is None
    assert native.why_off and str(root) in native.why_off
    assert native.sweep([]) == [] and (victim / "data").is_dir()


def test_the_layer_cache_follows_the_layer_directories_not_only_the_image_id(
    tmp_path: Path,
) -> None:
    """`docker save`, `rmi`, `load`: the same id, new layer directories."""
    native = _native(tmp_path / "scratch")
    first = _layers(tmp_path / "a", {"usr/lib/x": "1"})
    plan = native.plan(_info(first), "one", {})
    assert plan is not None
    native.release(plan.scratch)
    again = _layers(tmp_path / "b", {"usr/lib/x": "1"})
    plan = native.plan(_info(again), "two", {})
    assert (
        plan is not None
        and str(tmp_path / "b") in plan.mounts[0]["VolumeOptions"]["DriverConfig"]["Options"]["o"]
    )
    native.release(plan.scratch)
    data = first["Data"]
    assert isinstance(data, dict)
    shutil.rmtree(data["UpperDir"])  # cached, then gone: the plain view, nothing left
    assert native.plan(_info(first), "three", {}) is None
    assert list((tmp_path / "scratch").iterdir()) == []
