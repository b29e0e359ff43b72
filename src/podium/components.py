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
are rounds of counting, for every match that still joins two groups, the pairs of groups it joins; the links
are unit-capacity maximum flows (Lawler's gadget: a match carries one unit between any two of its players),
capped at ``thin`` augmenting paths, between pairs of large groups only.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numpy.typing import NDArray

from .match import Match, Matches
from .models.base import most_teams
from .numerics import jit

__all__ = ["Components", "ThinLink", "UnionFind", "components", "connected_before"]

_EXAMPLES = 3  # example players shown per group of a thin link


# -- union-find ----------------------------------------------------------------------------------------------
@jit
def _find(parent: NDArray[np.int64], x: int) -> int:
    """The root of ``x``; every node on the way is then pointed at the root (path compression).

    Two passes instead of path halving's one: a node already pointing at its root (most nodes, once the
    trees are flat) costs two reads and no write.
    """
    root = x
    while parent[root] != root:
        root = parent[root]
    while parent[x] != root:
        up = parent[x]
        parent[x] = root
        x = up
    return root


@jit
def _union(parent: NDArray[np.int64], size: NDArray[np.int64], a: int, b: int) -> bool:
    """Join the sets of ``a`` and ``b`` (the smaller under the larger); whether they were apart."""
    a = _find(parent, a)
    b = _find(parent, b)
    if a == b:
        return False
    if size[a] < size[b]:
        a, b = b, a
    parent[b] = a
    size[a] += size[b]
    return True


@jit
def link_matches(match_start: NDArray[np.int64], team_start: NDArray[np.int64], player: NDArray[np.int64],
                 rows: NDArray[np.int64], parent: NDArray[np.int64], size: NDArray[np.int64]) -> None:
    """Join, in place, all the players of every match: the player in slot ``p`` is node ``rows[player[p]]``.

    Union by size with path compression.  A match whose players all point at one parent (usually the root)
    is already joined and costs a read per player.
    """
    n_matches = len(match_start) - 1
    if len(player) == 2 * n_matches:  # at least two teams of one player each: every match is a duel 2m, 2m + 1
        for m in range(n_matches):
            a, b = rows[player[2 * m]], rows[player[2 * m + 1]]
            if parent[a] != parent[b]:
                _union(parent, size, a, b)
        return
    for m in range(n_matches):
        p0, p1 = team_start[match_start[m]], team_start[match_start[m + 1]]
        first = parent[rows[player[p0]]]
        joined = True
        for p in range(p0 + 1, p1):
            if parent[rows[player[p]]] != first:
                joined = False
                break
        if joined:
            continue
        a = _find(parent, rows[player[p0]])
        for p in range(p0 + 1, p1):
            b = _find(parent, rows[player[p]])
            if a != b:  # _union inlined: a stays the root of the joined set
                if size[a] < size[b]:
                    a, b = b, a
                parent[b] = a
                size[a] += size[b]


@jit
def _roots(parent: NDArray[np.int64], n: int) -> NDArray[np.int64]:
    out = np.empty(n, dtype=np.int64)
    for i in range(n):
        out[i] = _find(parent, i)
    return out


def _relabel(roots: NDArray[np.int64], used: NDArray[np.bool_]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Labels ``0, 1, ...`` for the sets of ``roots`` among the ``used`` nodes, largest first and, among sets of
    one size, the one with the lowest node first; ``-1`` for unused nodes.  Returns ``(labels, sizes)``."""
    labels = np.full(len(roots), -1, dtype=np.int64)
    nodes = np.flatnonzero(used)
    if len(nodes) == 0:
        return labels, np.zeros(0, dtype=np.int64)
    unique, first, inverse, counts = np.unique(roots[nodes], return_index=True, return_inverse=True,
                                               return_counts=True)
    order = np.lexsort((first, -counts))  # nodes ascend, so first[i] is the lowest node of set i
    rank = np.empty(len(unique), dtype=np.int64)
    rank[order] = np.arange(len(unique))
    labels[nodes] = rank[inverse]
    return labels, counts[order].astype(np.int64)


class UnionFind:
    """The components of the matches a :class:`podium.League` recorded, kept as it records them.

    Node ``i`` is the league's state row ``i``; :meth:`grow` adds singletons, :meth:`link` joins the players
    of a batch of matches with the compiled kernel.  The latest batch is joined when the next one arrives or
    when the components are read, not during its replay: joining costs one to a few random reads per player
    slot, comparable to a one-player duel's whole Elo update (a third to two thirds of it among 100,000
    players), and a replay whose components nobody asks for should not pay it (as a model may defer its
    log-likelihoods to their first read).  Only that one batch is held meanwhile, by reference: the arrays
    of the caller's :class:`Matches` and the league's row map.
    """

    __slots__ = ("parent", "size", "_pending")

    def __init__(self) -> None:
        self.parent = np.zeros(0, dtype=np.int64)
        self.size = np.zeros(0, dtype=np.int64)
        self._pending: tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]] | None = None

    def grow(self, capacity: int) -> None:
        """Hold at least ``capacity`` nodes; the new ones are singletons."""
        old = len(self.parent)
        if capacity > old:
            self.parent = np.concatenate([self.parent, np.arange(old, capacity, dtype=np.int64)])
            self.size = np.concatenate([self.size, np.ones(capacity - old, dtype=np.int64)])

    def link(self, packed: Matches, rows: NDArray[np.int64]) -> None:
        """Join the players of every match of ``packed``; ``rows`` maps its player list to nodes.

        The rows of the batch's players must not change afterwards (a League's row map only ever adds rows).
        """
        self.flush()
        self._pending = (packed.match_start, packed.team_start, packed.player, rows)

    def flush(self) -> None:
        """Join the players of the batch still pending, if any."""
        if self._pending is not None:
            match_start, team_start, player, rows = self._pending
            self._pending = None
            link_matches(match_start, team_start, player, rows, self.parent, self.size)

    def labels(self, n: int) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """Component labels of nodes ``0 .. n-1`` (largest first, ties to the lowest node) and the sizes."""
        self.flush()
        return _relabel(_roots(self.parent, n), np.ones(n, dtype=np.bool_))


# -- connectivity before each match (for evaluate) -----------------------------------------------------------
@jit
def connected_before(match_start: NDArray[np.int64], team_start: NDArray[np.int64], player: NDArray[np.int64],
                     n_players: int) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    """Which pairs of teams, and which matches, were connected before they were played.

    Pairs are every ``a < b`` of teams of every match, grouped by match (the order of
    :func:`podium.evaluate._pair_structure`).  A pair is connected when every player of both teams was in one
    component of the graph of the matches before it; a match, when all of its players were.  A player's first
    match is never connected: before it, the player is alone.
    """
    parent = np.arange(n_players)
    size = np.ones(n_players, dtype=np.int64)
    n_matches = len(match_start) - 1
    total = 0
    for m in range(n_matches):
        n = match_start[m + 1] - match_start[m]
        total += n * (n - 1) // 2
    pair_ok = np.empty(total, dtype=np.bool_)
    match_ok = np.empty(n_matches, dtype=np.bool_)
    root = np.empty(max(most_teams(match_start), 1), dtype=np.int64)
    k = 0
    for m in range(n_matches):
        t0, t1 = match_start[m], match_start[m + 1]
        for t in range(t0, t1):  # a team's common root, or -1 when its players are not yet connected
            r = _find(parent, player[team_start[t]])
            for p in range(team_start[t] + 1, team_start[t + 1]):
                if _find(parent, player[p]) != r:
                    r = -1
                    break
            root[t - t0] = r
        whole = True
        for i in range(t1 - t0):
            for j in range(i + 1, t1 - t0):
                ok = root[i] >= 0 and root[i] == root[j]
                pair_ok[k] = ok
                whole = whole and ok
                k += 1
        match_ok[m] = whole
        a = player[team_start[t0]]
        for p in range(team_start[t0] + 1, team_start[t1]):
            _union(parent, size, a, player[p])
    return pair_ok, match_ok


# -- groups ---------------------------------------------------------------------------------------------------
@jit
def _distinct(root: NDArray[np.int64], player: NDArray[np.int64], p0: int, p1: int, buf: NDArray[np.int64]) -> int:
    """The distinct groups (``root`` of each player) of the players in slots ``p0 .. p1-1``, sorted, into
    ``buf``; how many."""
    n = 0
    for p in range(p0, p1):
        r = root[player[p]]
        i = n  # insertion into the sorted prefix, skipping a group already there
        while i > 0 and buf[i - 1] > r:
            i -= 1
        if i > 0 and buf[i - 1] == r:
            continue
        for j in range(n, i, -1):
            buf[j] = buf[j - 1]
        buf[i] = r
        n += 1
    return n


@jit
def _pair_keys(parent: NDArray[np.int64], player: NDArray[np.int64], slot0: NDArray[np.int64],
               active: NDArray[np.int64], n_players: int) -> tuple[NDArray[np.int64], NDArray[np.bool_]]:
    """For the ``active`` matches: which still join two groups, and ``a * n_players + b`` for every pair of
    groups ``a < b`` each of them joins (each match counts once for each pair)."""
    root = _roots(parent, n_players)  # once per round, not once per slot
    width = 1
    for m in active:
        width = max(width, slot0[m + 1] - slot0[m])
    buf = np.empty(width, dtype=np.int64)
    keep = np.zeros(len(active), dtype=np.bool_)
    total = 0
    for i in range(len(active)):
        m = active[i]
        if slot0[m + 1] - slot0[m] == 2:  # a duel: no sorting
            d = 1 + (root[player[slot0[m]]] != root[player[slot0[m] + 1]])
        else:
            d = _distinct(root, player, slot0[m], slot0[m + 1], buf)
        if d > 1:
            keep[i] = True
            total += d * (d - 1) // 2
    keys = np.empty(total, dtype=np.int64)
    k = 0
    for i in range(len(active)):
        if not keep[i]:
            continue
        m = active[i]
        if slot0[m + 1] - slot0[m] == 2:
            a, b = root[player[slot0[m]]], root[player[slot0[m] + 1]]
            keys[k] = min(a, b) * n_players + max(a, b)
            k += 1
            continue
        d = _distinct(root, player, slot0[m], slot0[m + 1], buf)
        for a in range(d):
            for b in range(a + 1, d):
                keys[k] = buf[a] * n_players + buf[b]
                k += 1
    return keys, keep


@jit
def _merge_runs(keys: NDArray[np.int64], thin: int, parent: NDArray[np.int64], size: NDArray[np.int64],
                n_players: int) -> bool:
    """Merge the two groups of every key that occurs at least ``thin`` times in the sorted ``keys``."""
    merged = False
    run = 0
    for k in range(len(keys)):
        run = run + 1 if k > 0 and keys[k] == keys[k - 1] else 1
        if run == thin:
            merged |= _union(parent, size, keys[k] // n_players, keys[k] % n_players)
    return merged


def _groups(packed: Matches, thin: int) -> NDArray[np.int64]:
    """Each player's group root: the finest partition in which any two groups share fewer than ``thin``
    matches, by rounds of "merge every pair of groups that at least ``thin`` matches join".

    The counts of a round are taken before its merges; a merge only joins groups, so a pair counted at
    ``thin`` or more is still joined that often (or already one group) when its turn comes.  A round without a
    merge ends it.  Groups never split, so a match whose players are in one group is dropped for good.
    """
    n = len(packed.players)
    parent = np.arange(n, dtype=np.int64)
    size = np.ones(n, dtype=np.int64)
    slot0 = packed.team_start[packed.match_start]
    active = np.arange(len(packed), dtype=np.int64)
    while len(active):
        keys, keep = _pair_keys(parent, packed.player, slot0, active, n)
        active = active[keep]
        keys.sort()  # numpy's sort: several times numba's on this many keys
        if not _merge_runs(keys, thin, parent, size, n):
            break
    return _roots(parent, n)


# -- thin links: unit-capacity flows on the match hypergraph ---------------------------------------------------
@jit
def _incidence(match_start: NDArray[np.int64], team_start: NDArray[np.int64], player: NDArray[np.int64],
               n_players: int) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """CSR of the matches of each player: player ``u`` is in matches ``match[start[u]:start[u+1]]``."""
    start = np.zeros(n_players + 1, dtype=np.int64)
    for p in range(len(player)):
        start[player[p] + 1] += 1
    for u in range(n_players):
        start[u + 1] += start[u]
    fill = start[:-1].copy()
    match = np.empty(len(player), dtype=np.int64)
    for m in range(len(match_start) - 1):
        for p in range(team_start[match_start[m]], team_start[match_start[m + 1]]):
            match[fill[player[p]]] = m
            fill[player[p]] += 1
    return start, match


@jit
def _min_cut(source: int, sink: int, thin: int, group: NDArray[np.int64], member_start: NDArray[np.int64],
             members: NDArray[np.int64], inc_start: NDArray[np.int64], inc_match: NDArray[np.int64],
             slot0: NDArray[np.int64], player: NDArray[np.int64]) -> tuple[int, NDArray[np.int64]]:
    """The fewest matches whose removal disconnects group ``source`` from group ``sink``, if fewer than
    ``thin``: ``(count, matches)``; ``(thin, [])`` when at least ``thin`` matches are needed.

    Lawler's gadget, implicitly: node ``u < n`` is a player; match ``e`` has an entry ``n + 2e`` and an exit
    ``n + 2e + 1`` joined by an arc of capacity 1, every player of ``e`` an arc of unbounded capacity into the
    entry and one out of the exit.  A unit of flow through ``e`` enters from player ``enter[e]`` and leaves to
    ``leave[e]``; residual arcs follow from those.  Breadth-first augmenting paths from every player of the
    source group to any player of the sink group, at most ``thin`` of them; after the last, failing search the
    nodes it reached are the source side of the minimum cut nearest to the source, and the cut's matches are
    those whose entry it reached and exit it did not.
    """
    n = len(group)
    n_matches = len(slot0) - 1
    used = np.zeros(n_matches, dtype=np.bool_)
    enter = np.full(n_matches, -1, dtype=np.int64)
    leave = np.full(n_matches, -1, dtype=np.int64)
    seen = np.zeros(n + 2 * n_matches, dtype=np.bool_)
    parent = np.empty(n + 2 * n_matches, dtype=np.int64)
    queue = np.empty(n + 2 * n_matches, dtype=np.int64)
    flow = 0
    while True:
        seen[:] = False
        tail = 0
        for i in range(member_start[source], member_start[source + 1]):
            u = members[i]
            seen[u] = True
            parent[u] = -1
            queue[tail] = u
            tail += 1
        head = 0
        found = -1
        while head < tail and found < 0:
            x = queue[head]
            head += 1
            if x < n:  # a player: into the entry of each of its matches; back into an exit it receives from
                for k in range(inc_start[x], inc_start[x + 1]):
                    e = inc_match[k]
                    y = n + 2 * e
                    if not seen[y]:
                        seen[y] = True
                        parent[y] = x
                        queue[tail] = y
                        tail += 1
                    if used[e] and leave[e] == x and not seen[y + 1]:
                        seen[y + 1] = True
                        parent[y + 1] = x
                        queue[tail] = y + 1
                        tail += 1
            elif (x - n) % 2 == 0:  # an entry: on through the match if free, else back to whoever enters it
                e = (x - n) // 2
                y = enter[e] if used[e] else x + 1
                if not seen[y]:
                    seen[y] = True
                    parent[y] = x
                    queue[tail] = y
                    tail += 1
                    if y < n and group[y] == sink:
                        found = y
            else:  # an exit: out to any player of the match; back to the entry if the match carries flow
                e = (x - n) // 2
                for p in range(slot0[e], slot0[e + 1]):
                    y = player[p]
                    if not seen[y]:
                        seen[y] = True
                        parent[y] = x
                        queue[tail] = y
                        tail += 1
                        if group[y] == sink:
                            found = y
                            break
                if found < 0 and used[e] and not seen[x - 1]:
                    seen[x - 1] = True
                    parent[x - 1] = x
                    queue[tail] = x - 1
                    tail += 1
        if found < 0:
            break
        flow += 1
        if flow >= thin:
            return thin, np.zeros(0, dtype=np.int64)
        y = found  # augment along the path: each step changes only its own match's record
        while parent[y] >= 0:
            x = parent[y]
            if x < n:
                if (y - n) % 2 == 0:  # player -> entry: the unit now enters from x
                    enter[(y - n) // 2] = x
            elif (x - n) % 2 == 0:
                if y >= n:  # entry -> exit: the match now carries a unit
                    used[(x - n) // 2] = True
            elif y < n:  # exit -> player: the unit now leaves to y
                leave[(x - n) // 2] = y
            else:  # exit -> entry: the unit through the match is cancelled
                used[(x - n) // 2] = False
            y = x
    cut = np.empty(flow, dtype=np.int64)
    k = 0
    for e in range(n_matches):
        if seen[n + 2 * e] and not seen[n + 2 * e + 1]:
            cut[k] = e
            k += 1
    return flow, cut


@jit
def _direct(a: int, b: int, group: NDArray[np.int64], slot0: NDArray[np.int64], player: NDArray[np.int64]) -> int:
    """How many matches have players of both group ``a`` and group ``b``."""
    count = 0
    for m in range(len(slot0) - 1):
        has_a = has_b = False
        for p in range(slot0[m], slot0[m + 1]):
            g = group[player[p]]
            has_a |= g == a
            has_b |= g == b
        count += has_a and has_b
    return count


# -- the result -----------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class ThinLink:
    """Two large groups of one component that fewer than ``thin`` matches connect (see :mod:`podium.components`).

    Attributes
    ----------
    component : int
        The component both groups belong to.
    groups : (int, int)
        The two group labels (:attr:`Components.groups`), the larger group first.
    sizes : (int, int)
        Their numbers of players.
    examples : (tuple of str, tuple of str)
        A few players of each group: those with the most matches (ties to the first seen).
    matches : int64 array
        The indices (into the history) of the fewest matches whose removal disconnects the two groups: of the
        minimum sets, the one nearest to the second group.
    direct : int
        How many matches have players of both groups (at most ``len(matches)``: the others connect them
        through third players).
    """

    component: int
    groups: tuple[int, int]
    sizes: tuple[int, int]
    examples: tuple[tuple[str, ...], tuple[str, ...]]
    matches: NDArray[np.int64]
    direct: int

    @property
    def count(self) -> int:
        """How many matches connect the two groups: fewer than ``thin``."""
        return len(self.matches)


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

    See :mod:`podium.components` for the definitions.  Ratings are comparable only within a component; a thin
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
    parent = np.arange(n, dtype=np.int64)
    size = np.ones(n, dtype=np.int64)
    link_matches(ms, ts, player, np.arange(n, dtype=np.int64), parent, size)
    labels, sizes = _relabel(_roots(parent, n), used)
    if thin == 1:  # any one match merges: the groups are the components
        groups, group_sizes = labels, sizes
    else:
        groups, group_sizes = _relabel(_groups(packed, thin), used)
    links = _thin_links(packed, labels, groups, group_sizes, thin, min_size)
    return Components(packed.players, labels, sizes, groups, group_sizes, tuple(links), thin, min_size)


def _thin_links(packed: Matches, labels: NDArray[np.int64], groups: NDArray[np.int64],
                group_sizes: NDArray[np.int64], thin: int, min_size: int) -> list[ThinLink]:
    large = np.flatnonzero(group_sizes >= min_size)  # labels ascend with falling size: a prefix
    if len(large) < 2:
        return []
    n = len(packed.players)
    player = packed.player
    members = np.argsort(groups, kind="stable")  # players by group, each group's in list order
    members = members[groups[members] >= 0]
    member_start = np.searchsorted(groups[members], np.arange(len(group_sizes) + 1)).astype(np.int64)
    component_of_group = labels[members[member_start[:-1]]]
    by_component: dict[int, list[int]] = {}
    for g in large.tolist():
        by_component.setdefault(int(component_of_group[g]), []).append(g)
    if all(len(gs) < 2 for gs in by_component.values()):
        return []
    slot0 = packed.team_start[packed.match_start]
    inc_start, inc_match = _incidence(packed.match_start, packed.team_start, player, n)
    games = np.diff(inc_start)
    links: list[ThinLink] = []
    for component in sorted(by_component):
        gs = by_component[component]
        # Groups known to be joined by at least `thin` matches, through one another: the edge connectivity
        # of a and c is at least the smaller of a-b's and b-c's, so such a pair needs no search.  Each search
        # either joins two of these classes or finds a link.
        thick = {g: g for g in gs}
        for i, a in enumerate(gs):
            for b in gs[i + 1:]:
                if _class(thick, a) == _class(thick, b):
                    continue
                count, cut = _min_cut(b, a, thin, groups, member_start, members, inc_start, inc_match, slot0, player)
                if count >= thin:
                    thick[_class(thick, b)] = _class(thick, a)
                    continue
                links.append(ThinLink(
                    component, (a, b), (int(group_sizes[a]), int(group_sizes[b])),
                    (_examples(packed.players, members[member_start[a]:member_start[a + 1]], games),
                     _examples(packed.players, members[member_start[b]:member_start[b + 1]], games)),
                    cut, _direct(a, b, groups, slot0, player)))
    return links


def _class(thick: dict[int, int], g: int) -> int:
    while thick[g] != g:
        g = thick[g]
    return g


def _examples(names: list[str], group: NDArray[np.int64], games: NDArray[np.int64]) -> tuple[str, ...]:
    """The group's players with the most matches, ties to the first listed."""
    order = np.lexsort((group, -games[group]))[:_EXAMPLES]
    return tuple(names[i] for i in group[order].tolist())
