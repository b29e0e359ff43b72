"""Thin links: pairs of large groups of one component that fewer than ``thin`` matches separate.

A *thin link* (the definitions are :mod:`podium.engine.components`') is a pair of groups of at least ``min_size`` players
each, in one component, that a set of fewer than ``thin`` matches separates: with those matches removed, no player
of one group is connected to a player of the other.  Its ``matches`` are the fewest such matches (the edge
connectivity of the two groups in the hypergraph whose hyperedges are the matches; by Menger's theorem, the most
routes between the groups that share no match), and of the minimum sets the one nearest to the second group of the
pair.  Connections through third players and small groups count.

The links are unit-capacity maximum flows (Lawler's gadget: a match carries one unit between any two of its
players), capped at ``thin`` augmenting paths, between pairs of large groups only; pairs already known to be well
connected through a third group (:class:`podium.engine.union_find.UnionFind` over the groups) are not searched.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..data.matches import Matches
from ..ordering.numerics import jit
from .union_find import UnionFind

__all__ = ["ThinLink"]

_EXAMPLES = 3  # example players shown per group of a thin link


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
    """Two large groups of one component that fewer than ``thin`` matches connect (see :mod:`podium.engine.components`).

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


# -- the links of a history ----------------------------------------------------------------------------------
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
    # Groups known to be joined by at least `thin` matches, through one another: the edge connectivity of a and
    # c is at least the smaller of a-b's and b-c's, so such a pair needs no search.  Each search either joins two
    # of these classes or finds a link.  (The large groups' labels are 0 .. len(large) - 1.)
    thick = UnionFind(len(large))
    for component in sorted(by_component):
        gs = by_component[component]
        for i, a in enumerate(gs):
            for b in gs[i + 1:]:
                if thick.find(a) == thick.find(b):
                    continue
                count, cut = _min_cut(b, a, thin, groups, member_start, members, inc_start, inc_match, slot0, player)
                if count >= thin:
                    thick.union(a, b)
                    continue
                links.append(ThinLink(
                    component, (a, b), (int(group_sizes[a]), int(group_sizes[b])),
                    (_examples(packed.players, members[member_start[a]:member_start[a + 1]], games),
                     _examples(packed.players, members[member_start[b]:member_start[b + 1]], games)),
                    cut, _direct(a, b, groups, slot0, player)))
    return links


def _examples(names: list[str], group: NDArray[np.int64], games: NDArray[np.int64]) -> tuple[str, ...]:
    """The group's players with the most matches, ties to the first listed."""
    order = np.lexsort((group, -games[group]))[:_EXAMPLES]
    return tuple(names[i] for i in group[order].tolist())
