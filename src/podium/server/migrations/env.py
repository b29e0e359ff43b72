"""Alembic environment: runs the migrations on the connection that :func:`podium.server.db.migrate` passes in."""

from alembic import context

connection = context.config.attributes.get("connection")
if connection is None:  # pragma: no cover - podium always passes its connection
    raise RuntimeError("podium's migrations run through podium.server.db.migrate(engine).")
context.configure(connection=connection, target_metadata=None, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
