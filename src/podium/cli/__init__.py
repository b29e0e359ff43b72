"""The ``podium`` command: rate a history, smooth it, simulate one, or run the demo.

``app`` is the Typer application (the console script ``podium.cli:app``).  The commands are in the submodules,
which register themselves on it when imported, in the order ``podium --help`` lists them: :mod:`.rating`
(rate, simulate, demo, evaluate, fit), :mod:`.integrity` (check, audit), :mod:`.smooth` (smooth),
:mod:`.server` (serve, token, league) and :mod:`.compiling` (compile); what they share is in :mod:`.common`.
"""

from __future__ import annotations

from . import rating  # isort: skip  (the import order is the order of the commands)
from . import integrity  # isort: skip
from . import smooth  # isort: skip
from . import server  # isort: skip
from . import compiling  # isort: skip
from .common import app, make_model, parse_model_spec

__all__ = ["app", "main", "make_model", "parse_model_spec", "rating", "integrity", "smooth", "server", "compiling"]


def main() -> None:  # pragma: no cover
    app()
