"""``python -m podium.cli``: the ``podium`` command."""

from . import main

main()
