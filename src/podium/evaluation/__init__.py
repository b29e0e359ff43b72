"""Evaluation and fitting: how well a model predicts a history, and which hyperparameters predict it best.

``replay`` (the prequential replay: each model's predictions before each match), ``prequential`` (``evaluate``,
the metrics and the report), ``contests`` (the Elo-MMR paper's contest metrics), ``fit`` (hyperparameter search)
and ``plot`` (matplotlib figures, also importable as ``podium.plot``).
"""
