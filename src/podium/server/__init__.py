"""The podium league server: FastAPI over SQLAlchemy Core, on SQLite or PostgreSQL (DESIGN.md, "The league server").

``create_app(Settings(db=...))`` builds the application; ``podium serve`` runs it.  Nothing here is imported
by ``import podium``: the server's dependencies are the ``server`` extra.
"""

from .app import create_app
from .settings import Settings

__all__ = ["create_app", "Settings"]
