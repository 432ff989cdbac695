"""Packs: export gated environments for RL training, verify and import them, run episodes.

export_pack(items, "envs.tar", artifacts=store_artifacts, created_by="human:ana")
verify_pack("envs.tar")                       # every member's sha256, or InvalidPack
import_pack("envs.tar", store=..., artifacts=..., engine=...)
with Pack.open("envs.tar", engine=engine) as pack:      # the trainer's entry point
    with pack.environments[0].reset() as ep:
        ep.exec("ls"); ep.reward()

layout.py    where things live in a pack, and who may see them (solver/verifier/meta)
safety.py    reading untrusted archives (traversal, links, devices, bombs)
manifest.py  pack.json: members with sha256, provenance chain, structure checks
verify.py    every member against the manifest, before anything is used
export.py    check (guard), then write a pack (folder or tar; our layout or Harbor's)
reader.py    one environment out of a verified pack, cross-checked against its keys
images.py    docker save / docker load
registry.py  export items from the store; import into the store (idempotent)
runtime.py   Pack → PackEnv → Episode (exec, reward, close; async variants)
"""

from .export import ExportItem, export_pack, guard
from .runtime import Episode, Pack, PackEnv
from .safety import PackLimits
from .verify import VerifiedPack, open_verified, verify_pack

__all__ = [
    "Episode",
    "ExportItem",
    "Pack",
    "PackEnv",
    "PackLimits",
    "VerifiedPack",
    "export_pack",
    "guard",
    "open_verified",
    "verify_pack",
]
