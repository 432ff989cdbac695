"""Alembic migrations for the envfactory store (SQLite in batch mode, and PostgreSQL).

Run them with ``envfactory db upgrade`` or ``envfactory.store.migrate.upgrade(url)``; the
script location is this package (``"migrations:"``), so they work from an installed wheel.
"""
