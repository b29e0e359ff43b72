"""Who is comparable with whom: the connected components of a history, and the thin links inside them.

A rating says how a player compares with the players they met, and through them with the players those met,
and so on: ratings are comparable only within a *connected* set of players.  Two groups that never meet can
sit on the same numbers with nothing to say which is stronger, and two groups joined by a handful of matches
are compared through those few matches alone (Formula 1's Indianapolis 500 drivers of 1950-1960, who met the
Grand Prix field in three races).

Definitions, for a history of matches (each match joins all of its players, teammates and opponents alike):

* **component** -- a connected component of the graph whose vertices are the players and in which every match
  joins all its players.  Players in different components never met, directly or through others.
* **group** (of a given ``thin``) -- the finest partition of the players such that any two groups are joined
  by fewer than ``thin`` matches (a match *joins* two groups when it has players of both).  It is what one
  gets by starting from single players and merging, in any order, two groups whenever at least ``thin``
  matches join them: a merge never makes another pair of groups share fewer matches, so the result does not
  depend on the order (it refines every partition with that property).  Groups lie within components.  They
  grow from players who met ``thin`` times, each group then drawing in whoever has ``thin`` matches with it:
  a scene whose players seldom meet one opponent twice (a Swiss open) stays a crowd of groups of one, and
  its links are not reported; a lower ``thin`` suits such histories.
* **thin link** -- a pair of *large* groups (at least ``min_size`` players each) of one component that a set
  of fewer than ``thin`` matches separates: with those matches removed, no player of one group is connected to
  a player of the other.  Its ``matches`` are the fewest such matches (the edge connectivity of the two groups
  in the hypergraph whose hyperedges are the matches; by Menger's theorem, the most routes between the groups
  that share no match), and of the minimum sets the one nearest to the second group of the pair (the smaller;
  of two the same size, the one seen later).  Connections through
  third players and small groups count: two scenes that met twice directly and twice more through a
  travelling player are four matches apart, not two.

The components are a union-find over the columnar arrays (union by size, path compression), compiled; the groups
are rounds of counting, for every match that still joins two groups, the pairs of groups it joins (both in
:mod:`podium.engine.union_find`); the links are unit-capacity maximum flows (Lawler's gadget: a match carries one unit
between any two of its players), capped at ``thin`` augmenting paths, between pairs of large groups only
(:mod:`podium.engine.thin_links`).  This module holds the result and the public function.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numpy.typing import NDArray

from ..data.match import Match
from ..data.matches import Matches
from .thin_links import ThinLink, _thin_links
from .union_find import UnionFind, _groups, _relabel, _roots, connected_before

__all__ = ["Components", "ThinLink", "UnionFind", "components", "connected_before"]


# -- the result -----------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class Components:
    """The connected components of a history (:func:`components`, :meth:`podium.League.components`).

    Components are labelled ``0, 1, ...`` from the largest; among components of one size, the one whose first
    player comes first in :attr:`players` (the order of first appearance, for histories podium reads or packs)
    has the lower label.  Groups are labelled the same way.

    Attributes
    ----------
    players : list of str
        The player ids, aligned with :attr:`labels` (a history's :attr:`podium.Matches.players`).
    labels : int64 array
        Each player's component; ``-1`` for a listed player who plays in none of the matches (a slice of a
        history shares the whole history's player list).
    sizes : int64 array
        Players per component, largest first: component ``c`` has ``sizes[c]`` players.
    groups : int64 array or None
        Each player's group of the given ``thin`` (``-1`` as in :attr:`labels`); None from a League, which
        keeps no matches to count.
    group_sizes : int64 array or None
        Players per group, largest first.
    thin_links : tuple of ThinLink
        Every pair of groups of at least ``min_size`` players, in one component, that fewer than ``thin``
        matches connect; ordered by component, then by the groups' labels.
    thin, min_size : int or None
        The parameters the groups and links were found with.
    """

    players: list[str]
    labels: NDArray[np.int64]
    sizes: NDArray[np.int64]
    groups: NDArray[np.int64] | None = None
    group_sizes: NDArray[np.int64] | None = None
    thin_links: tuple[ThinLink, ...] = ()
    thin: int | None = None
    min_size: int | None = None

    @property
    def n_components(self) -> int:
        """How many components."""
        return len(self.sizes)

    @property
    def n_players(self) -> int:
        """How many players play in the matches (those with a label)."""
        return int(self.sizes.sum())

    @property
    def largest(self) -> int:
        """The label of the largest component: 0 (ties go to the one seen first); -1 when there is none."""
        return 0 if len(self.sizes) else -1

    @property
    def share(self) -> float:
        """The largest component's share of the players (NaN without players)."""
        return float(self.sizes[0] / self.sizes.sum()) if len(self.sizes) else float("nan")

    @property
    def connected(self) -> NDArray[np.bool_]:
        """Per player of :attr:`players`: in the largest component."""
        return self.labels == 0

    @cached_property
    def _index(self) -> dict[str, int]:
        return {p: i for i, p in enumerate(self.players)}

    def component_of(self, player: str) -> int:
        """The component of ``player``.

        Raises
        ------
        KeyError
            If the player plays in none of the matches.
        """
        i = self._index.get(player)
        if i is None or self.labels[i] < 0:
            raise KeyError(f"player {player!r} plays in none of these matches")
        return int(self.labels[i])

    def members(self, label: int) -> list[str]:
        """The players of component ``label``, in the order of :attr:`players`."""
        if isinstance(label, bool) or not isinstance(label, (int, np.integer)) or not 0 <= label < len(self.sizes):
            raise ValueError(f"'label' must be a component label in [0, {len(self.sizes)}). Got {label!r} instead.")
        return [self.players[i] for i in np.flatnonzero(self.labels == label)]

    def group_members(self, label: int) -> list[str]:
        """The players of group ``label``, in the order of :attr:`players`."""
        if self.groups is None or self.group_sizes is None:
            raise ValueError("These components carry no groups (a League's); call podium.components(matches).")
        if (isinstance(label, bool) or not isinstance(label, (int, np.integer))
                or not 0 <= label < len(self.group_sizes)):
            raise ValueError(f"'label' must be a group label in [0, {len(self.group_sizes)}). Got {label!r} instead.")
        return [self.players[i] for i in np.flatnonzero(self.groups == label)]

    def as_dict(self) -> dict[str, int]:
        """Player id -> component label, for every player who plays."""
        return {p: int(c) for p, c in zip(self.players, self.labels.tolist()) if c >= 0}

    def __repr__(self) -> str:
        if not len(self.sizes):
            return "Components(no players)"
        links = "" if self.thin is None else (
            f", {len(self.thin_links)} thin link{'' if len(self.thin_links) == 1 else 's'} "
            f"(thin={self.thin}, min_size={self.min_size})")
        return (f"Components({len(self.sizes):,} component{'' if len(self.sizes) == 1 else 's'}, largest "
                f"{int(self.sizes[0]):,} of {self.n_players:,} players{links})")


# -- the public function ---------------------------------------------------------------------------------------
def _check_int(name: str, value: object, least: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < least:
        raise ValueError(f"'{name}' must be an int >= {least}. Got {value!r} instead.")
    return int(value)


def components(matches: Matches | Iterable[Match], *, thin: int = 5, min_size: int = 10) -> Components:
    """The connected components of a history, its groups and the thin links between large groups.

    See :mod:`podium.engine.components` for the definitions.  Ratings are comparable only within a component; a thin
    link is a place where two sizeable groups are compared through fewer than ``thin`` matches.

    Parameters
    ----------
    matches : Matches or iterable of Match
        The history.
    thin : int >= 1, default 5
        Groups are the finest partition in which any two share fewer than ``thin`` matches; a link between
        two large groups is thin when fewer than ``thin`` matches separate them.  ``thin=1`` makes the groups
        the components (and finds no thin link).
    min_size : int >= 1, default 10
        The fewest players of a group whose links are reported (small groups are most often a few players
        with few matches, whose links are thin by nature).

    Returns
    -------
    Components

    Notes
    -----
    The components take one pass of union-find (about a millisecond for ATP singles' 193,000 matches).  The
    groups take a few rounds, each over the matches that still join two groups, of which the first counts
    ``d (d - 1) / 2`` pairs for a match of ``d`` players.  Each thin link costs up to ``thin`` breadth-first
    searches of the component; pairs of large groups already known to be well connected through a third are
    not searched, so the searches number at most the large groups plus the links found.

    Examples
    --------
    >>> import podium
    >>> from podium import Match
    >>> east = [Match([[a], [b]]) for a, b in [("a", "b"), ("b", "c"), ("c", "a")] * 2]
    >>> west = [Match([[a], [b]]) for a, b in [("x", "y"), ("y", "z"), ("z", "x")] * 2]
    >>> found = podium.components(east + west + [Match([["a"], ["x"]])], thin=2, min_size=3)
    >>> found.n_components, found.sizes.tolist(), found.component_of("x")
    (1, [6], 0)
    >>> link = found.thin_links[0]
    >>> link.sizes, link.matches.tolist(), link.examples
    ((3, 3), [12], (('a', 'b', 'c'), ('x', 'y', 'z')))
    """
    thin = _check_int("thin", thin, 1)
    min_size = _check_int("min_size", min_size, 1)
    packed = matches if isinstance(matches, Matches) else Matches.from_matches(matches)
    n = len(packed.players)
    ms, ts, player = packed.match_start, packed.team_start, packed.player
    used = np.zeros(n, dtype=np.bool_)
    used[player] = True
    joined = UnionFind(n)
    joined.join(ms, ts, player, np.arange(n, dtype=np.int64))
    labels, sizes = _relabel(_roots(joined.parent, n), used)
    if thin == 1:  # any one match merges: the groups are the components
        groups, group_sizes = labels, sizes
    else:
        groups, group_sizes = _relabel(_groups(packed, thin), used)
    links = _thin_links(packed, labels, groups, group_sizes, thin, min_size)
    return Components(packed.players, labels, sizes, groups, group_sizes, tuple(links), thin, min_size)
