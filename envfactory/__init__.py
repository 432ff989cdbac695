"""envfactory: turn real professional workflows into verifiable RL environments.

Layers, lowest first (enforced by import-linter, see `.importlinter`):
``envfactory.core`` → ``sandboxes``, ``envfactory.store``, ``envfactory.agents`` →
``verifiers`` → ``workflows`` → ``envfactory.cli``, ``envfactory.api``.
"""

__version__ = "0.1.0"
