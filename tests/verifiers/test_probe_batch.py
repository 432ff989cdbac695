"""Probes batched in one exec leave exactly the workspaces one exec each would leave, and a
batch cut short hands its unfinished probes to their own execs."""

from __future__ import annotations

import io
import tarfile

import pytest

from envfactory.core.models import EnvironmentSpec, Purpose, StateKind, VerifyScope
from envfactory.core.models.rows import RowId
from verifiers import archives, states
from verifiers.runner import PreparedState, Replay

from ..native_view import MOUNTS, skip_unless_native
from .inline import InlineProbe
from .sumtask import SPEC

LONG = "d" * 60 + "/" + "f" * 70 + ".txt"  # a path past the 100 bytes a tar name field holds

#: a base whose workspace has what tars encode specially: a long name, a symlink, a hard
#: link, an executable and an empty directory
BASE_SCRIPT = (
    f"cd /workspace && mkdir -p {LONG.split('/')[0]} empty && echo long > {LONG} && "
    "echo target > t.txt && ln -s t.txt link && ln t.txt hard && "
    "printf '#!/bin/sh\\n' > run.sh && chmod 755 run.sh && "
    # two sandboxes, the same base: every time pinned (twice: the first pass copies the
    # image's files up, which sets their directories' times)
    "for pass in 1 2; do find /workspace -exec touch -h -d @1700000000 {} +; done"
)


PINNED = "touch -h -d @1700000000"
PROBES = (
    InlineProbe("unchanged", "true"),
    # python, not shell; a file written and every time it moved pinned back
    InlineProbe(
        "python-writer",
        "python3 - <<'EOF'\nimport os\n"
        "p = '/workspace/out/total.txt'\nos.makedirs(os.path.dirname(p), exist_ok=True)\n"
        "open(p, 'w').write('6\\n')\n"
        "for q in (p, os.path.dirname(p), '/workspace'):\n    os.utime(q, (1700000000, 1700000000))\n"
        "EOF",
    ),
    InlineProbe("gone", "rm -rf /workspace"),
    InlineProbe("fails", "echo boom >&2; exit 3"),
    # leaves a writer behind: it must be dead before the workspace is taken
    InlineProbe(
        "stray",
        f"(sleep 0.3; echo late > /workspace/late.txt) & {PINNED} /workspace; exit 0",
    ),
    # its own shell, whatever it does to itself: killed, a strays' writer still dies; a
    # here-document left open or a stray parenthesis is its own syntax
    InlineProbe("kills-itself", "(sleep 0.3; echo late > /workspace/late2.txt) & kill -9 $$"),
    # writes where the next probe's copy goes: that copy is made afresh
    InlineProbe(
        "plants-ahead",
        "d=/.envfactory-probes/8/0/workspace; mkdir -p $d && echo 1 > $d/planted",
    ),
    InlineProbe("open-heredoc", "echo start; cat <<EOF\nx"),
    InlineProbe("stray-paren", "echo p > /workspace/p.txt )"),
    # last, as the tool-hijacking probes run: the tools copying workspaces, shadowed in
    # a PATH directory searched first, must not be the ones used
    InlineProbe(
        "hijacker",
        "for t in cp mkdir rm; do printf '#!/bin/sh\\nexit 0\\n' > /usr/local/bin/$t; "
        f"chmod 755 /usr/local/bin/$t; done; echo x > /workspace/x; {PINNED} /workspace/x /workspace",
    ),
)


def _base(spec: EnvironmentSpec) -> states.ProducedState:
    prepared = PreparedState("unused", VerifyScope.WORKSPACE)
    recipe = (Replay(("/bin/sh", "-c", BASE_SCRIPT), workdir="/"),)
    return states.ProducedState(RowId.prefix(1), StateKind.PARTIAL, prepared, recipe)


@pytest.mark.docker
@pytest.mark.parametrize("native", [False, True], ids=["plain", "kernel-usr"])
def test_batched_probes_leave_what_one_exec_each_leaves(docker_engine, sum_image, native) -> None:  # type: ignore[no-untyped-def]
    # Batched as gates batch them: with the image's /usr/lib and /usr/local through the
    # kernel's overlayfs where the engine mounts them (the hijacker writes there); alone,
    # in the storage driver's view. The workspaces are byte for byte the same.
    spec = SPEC
    if native:
        skip_unless_native(docker_engine)
    with docker_engine.sandbox(
        sum_image, limits=spec.limits, purpose=Purpose.TEST, native_usr=native
    ) as box:
        if native:
            assert box.exec(["/bin/sh", "-c", MOUNTS]).stdout.strip()
        states.run_recipe(box, spec, _base(spec).recipe, ["base"])
        keep, kib = states._keep_workspace(box, spec)
        assert kib is not None and states._batchable(spec, kib, len(PROBES))
        batched = states._run_batch(box, spec, keep, PROBES)
    with docker_engine.sandbox(sum_image, limits=spec.limits, purpose=Purpose.TEST) as box:
        states.run_recipe(box, spec, _base(spec).recipe, ["base"])
        keep, _ = states._keep_workspace(box, spec)
        alone = {p.name: states._run_alone(box, spec, keep, p) for p in PROBES}
    by_name = {p.name: batched[i] for i, p in enumerate(PROBES)}
    assert sorted(batched) == list(range(len(PROBES)))
    for p in PROBES:
        assert by_name[p.name] == alone[p.name], p.name
    ws = dict(by_name["unchanged"][0])["/workspace"]
    assert ws is not None
    got = archives.read_members(ws)
    assert got[f"workspace/{LONG}"] == b"long\n"
    assert dict(by_name["gone"][0]) == {"/workspace": None}
    assert by_name["fails"][1] == ("probe fails exited 3: boom",)
    for name in ("stray", "kills-itself"):
        members = archives.read_members(dict(by_name[name][0])["/workspace"])
        assert not {"workspace/late.txt", "workspace/late2.txt"} & set(members), name
    assert by_name["kills-itself"][1][0].startswith("probe kills-itself exited 137")
    after = archives.read_members(dict(by_name["stray-paren"][0])["/workspace"])  # probe 8
    assert "workspace/planted" not in after


@pytest.mark.docker
def test_a_batch_cut_short_leaves_the_rest_to_their_own_execs(docker_engine, sum_image) -> None:  # type: ignore[no-untyped-def]
    # The batch gets one exec's time limit; two slow probes overrun it, so the second one
    # and the one after it are produced by execs of their own, and nothing the cut batch
    # left running (the second probe's writer) reaches their workspaces.
    spec = SPEC.model_copy(update={"limits": SPEC.limits.model_copy(update={"exec_timeout_s": 4})})
    slow = "sleep 2.5; echo {0} > /workspace/{0}.txt; " + PINNED + " /workspace/{0}.txt /workspace"
    probes = (
        InlineProbe("first", slow.format("first")),
        InlineProbe("second", "(" + slow.format("second") + ") & sleep 2.5; wait"),
        InlineProbe(
            "third", f"echo third > /workspace/third.txt; {PINNED} /workspace/third.txt /workspace"
        ),
    )
    produced = list(states.produce_probe_batch(docker_engine, sum_image, spec, _base(spec), probes))
    assert [s.name for s in produced] == [f"probe:{p.name}@prefix-1" for p in probes]
    for st, mine in zip(produced, ("first", "second", "third"), strict=True):
        members = archives.read_members(dict(st.prepared.workspace)["/workspace"])
        written = {
            n.rsplit("/", 1)[1]
            for n in members
            if n.endswith(("first.txt", "second.txt", "third.txt"))
        }
        assert written == {f"{mine}.txt"}, st.name
        assert st.log == ()


def _tar(entries: list[tuple[str, str, str]]) -> bytes:
    """A tar of (name, kind, payload): kind f (file), d (directory), h (hard link)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as tf:
        for name, kind, payload in entries:
            info = tarfile.TarInfo(name)
            info.mtime = 1700000000
            if kind == "d":
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                tf.addfile(info)
            elif kind == "h":
                info.type, info.linkname = tarfile.LNKTYPE, payload
                tf.addfile(info)
            else:
                info.size = len(payload)
                tf.addfile(info, io.BytesIO(payload.encode()))
    return buf.getvalue()


def test_regrouped_trees_pack_as_the_trees_archived_alone() -> None:
    tree = [
        ("app", "d", ""),
        (f"app/{LONG}", "f", "x"),
        ("app/a", "f", "a"),
        ("app/b", "h", "app/a"),
    ]
    alone = archives.sanitize(_tar(tree), root_name="app")
    nested = [("out", "d", ""), ("out/0", "d", ""), ("out/0/rc", "f", "0")]
    for i in ("0", "1"):
        nested += [(f"out/{i}/0/{n}", k, f"out/{i}/0/{p}" if k == "h" else p) for n, k, p in tree]
    nested.append(("out/1/0/app/c", "h", "out/0/0/app/a"))  # into another group: dropped
    groups = archives.regroup(archives.members(_tar(nested)), 2)
    assert sorted(groups) == ["0/0", "1/0"]
    for key in groups:
        assert archives.repack(groups[key], root_name="app") == alone, key
