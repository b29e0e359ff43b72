"""The replay engine: :class:`~podium.engine.league.League`, and the player graph a replay keeps.

``league`` replays matches through any model's kernel, knowing no model by name; ``union_find`` (connectivity
before each match, groups), ``components`` and ``thin_links`` (who is connected to whom, and how thinly) are what
its leaderboard and the evaluation read.  Above the models, below evaluation and integrity.
"""
