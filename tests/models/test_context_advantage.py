"""One advantage per context (issue 31): :class:`podium.ByContext` reads a match's context from its ``meta`` and gives
each context its own advantage, in every model; ``fit`` fits one value per context that has the matches for it."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

import podium
from podium import ByContext, Match, Matches

MODELS = [podium.Elo, podium.PairwiseElo, podium.PlackettLuce, podium.Thurstone, podium.TrueSkill, podium.Glicko2,
          podium.EloMMR]


def _history() -> list[Match]:
    out = []
    for i in range(24):
        a, b = f"p{i % 5}", f"p{(i * 3 + 1) % 5 if (i * 3 + 1) % 5 != i % 5 else (i + 2) % 5}"
        meta = None if i % 6 == 5 else {"league": ["A", "B", "C"][i % 3], "round": i}
        out.append(Match([[a], [b]], ranks=[i % 2, 1 - i % 2], advantage=[1, 0] if i % 4 else [0, 1], time=i,
                         meta=meta))
    return out


def test_by_context_values_defaults_and_errors() -> None:
    by = ByContext("surface", {"Clay": 20, "Grass": 60.5}, default=35)
    assert (by.value("Clay"), by.value("Grass"), by.value("Hard"), by.value(None)) == (20.0, 60.5, 35.0, 35.0)
    assert by.values == {"Clay": 20.0, "Grass": 60.5}
    assert by == ByContext("surface", {"Grass": 60.5, "Clay": 20.0}, default=35.0)
    assert by != ByContext("surface", {"Clay": 20.0}, default=35.0)
    assert hash(by) == hash(ByContext("surface", {"Grass": 60.5, "Clay": 20}, default=35))
    assert pickle.loads(pickle.dumps(by)) == by
    assert eval(repr(by), {"ByContext": ByContext}) == by
    assert by.with_value("Hard", 1.0).value("Hard") == 1.0 and by.with_value(None, 2.0).default == 2.0
    for bad, field in [(dict(key=""), "key"), (dict(key="s", values={"a": math.nan}), "values"),
                       (dict(key="s", values={1: 2.0}), "context"), (dict(key="s", default=True), "default")]:
        key = bad.pop("key")
        with pytest.raises(ValueError, match=field):
            ByContext(key, **bad)
    with pytest.raises(ValueError, match="'advantage'.*ByContext"):
        podium.Elo(advantage="home")


def test_per_match_reads_meta_numbers_and_missing_keys() -> None:
    ms = Matches.from_matches([Match([["a"], ["b"]], meta={"neutral": False}), Match([["a"], ["b"]]),
                               Match([["a"], ["b"]], meta={"other": 1}), Match([["a"], ["b"]], meta={"neutral": True})])
    by = ByContext("neutral", {"False": 100.0, "True": 0.0}, default=50.0)
    assert by.per_match(ms).tolist() == [100.0, 50.0, 50.0, 0.0]


@pytest.mark.parametrize("cls", MODELS + [podium.TrueSkillThroughTime])
def test_one_value_everywhere_is_the_plain_advantage_bit_for_bit(cls: type) -> None:
    """A ByContext whose every context (and default) has the plain advantage's value rates exactly as it."""
    plain_value = 0.7 if cls in (podium.TrueSkill, podium.TrueSkillThroughTime) else 45.0
    same = ByContext("league", {"A": plain_value, "B": plain_value}, default=plain_value)
    history = _history()
    if cls is podium.TrueSkillThroughTime:
        a, b = cls(advantage=plain_value).smooth(history), cls(advantage=same).smooth(history)
        assert all(np.array_equal(a.trajectory(p).mu, b.trajectory(p).mu) for p in a.players)
        return
    a, b = podium.League(cls(advantage=plain_value)), podium.League(cls(advantage=same))
    a.record_many(history)
    b.record_many(history)
    assert a.ratings == b.ratings
    zero = podium.League(cls())
    zero.record_many(history)
    assert zero.ratings != a.ratings  # the advantage was read


@pytest.mark.parametrize("cls", MODELS)
def test_a_match_takes_its_contexts_value_and_the_default_elsewhere(cls: type) -> None:
    unit = 1.0 if cls is podium.TrueSkill else 60.0
    by = ByContext("league", {"A": 2 * unit}, default=unit)
    league = podium.League(cls())  # ratings that differ: a few results first
    league.record_many([Match([["x"], ["y"]]), Match([["x"], ["z"]]), Match([["z"], ["y"]])])
    ratings = league.ratings
    for meta, value in [({"league": "A"}, 2 * unit), ({"league": "Z"}, unit), (None, unit)]:
        match = Match([["x"], ["y"]], advantage=[1, 0], meta=meta)
        assert cls(advantage=by).rate(match, ratings) == cls(advantage=value).rate(match, ratings)
        p = cls(advantage=by).win_probabilities([["x"], ["y"]], ratings, advantage=[1, 0],
                                                context=None if meta is None else meta["league"])
        assert np.array_equal(p, cls(advantage=value).win_probabilities([["x"], ["y"]], ratings, advantage=[1, 0]))
    with pytest.raises(ValueError, match="'context'"):
        cls(advantage=by).win_probabilities([["x"], ["y"]], ratings, context=3)


def test_match_meta_round_trips_through_records_and_matches(tmp_path) -> None:  # type: ignore[no-untyped-def]
    history = _history()
    path = tmp_path / "h.jsonl"
    podium.write_matches(history, path)
    back = podium.read_matches(path)
    assert [m.meta for m in back] == [m.meta for m in history]
    assert list(back) == history
    assert Matches.from_matches(history).meta == [m.meta for m in history]
    with pytest.raises(podium.MatchError, match="'meta'"):
        Match([["a"], ["b"]], meta=["league", "A"])  # type: ignore[arg-type]


def _league_history(seed: int, homes: dict[str, float], n_matches: int = 8000, n_players: int = 40) -> Matches:
    """Logistic Elo duels, the first team at home with the edge of the match's league."""
    scale = 400.0 / math.log(10.0)
    rng = np.random.default_rng(seed)
    skill = rng.normal(0.0, 0.8 * scale, n_players)
    names = list(homes)
    out = []
    for _ in range(n_matches):
        a, b = rng.choice(n_players, 2, replace=False)
        league = names[rng.integers(len(names))]
        win = rng.random() < 1.0 / (1.0 + math.exp(-(skill[a] + homes[league] - skill[b]) / scale))
        out.append(Match([[f"p{a}"], [f"p{b}"]], ranks=[0, 1] if win else [1, 0], advantage=[1, 0],
                         meta={"league": league}))
    return Matches.from_matches(out)


def test_fit_names_a_value_per_context_with_enough_matches_and_the_default_only_where_needed() -> None:
    ms = _league_history(0, {"A": 30.0, "B": 120.0}, n_matches=400)
    model = podium.Elo(advantage=ByContext("league"))
    result = podium.fit(model, ms, max_evaluations=30)
    assert {"advantage[A]", "advantage[B]"} <= set(result.params) and "advantage" not in result.params
    rare = Matches.concat([ms, Matches.from_matches([Match([["p1"], ["p2"]], advantage=[1, 0],
                                                           meta={"league": "rare"})] * 5)])
    result = podium.fit(model, rare, split=0.99, max_evaluations=30)
    assert "advantage" in result.params and "advantage[rare]" not in result.params
    with pytest.raises(ValueError, match="cannot fit 'advantage\\[A\\]'"):
        podium.fit(podium.Elo(), ms, params=["advantage[A]"])


def test_fit_recovers_each_leagues_home_advantage() -> None:
    """Six histories of 8,000 duels in three leagues with home edges 30, 120 and 70 Elo points: each fitted value's
    mean lies within two standard errors of its truth (measured: 28.9 ± 2.2, 115.8 ± 4.2, 65.5 ± 5.7)."""
    truth = {"A": 30.0, "B": 120.0, "C": 70.0}
    fits = [podium.fit(podium.Elo(advantage=ByContext("league")), _league_history(seed, truth)) for seed in range(6)]
    for league, value in truth.items():
        estimates = np.array([f.params[f"advantage[{league}]"] for f in fits])
        se = float(np.std(estimates, ddof=1)) / math.sqrt(len(estimates))
        assert abs(float(np.mean(estimates)) - value) < 2.0 * se, (league, estimates)
        assert se < 15.0
