"""pack.json: build it from a staged pack, read it back, and check members against it.

Invariants:
- every file in a pack except pack.json (and pack.sig, its signature) is a member with
  its sha256 and size; a file on disk that the manifest does not list is as much
  tampering as a changed one (an added `conftest.py` would change the reward without
  touching a listed file);
- the pack id is derived from the member list, so two packs with equal content share it;
  a read pack.json whose id is not that content id (a pack naming itself) is refused,
  as is an id that is no plain name (`check_pack_id`): the id names the pack's images;
- reading never trusts the manifest's member paths: each is checked like a tar name, no
  path is both a file and a folder of another, and the counts and sizes it declares are
  within `PackLimits` (`check_bounds`) before anything is extracted by them.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from datetime import datetime
from pathlib import Path

from pydantic import ValidationError

from envfactory.core.errors import InvalidPack
from envfactory.core.models import (
    PACK_SCHEMA_VERSION,
    PackEnvironment,
    PackFormat,
    PackManifest,
    PackMember,
    utcnow,
)
from envfactory.core.unique_json import DuplicateKey, loads_unique

from . import layout
from .safety import FileDigest, PackLimits, check_member_name, iter_dir, shown

_PACK_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


def check_pack_id(value: str, where: str) -> None:
    """InvalidPack unless `value` is a plain name (it becomes part of image tags)."""
    if not _PACK_ID.match(value):
        raise InvalidPack(
            f"{where}/pack.json: id {shown(value)} is not a pack id",
            hint="a pack id is letters, digits, '.', '_' and '-', at most 128 characters; "
            "re-export the pack with envfactory pack export",
        )


def pack_id(members: Iterable[PackMember]) -> str:
    """Content-derived id: the same members give the same id."""
    h = hashlib.sha256()
    for m in sorted(members, key=lambda m: m.path):
        h.update(f"{m.path}\0{m.sha256}\0{m.size}\n".encode())
    return f"pack-{h.hexdigest()[:16]}"


def members_of(digests: Iterable[FileDigest], fmt: str) -> tuple[PackMember, ...]:
    out = [
        PackMember(
            path=d.path, sha256=d.sha256, size=d.size, visibility=layout.visibility(d.path, fmt)
        )
        for d in digests
        if d.path not in layout.NOT_MEMBERS
    ]
    return tuple(sorted(out, key=lambda m: m.path))


def build_manifest(
    staged: Path,
    environments: Iterable[PackEnvironment],
    *,
    created_by: str,
    fmt: PackFormat = "envfactory",
    created_at: datetime | None = None,
    limits: PackLimits | None = None,
) -> PackManifest:
    """Hash every file under `staged` and describe it; does not write pack.json."""
    members = members_of(iter_dir(staged, limits or PackLimits()), fmt)
    return PackManifest(
        id=pack_id(members),
        created_by=created_by,
        created_at=created_at or utcnow(),
        format=fmt,
        environments=tuple(environments),
        members=members,
    )


def write_manifest(staged: Path, manifest: PackManifest) -> Path:
    path = staged / layout.MANIFEST
    path.write_text(manifest.model_dump_json(indent=2) + "\n")
    return path


def parse_manifest(raw: bytes | None, where: str) -> PackManifest:
    """The manifest from pack.json bytes, or InvalidPack naming what is wrong."""
    if raw is None:
        raise InvalidPack(f"{where}: no pack.json", hint="is this an envfactory pack?")
    try:
        loads_unique(raw)  # two equal keys: a reader and a reviewer could see different ids
    except DuplicateKey as e:
        raise InvalidPack(f"{where}/pack.json: {e}", hint="re-export the pack") from e
    except (UnicodeDecodeError, json.JSONDecodeError):
        pass  # said by the model's own parse, just below
    try:
        manifest = PackManifest.model_validate_json(raw)
    except ValidationError as e:
        first = e.errors()[0]
        loc = ".".join(str(p) for p in first["loc"])
        raise InvalidPack(f"{where}/pack.json: {loc}: {first['msg']}") from e
    if manifest.schema_version > PACK_SCHEMA_VERSION:
        raise InvalidPack(
            f"{where}/pack.json: schema version {manifest.schema_version} is newer than "
            f"this envfactory understands ({PACK_SCHEMA_VERSION})",
            hint="upgrade envfactory",
        )
    _check_members_listed_once(manifest, where)
    _check_own_id(manifest, where)
    return manifest


def _check_own_id(manifest: PackManifest, where: str) -> None:
    """The id must be the one derived from the members: a pack does not name itself."""
    check_pack_id(manifest.id, where)
    own = pack_id(manifest.members)
    if manifest.id != own:
        raise InvalidPack(
            f"{where}/pack.json: id {manifest.id!r} is not this pack's content id ({own})",
            hint="a pack's id is derived from its members; re-export the pack with "
            "envfactory pack export",
        )


def _check_members_listed_once(manifest: PackManifest, where: str) -> None:
    seen: set[str] = set()
    for m in manifest.members:
        clean = check_member_name(m.path)
        if clean != m.path or clean in layout.NOT_MEMBERS:
            raise InvalidPack(f"{where}/pack.json: member path {m.path!r} is not canonical")
        if clean in seen:
            raise InvalidPack(f"{where}/pack.json: member {m.path!r} is listed twice")
        seen.add(clean)
    clash = sorted(folders_of(seen) & seen)
    if clash:
        raise InvalidPack(
            f"{where}/pack.json: member {clash[0]!r} is listed as a file and as a folder "
            "holding other members",
            hint="a path is either a file or a folder; re-export the pack",
        )


def folders_of(paths: Iterable[str]) -> set[str]:
    """Every folder that holds one of `paths` ("a/b/c" → "a", "a/b")."""
    out: set[str] = set()
    for p in paths:
        parts = p.split("/")
        out.update("/".join(parts[:i]) for i in range(1, len(parts)))
    return out


def check_bounds(manifest: PackManifest, limits: PackLimits, where: str) -> int:
    """The total bytes the manifest lists, or InvalidPack if it lists more than `limits`
    allow; checked before a member is read, so a lying manifest cannot start a bomb."""
    if len(manifest.members) > limits.max_members:
        raise InvalidPack(
            f"{where}/pack.json: lists {len(manifest.members)} members, more "
            f"than {limits.max_members}",
            hint="raise PackLimits.max_members",
        )
    big = max(manifest.members, key=lambda m: m.size, default=None)
    if big is not None and big.size > limits.max_member_bytes:
        raise InvalidPack(
            f"{where}/pack.json: member {big.path!r} is {big.size} bytes, more "
            f"than {limits.max_member_bytes}",
            hint="raise PackLimits.max_member_bytes",
        )
    total = sum(m.size for m in manifest.members)
    if total > limits.max_total_bytes:
        raise InvalidPack(
            f"{where}/pack.json: lists {total} bytes, more than {limits.max_total_bytes}",
            hint="raise PackLimits.max_total_bytes",
        )
    return total


def compare(manifest: PackManifest, found: Mapping[str, FileDigest]) -> list[str]:
    """Every difference between the manifest and the files found, one line per member."""
    problems: list[str] = []
    listed = {m.path: m for m in manifest.members}
    for path, m in listed.items():
        d = found.get(path)
        if d is None:
            problems.append(f"member {path}: missing")
        elif d.sha256 != m.sha256:
            problems.append(
                f"member {path}: sha256 mismatch (manifest {m.sha256[:12]}…, "
                f"content {d.sha256[:12]}…) — it was changed after export"
            )
        elif d.size != m.size:
            problems.append(f"member {path}: size {d.size}, manifest says {m.size}")
    for path in sorted(set(found) - set(listed) - set(layout.NOT_MEMBERS)):
        problems.append(f"member {path}: not listed in pack.json — it was added after export")
    problems.extend(_structure_problems(manifest))
    return problems


def _required(manifest: PackManifest, env: PackEnvironment) -> tuple[list[str], dict[str, str]]:
    """(required member paths, {provenance link: member path}) for one environment."""
    if manifest.format == "harbor":
        task = env.root or env.env_id
        meta = f"{layout.HARBOR_META}/{task}"
        needed = [f"{task}/instruction.md", f"{task}/task.toml", f"{task}/environment/Dockerfile"]
    else:
        task = meta = env.root or layout.env_root(env.env_id)
        needed = [f"{task}/{layout.INSTRUCTION}"]
        if env.image_format == "docker-save":
            needed.append(f"{task}/{layout.IMAGE_TAR}")
    links = {
        "spec": f"{meta}/{layout.SPEC}",
        "verifier": f"{meta}/{layout.VERIFIER_JSON}",
        "gate_report": f"{meta}/{layout.GATE_REPORT}",
    }
    return needed + list(links.values()), links


def _structure_problems(manifest: PackManifest) -> list[str]:
    """Each environment has its required members and a consistent provenance chain."""
    listed = {m.path: m for m in manifest.members}
    out: list[str] = []
    for env in manifest.environments:
        needed, links = _required(manifest, env)
        out += [
            f"environment {env.env_id}: required member {p} is missing"
            for p in needed
            if p not in listed
        ]
        chain = env.provenance
        for name, sha in (
            ("spec", chain.spec_sha256),
            ("verifier", chain.verifier_sha256),
            ("gate_report", chain.gate_report_sha256),
        ):
            m = listed.get(links[name])
            if sha is not None and m is not None and m.sha256 != sha:
                out.append(
                    f"environment {env.env_id}: provenance hash for {links[name]} does not match"
                )
    return out
