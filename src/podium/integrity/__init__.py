"""Integrity: abuse signals in a history (win trading, farming, sandbagging) with calibrated tails.

``audit`` (``audit``, Flag, Audit, Holm by kind), ``replay`` (the leave-out replay on evaluation's prequential
replay), ``signals`` (the three tests) and ``tails`` (Poisson-binomial tails, Hoeffding's bound, Holm).
Connectedness, which the League itself keeps, is :mod:`podium.engine.components`.
"""
