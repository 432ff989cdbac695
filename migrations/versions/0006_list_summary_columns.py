"""List summaries from columns: a seed's attachment count and bytes and its description's
length; a pack's format and its environment and member counts and bytes.

`GET /api/seeds` and `GET /api/packs` answer with summaries built from these columns, so a
page never loads the rows' documents (a seed's description can be megabytes, a pack's
member list thousands of entries). Existing rows are filled in from their ``doc``, a batch
at a time. On SQLite the two tables are rebuilt with the new columns before ``doc``: a
column stored after a large document is read by walking the document's overflow pages.
(PostgreSQL keeps a large ``doc`` out of line, TOAST, so order does not matter there.)

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-05
"""

from collections.abc import Callable, Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0006"
down_revision: str | Sequence[str] | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BATCH = 500
SEED_COLUMNS = ("attachments", "attachment_bytes", "description_chars")
PACK_COLUMNS = ("format", "environments", "members", "bytes")
#: every column of each table, in the order SQLite gets them (doc last)
SEED_ORDER = ("id", "content_hash", "title", "domain", *SEED_COLUMNS, "created_at", "doc")
PACK_ORDER = ("id", "created_by", "archive_key", *PACK_COLUMNS, "created_at", "doc")


def _seed(doc: dict[str, Any]) -> dict[str, Any]:
    files = doc.get("attachments") or []
    return {
        "attachments": len(files),
        "attachment_bytes": sum(int(f.get("size", 0)) for f in files),
        "description_chars": len(doc.get("description") or ""),
    }


def _pack(doc: dict[str, Any]) -> dict[str, Any]:
    members = doc.get("members") or []
    return {
        "format": doc.get("format") or "envfactory",
        "environments": len(doc.get("environments") or []),
        "members": len(members),
        "bytes": sum(int(m.get("size", 0)) for m in members),
    }


def _backfill(name: str, columns: Sequence[str], summary: Callable[[dict[str, Any]], Any]) -> None:
    """Fill the new columns of every row from its doc, BATCH rows per read (by id)."""
    table = sa.table(name, sa.column("id", sa.String), sa.column("doc", sa.JSON))
    target = sa.table(name, sa.column("id", sa.String), *(sa.column(c) for c in columns))
    conn = op.get_bind()
    last = ""
    while True:
        q = sa.select(table.c.id, table.c.doc).where(table.c.id > last).order_by(table.c.id)
        rows = conn.execute(q.limit(BATCH)).all()
        for row_id, doc in rows:
            values = summary(doc if isinstance(doc, dict) else {})
            conn.execute(sa.update(target).where(target.c.id == row_id).values(**values))
        if len(rows) < BATCH:
            return
        last = rows[-1][0]


def _batch(table: str, order: tuple[str, ...]) -> Any:
    if op.get_bind().dialect.name != "sqlite":
        return op.batch_alter_table(table, schema=None)
    return op.batch_alter_table(table, recreate="always", partial_reordering=[order])


def upgrade() -> None:
    with _batch("seeds", SEED_ORDER) as batch_op:
        batch_op.add_column(
            sa.Column("attachments", sa.Integer(), server_default="0", nullable=False)
        )
        batch_op.add_column(
            sa.Column("attachment_bytes", sa.BigInteger(), server_default="0", nullable=False)
        )
        batch_op.add_column(
            sa.Column("description_chars", sa.Integer(), server_default="0", nullable=False)
        )
    with _batch("packs", PACK_ORDER) as batch_op:
        batch_op.add_column(
            sa.Column("format", sa.String(length=32), server_default="envfactory", nullable=False)
        )
        batch_op.add_column(
            sa.Column("environments", sa.Integer(), server_default="0", nullable=False)
        )
        batch_op.add_column(sa.Column("members", sa.Integer(), server_default="0", nullable=False))
        batch_op.add_column(sa.Column("bytes", sa.BigInteger(), server_default="0", nullable=False))
    _backfill("seeds", SEED_COLUMNS, _seed)
    _backfill("packs", PACK_COLUMNS, _pack)


def downgrade() -> None:
    with op.batch_alter_table("packs", schema=None) as batch_op:
        for column in reversed(PACK_COLUMNS):
            batch_op.drop_column(column)
    with op.batch_alter_table("seeds", schema=None) as batch_op:
        for column in reversed(SEED_COLUMNS):
            batch_op.drop_column(column)
