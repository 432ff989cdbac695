"""Docker sandboxes without a registry: base images, builds, locked-down exec, snapshots.

Imports nothing of ours but the domain models (``envfactory.core``).
"""

from .engine import DockerEngine, tar_dir
from .protocol import Sandbox, SandboxEngine
from .sandbox import DockerSandbox

__all__ = ["DockerEngine", "DockerSandbox", "Sandbox", "SandboxEngine", "tar_dir"]
