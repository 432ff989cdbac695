"""Persistence: the SQL store (SQLite or PostgreSQL) and the content-addressed artifact store.

    from envfactory.store import ArtifactStore, Store
    store = Store.from_settings(settings)          # process edge: migrates the embedded default
    store = Store.open("sqlite:///x.db")           # or postgresql+psycopg://… (schema must exist)
    artifacts = ArtifactStore.from_settings(settings)   # local, or S3ArtifactStore when
                                                   # ENVFACTORY_ARTIFACTS__BACKEND=s3

    key = artifacts.put_bytes(b"…")                # also put_file, put_stream, put_dir (tar)
    artifacts.get(key, verify=True)                # also open, path, exists, size, extract_dir

    store.seeds.get(seed_id)                       # one call = one transaction
    with store.session() as tx:                    # several calls, one transaction
        tx.environments.add_version(spec)          # → spec with version = max + 1
        tx.environments.set_status(env_id, v, EnvStatus.BUILT, expect=EnvStatus.DRAFT)

Repositories (attributes of ``Store`` and of ``Tx``):
    seeds         add, get, find_by_hash, list, list_page, count
    environments  add, add_version, get(id, version=None → latest), record, versions,
                  set_status(expect=…), set_build(BuildResult), list(status, seed_id, suite),
                  list_page(…, imported=)
    verifiers     add, add_version, get(env_id, version=None → latest), versions
    gate_reports  add → row id, get, list(env_id, verifier_version), latest
    trajectories  add, get, set_reward, list(env_id, role)
    findings      add, get, list(env_id)
    reviews       add, get, list(state, env_id), list_page, count_by_state,
                  claim_next(reviewer, lease_s), release,
                  claim_of, decide(id, reviewer, Decision, comment, auth=, note=)
                  → Conflict if lost, audit
    packs         add(manifest, archive_key=None), get, archive_key, list, list_page
    reviewers     add(name, role) → token (once), find_by_token, list, remove,
                  open_session(name, ttl_s) → token, find_session, close_session,
                  import_hashed (the old reviewers.json)

``list_page(…, after=key, limit=n)`` → ``Page(items, next_key)``: summaries (core
``*Summary`` models, built from columns, never the document), one keyset page at a time
(``pages.py``); the other ``list`` methods return whole models, for callers that need them.

Errors: ``NotFound`` for a missing id, ``Conflict`` for an existing id or a lost race,
``StoreError`` (retryable) for database failures.
"""

from .artifacts import ArtifactStore, S3ArtifactStore
from .facade import Store, Tx
from .migrate import ensure_schema
from .pages import Key, Page
from .repositories import EnvironmentRecord

__all__ = [
    "ArtifactStore",
    "S3ArtifactStore",
    "EnvironmentRecord",
    "Key",
    "Page",
    "Store",
    "Tx",
    "ensure_schema",
]
