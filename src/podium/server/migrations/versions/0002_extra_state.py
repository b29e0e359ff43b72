"""Ratings keep what a model needs besides a rating (Glicko-2's volatility and open rating period).

Revision ID: 0002
Revises: 0001
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # NULL for every existing row: the models before Glicko-2 keep nothing besides mu, sigma, games, last_time.
    op.add_column("ratings", sa.Column("extra", sa.LargeBinary, nullable=True))


def downgrade() -> None:
    op.drop_column("ratings", "extra")
