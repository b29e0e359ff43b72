"""Prequential evaluation: every match is predicted from the ratings before it, then rated.

The metrics are the TrueSkill paper's (Herbrich, Minka & Graepel 2007, section 5) generalized to any number
of teams, draws and non-finishers:

* ``pair_error`` -- for every pair of teams of a match whose order is decided (different ranks, or a finisher
  and a non-finisher; drawn pairs and pairs of non-finishers do not count), the model predicts the team more
  likely to finish ahead, ``model.win_probabilities`` for the two teams alone; an exact tie in the prediction
  counts one half.  The fraction of wrong pairs over the whole history.
* ``pair_log_loss`` -- over the same pairs, the mean of ``-log p`` with ``p`` that probability for the team
  that did finish ahead.
* ``calibration_error`` -- the expected calibration error of the pair probabilities (each decided pair from
  both sides, ten equal-width bins, :func:`calibration_error`): how far the predicted probabilities are from
  the observed frequencies, so that overconfidence shows in the report as well as in the log loss.  A report
  figure, not a :func:`podium.fit` target (it is not a proper score: always predicting 1/2 scores 0).
* ``log_likelihood`` -- the mean per match of ``model.log_likelihood(match, ratings_before)``.  Compare it
  within a family: only TrueSkill gives a draw a probability of its own (the draw margin); the Elo family
  scores a draw as half a win and half a loss, and PairwiseElo's is its pairwise composite likelihood.
  Summed, it is the filter's evidence ``log P(all outcomes)`` (chain rule); a whole-history smoother
  (:class:`podium.TrueSkillThroughTime`) reports its own estimate of that evidence per match here, and no
  pair metrics (it predicts nothing before a match).
* ``pair_inversion`` and ``rank_deviation`` -- the Elo-MMR paper's figures (Ebtekar & Liu 2021, after its
  reference implementation), for contests with many players: the share of each contestant's opponents that the
  ratings before the round order correctly (higher is better), and how far each contestant's place by rating is
  from its actual place, over ``n - 1`` (lower is better), each averaged over the contestants with at least
  ``min_rounds`` earlier matches.  Computed from the models' ratings in ``O(n log n)`` a round; the definitions,
  ties, non-finishers and teams are :mod:`podium.evaluation.contests`'s.  Report figures, not :func:`podium.fit`
  targets (a ranking is piecewise constant in the hyperparameters).

Predictions use the ratings as they stand before the match, as ``model.win_probabilities(teams, ratings)``
does: TrueSkill's dynamics (``tau``, ``drift``) are added only when the match is rated.
* the paper's *challenged* comparison -- for every ordered pair of models ``A, B``, ``B``'s ``pair_error`` on
  the fraction ``challenge`` of matches that ``A`` considers most tightly matched: highest match quality
  (TrueSkill, eq. 7) or, for models without quality, highest predicted uncertainty (the mean over the match's
  pairs of the probability that the predicted favourite loses; draws play no part). Tightness equal to 32
  significant bits counts as a tie, and ties go to the earlier match.

podium's models are evaluated by their compiled replay: one pass rates the history and keeps every player's
rating after each match, the ratings before each match are read off that, and the pair probabilities are
computed in one compiled loop -- seconds for 200,000 matches.  Any other object with podium's
``rate(match, ratings)`` and ``win_probabilities(teams, ratings)`` (and optionally ``log_likelihood`` and
``quality``) is evaluated match by match in Python, which is how other libraries are compared side by side.
That replay and the history's structure are :mod:`podium.evaluation.replay`; this module holds the metrics, the
report and the public function.
"""

from __future__ import annotations

import io
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Executor, Future
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..data.match import Match
from ..data.matches import Matches
from .contests import CONTEST_METRICS, ContestField, ContestSums
from .replay import Rater, _check_model, _mean, _predict, _Predictions, Structure

__all__ = ["CONTEST_METRICS", "METRICS", "Rater", "Report", "calibration_error", "evaluate", "reliability"]

#: The metrics of a :class:`Report`, each per model.  Lower is better except ``log_likelihood``.
METRICS = ("pair_error", "pair_log_loss", "log_likelihood")


# -- metrics -----------------------------------------------------------------------------------------------
def _pair_scores(la: NDArray[np.float64], lb: NDArray[np.float64], won: NDArray[np.bool_]
                 ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Per pair, from ``log P(a ahead)``, ``log P(b ahead)`` and whether ``a`` finished ahead: the error
    (1 when the favourite finished behind, 1/2 for a tied prediction) and ``-log p`` of the team ahead."""
    log_win = np.where(won, la, lb)
    log_lose = np.where(won, lb, la)
    return (log_win < log_lose) + 0.5 * (log_win == log_lose), -log_win


def _pair_terms(s: Structure, pred: _Predictions) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Per counted pair: the error and ``-log p`` of the team that finished ahead."""
    return _pair_scores(pred.log_ahead_a[s.counted], pred.log_ahead_b[s.counted], s.outcome[s.counted] > 0)


def _metric(s: Structure, pred: _Predictions, metric: str) -> float:
    if metric == "log_likelihood":
        if pred.evidence is not None:
            return pred.evidence
        return _mean(pred.log_likelihood[s.scored]) if pred.log_likelihood is not None else math.nan
    if not pred.pairs:
        return math.nan
    error, loss = _pair_terms(s, pred)
    return _mean(error) if metric == "pair_error" else _mean(loss)


def _check_metric(metric: str, allowed: tuple[str, ...] = METRICS) -> str:
    if metric not in allowed:
        raise ValueError(f"'metric' must be one of {allowed}. Got {metric!r} instead.")
    return metric


def reliability(p_first: NDArray[np.float64], won_first: NDArray[np.bool_], bins: int = 10
                ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.int64]]:
    """Pairs grouped by predicted probability into ``bins`` equal-width bins: ``(mean predicted, observed
    frequency, count)`` per non-empty bin.

    Every decided pair enters twice, once from each side (``p``, finished ahead) and (``1 - p``, finished
    behind), so the diagram does not depend on the order the teams are listed in (many files list the
    winner first) and is symmetric about ``(1/2, 1/2)``; counts are of these oriented pairs.
    """
    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)) or bins < 1:
        raise ValueError(f"'bins' must be a positive int. Got {bins!r} instead.")
    p = np.concatenate([p_first, 1.0 - p_first])
    won = np.concatenate([won_first, ~won_first])
    bins = int(bins)
    which = np.minimum((p * bins).astype(np.int64), bins - 1)
    count = np.bincount(which, minlength=bins)
    predicted = np.bincount(which, weights=p, minlength=bins)
    observed = np.bincount(which, weights=won.astype(float), minlength=bins)
    keep = count > 0
    return predicted[keep] / count[keep], observed[keep] / count[keep], count[keep]


def calibration_error(p_first: NDArray[np.float64], won_first: NDArray[np.bool_], bins: int = 10) -> float:
    """Expected calibration error of pair predictions: ``sum_b (n_b / N) |mean predicted_b - observed_b|``
    over :func:`reliability`'s bins (Naeini, Cooper & Hauskrecht 2015); 0 is perfectly calibrated."""
    if len(p_first) == 0 or not np.all(np.isfinite(p_first)):
        return math.nan
    predicted, observed, count = reliability(p_first, won_first, bins)
    return float(np.sum(count * np.abs(predicted - observed)) / np.sum(count))


# -- the report ------------------------------------------------------------------------------------------------
@dataclass
class Report:
    """The result of :func:`evaluate`.

    ``report[name][metric]`` is one figure (``metric`` in :data:`METRICS` or :data:`CONTEST_METRICS`, or
    ``"calibration_error"``, ``"pairs"``, ``"matches"``, ``"seconds"``); ``report.challenged[a][b]`` is ``b``'s ``pair_error`` on the matches ``a`` finds most
    tightly matched.  ``str(report)`` is a table; :meth:`to_dict`, :meth:`to_json` and :meth:`to_frame` give
    the figures as data.  ``NaN`` marks a metric a model does not define (JSON ``null``).
    """

    scores: dict[str, dict[str, float]]
    challenged: dict[str, dict[str, float]]
    matches: int
    pairs: int
    players: int
    challenge: float
    min_games: int
    start: int
    total_matches: int
    connected_only: bool = False
    dropped_pairs: int = 0    # with connected_only: decided pairs left out, their players not yet connected
    dropped_matches: int = 0  # with connected_only: matches whose log-likelihood was left out for that reason
    min_rounds: int = 5       # the contest metrics count contestants with at least this many earlier matches
    rounds: int = 0           # the rounds the contest metrics count (scored, with an order among those counted)
    contestants: int = 0      # the contestants they count, summed over those rounds
    # per counted pair: log P(first-listed team ahead), log P(second ahead) for each model; the outcome; the match
    _log_ahead: dict[str, tuple[NDArray[np.float64], NDArray[np.float64]]] = field(default_factory=dict, repr=False)
    _pair_won: NDArray[np.bool_] = field(default_factory=lambda: np.zeros(0, bool), repr=False)
    _pair_match: NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, np.int64), repr=False)
    # per scored match: each model's log-likelihood (None where it defines none)
    _log_likelihood: dict[str, NDArray[np.float64] | None] = field(default_factory=dict, repr=False)
    # per counted round of the contest metrics: each model's sums (contests.ContestSums)
    _contest: dict[str, ContestSums] = field(default_factory=dict, repr=False)

    def __getitem__(self, name: str) -> dict[str, float]:
        return self.scores[self._name(name)]

    @property
    def models(self) -> list[str]:
        """The models' names, in the order given."""
        return list(self.scores)

    def pair_predictions(self, name: str) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
        """For every counted pair: the model's probability that the first-listed team finishes ahead, and
        whether it did (the data of a calibration plot)."""
        return np.exp(self._log_ahead[self._name(name)][0]), self._pair_won

    def _name(self, name: str) -> str:
        if name not in self.scores:
            raise KeyError(f"no model {name!r} in this report; it has {list(self.scores)}")
        return name

    def difference(self, a: str, b: str, metric: str = "pair_log_loss") -> tuple[float, float]:
        """``metric(a) - metric(b)`` on the same matches, and its standard error.

        The standard error treats matches as independent and the pairs within a match as possibly
        correlated (a cluster-robust, "sandwich" estimate over matches): with ``D_m`` the sum of the
        per-pair differences of match ``m``, ``n_m`` its number of counted pairs and ``d`` the mean
        difference over all ``N`` pairs, ``se^2 = M / (M - 1) * sum_m (D_m - n_m d)^2 / N^2``.  For the
        log-likelihood the matches themselves are the units; for the contest metrics (:data:`CONTEST_METRICS`)
        the contestants, clustered by round.  A difference within about two standard errors of zero is not
        evidence that one model predicts better.
        """
        _check_metric(metric, METRICS + CONTEST_METRICS)
        a, b = self._name(a), self._name(b)
        if metric in CONTEST_METRICS:
            ca, cb = self._contest[a], self._contest[b]
            column = "correct" if metric == "pair_inversion" else "deviation"
            sums, counts = getattr(ca, column) - getattr(cb, column), ca.n  # per round: sums over n contestants
        else:
            if metric == "log_likelihood":
                la, lb = self._log_likelihood[a], self._log_likelihood[b]
                if la is None or lb is None:
                    return math.nan, math.nan
                per, cluster = la - lb, np.arange(len(la))
            else:
                per = self.pair_values(a, metric) - self.pair_values(b, metric)
                cluster = self._pair_match
            _, inverse, pairs = np.unique(cluster, return_inverse=True, return_counts=True)
            sums, counts = np.bincount(inverse, weights=per), pairs.astype(np.float64)
        n = float(np.sum(counts))
        if n == 0:
            return math.nan, math.nan
        d = float(np.sum(sums)) / n
        m = len(sums)
        if m < 2:
            return d, math.nan
        se = math.sqrt(m / (m - 1) * float(np.sum((sums - counts * d) ** 2))) / n
        return d, se

    def pair_values(self, name: str, metric: str = "pair_log_loss") -> NDArray[np.float64]:
        """Per counted pair, in history order: the error (0, 1/2, 1) or ``-log p`` of the team that finished
        ahead; their mean is ``report[name][metric]``."""
        if metric not in ("pair_error", "pair_log_loss"):
            raise ValueError(f"'metric' must be 'pair_error' or 'pair_log_loss'. Got {metric!r} instead.")
        la, lb = self._log_ahead[self._name(name)]
        error, loss = _pair_scores(la, lb, self._pair_won)
        return error if metric == "pair_error" else loss

    def to_dict(self) -> dict[str, Any]:
        """The figures as plain data (``NaN`` as ``None``), for JSON."""
        def clean(x: float) -> float | None:
            return None if isinstance(x, float) and not math.isfinite(x) else x
        return {
            "matches": self.matches, "pairs": self.pairs, "players": self.players,
            "total_matches": self.total_matches, "start": self.start,
            "challenge": self.challenge, "min_games": self.min_games, "connected_only": self.connected_only,
            "dropped_pairs": self.dropped_pairs, "dropped_matches": self.dropped_matches,
            "min_rounds": self.min_rounds, "rounds": self.rounds, "contestants": self.contestants,
            "models": {n: {k: clean(v) for k, v in row.items()} for n, row in self.scores.items()},
            "challenged": {a: {b: clean(v) for b, v in row.items()} for a, row in self.challenged.items()},
        }

    def to_json(self, indent: int | None = 2) -> str:
        """:meth:`to_dict` as JSON text."""
        return json.dumps(self.to_dict(), indent=indent)

    def to_frame(self) -> Any:
        """A pandas ``DataFrame``: one row per model, one column per figure (pandas must be installed)."""
        import pandas as pd

        return pd.DataFrame.from_dict(self.scores, orient="index")

    def table(self, title: str | None = None) -> Any:
        """The figures as a rich ``Table`` (lower is better except the log-likelihood and the pair inversion);
        the contest metrics in percent, as the Elo-MMR paper prints them."""
        from rich.table import Table

        left_out = (f"; connected only: {self.dropped_pairs:,} pairs and {self.dropped_matches:,} matches left out"
                    if self.connected_only else "")
        table = Table(title=title or (
            f"{self.matches:,} matches scored ({self.pairs:,} decided pairs, {self.players:,} players){left_out}"))
        table.add_column("model", no_wrap=True)
        table.caption = (f"pair inv. % (higher is better), rank dev. %: the Elo-MMR paper's metrics, over "
                         f"{self.contestants:,} contestants with ≥ {self.min_rounds} earlier matches in "
                         f"{self.rounds:,} rounds")
        for column in ("pair error", "pair log loss", "log-lik. / match", "calib. error", "pair inv. %",
                       "rank dev. %", "seconds"):
            table.add_column(column, justify="right")
        for name, row in self.scores.items():
            table.add_row(name, _fmt(row["pair_error"], ".4f"), _fmt(row["pair_log_loss"], ".4f"),
                          _fmt(row["log_likelihood"], ".4f"), _fmt(row.get("calibration_error", math.nan), ".4f"),
                          _fmt(100 * row.get("pair_inversion", math.nan), ".2f"),
                          _fmt(100 * row.get("rank_deviation", math.nan), ".2f"), _fmt(row["seconds"], ".2f"))
        return table

    def challenged_table(self) -> Any:
        """The challenged comparison as a rich ``Table``: row ``a``, column ``b`` = ``challenged[a][b]``."""
        from rich.table import Table

        table = Table(title=f"challenged: pair error (columns) on the {self.challenge:.0%} of matches each row's "
                            "model finds most tightly matched")
        table.add_column("chosen by", no_wrap=True)
        for j in range(len(self.scores)):
            table.add_column(f"[{j + 1}]", justify="right")
        for j, (a, row) in enumerate(self.challenged.items()):
            table.add_row(f"[{j + 1}] {a}", *(_fmt(row[b], ".3f") for b in self.scores))
        return table

    def __str__(self) -> str:
        from rich.console import Console

        console = Console(width=120, record=True, file=io.StringIO())
        console.print(self.table())
        if len(self.scores) > 1:
            console.print(self.challenged_table())
        return console.export_text()


def _fmt(x: float, spec: str) -> str:
    return "—" if not math.isfinite(x) else format(x, spec)


# -- the public function ---------------------------------------------------------------------------------
def _as_matches(matches: Matches | Iterable[Match]) -> Matches:
    if isinstance(matches, Matches):
        return matches
    return Matches.from_matches(matches)


def _check_executor(executor: Any) -> Executor | None:
    """``executor`` itself if it is None or a :class:`concurrent.futures.Executor`, else a TypeError."""
    if executor is not None and not isinstance(executor, Executor):
        raise TypeError(
            "'executor' must be a concurrent.futures.Executor (a ThreadPoolExecutor, a ProcessPoolExecutor, "
            f"dask.distributed's Client.get_executor(), ...) or None. Got {type(executor).__name__}: {executor!r:.80}.")
    return executor


def _gather(futures: Sequence[Future[Any]]) -> list[Any]:
    """The futures' results in order; on the first failure the others are cancelled and the error raised."""
    try:
        return [f.result() for f in futures]
    except BaseException:
        for f in futures:
            f.cancel()
        raise


def _check_count(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ValueError(f"'{name}' must be an int >= 0. Got {value!r} instead.")
    return int(value)


def evaluate(
    matches: Matches | Iterable[Match],
    models: Mapping[str, Any],
    *,
    min_games: int = 0,
    challenge: float = 0.2,
    start: int = 0,
    connected_only: bool = False,
    executor: Executor | None = None,
    min_rounds: int = 5,
) -> Report:
    """Prequential evaluation of several models on one history (TrueSkill paper, section 5).

    Every match is predicted from the ratings before it, then rated; see the module docstring for the
    metrics.

    Parameters
    ----------
    matches : Matches or iterable of Match
        The history, in the order played.
    models : mapping of str to model
        Named podium models, or any objects with ``rate(match, ratings)`` and ``win_probabilities(teams,
        ratings)`` (:class:`Rater`).  A :class:`podium.TrueSkillThroughTime` (a smoother, which predicts nothing
        before a match) reports its log evidence per match in the ``log_likelihood`` column, beside the
        filters' mean prequential log-likelihood (both estimate ``log P(outcomes)`` per match), and no pair
        metrics.
    min_games : int
        Score only matches in which every player had played at least this many earlier matches.
    challenge : float in (0, 1]
        The fraction of the (scored) matches each model picks as the most tightly matched for the
        challenged comparison.
    start : int
        Score only matches from this index on; earlier matches are rated but not scored (the training
        part of :func:`podium.fit`, or a burn-in).
    connected_only : bool, default False
        Score only what the ratings before the match can compare: a pair of teams only when every player of
        both was in one connected component of the matches before it (:mod:`podium.engine.components`), a match's
        log-likelihood only when all its players were.  Ratings of players who never met, directly or through
        others, sit on unrelated scales, so a prediction between them is a guess whatever the model; a
        player's first match is never connected.  Connected *before* the match, not in the whole history: a
        component that the later history joins says nothing about the ratings at the time.  The report counts
        what was left out (``dropped_pairs``, ``dropped_matches``).
    executor : concurrent.futures.Executor, optional
        Compute each model's predictions as a task of this executor (a ``ThreadPoolExecutor``, a
        ``ProcessPoolExecutor``, or a cluster's: ``dask.distributed.Client(...).get_executor()``); the
        metrics are then computed here from the predictions.  The report is the same as without one, except
        the ``seconds`` column (each model's time in its task).  Each task carries its model and the
        history's structure (its matches and pairs: a few hundred bytes a match), so a
        process or cluster executor pays that transfer once per model; its models must be picklable
        (podium's are) and each worker process compiles podium's kernels on first use (or loads them from
        numba's cache).  Default: one model after the other, in this thread.
    min_rounds : int, default 5
        The contest metrics (``pair_inversion``, ``rank_deviation``) count a contestant only when it (every member
        of a team) had played at least this many earlier matches, the Elo-MMR paper's N = 5; the others are
        taken out of the round before places are counted (:mod:`podium.evaluation.contests`).  ``1`` is the
        reference implementation's figure over "everyone" (it does not count a player's first contest).

    Returns
    -------
    Report

    Examples
    --------
    >>> import podium
    >>> sim = podium.simulate(100, 2000, seed=1)
    >>> report = podium.evaluate(sim.matches, {"elo": podium.Elo(), "ts": podium.TrueSkill()})
    >>> report["ts"]["pair_error"] < 0.5
    True
    """
    if not isinstance(models, Mapping) or not models:
        raise ValueError(f"'models' must be a non-empty mapping of names to models. Got {models!r:.80}.")
    for name in models:
        if not isinstance(name, str):
            raise ValueError(f"'models' must be keyed by str names. Got the key {name!r}.")
    if isinstance(challenge, bool) or not isinstance(challenge, (int, float)) or not 0.0 < challenge <= 1.0:
        raise ValueError(f"'challenge' must be a float in (0, 1]. Got {challenge!r} instead.")
    min_games = _check_count("min_games", min_games)
    start = _check_count("start", start)
    min_rounds = _check_count("min_rounds", min_rounds)
    if not isinstance(connected_only, (bool, np.bool_)):
        raise ValueError(f"'connected_only' must be a bool. Got {connected_only!r:.80} instead.")
    executor = _check_executor(executor)
    packed = _as_matches(matches)
    if start > len(packed):
        raise ValueError(f"'start' must be at most the number of matches ({len(packed)}). Got {start}.")
    s = Structure(packed, start, min_games, bool(connected_only))
    if executor is None:
        preds = {name: _predict(model, s, True, True, True) for name, model in models.items()}
    else:
        for model in models.values():  # a class or a non-model fails here, before any task is sent
            _check_model(model)
        futures = [executor.submit(_predict, model, s, True, True, True) for model in models.values()]
        preds = dict(zip(models, _gather(futures)))
    contest_field = ContestField(packed, s.scored, s.games, min_rounds)
    scores: dict[str, dict[str, float]] = {}
    contest: dict[str, ContestSums] = {}
    for name, pred in preds.items():
        scores[name] = {m: _metric(s, pred, m) for m in METRICS}
        ece = calibration_error(np.exp(pred.log_ahead_a[s.counted]), s.outcome[s.counted] > 0) if pred.pairs \
            else math.nan
        contest[name] = contest_field.sums(pred.strength)
        scores[name].update({m: contest[name].metric(m) for m in CONTEST_METRICS})
        scores[name].update(calibration_error=ece, pairs=int(s.counted.sum()), matches=int(s.scored.sum()),
                            seconds=pred.seconds)
    challenged = _challenged(s, preds, float(challenge))
    players = np.unique(packed.player[np.repeat(s.scored, np.diff(packed.team_start[packed.match_start]))])
    won = s.outcome[s.counted] > 0
    return Report(
        scores=scores, challenged=challenged, matches=int(s.scored.sum()), pairs=int(s.counted.sum()),
        players=len(players), challenge=float(challenge), min_games=min_games, start=start,
        total_matches=len(packed), connected_only=bool(connected_only), dropped_pairs=s.dropped_pairs,
        dropped_matches=s.dropped_matches, min_rounds=min_rounds, rounds=contest_field.rounds,
        contestants=contest_field.contestants,
        _log_ahead={n: (p.log_ahead_a[s.counted], p.log_ahead_b[s.counted]) for n, p in preds.items()},
        _pair_won=won, _pair_match=s.pair_match[s.counted],
        _log_likelihood={n: p.log_likelihood[s.scored] if p.log_likelihood is not None else None
                         for n, p in preds.items()},
        _contest=contest,
    )


def _tie_key(tightness: NDArray[np.float64]) -> NDArray[np.float64]:
    """Tightness rounded to 32 significant bits (relative 2**-32), so that matches whose tightness differs
    only by the rounding of how their pairs were summed count as tied and the earlier one is taken first:
    ``m 2**e`` becomes ``round(m 2**32) 2**(e - 32)`` (``frexp``; NaN and infinities pass through)."""
    mant, expo = np.frexp(tightness)
    return np.ldexp(np.round(mant * 2.0**32), expo - 32)


def _challenged(s: Structure, preds: Mapping[str, _Predictions], challenge: float) -> dict[str, dict[str, float]]:
    """``out[a][b]``: ``b``'s pair error on the ``challenge`` fraction of eligible matches ``a`` finds
    tightest (ties in tightness broken by the earlier match)."""
    eligible = np.flatnonzero(s.eligible)
    take = math.ceil(round(challenge * len(eligible), 9))  # 0.07 * 100 is 7.000000000000001: not 8 matches
    errors = {name: _pair_terms(s, p)[0] if p.pairs else None for name, p in preds.items()}
    counted_match = s.pair_match[s.counted]
    out: dict[str, dict[str, float]] = {}
    for a, pa in preds.items():
        if pa.tightness is None:  # a smoother chooses no matches
            out[a] = {b: math.nan for b in preds}
            continue
        order = np.argsort(-_tie_key(pa.tightness[eligible]), kind="stable")
        chosen = np.zeros(len(s.matches), dtype=bool)
        chosen[eligible[order[:take]]] = True
        in_chosen = chosen[counted_match]
        out[a] = {b: _mean(e[in_chosen]) if (e := errors[b]) is not None else math.nan for b in preds}
    return out


def _score(model: Any, s: Structure, metric: str) -> float:
    """One metric of one model (lower is better: the log-likelihood is negated), for :func:`podium.fit`."""
    pred = _predict(model, s, want_ll=metric == "log_likelihood", want_tight=False)
    value = _metric(s, pred, metric)
    return -value if metric == "log_likelihood" else value

