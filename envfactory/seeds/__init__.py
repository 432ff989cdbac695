"""Seed intake: the seed file format, validation with field-named errors, and storing.

    draft = load_seed("examples/seeds/etl-dropped-rows", settings.seeds)   # no side effects
    draft = draft_from_upload(seed_yaml_bytes, uploads, settings.seeds)    # the API's form
    draft = draft_from_json(body_bytes)                                     # the API's JSON
    seed = submit_seed(path, store=store, artifacts=artifacts, limits=settings.seeds)

Independent of Temporal: the workflows layer starts the pipeline after ``submit_seed``.
"""

from .format import SeedFile
from .intake import SeedDraft, content_hash, load_seed, store_draft, submit_seed
from .json_body import draft_from_json
from .upload import Upload, draft_from_upload

__all__ = [
    "SeedDraft",
    "SeedFile",
    "Upload",
    "content_hash",
    "draft_from_json",
    "draft_from_upload",
    "load_seed",
    "store_draft",
    "submit_seed",
]
