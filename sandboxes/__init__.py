"""Docker sandboxes without a registry: base images, builds, locked-down exec, snapshots.

Imports nothing of ours but the domain models (``envfactory.core``).
"""
