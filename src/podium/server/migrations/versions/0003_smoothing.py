"""Leagues may keep nightly smoothed ratings (TrueSkill Through Time over the approved log).

``leagues.smoothing`` (false for every existing league), ``leagues.smoothing_started`` (the last claim of a
server process on the league's smoothing) and the ``smoothed`` table.

Revision ID: 0003
Revises: 0002
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

F64 = sa.Float(precision=53)  # DOUBLE PRECISION on PostgreSQL: ratings must round-trip exactly


def upgrade() -> None:
    # The existing leagues keep working as they were: the option off, never claimed.
    op.add_column("leagues", sa.Column("smoothing", sa.Boolean, nullable=False, server_default=sa.false()))
    op.add_column("leagues", sa.Column("smoothing_started", sa.Float, nullable=True))
    op.create_table(
        "smoothed",
        sa.Column("league_id", sa.Integer, sa.ForeignKey("leagues.id"), primary_key=True),
        sa.Column("player", sa.String(64), primary_key=True),
        sa.Column("mu", F64, nullable=False),
        sa.Column("sigma", F64, nullable=False),
        sa.Column("games", sa.Integer, nullable=False),
        sa.Column("connected", sa.Boolean, nullable=False),
        sa.Column("computed", sa.Float, nullable=False),
        sa.Column("log_count", sa.Integer, nullable=False),
        sa.Column("log_last_seq", sa.Integer, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("smoothed")
    with op.batch_alter_table("leagues") as batch:  # SQLite drops columns by copying the table
        batch.drop_column("smoothing_started")
        batch.drop_column("smoothing")
