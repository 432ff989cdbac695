"""Findings: who found them, ``found_by`` = ``rules`` (probes, regex mining, mutation, the
solve-rate band) or ``model`` (the shortcut-analyst role), indexed so the review queue can
be filtered by it. Existing rows were all found by the rules.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-30
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0005"
down_revision: str | Sequence[str] | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("findings", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("found_by", sa.String(length=32), server_default="rules", nullable=False)
        )
        batch_op.create_index(batch_op.f("ix_findings_found_by"), ["found_by"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("findings", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_findings_found_by"))
        batch_op.drop_column("found_by")
