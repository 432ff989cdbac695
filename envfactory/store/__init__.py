"""Persistence: the SQL store (SQLite or PostgreSQL) and the content-addressed artifact store.

from envfactory.store import ArtifactStore, Store
store = Store.from_settings(settings)            # migrates the embedded default
artifacts = ArtifactStore.from_settings(settings)
"""

from .artifacts import ArtifactStore
from .facade import Store, Tx
from .migrate import ensure_schema
from .repositories import EnvironmentRecord

__all__ = ["ArtifactStore", "EnvironmentRecord", "Store", "Tx", "ensure_schema"]
