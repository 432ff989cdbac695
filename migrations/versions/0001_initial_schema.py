"""Initial schema: seeds, environments and verifiers (versioned), gate reports,
trajectories, findings, the review queue with its decision audit, packs.

Timestamps are ``DateTime(timezone=True)`` (the ORM's UtcDateTime stores UTC); status
columns are ``String(32)`` (vocabularies live in Python). Indexes go through
``batch_alter_table`` so the same script runs on SQLite.

Revision ID: 0001
Revises:
Create Date: 2026-11-29
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0001"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""

    op.create_table(
        "environments",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("seed_id", sa.String(length=64), nullable=True),
        sa.Column("status", sa.String(length=32), nullable=False),
        sa.Column("image", sa.String(length=200), nullable=True),
        sa.Column("build", sa.JSON(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("doc", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("id", "version", name=op.f("pk_environments")),
    )
    with op.batch_alter_table("environments", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_environments_seed_id"), ["seed_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_environments_status"), ["status"], unique=False)

    op.create_table(
        "findings",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("env_id", sa.String(length=64), nullable=False),
        sa.Column("source", sa.String(length=32), nullable=False),
        sa.Column("rule", sa.String(length=200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("doc", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_findings")),
    )
    with op.batch_alter_table("findings", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_findings_env_id"), ["env_id"], unique=False)

    op.create_table(
        "gate_reports",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("env_id", sa.String(length=64), nullable=False),
        sa.Column("verifier_version", sa.Integer(), nullable=False),
        sa.Column("verdict", sa.String(length=32), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("doc", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_gate_reports")),
    )
    with op.batch_alter_table("gate_reports", schema=None) as batch_op:
        batch_op.create_index(
            "ix_gate_reports_env_version", ["env_id", "verifier_version"], unique=False
        )

    op.create_table(
        "packs",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("created_by", sa.String(length=200), nullable=False),
        sa.Column("archive_key", sa.String(length=64), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("doc", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_packs")),
    )
    with op.batch_alter_table("packs", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_packs_created_at"), ["created_at"], unique=False)

    op.create_table(
        "seeds",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("content_hash", sa.String(length=64), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("domain", sa.String(length=200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("doc", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_seeds")),
        sa.UniqueConstraint("content_hash", name=op.f("uq_seeds_content_hash")),
    )
    with op.batch_alter_table("seeds", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_seeds_created_at"), ["created_at"], unique=False)
        batch_op.create_index(batch_op.f("ix_seeds_domain"), ["domain"], unique=False)

    op.create_table(
        "trajectories",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("role", sa.String(length=32), nullable=False),
        sa.Column("env_id", sa.String(length=64), nullable=True),
        sa.Column("model", sa.String(length=200), nullable=False),
        sa.Column("reward", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("doc", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_trajectories")),
    )
    with op.batch_alter_table("trajectories", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_trajectories_env_id"), ["env_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_trajectories_role"), ["role"], unique=False)

    op.create_table(
        "verifiers",
        sa.Column("env_id", sa.String(length=64), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("author", sa.String(length=200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("doc", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("env_id", "version", name=op.f("pk_verifiers")),
    )
    op.create_table(
        "review_items",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("finding_id", sa.String(length=64), nullable=False),
        sa.Column("env_id", sa.String(length=64), nullable=False),
        sa.Column("state", sa.String(length=32), nullable=False),
        sa.Column("reviewer", sa.String(length=200), nullable=True),
        sa.Column("comment", sa.Text(), nullable=False),
        sa.Column("decided_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("claimed_by", sa.String(length=200), nullable=True),
        sa.Column("lease_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["finding_id"], ["findings.id"], name=op.f("fk_review_items_finding_id_findings")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_review_items")),
    )
    with op.batch_alter_table("review_items", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_review_items_env_id"), ["env_id"], unique=False)
        batch_op.create_index(
            batch_op.f("ix_review_items_finding_id"), ["finding_id"], unique=False
        )
        batch_op.create_index(
            "ix_review_items_state_created", ["state", "created_at"], unique=False
        )

    op.create_table(
        "review_decisions",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("review_id", sa.String(length=64), nullable=False),
        sa.Column("reviewer", sa.String(length=200), nullable=False),
        sa.Column("decision", sa.String(length=32), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("before", sa.JSON(), nullable=False),
        sa.Column("after", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(
            ["review_id"],
            ["review_items.id"],
            name=op.f("fk_review_decisions_review_id_review_items"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_review_decisions")),
    )
    with op.batch_alter_table("review_decisions", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_review_decisions_review_id"), ["review_id"], unique=False
        )


def downgrade() -> None:
    """Downgrade schema."""

    with op.batch_alter_table("review_decisions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_review_decisions_review_id"))

    op.drop_table("review_decisions")
    with op.batch_alter_table("review_items", schema=None) as batch_op:
        batch_op.drop_index("ix_review_items_state_created")
        batch_op.drop_index(batch_op.f("ix_review_items_finding_id"))
        batch_op.drop_index(batch_op.f("ix_review_items_env_id"))

    op.drop_table("review_items")
    op.drop_table("verifiers")
    with op.batch_alter_table("trajectories", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_trajectories_role"))
        batch_op.drop_index(batch_op.f("ix_trajectories_env_id"))

    op.drop_table("trajectories")
    with op.batch_alter_table("seeds", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_seeds_domain"))
        batch_op.drop_index(batch_op.f("ix_seeds_created_at"))

    op.drop_table("seeds")
    with op.batch_alter_table("packs", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_packs_created_at"))

    op.drop_table("packs")
    with op.batch_alter_table("gate_reports", schema=None) as batch_op:
        batch_op.drop_index("ix_gate_reports_env_version")

    op.drop_table("gate_reports")
    with op.batch_alter_table("findings", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_findings_env_id"))

    op.drop_table("findings")
    with op.batch_alter_table("environments", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_environments_status"))
        batch_op.drop_index(batch_op.f("ix_environments_seed_id"))

    op.drop_table("environments")
