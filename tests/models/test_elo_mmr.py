"""Elo-MMR as a podium model: against the reference implementation, by hand, and its properties.

References: ``elo-mmr-py`` 2.0.0 (PyPI; Rust ``multi-skill`` by EbTech, the authors' implementation), its ``mmr`` and
``mmr-fast`` systems at their defaults, for the real history and for the small rounds whose values are written out
below (each computed with ``elo_mmr_py.rate_latest`` as the comment beside it says); the closed forms of
Ebtekar & Liu (2021) for the two-player round worked by hand.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import podium
from podium import EloMMR, League, Match, Rating
from podium.models import MODELS

from ..shared import SHARED as DATA, load

PRIOR = {"mu": 1500.0, "sigma": 350.0}


# -- against elo-mmr-py ----------------------------------------------------------------------------------------
def _contests(matches: podium.Matches, em: object) -> list[object]:
    """Round ``i`` as an ``elo_mmr_py.Contest`` at ``86400 (i + 1)`` seconds: standings ``(name, lo, hi)``, ``lo`` and
    ``hi`` the first and last position of the player's tied group."""
    contests = []
    for i, match in enumerate(matches):
        ranks = [-1 if r is None else r for r in match.ranks]  # (codeforces_early has no None)
        order = sorted(range(len(ranks)), key=lambda t: ranks[t])
        first: dict[int, int] = {}
        last: dict[int, int] = {}
        for k, t in enumerate(order):
            first.setdefault(ranks[t], k)
            last[ranks[t]] = k
        standings = [(match.teams[t][0], first[ranks[t]], last[ranks[t]]) for t in order]
        contests.append(em.Contest(standings, name=str(i), time_seconds=86400 * (i + 1)))  # type: ignore[attr-defined]
    return contests


@pytest.mark.parametrize("variant", ["mmr", "mmr-fast"])
def test_codeforces_early_equals_elo_mmr_py(variant: str) -> None:
    em = pytest.importorskip("elo_mmr_py")
    if not (DATA / "codeforces_early" / "matches.jsonl.gz").exists():
        pytest.skip("the shared codeforces_early history is not present")
    matches = load("codeforces_early")
    assert not any(r is None for match in matches for r in match.ranks)  # standings have no non-finishers
    reference = em.rate_latest(_contests(matches, em), variant)
    timed = podium.Matches.from_matches([Match(m.teams, m.ranks, time=86400.0 * (i + 1)) for i, m in
                                         enumerate(matches)])
    league = League(EloMMR(variant=variant))
    league.record_many(timed)
    states = league.states()
    assert set(states) == set(reference)
    d_mu = max(abs(states[p].mu - r.mu) for p, r in reference.items())
    d_sigma = max(abs(states[p].sigma - r.sig) for p, r in reference.items())
    # measured: mmr 4.5e-10 and 0, mmr-fast 2.2e-11 and 0 (Halley's roots against the reference's Newton's)
    assert d_mu < 1e-6 and d_sigma < 1e-6, (d_mu, d_sigma)


def test_drift_and_noob_delay_equal_elo_mmr_py() -> None:
    em = pytest.importorskip("elo_mmr_py")
    contests = [em.Contest([("ann", 0, 0), ("bob", 1, 1)], time_seconds=86400),
                em.Contest([("bob", 0, 0), ("ann", 1, 1), ("cy", 2, 2)], time_seconds=86400 * 11)]
    matches = [Match([["ann"], ["bob"]], time=86400.0), Match([["bob"], ["ann"], ["cy"]], time=86400.0 * 11)]
    for config, params in ((em.EloMmrConfig("mmr", drift_per_day=100.0), {"drift_per_day": 100.0}),
                           (em.EloMmrConfig("mmr", noob_delay=[0.5, 0.8]), {"noob_delay": (0.5, 0.8)}),
                           (em.EloMmrConfig("mmr", split_ties=True), {"split_ties": True})):
        reference = em.rate_latest(contests, config)
        league = League(EloMMR(**params))
        league.record_many(matches)
        for name, r in reference.items():
            assert league.rating(name).mu == pytest.approx(r.mu, abs=1e-9), (params, name)
            assert league.rating(name).sigma == pytest.approx(r.sig, abs=1e-9), (params, name)


# -- by hand ---------------------------------------------------------------------------------------------------
def _root(f: object, lo: float, hi: float) -> float:
    """Bisection of an increasing ``f`` to the spacing of floats (independent of the model's solver)."""
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if f(mid) > 0:  # type: ignore[operator]
            hi = mid
        else:
            lo = mid
    return 0.5 * (lo + hi)


def test_two_newcomers_by_hand() -> None:
    # Defaults: w = 0.2, sigma_L = 80.  Diffusion: sigma'^2 = 350^2 + w sigma_L^2; the Gaussian factor is N(1500,
    # sigma'^2) (nothing to transfer yet).  Both terms sit at 1500 with s^2 = sigma'^2 + sigma_perf^2,
    # sigma_perf^2 = (1 + 1/w) sigma_L^2.  The winner's equation (itself as a tie, the loser behind):
    # 2 v(x) + v(x) + w_out = 0, v = -w_out tanh(w_arg (x - 1500))  =>  tanh(w_arg (p - 1500)) = 1/3.
    sp2 = 6.0 * 80.0 ** 2
    sig2 = 350.0 ** 2 + 0.2 * 80.0 ** 2
    w_arg = math.pi / (2.0 * math.sqrt(3.0) * math.sqrt(sig2 + sp2))
    p = 1500.0 + math.atanh(1.0 / 3.0) / w_arg
    # Update: the zero of (x - 1500) / sigma'^2 + W tanh(W (x - p) / 2), W = pi / (sqrt(3) sigma_perf);
    # 1 / sigma^2 = 1 / sigma'^2 + 1 / sigma_perf^2.
    big_w = math.pi / (math.sqrt(3.0) * math.sqrt(sp2))
    mu = _root(lambda x: (x - 1500.0) / sig2 + big_w * math.tanh(big_w * (x - p) / 2.0), 1500.0, p)
    sigma = 1.0 / math.sqrt(1.0 / sig2 + 1.0 / sp2)
    new = EloMMR().rate(Match([["ann"], ["bob"]]), {})
    assert new["ann"].mu == pytest.approx(mu, abs=1e-9)
    assert new["ann"].sigma == pytest.approx(sigma, abs=1e-12)
    assert new["bob"].mu == pytest.approx(3000.0 - mu, abs=1e-9)  # the mirror image
    assert new["ann"].mu == pytest.approx(1629.3914269815912, abs=1e-9)  # elo-mmr-py 2.0.0, mmr, [ann, bob]
    assert round(sigma, 6) == 171.195444


def test_ties() -> None:
    model = EloMMR()
    # all tied: the reference ignores the round (nothing changes, not even a newcomer's sigma)
    assert model.rate(Match([["a"], ["b"]], ranks=[0, 0]), {}) == {"a": Rating(**PRIOR), "b": Rating(**PRIOR)}
    # elo-mmr-py 2.0.0, mmr, standings [("ann", 0, 1), ("bob", 0, 1), ("cy", 2, 2)]
    new = model.rate(Match([["ann"], ["bob"], ["cy"]], ranks=[0, 0, 1]), {})
    assert new["ann"].mu == new["bob"].mu == pytest.approx(1575.7230451757089, abs=1e-9)
    assert new["cy"].mu == pytest.approx(1295.133280554758, abs=1e-9)
    # split_ties: a tie is half a win and half a loss, so the tied pair moves as the winner of a duel (it beat one
    # and, net, drew one): elo-mmr-py 2.0.0, EloMmrConfig("mmr", split_ties=True), same standings
    split = EloMMR(split_ties=True).rate(Match([["ann"], ["bob"], ["cy"]], ranks=[0, 0, 1]), {})
    assert split["ann"].mu == pytest.approx(1629.3914269815912, abs=1e-9)
    assert split["cy"].mu == pytest.approx(1200.4874681371161, abs=1e-9)


def test_teams_share_the_update_and_newcomer_teams_are_even() -> None:
    new = EloMMR().rate(Match([["a", "b"], ["c", "d"]]), {})
    assert new["a"].mu == new["b"].mu > 1500.0
    assert new["c"].mu == new["d"].mu
    assert new["a"].mu - 1500.0 == pytest.approx(1500.0 - new["c"].mu, abs=1e-9)
    # a pair of newcomers against one newcomer: even before the match, so the winner gains whichever it is
    for ranks in ([0, 1], [1, 0]):
        out = EloMMR().rate(Match([["a", "b"], ["c"]], ranks=ranks), {})
        assert (out["a"].mu > 1500.0) == (ranks[0] == 0) and (out["c"].mu > 1500.0) == (ranks[1] == 0)


def test_time_is_seconds_and_dates_are_converted() -> None:
    model = EloMMR(drift_per_day=1000.0)
    a = [Match([["x"], ["y"]], time=0.0), Match([["x"], ["y"]], time=86400.0 * 3)]
    b = [Match([["x"], ["y"]], time="2020-01-01"), Match([["x"], ["y"]], time="2020-01-04")]
    ra, rb = League(model), League(model)
    ra.record_many(a)
    rb.record_many(b)
    assert ra.rating("x").sigma == pytest.approx(rb.rating("x").sigma, rel=1e-12)
    near = League(model)
    near.record_many([Match([["x"], ["y"]], time=0.0), Match([["x"], ["y"]], time=1.0)])
    assert ra.rating("x").sigma > near.rating("x").sigma  # three days of drift widen it


# -- properties ----------------------------------------------------------------------------------------------
fields = st.integers(3, 7).flatmap(lambda n: st.tuples(
    st.lists(st.floats(1200.0, 1800.0), min_size=n, max_size=n),
    st.lists(st.floats(60.0, 350.0), min_size=n, max_size=n),
    st.lists(st.integers(0, 3), min_size=n, max_size=n),
    st.integers(0, n - 1)))


@given(fields, st.sampled_from(["mmr", "mmr-fast"]))
def test_finishing_higher_never_lowers_the_new_rating(field: tuple, variant: str) -> None:
    mus, sigmas, ranks, i = field
    names = [f"p{k}" for k in range(len(mus))]
    ratings = {p: Rating(m, s) for p, m, s in zip(names, mus, sigmas)}
    model = EloMMR(variant=variant, subsample_size=3 if variant == "mmr-fast" else None)
    doubled = [2 * r for r in ranks]
    base = model.rate(Match([[p] for p in names], ranks=doubled), ratings)[names[i]].mu
    # ahead of its tied group instead of tied with it, and tied with the group above instead of behind it
    for better in (doubled[i] - 1, doubled[i] - 2):
        if better < 0 or (better == doubled[i] - 1 and doubled.count(doubled[i]) == 1):
            continue
        improved = list(doubled)
        improved[i] = better
        if len(set(improved)) == 1:  # all tied: a round the model ignores
            continue
        assert model.rate(Match([[p] for p in names], ranks=improved), ratings)[names[i]].mu >= base - 1e-9


@given(fields)
def test_a_non_finisher_never_gains(field: tuple) -> None:
    mus, sigmas, ranks, i = field
    names = [f"p{k}" for k in range(len(mus))]
    ratings = {p: Rating(m, s) for p, m, s in zip(names, mus, sigmas)}
    with_dnf: list[int | None] = list(ranks)
    with_dnf[i] = None
    new = EloMMR().rate(Match([[p] for p in names], ranks=with_dnf), ratings)
    assert new[names[i]].mu < ratings[names[i]].mu
    assert all(math.isfinite(r.mu) and r.sigma > 0 for r in new.values())


@given(fields)
def test_ratings_are_finite_and_uncertainty_shrinks(field: tuple) -> None:
    mus, sigmas, ranks, _ = field
    names = [f"p{k}" for k in range(len(mus))]
    ratings = {p: Rating(m, s) for p, m, s in zip(names, mus, sigmas)}
    new = EloMMR().rate(Match([[p] for p in names], ranks=ranks), ratings)
    if len(set(ranks)) == 1:
        assert new == ratings
        return
    for p in names:  # 1/sigma^2 = 1/sigma'^2 + 1/sigma_perf^2 with sigma'^2 = sigma^2 + w sigma_L^2
        expected = 1.0 / math.sqrt(1.0 / (ratings[p].sigma ** 2 + 1280.0) + 1.0 / 38400.0)
        assert new[p].sigma == pytest.approx(expected, rel=1e-12)


# -- the model as a podium model ------------------------------------------------------------------------------
def test_league_replays_agree_and_inputs_are_not_mutated() -> None:
    matches = [Match([["a"], ["b"], ["c"]]), Match([["b"], ["c"]], ranks=[0, 0]), Match([["c", "a"], ["b"]]),
               Match([["a"], ["b"], ["c"], ["d"]], ranks=[1, 0, None, None])]
    one, many = League(EloMMR()), League(EloMMR())
    for m in matches:
        one.record(m)
    many.record_many(matches)
    a, b = one.states(), many.states()
    assert a.keys() == b.keys()
    for name in a:  # (NaN fields: the times these matches lack, a newcomer's empty Gaussian factor)
        assert (a[name].mu, a[name].sigma, a[name].games) == (b[name].mu, b[name].sigma, b[name].games)
        assert np.array_equal(a[name].extra, b[name].extra, equal_nan=True)
    loglik = many.log_likelihoods
    assert len(loglik) == 4 and np.all(np.asarray(loglik)[[0, 2, 3]] < 0)
    ratings = {"a": Rating(1600.0, 100.0)}
    EloMMR().rate(matches[0], ratings)
    assert ratings == {"a": Rating(1600.0, 100.0)}
    assert MODELS["elo-mmr"] is EloMMR and "EloMMR" in podium.__all__


def test_predictions() -> None:
    model = EloMMR()
    ratings = {"a": Rating(1700.0, 80.0), "b": Rating(1500.0, 80.0)}
    p = model.win_probabilities([["a"], ["b"]], ratings)
    assert p.sum() == pytest.approx(1.0) and p[0] > 0.5
    # two teams: log P(a ahead) is the logistic of (1700 - 1500) pi / (sqrt(3) sd), sd^2 = 2 (80^2 + 1280 + 38400)
    z = 200.0 * math.pi / math.sqrt(3.0) / math.sqrt(2.0 * (80.0 ** 2 + 1280.0 + 38400.0))
    assert model.log_likelihood(Match([["a"], ["b"]]), ratings) == pytest.approx(-math.log1p(math.exp(-z)))


@pytest.mark.parametrize(("params", "field"), [
    ({"weight_limit": 0.0}, "weight_limit"), ({"sig_limit": -1.0}, "sig_limit"), ({"variant": "fast"}, "variant"),
    ({"noob_delay": [0.5, 0.0]}, "noob_delay"), ({"history": 0}, "history"), ({"split_ties": 1}, "split_ties"),
    ({"transfer_speed": -1.0}, "transfer_speed"), ({"subsample_bucket": math.nan}, "subsample_bucket"),
])
def test_bad_hyperparameters_name_the_field(params: dict, field: str) -> None:
    with pytest.raises(ValueError, match=field):
        EloMMR(**params)
