"""Environments: a nullable, indexed ``suite`` column for imported task suites.

`envfactory task list --suite NAME` filters on it; it mirrors ``spec.origin.suite`` (the
document keeps the whole origin). Existing rows are synthesized environments: NULL.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0002"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("environments", schema=None) as batch_op:
        batch_op.add_column(sa.Column("suite", sa.String(length=200), nullable=True))
        batch_op.create_index(batch_op.f("ix_environments_suite"), ["suite"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("environments", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_environments_suite"))
        batch_op.drop_column("suite")
