"""A league reads time one way: ``leagues.time_kind``, "number" or "date", fixed by its first timed match.

Existing leagues take the kind of their first timed match that is pending or recorded (NULL where none has a
time), so that their later reports are checked against it.

Revision ID: 0004
Revises: 0003
"""

import json

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("leagues", sa.Column("time_kind", sa.String(8), nullable=True))
    conn = op.get_bind()
    for (league_id,) in conn.execute(sa.text("SELECT id FROM leagues")).all():
        row = conn.execute(sa.text("SELECT record FROM matches WHERE league_id = :league AND time IS NOT NULL "
                                   "AND status IN ('pending', 'recorded') ORDER BY id LIMIT 1"),
                           {"league": league_id}).first()
        if row is not None:
            kind = "number" if isinstance(json.loads(row[0]).get("time"), (int, float)) else "date"
            conn.execute(sa.text("UPDATE leagues SET time_kind = :kind WHERE id = :league"),
                         {"kind": kind, "league": league_id})


def downgrade() -> None:
    with op.batch_alter_table("leagues") as batch:  # SQLite drops columns by copying the table
        batch.drop_column("time_kind")
