"""The contract every model keeps, and the shared machinery of the likelihood (Elo) family.

A model holds hyperparameters only: keyword-only, stored verbatim, validated once in the constructor
(scikit-learn style), never changed afterwards.  It rates a match from ratings it does not mutate:

* ``rate(match, ratings)`` -> the new ratings of the match's players;
* ``win_probabilities(teams, ratings)`` -> ``P(team i finishes first)``, summing to 1;
* ``log_likelihood(match, ratings)`` -> log P(observed outcome | ratings before the match).

The single-match methods pack the match into the columnar form and run the same compiled replay
engine that :class:`podium.League` runs over whole histories, so there is one implementation of each
piece of math.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, Literal

import numpy as np
from numpy.typing import NDArray

from ..jit import small_work
from ..data.match import MAX_MU, Match, MatchError
from ..data.matches import Matches
from ..data.rating import Rating, ratings_of
from ..data.shapes import packed_match, packed_teams
from ..kernels.common import History, State, match_spread, state_rows, team_offsets, team_strengths
from ..kernels.elo import GAUSSIAN, LOGISTIC, replay_likelihood, spread_pairs
from ..kernels.trueskill import log_match_quality
from ..ordering import log_win_probabilities, rank_probabilities
from ..ordering.densities import DENSITIES, shape_info
from ..ordering.numerics import normalized
from .context import ByContext

__all__ = ["Model", "LikelihoodModel", "MAX_MU"]

#: What :meth:`Hyperparameters._init_params` checks a hyperparameter against: the validator of that name, the
#: ``" or None"`` forms letting None through as well.
ParamKind = Literal["finite", "positive", "non_negative", "probability", "positive_int", "advantage",
                    "finite or None", "positive or None", "non_negative or None"]


def fit_start(model: Any, name: str) -> float:
    """Where :func:`podium.fit` starts a parameter of the Elo family or Thurstone: its value, or for ``spread``
    and ``provisional`` at 0 (valid models, but not a start on fit's log scale) a small one."""
    value = model._fit_value(name)
    return max(value, _FIT_FLOORS[name]) if name in _FIT_FLOORS else value


_FIT_FLOORS = {"spread": 1e-3, "provisional": 0.5, "margin_power": 0.5, "margin_autocorrelation": 0.05}


def split_fit_name(name: str) -> tuple[str, str | None]:
    """``"advantage[Clay]"`` -> ``("advantage", "Clay")``; a plain name -> ``(name, None)``."""
    if name.endswith("]") and "[" in name:
        base, _, context = name[:-1].partition("[")
        return base, context
    return name, None


def typical_margin(matches: Matches) -> float:
    """A typical score difference between two teams of one match: twice the mean over the matches with two scores or
    more of their scores' standard deviation about the match's mean (for two teams, the absolute difference); 1
    without any.  Where :func:`podium.fit` starts a margin's scale: one typical margin worth about one unit of
    performance, whether the scores are goals (about 1) or mahjong points (about 10,000)."""
    if matches.score is None or len(matches) == 0:
        return 1.0
    y = matches.score
    starts = matches.match_start[:-1]
    known = ~np.isnan(y)
    count = np.add.reduceat(known.astype(np.float64), starts)
    filled = np.where(known, y, 0.0)
    mean = np.add.reduceat(filled, starts) / np.maximum(count, 1.0)
    team_mean = np.repeat(mean, np.diff(matches.match_start))
    square = np.add.reduceat(np.where(known, (y - team_mean) ** 2, 0.0), starts)
    scored = count >= 2
    if not np.any(scored):
        return 1.0
    typical = 2.0 * float(np.mean(np.sqrt(square[scored] / count[scored])))
    return typical if typical > 0.0 else 1.0


def has_team_games(matches: Matches) -> bool:
    """Whether some team has more than one player or a partial-play weight other than 1 (so that
    ``sum w^2 != 1`` somewhere: the matches where a team spread matters)."""
    return bool(len(matches.player) > len(matches.team_rank) or np.any(matches.weight != 1.0))


def has_uneven_teams(matches: Matches) -> bool:
    """Whether some match has teams whose partial-play weights sum differently (a 4 v 3, a substitute's half game):
    the matches where what a newcomer adds to a team's strength (``newcomer``) changes a prediction.  In the
    others it adds the same to every team and cancels."""
    if not len(matches.player):
        return False
    sums = np.add.reduceat(matches.weight, matches.team_start[:-1])
    first = np.repeat(sums[matches.match_start[:-1]], np.diff(matches.match_start))
    return bool(np.any(np.abs(sums - first) > 1e-12 * np.maximum(1.0, np.abs(first))))


def has_draws(matches: Matches, *, two_teams: bool = False) -> bool:
    """Whether some match (of two teams, with ``two_teams``) has two finishers of the same rank (a draw, a tie): the
    outcomes that inform a draw probability (non-finishers are unordered, not drawn)."""
    rank = matches.team_rank
    if len(rank) < 2:
        return False
    match = np.repeat(np.arange(len(matches)), np.diff(matches.match_start))
    if two_teams:
        keep = (np.diff(matches.match_start) == 2)[match]
        rank, match = rank[keep], match[keep]
    order = np.lexsort((rank, match))
    r, m = rank[order], match[order]
    return bool(np.any((r[1:] == r[:-1]) & (m[1:] == m[:-1]) & (r[1:] >= 0)))


def _finite_number(value: int | float) -> bool:
    """``math.isfinite`` that answers False, not OverflowError, for an int too large for a float."""
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


class Hyperparameters:
    """Hyperparameter validation, ``get_params``, repr and equality: shared by the filters (:class:`Model`) and
    the whole-history smoother (:class:`podium.TrueSkillThroughTime`), and what :func:`podium.fit` tunes."""

    #: Hyperparameters :func:`podium.fit` may choose, each with its domain: "positive", "non_negative" (0 is a model
    #: of its own, such as no dynamics: searched on a log scale like a positive one, and a fit that runs to the floor
    #: is taken to 0 itself), "probability", "real".
    _fit_space: ClassVar[dict[str, str]] = {}
    #: The ones it chooses when not told.
    _fit_default: ClassVar[tuple[str, ...]] = ()

    def _fit_start(self, name: str) -> float:
        """Where :func:`podium.fit` starts ``name``: its current value (models override where that is 0)."""
        return self._fit_value(name)

    # -- what fit reads and writes: plain names, and "advantage[context]" for a ByContext advantage -------
    def _fit_value(self, name: str) -> float:
        """The current value of fit's parameter ``name`` (None counts as 0): ``"advantage[Clay]"`` is a
        :class:`ByContext` advantage's value in that context, ``"advantage"`` its default."""
        base, context = split_fit_name(name)
        value = getattr(self, base)
        if isinstance(value, ByContext):
            return value.default if context is None else value.value(context)
        return 0.0 if value is None else float(value)

    def _fit_params(self, values: Mapping[str, float]) -> dict[str, Any]:
        """The constructor's arguments with fit's ``values`` set (context values into the ByContext)."""
        params = self.get_params()
        for name, value in values.items():
            base, context = split_fit_name(name)
            current = params[base]
            params[base] = current.with_value(context, value) if isinstance(current, ByContext) else value
        return params

    def _fit_known(self, name: str) -> bool:
        """Whether fit can fit ``name``: one of :attr:`_fit_space`, or a context of a ByContext advantage."""
        base, context = split_fit_name(name)
        return base in self._fit_space and (context is None or isinstance(getattr(self, base, None), ByContext))

    def _fit_expand(self, names: list[str], matches: Matches) -> list[str]:
        """Fit's default names for ``matches``: a ByContext advantage fits each context with enough matches
        (:meth:`ByContext.contexts`), ``"advantage[context]"``, and its default, ``"advantage"``, when some match
        that records an advantage is in none of them."""
        by = getattr(self, "advantage", None)
        if "advantage" not in names or not isinstance(by, ByContext):
            return names
        i = names.index("advantage")
        contexts = by.contexts(matches)
        extra = [f"advantage[{c}]" for c in contexts]
        # The default is fitted only where some match with an advantage is in none of those contexts (a parameter
        # nothing informs is a flat direction the search would wander along).
        rest = by.contexts(matches, least=1, leaving_out=contexts, unnamed=True)
        return names[:i] + (["advantage"] if rest else []) + extra + names[i + 1:]

    def _offsets(self, matches: Matches) -> NDArray[np.float64]:
        """Each team's advantage in rating units (:func:`~podium.kernels.common.team_offsets`; empty: none), for a
        number or a :class:`ByContext` ``advantage``."""
        advantage = getattr(self, "advantage", 0.0)
        if isinstance(advantage, ByContext):
            return team_offsets(matches, 0.0, advantage.per_match(matches))
        return team_offsets(matches, float(advantage))

    def _fit_prepare(self, matches: Matches, names: Sequence[str]) -> Any:
        """The model :func:`podium.fit` starts from when fitting ``names``: itself, or (models override) one with
        starting values that need the data, such as Glicko-2's period when none is set."""
        return self

    def _fit_informed(self, name: str, matches: Matches) -> bool:
        """Whether ``matches`` can inform ``name`` at all (:func:`podium.fit` leaves the others out of its default
        search): a team game's spread, for instance, changes nothing in one-on-one games, a home advantage nothing
        where no team has one, a margin multiplier nothing without scores."""
        if name == "spread":
            return has_team_games(matches)
        if name == "advantage":
            return matches.advantage is not None
        if name == "margin_power":
            return matches.score is not None and getattr(self, "margin", None) == "power"
        if name == "margin_autocorrelation":
            return matches.score is not None and getattr(self, "margin", "none") != "none"
        if name in ("margin_scale", "margin_noise"):
            return matches.score is not None
        if name == "newcomer":
            return has_uneven_teams(matches)
        if name == "draw_probability":  # (without draws it would run to 0, or, under the pair metrics, anywhere)
            return has_draws(matches)
        return True

    def _origin(self, start: float) -> float:
        """Where a team's sum measures its members' ratings from: the start rating ``start`` less ``newcomer``
        (what a newcomer adds to its team's strength; docs/design.md, "Teams"), so that a team's strength is
        ``sum_i w_i (r_i - start + newcomer)``.  ``start`` itself (to the bit) at ``newcomer = 0``."""
        newcomer = float(getattr(self, "newcomer", 0.0))
        return start - newcomer if newcomer != 0.0 else start

    def _fit_unit(self, name: str) -> float:
        """The scale of a real-valued hyperparameter for :func:`podium.fit`'s search (one unit is one step of its
        first simplex): the model's rating scale for an advantage."""
        return 1.0

    # -- validation (one place) -----------------------------------------------------------------
    def _init_params(self, **params: tuple[Any, ParamKind | tuple[str, ...] | None]) -> None:
        """Store each hyperparameter as given and check it against its kind, in the order given.

        The attributes are the constructor's arguments verbatim, and their order is :meth:`get_params`'s (and so
        the repr's); the checks run in the same order, so the first bad one is the one reported.

        Parameters
        ----------
        **params : tuple of (value, kind)
            ``name=(value, kind)``: ``kind`` is a :data:`ParamKind`, a tuple of the strings allowed
            (:meth:`_choice`), or None where the constructor checks the value itself.
        """
        for name, (value, kind) in params.items():
            setattr(self, name, value)
            if isinstance(kind, tuple):
                self._choice(name, value, kind)
            elif kind is not None:
                validator, _, or_none = kind.partition(" or ")
                if value is not None or not or_none:
                    getattr(self, f"_{validator}")(name, value)

    def _positive(self, name: str, value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not _finite_number(value) or value <= 0:
            raise ValueError(f"The {name!r} parameter of {type(self).__name__} must be a positive float. Got {value!r:.80} instead.")
        return float(value)

    def _non_negative(self, name: str, value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not _finite_number(value) or value < 0:
            raise ValueError(f"The {name!r} parameter of {type(self).__name__} must be a non-negative float. Got {value!r:.80} instead.")
        return float(value)

    def _probability(self, name: str, value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value < 1.0:
            raise ValueError(f"The {name!r} parameter of {type(self).__name__} must be a float in [0, 1). Got {value!r:.80} instead.")
        return float(value)

    def _positive_int(self, name: str, value: Any) -> int:
        # Compiled kernels take it as int64.
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value < 2 ** 63:
            raise ValueError(f"The {name!r} parameter of {type(self).__name__} must be a positive int below 2**63. "
                             f"Got {value!r:.80} instead.")
        return value

    def _advantage(self, name: str, value: Any) -> float | ByContext:
        if isinstance(value, ByContext):
            return value
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not _finite_number(value):
            raise ValueError(f"The {name!r} parameter of {type(self).__name__} must be a finite float or a "
                             f"podium.ByContext. Got {value!r:.80} instead.")
        return float(value)

    def _finite(self, name: str, value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not _finite_number(value):
            raise ValueError(f"The {name!r} parameter of {type(self).__name__} must be a finite float. Got {value!r:.80} instead.")
        return float(value)

    def _choice(self, name: str, value: Any, options: tuple[str, ...]) -> int:
        if value not in options:
            raise ValueError(f"The {name!r} parameter of {type(self).__name__} must be one of {options}. Got {value!r:.80} instead.")
        return options.index(value)

    def get_params(self) -> dict[str, Any]:
        """The hyperparameters, as given to the constructor."""
        return {k: v for k, v in vars(self).items() if not k.startswith("_")}

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.get_params() == other.get_params()

    def __hash__(self) -> int:
        return hash((type(self).__name__, tuple(sorted(self.get_params().items()))))


class Model(Hyperparameters, ABC):
    """Base of every podium filter: a rating from the matches before it, and the shared public methods."""

    _max_teams: ClassVar[int | None] = None
    _sigma_max: ClassVar[float] = math.inf  # the largest starting sigma the model's arithmetic takes,
    _sigma_max_why: ClassVar[str] = ""      # and why (for the error)
    _sigma_min: ClassVar[float] = 0.0       # the least starting sigma (a model that divides by it takes no 0)
    _mu_max: ClassVar[float] = MAX_MU       # the largest starting |mu|: differences and squares of ratings stay finite

    @property
    def _extra_prior(self) -> NDArray[np.float64]:
        """A new player's row of :attr:`State.extra`: what the model keeps besides the rating (none by default)."""
        return np.zeros(0)

    def _new_state(self, mu: NDArray[np.float64], sigma: NDArray[np.float64]) -> State:
        """The state of players with these ratings and, for the rest, a new player's."""
        extra = self._extra_prior
        return State(mu, sigma, np.empty((len(mu), 0)) if extra.size == 0 else np.tile(extra, (len(mu), 1)))

    @property
    @abstractmethod
    def prior(self) -> Rating:
        """The rating of a player the model has not seen."""

    # -- packing -----------------------------------------------------------------------------------
    def _check_team_count(self, n: int) -> None:
        if self._max_teams is not None and n > self._max_teams:
            raise MatchError(f"'teams': {type(self).__name__} rates two teams; got {n}. For free-for-alls use "
                             "PairwiseElo or PlackettLuce.")

    def _pack(self, match: Match, ratings: Mapping[str, Rating]) -> tuple[Matches, NDArray[np.float64], NDArray[np.float64]]:
        if not isinstance(match, Match):
            raise MatchError(f"'match' must be a podium.Match. Got {type(match).__name__}: {match!r:.80}.")
        self._check_team_count(len(match.teams))
        return self._gather(packed_match(match), ratings)

    def _gather(self, packed: Matches, ratings: Mapping[str, Rating]
                ) -> tuple[Matches, NDArray[np.float64], NDArray[np.float64]]:
        """``packed`` with its players' starting ``(mu, sigma)``; a player missing from ``ratings`` starts at the prior."""
        prior, get = self.prior, ratings.get
        given = [get(name, prior) for name in packed.players]
        # The common case checked at once (a Rating is finite with sigma >= 0 by construction; lists until then: a
        # numpy reduction costs more than the whole check); any doubt, and each is checked by name for the error.
        if set(map(type, given)) == {Rating}:
            mu = [r.mu for r in given]
            sigma = [r.sigma for r in given]
            if (max(sigma) <= self._sigma_max and min(sigma) >= self._sigma_min and (prior.sigma != 0.0 or not any(sigma))
                    and -self._mu_max <= min(mu) and max(mu) <= self._mu_max):
                return packed, np.array(mu), np.array(sigma)
        checked = [self._check_rating(name, r) for name, r in zip(packed.players, given)]
        return packed, np.array([r.mu for r in checked]), np.array([r.sigma for r in checked])

    def _check_rating(self, name: str, rating: Any) -> Rating:
        """A starting rating the model can use: a Rating, with ``sigma = 0`` for models without uncertainty."""
        if not isinstance(rating, Rating):
            raise TypeError(f"'ratings[{name!r}]' must be a podium.Rating. Got {rating!r:.80}.")
        if rating.sigma != 0.0 and self.prior.sigma == 0.0:
            raise ValueError(
                f"'ratings[{name!r}]' has sigma={rating.sigma!r}, but {type(self).__name__} keeps no uncertainty "
                f"(sigma must be 0); pass Rating({rating.mu!r}) to start from that mean."
            )
        if not abs(rating.mu) <= self._mu_max:
            raise ValueError(f"'ratings[{name!r}]' has mu={rating.mu!r}; {type(self).__name__} accepts |mu| up to {self._mu_max:g}.")
        if not self._sigma_min <= rating.sigma <= self._sigma_max:
            raise ValueError(f"'ratings[{name!r}]' has sigma={rating.sigma!r}; {type(self).__name__} accepts sigma from "
                             f"{self._sigma_min:g} to {self._sigma_max:g} ({self._sigma_max_why}).")
        return rating

    # -- public single-match methods -------------------------------------------------------------
    @small_work
    def rate(self, match: Match, ratings: Mapping[str, Rating]) -> dict[str, Rating]:
        """The ratings of the match's players after it; ``ratings`` (before) is not changed.

        Players missing from ``ratings`` start at :attr:`prior`.
        """
        packed, mu, sigma = self._pack(match, ratings)
        state = self._new_state(mu, sigma)
        self._replay(packed, np.arange(len(mu)), state, None)
        return ratings_of(packed.players, state.mu.tolist(), state.sigma.tolist())

    @small_work
    def log_likelihood(self, match: Match, ratings: Mapping[str, Rating]) -> float:
        """``log P(the match's outcome | ratings before it)`` under the model."""
        packed, mu, sigma = self._pack(match, ratings)
        loglik = np.empty(1)
        self._replay(packed, np.arange(len(mu)), self._new_state(mu, sigma), None, loglik)
        return float(loglik[0])

    def _pack_teams(self, teams: Sequence[Sequence[str]], ratings: Mapping[str, Rating],
                    weights: Sequence[Sequence[float]] | None, advantage: Sequence[float | bool] | None,
                    context: str | None) -> tuple[Matches, NDArray[np.float64], NDArray[np.float64]]:
        """The match a prediction is of, packed with its ratings: its ``context`` in the meta key the model's
        ByContext reads; plain teams (the common call) without building a :class:`Match`."""
        if weights is None and advantage is None and context is None:
            packed = packed_teams(teams)
            self._check_team_count(len(packed.team_rank))
            return self._gather(packed, ratings)
        if context is not None and not isinstance(context, str):
            raise ValueError(f"'context' must be a string or None. Got {context!r:.80}.")
        by = getattr(self, "advantage", None)
        meta = {by.key: context} if context is not None and isinstance(by, ByContext) else None
        return self._pack(Match(teams, weights=weights, advantage=advantage, meta=meta), ratings)

    @small_work
    def win_probabilities(
        self, teams: Sequence[Sequence[str]], ratings: Mapping[str, Rating],
        weights: Sequence[Sequence[float]] | None = None, advantage: Sequence[float | bool] | None = None,
        context: str | None = None) -> NDArray[np.float64]:
        """``P(team i finishes first)`` for each team; the entries sum to 1.

        ``advantage`` is each team's edge as a match records it (1 or True for the home side): the model adds its
        fitted ``advantage`` times it to the team's strength.  ``context`` is the match's context when the model's
        advantage is a :class:`podium.ByContext` (its default without one).
        """
        packed, mu, sigma = self._pack_teams(teams, ratings, weights, advantage, context)
        return normalized(self._log_win(packed, mu, sigma))

    @small_work
    def rank_probabilities(
        self, teams: Sequence[Sequence[str]], ratings: Mapping[str, Rating],
        weights: Sequence[Sequence[float]] | None = None, advantage: Sequence[float | bool] | None = None,
        context: str | None = None) -> NDArray[np.float64]:
        """``P[i, k]``: the probability that team ``i`` finishes in place ``k`` (0 is first).

        Rows and columns sum to 1.  Computed from the model's predictive performances by
        :func:`podium.ordering.rank_probabilities`; column 0 is :meth:`win_probabilities` (``advantage`` and
        ``context`` as there).
        """
        packed, mu, sigma = self._pack_teams(teams, ratings, weights, advantage, context)
        loc, scale, density, shape = self._predictive(packed, mu, sigma)
        if density == "gumbel-elimination":  # the places of -X, whose noise is a maximum-type Gumbel
            return rank_probabilities(-loc, scale, density="gumbel")[:, ::-1].copy()
        return rank_probabilities(loc, scale, density=density, shape=shape)

    @small_work
    def quality(self, teams: Sequence[Sequence[str]], ratings: Mapping[str, Rating],
                weights: Sequence[Sequence[float]] | None = None,
                advantage: Sequence[float | bool] | None = None, context: str | None = None) -> float:
        """Match quality in ``(0, 1]``: how likely a draw is, relative to the most even match possible.

        TrueSkill's eq. 7 (its own :meth:`TrueSkill.quality`) applied to the model's predictive team
        performances, each matched to a Gaussian of the same variance ``v_i`` (the density's variance
        times the team's scale squared; these models carry no skill uncertainty, so eq. 7's determinant
        factor is 1)::

            quality = exp(-1/2 sum_i (m_i - mbar)^2 / v_i),   mbar = sum(m_i / v_i) / sum(1 / v_i)

        1 for equal teams, falling towards 0 as one team becomes a certain winner.  It ranks pairings
        the way TrueSkill's does (it is what the league server's balanced teams maximize).  ``advantage`` and
        ``context`` as in :meth:`win_probabilities`.
        """
        packed, mu, sigma = self._pack_teams(teams, ratings, weights, advantage, context)
        loc, scale, density, shape = self._predictive(packed, mu, sigma)
        sd = shape_info(DENSITIES.index("gumbel" if density.startswith("gumbel") else density), shape)[1]
        noise = (sd * scale) ** 2
        return math.exp(log_match_quality(loc, np.zeros(len(noise)), noise))

    # -- what each family provides -----------------------------------------------------------------
    @abstractmethod
    def _replay(self, matches: Matches, slot_index: NDArray[np.int64], state: State,
                history: History | None, loglik: NDArray[np.float64] | None = None) -> None:
        """Rate ``matches`` in order, updating ``state`` in place (``slot_index`` maps the history's
        player indices to rows of ``state``); write each match's log-likelihood into ``loglik``.  Never write
        ``matches``' columns: a single call's are shared with later calls (:mod:`podium.data.shapes`)."""

    def _deferred_log_likelihoods(self, matches: Matches, slot_index: NDArray[np.int64], state: State,
                                  history: History) -> Callable[[], NDArray[np.float64]] | None:
        """Called just before a replay that keeps ``history``: ``None`` (the default) to have the replay write
        each match's log-likelihood as it goes, or a function that computes them later from ``history`` (which
        the replay fills) and what it captures of ``state`` now.

        A model whose log-likelihood costs much more than its update (TrueSkill's exact ordering probability
        against a few expectation-propagation sweeps) defers it, so that a league pays for the
        log-likelihoods only when they are read (:attr:`podium.League.log_likelihoods`).
        """
        return None

    @abstractmethod
    def _predictive(self, packed: Matches, mu: NDArray[np.float64], sigma: NDArray[np.float64]
                    ) -> tuple[NDArray[np.float64], NDArray[np.float64], str, float]:
        """``(locations, scales, density, shape)`` of the teams' independent predictive performances."""

    def _pair_predictions(self, packed: Matches, mu: NDArray[np.float64], sigma: NDArray[np.float64],
                          a: NDArray[np.int64], b: NDArray[np.int64]
                          ) -> tuple[NDArray[np.float64], NDArray[np.float64]] | None:
        """``(log P(team a[k] ahead of b[k]), log P(b[k] ahead of a[k]))``, each pair as a two-team match of its own
        (:func:`podium.evaluate`'s pair metrics), for models whose pair probability is not that of independent
        team performances (a spread or a deviation shared by the pair); ``None``: from :meth:`_predictive`."""
        return None

    def _skill_dynamics(self) -> tuple[float, float] | None:
        """``(variance per game, variance per unit of time)`` by which the model lets a skill move between a
        player's games, or ``None`` where it keeps no such account (:func:`podium.audit` widens a rating by it
        for the games between the rating and a tested game)."""
        return None

    @abstractmethod
    def _log_win(self, packed: Matches, mu: NDArray[np.float64], sigma: NDArray[np.float64]) -> NDArray[np.float64]:
        """``log P(team i finishes first)`` for the teams of a one-match ``packed``."""


class LikelihoodModel(Model):
    """The Elo family: a step of ``k`` rating points along the gradient of the match log-likelihood.

    Subclasses set ``_kind`` (which compiled kernel) and ``_int_params`` (its options).
    """

    _kind: ClassVar[int] = -1
    _int_params: tuple[int, int, int]
    # Hyperparameters, set by _init_params in __init__ (declared for the type checker).
    k: float
    initial: float
    scale: float
    spread: float
    provisional: float
    advantage: float | ByContext
    newcomer: float

    # Predictions depend on k / scale, spread, provisional, advantage / scale and the margin multiplier only
    # (ratings are in units of scale, measured from initial): fit tunes those (each where the history can inform
    # it); scale may be asked for, but it trades off exactly against k.
    _fit_space = {"k": "positive", "spread": "non_negative", "provisional": "non_negative", "scale": "positive",
                  "advantage": "real", "newcomer": "real"}
    _fit_default: ClassVar[tuple[str, ...]] = ("k", "spread", "provisional", "advantage", "newcomer")

    def _fit_start(self, name: str) -> float:
        return fit_start(self, name)

    def _fit_unit(self, name: str) -> float:
        return float(self.scale) if name in ("advantage", "newcomer") else 1.0

    def __init__(self, *, k: float, initial: float, scale: float, spread: float, provisional: float,
                 advantage: float | ByContext = 0.0, newcomer: float = 0.0) -> None:
        self._init_params(k=(k, "positive"), initial=(initial, "finite"), scale=(scale, "positive"),
                          spread=(spread, "non_negative"), provisional=(provisional, "non_negative"),
                          advantage=(advantage, "advantage"), newcomer=(newcomer, "finite"))
        self._prior = Rating(float(initial), 0.0)

    @property
    def prior(self) -> Rating:
        return self._prior

    def _win_spec(self) -> tuple[str, str]:
        """(performance density, choice order) of the multi-team model behind ``win_probabilities``."""
        return "gumbel", "victory"

    def _margin(self) -> tuple[int, float, float]:
        """The margin multiplier's (form, power, autocorrelation) for the kernel (none in Plackett-Luce)."""
        return 0, 0.0, 0.0

    def _replay(self, matches: Matches, slot_index: NDArray[np.int64], state: State,
                history: History | None, loglik: NDArray[np.float64] | None = None) -> None:
        """The family's replay, writing only what the caller asked for: no history when ``history`` is None,
        no log-likelihoods (nor the logarithms only they need) when ``loglik`` is None; ``history.sigma`` is 0."""
        nothing = np.empty(0)  # what the kernel neither computes nor writes
        a, b, c = self._int_params
        form, power, autocorrelation = self._margin()
        replay_likelihood(
            self._kind, a, b, c, float(self.k), float(self.scale), self._origin(float(self.initial)),
            float(self.spread), float(self.provisional),
            matches.match_start, matches.team_start, matches.team_rank, state_rows(matches, slot_index),
            matches.weight, state.mu, state.games, history.mu if history is not None else nothing,
            loglik if loglik is not None else nothing, loglik is not None, history is not None,
            self._offsets(matches),
            matches.match_weight if matches.match_weight is not None else nothing,
            matches.score if matches.score is not None and form != 0 else nothing, form, power, autocorrelation,
        )
        if history is not None:
            history.sigma[:] = 0.0

    def _pair_predictions(self, packed: Matches, mu: NDArray[np.float64], sigma: NDArray[np.float64],
                          a: NDArray[np.int64], b: NDArray[np.int64]
                          ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        s = team_strengths(packed, mu, self._origin(float(self.initial)), self._offsets(packed)) / float(self.scale)
        # each team's sum w^2 (a history without teams has nothing to sum)
        square_weights = np.add.reduceat(packed.weight ** 2, packed.team_start[:-1]) if len(packed.weight) else s
        performance = GAUSSIAN if self._win_spec()[0] == "gaussian" else LOGISTIC
        return spread_pairs(performance, s, square_weights, float(self.spread), a, b)

    def _strengths(self, packed: Matches, mu: NDArray[np.float64]) -> NDArray[np.float64]:
        """The teams' strengths in natural units, ``sum_i w_i (mu_i - initial) / (scale * c)``, of a one-match
        ``packed`` (what the replay computes before the match)."""
        c = match_spread(float(self.spread), float(np.sum(packed.weight ** 2)) / len(packed.team_rank))
        strengths = team_strengths(packed, mu, self._origin(float(self.initial)), self._offsets(packed))
        return strengths / (float(self.scale) * c)

    def _predictive(self, packed: Matches, mu: NDArray[np.float64], sigma: NDArray[np.float64]
                    ) -> tuple[NDArray[np.float64], NDArray[np.float64], str, float]:
        s = self._strengths(packed, mu)
        density, order = self._win_spec()
        if density == "gumbel" and order == "elimination":
            density = "gumbel-elimination"
        return s, np.ones(len(s)), density, 0.0

    def _log_win(self, packed: Matches, mu: NDArray[np.float64], sigma: NDArray[np.float64]) -> NDArray[np.float64]:
        s = self._strengths(packed, mu)
        density, order = self._win_spec()
        return log_win_probabilities(s, density=density, order=order)
