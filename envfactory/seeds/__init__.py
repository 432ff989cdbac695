"""Seed intake: the seed file format, validation with field-named errors, and storing.

    draft = load_seed("examples/seeds/etl-dropped-rows", settings.seeds)   # no side effects
    seed = submit_seed(path, store=store, artifacts=artifacts, limits=settings.seeds)

Independent of Temporal: the workflows layer starts the pipeline after ``submit_seed``.
"""

from .format import SeedFile
from .intake import SeedDraft, content_hash, load_seed, store_draft, submit_seed

__all__ = ["SeedDraft", "SeedFile", "content_hash", "load_seed", "store_draft", "submit_seed"]
