"""Tail probabilities for :func:`podium.audit`: the Poisson-binomial distribution, Hoeffding's bound, Holm's
step-down adjustment.

- ``W``, the number of successes of independent Bernoulli(``p_i``) trials, is Poisson-binomial: its
  distribution by the exact convolution recursion (:func:`poisson_binomial_pmf`), its two tails from it.
- For bounded independent scores, Hoeffding's bound ``exp(-L KL(mean score || mean p))`` on a mean score this
  low (Hoeffding 1963, Theorem 1).
- Holm's step-down adjustment of p-values among a number of hypotheses (Holm 1979).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from ..ordering.numerics import jit

__all__ = ["hoeffding_lower", "holm", "poisson_binomial_pmf", "poisson_binomial_tails", "tails"]


def poisson_binomial_pmf(p: NDArray[np.float64]) -> NDArray[np.float64]:
    """``P(W = j)``, ``j = 0..n``, for ``W`` the number of successes of independent Bernoulli(``p_i``); for a 2-D
    ``p``, one distribution per row.

    The convolution recursion ``f_k(j) = f_{k-1}(j) (1 - p_k) + f_{k-1}(j - 1) p_k`` (exact, ``O(n^2)``; every
    term is a product of probabilities, so nothing cancels).
    """
    rows = np.clip(np.atleast_2d(np.asarray(p, dtype=np.float64)), 0.0, 1.0)
    f = _pmf_rows(np.ascontiguousarray(rows))
    return f[0] if np.ndim(p) == 1 else f


@jit
def _pmf_rows(p: NDArray[np.float64]) -> NDArray[np.float64]:
    rows, n = p.shape
    f = np.zeros((rows, n + 1))
    for r in range(rows):
        f[r, 0] = 1.0
        for k in range(n):
            pk = p[r, k]
            for j in range(k + 1, 0, -1):
                f[r, j] = f[r, j] * (1.0 - pk) + f[r, j - 1] * pk
            f[r, 0] *= 1.0 - pk
    return f


def tails(pmf: NDArray[np.float64], w: int) -> tuple[float, float]:
    """``(P(W >= w), P(W <= w))`` from the distribution ``pmf`` of ``W``."""
    return float(min(1.0, pmf[w:].sum())), float(min(1.0, pmf[:w + 1].sum()))


def poisson_binomial_tails(p: NDArray[np.float64], w: int) -> tuple[float, float]:
    """``(P(W >= w), P(W <= w))`` for ``W`` a sum of independent Bernoulli(``p_i``) (:func:`poisson_binomial_pmf`)."""
    return tails(poisson_binomial_pmf(p), w)


def hoeffding_lower(score: NDArray[np.float64], p: NDArray[np.float64]) -> float:
    """Hoeffding's bound on ``P(mean score <= observed)`` for independent scores in [0, 1] with means ``p``.

    ``exp(-n KL(s || p))`` with ``s`` the observed mean score and ``p`` the mean of the means, when ``s < p``
    (Hoeffding 1963, Theorem 1, which holds for unequal means through their average); 1 otherwise.
    """
    n = len(score)
    if n == 0:
        return 1.0
    return math.exp(_kl_log_tail(float(np.mean(score)), float(np.mean(p)), n))


@jit
def _kl_log_tail(s: float, q: float, n: int) -> float:
    """``log`` of Hoeffding's bound ``exp(-n KL(s || q))`` on a mean score of ``s`` or less when its mean is ``q``."""
    if s >= q:
        return 0.0
    q = min(max(q, 1e-300), 1.0 - 1e-16)
    kl = 0.0
    if s > 0:
        kl += s * np.log(s / q)
    if s < 1:
        kl += (1.0 - s) * np.log((1.0 - s) / (1.0 - q))
    return -n * kl


def holm(p_values: Sequence[float], total: int) -> NDArray[np.float64]:
    """Holm's step-down adjustment of ``p_values`` among ``total`` hypotheses (the others at p = 1).

    The ``i``-th smallest becomes ``max_{j <= i} min(1, (total - j) p_(j))`` (Holm 1979); hypotheses that were
    screened out sort last with p = 1 and so change nothing for those listed.
    """
    p = np.asarray(p_values, dtype=np.float64)
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, (total - np.arange(len(p))) * p[order])
    adjusted = np.empty(len(p))
    adjusted[order] = np.maximum.accumulate(scaled) if len(p) else scaled
    return adjusted

