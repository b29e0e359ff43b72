"""Data: what a match is and where histories come from.

``match`` (Match, MatchError), ``matches`` (Matches, the columnar history), ``rating`` (Rating, leaderboard rows),
``io`` / ``tables`` / ``longform`` / ``scan`` (JSONL, CSV, Parquet, data frames; batches larger than memory),
``names`` / ``decimal_ids`` / ``strings`` (player ids), ``readahead`` and ``simulate`` (synthetic histories).
The lowest layer: it imports nothing else of podium's.
"""
