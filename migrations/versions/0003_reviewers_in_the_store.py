"""Reviewers and their sign-in sessions move into the database; decisions record how
their author was identified.

- ``reviewers``: name, role, sha256 of the token (never the token), created_at. Before
  this, tokens lived in ``<home>/reviewers.json``, one file per API instance; the API and
  ``envfactory reviewer`` import that file's entries (same hashes, so the same tokens keep
  working) on their first start and rename it ``reviewers.json.imported``.
- ``reviewer_sessions``: the review pages' sessions (sha256 of the cookie value, expiry).
- ``review_decisions.auth`` (``AuthMethod``) and ``.note``: existing rows become
  ``unrecorded`` with an empty note.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0003"
down_revision: str | Sequence[str] | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "reviewers",
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("role", sa.String(length=32), nullable=False),
        sa.Column("token_sha256", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_reviewers")),
        sa.UniqueConstraint("token_sha256", name=op.f("uq_reviewers_token_sha256")),
    )
    op.create_table(
        "reviewer_sessions",
        sa.Column("token_sha256", sa.String(length=64), nullable=False),
        sa.Column("reviewer", sa.String(length=200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["reviewer"],
            ["reviewers.name"],
            name=op.f("fk_reviewer_sessions_reviewer_reviewers"),
        ),  # fmt: skip
        sa.PrimaryKeyConstraint("token_sha256", name=op.f("pk_reviewer_sessions")),
    )
    with op.batch_alter_table("reviewer_sessions", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_reviewer_sessions_reviewer"), ["reviewer"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_reviewer_sessions_expires_at"), ["expires_at"], unique=False
        )
    with op.batch_alter_table("review_decisions", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("auth", sa.String(length=32), server_default="unrecorded", nullable=False)
        )
        batch_op.add_column(sa.Column("note", sa.Text(), server_default="", nullable=False))


def downgrade() -> None:
    with op.batch_alter_table("review_decisions", schema=None) as batch_op:
        batch_op.drop_column("note")
        batch_op.drop_column("auth")
    with op.batch_alter_table("reviewer_sessions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_reviewer_sessions_expires_at"))
        batch_op.drop_index(batch_op.f("ix_reviewer_sessions_reviewer"))
    op.drop_table("reviewer_sessions")
    op.drop_table("reviewers")
