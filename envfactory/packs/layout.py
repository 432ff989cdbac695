"""Where things live inside a pack, and who may see them.

    pack.json                          the manifest (not a member: it lists the members)
    pack.sig                           Ed25519 signature of pack.json, when signed
    envs/<env_id>/
      solver/instruction.md            what the solver reads           visibility=solver
      solver/image.tar                 `docker save` archive           visibility=solver
      solver/context/...               build context (always present)  visibility=solver
      solver/base.json                 base image recipe for rebuilds  visibility=solver
      verifier/verifier.json           the Verifier model              visibility=verifier
      verifier/files/...               verifier files                  visibility=verifier
      meta/spec.json                   full spec, incl. the solution   visibility=meta
      meta/gate_report.json            the gate report                 visibility=meta
      meta/seed.json                   the seed, when known            visibility=meta

A Harbor pack keeps Harbor's own task layout at the top (`<env_id>/instruction.md,
task.toml, environment/, solution/, tests/`) so Harbor tools run it unchanged; our extra
records go under `envfactory/<env_id>/` (spec, verifier, gate report, seed), and
`tests/` is the verifier subtree.

Invariant: visibility follows from the path alone, so a reader can hand a solver-side
runner exactly the `solver/` subtree; the verifier and the reference solution live in
other subtrees and reach a container only at verification time.
"""

from __future__ import annotations

import re
from typing import Literal

from envfactory.core.errors import InvalidPack

Visibility = Literal["solver", "verifier", "meta"]

MANIFEST = "pack.json"
SIGNATURE = "pack.sig"
#: Files that describe the pack rather than belong to it; a tar holds them first, in order.
NOT_MEMBERS = (MANIFEST, SIGNATURE)
ENVS = "envs"
INSTRUCTION = "solver/instruction.md"
IMAGE_TAR = "solver/image.tar"
CONTEXT = "solver/context"
BASE = "solver/base.json"
VERIFIER_JSON = "verifier/verifier.json"
VERIFIER_FILES = "verifier/files"
SPEC = "meta/spec.json"
GATE_REPORT = "meta/gate_report.json"
SEED = "meta/seed.json"

HARBOR_META = "envfactory"

#: Members every environment must have, whatever its image format.
REQUIRED = (INSTRUCTION, VERIFIER_JSON, SPEC, GATE_REPORT)

_SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


def env_root(env_id: str) -> str:
    """The environment's folder; the id must be a plain name (it becomes a path)."""
    if not _SAFE_ID.match(env_id) or ".." in env_id:
        raise InvalidPack(
            f"environment id {env_id!r}: not usable as a folder name",
            hint="ids are letters, digits, '.', '_' and '-', at most 128 characters",
        )
    return f"{ENVS}/{env_id}"


def visibility(path: str, fmt: str = "envfactory") -> Visibility:
    """Visibility of a member from its path: the subtree decides."""
    parts = path.split("/")
    if fmt == "harbor":
        if len(parts) >= 2 and parts[0] != HARBOR_META:
            if parts[1] in ("instruction.md", "environment"):
                return "solver"
            if parts[1] == "tests":
                return "verifier"
        return "meta"
    if len(parts) >= 3 and parts[0] == ENVS:
        if parts[2] == "solver":
            return "solver"
        if parts[2] == "verifier":
            return "verifier"
    return "meta"
