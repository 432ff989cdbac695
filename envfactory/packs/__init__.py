"""Packs: export gated environments for RL training, verify and import them, run episodes.

export.py    check, then write a pack (folder or tar; our layout or Harbor's)
manifest.py  pack.json: members with sha256, provenance chain
safety.py    reading untrusted archives (traversal, links, bombs)
verify.py    every member against the manifest, before anything is used
"""

from .export import ExportItem, export_pack, guard
from .safety import PackLimits
from .verify import VerifiedPack, open_verified, verify_pack

__all__ = [
    "ExportItem",
    "PackLimits",
    "VerifiedPack",
    "export_pack",
    "guard",
    "open_verified",
    "verify_pack",
]
