"""The first schema: leagues, tokens, the match log, ratings and their history.

Revision ID: 0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

F64 = sa.Float(precision=53)  # DOUBLE PRECISION on PostgreSQL: ratings must round-trip exactly


def upgrade() -> None:
    op.create_table(
        "leagues",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(64), nullable=False, unique=True),
        sa.Column("model", sa.String(32), nullable=False),
        sa.Column("params", sa.Text, nullable=False),
        sa.Column("moderated", sa.Boolean, nullable=False),
        sa.Column("created", sa.Float, nullable=False),
    )
    op.create_table(
        "tokens",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("digest", sa.String(64), nullable=False, unique=True),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("label", sa.String(200), nullable=False),
        sa.Column("created", sa.Float, nullable=False),
        sa.Column("revoked", sa.Boolean, nullable=False),
    )
    op.create_table(
        "matches",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("league_id", sa.Integer, sa.ForeignKey("leagues.id"), nullable=False),
        sa.Column("match_id", sa.String(64), nullable=False),
        sa.Column("seq", sa.Integer, nullable=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("record", sa.Text, nullable=False),
        sa.Column("time", F64, nullable=True),
        sa.Column("reported", sa.Float, nullable=False),
        sa.Column("reporter", sa.Integer, sa.ForeignKey("tokens.id"), nullable=True),
        sa.Column("decided", sa.Float, nullable=True),
        sa.Column("decider", sa.Integer, sa.ForeignKey("tokens.id"), nullable=True),
        sa.UniqueConstraint("league_id", "match_id", name="uq_matches_league_match"),
        sa.UniqueConstraint("league_id", "seq", name="uq_matches_league_seq"),
    )
    op.create_index("ix_matches_league_status", "matches", ["league_id", "status", "id"])
    op.create_table(
        "ratings",
        sa.Column("league_id", sa.Integer, sa.ForeignKey("leagues.id"), primary_key=True),
        sa.Column("player", sa.String(64), primary_key=True),
        sa.Column("mu", F64, nullable=False),
        sa.Column("sigma", F64, nullable=False),
        sa.Column("games", sa.Integer, nullable=False),
        sa.Column("last_time", F64, nullable=True),
    )
    op.create_table(
        "history",
        sa.Column("league_id", sa.Integer, sa.ForeignKey("leagues.id"), primary_key=True),
        sa.Column("player", sa.String(64), primary_key=True),
        sa.Column("seq", sa.Integer, primary_key=True),
        sa.Column("mu", F64, nullable=False),
        sa.Column("sigma", F64, nullable=False),
    )
    op.create_index("ix_history_league_seq", "history", ["league_id", "seq"])


def downgrade() -> None:
    for table in ("history", "ratings", "matches", "tokens", "leagues"):
        op.drop_table(table)
