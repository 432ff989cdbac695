"""Agent evals: one row per `envfactory agents eval` run, its attempts in ``doc``.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-30
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0004"
down_revision: str | Sequence[str] | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "agent_evals",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("role", sa.String(length=32), nullable=False),
        sa.Column("model", sa.String(length=200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("doc", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_agent_evals")),
    )
    with op.batch_alter_table("agent_evals", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_agent_evals_role"), ["role"], unique=False)
        batch_op.create_index(batch_op.f("ix_agent_evals_created_at"), ["created_at"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("agent_evals", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_agent_evals_created_at"))
        batch_op.drop_index(batch_op.f("ix_agent_evals_role"))
    op.drop_table("agent_evals")
