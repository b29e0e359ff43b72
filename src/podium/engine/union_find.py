"""Union-find over the columnar arrays, and what :mod:`podium.engine.components` builds on it: the components, which
pairs of teams were connected before their match, and the groups of a given ``thin``.

Definitions (:mod:`podium.engine.components` gives them in full): a *component* is a connected component of the graph
whose vertices are the players and in which every match joins all its players; a *group* of a given ``thin`` is a
set of the finest partition of the players such that any two groups are joined by fewer than ``thin`` matches.
It is what one gets by starting from single players and merging, in any order, two groups whenever at least
``thin`` matches join them: a merge never makes another pair of groups share fewer matches, so the result does not
depend on the order (it refines every partition with that property).

The components are a union-find over the columnar arrays (union by size, path compression), compiled; the groups
are rounds of counting, for every match that still joins two groups, the pairs of groups it joins.
"""

from __future__ import annotations

import queue
import threading
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..jit import small
from ..data.matches import Matches
from ..data.names import enlarge
from ..kernels.common import most_teams
from ..ordering.numerics import jit

__all__ = ["JoinBehind", "UnionFind", "connected_before", "link_matches"]


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
                 rows: NDArray[np.int64], parent: NDArray[np.int64], size: NDArray[np.int64],
                 near: NDArray[np.uint8], anchor: NDArray[np.int64]) -> None:
    """Join, in place, all the players of every match: the player in slot ``p`` is node ``rows[player[p]]``.

    Union by size with path compression, and a shortcut for the usual case of a long history, a match among
    players already in the big component: bit ``x`` of ``near`` (a bitset, ``n / 8`` bytes) is set once node ``x``
    is known to be in the component of node ``anchor[0]`` (``-1``: none chosen yet).  Components only merge, so
    a set bit stays true; a match whose players' bits are all set is already joined and costs a bit a player,
    read from a table that stays in the cache (1.25 MB for ten million players) instead of a random read of
    ``parent`` each (9 s of the 35 s of the streamed replay of 100 M duels among 10 M players, where every
    player's ``parent`` is a cache miss).  The anchor moves to a component when that one grows past twice the
    anchor's (the bits are then cleared), so at most ``log2(n)`` times.
    """
    n_matches = len(match_start) - 1
    for m in range(n_matches):
        p0, p1 = team_start[match_start[m]], team_start[match_start[m + 1]]
        inside = True
        for p in range(p0, p1):
            x = rows[player[p]]
            if not near[x >> 3] & (1 << (x & 7)):
                inside = False
                break
        if inside:
            continue
        # The roots: a player whose bit is set is in the anchor's set, found once (its path is kept short).
        home = _find(parent, anchor[0]) if anchor[0] >= 0 else -1
        a = -1
        for p in range(p0, p1):
            x = rows[player[p]]
            b = home if near[x >> 3] & (1 << (x & 7)) else _find(parent, x)
            if a < 0:
                a = b
            elif a != b:  # _union inlined: a stays the root of the joined set
                if size[a] < size[b]:
                    a, b = b, a
                parent[b] = a
                size[a] += size[b]
                if b == home:
                    home = a
        if anchor[0] < 0:  # the first match: its set is the anchor's (no bit is set yet)
            anchor[0] = rows[player[p0]]
            home = a
        if home != a:  # (home has followed the anchor's root through the joins above)
            if size[a] <= 2 * size[home]:
                continue
            near[:] = 0  # a far larger component: anchor there instead
            anchor[0] = rows[player[p0]]
        for p in range(p0, p1):
            x = rows[player[p]]
            near[x >> 3] |= 1 << (x & 7)


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

    :meth:`find` and :meth:`union` serve the small sets of other callers, node by node: the classes of groups
    known to be well connected (:mod:`podium.engine.thin_links`) and the audit's clusters of accounts and of opponents.
    """

    __slots__ = ("parent", "size", "near", "anchor", "_pending")

    def __init__(self, n: int = 0) -> None:
        """``n`` singletons (more with :meth:`grow`)."""
        self.parent = np.arange(n, dtype=np.int64)
        self.size = np.ones(n, dtype=np.int64)
        self.near = np.zeros((n + 7) // 8, dtype=np.uint8)  # see link_matches
        self.anchor = np.full(1, -1, dtype=np.int64)
        self._pending: tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]] | None = None

    def grow(self, capacity: int) -> None:
        """Hold at least ``capacity`` nodes; the new ones are singletons."""
        old = len(self.parent)
        if capacity > old:  # (in place, as a League's state: podium.data.names.enlarge)
            enlarge(self, "parent", capacity)
            self.parent[old:] = np.arange(old, capacity, dtype=np.int64)
            enlarge(self, "size", capacity, 1)
            enlarge(self, "near", (capacity + 7) // 8, 0)

    def join(self, match_start: NDArray[np.int64], team_start: NDArray[np.int64], player: NDArray[np.int64],
             rows: NDArray[np.int64]) -> None:
        """Join the players of every match now (:func:`link_matches`)."""
        with small(len(player)):
            link_matches(match_start, team_start, player, rows, self.parent, self.size, self.near, self.anchor)

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
            self.join(match_start, team_start, player, rows)

    def find(self, x: int) -> int:
        """The root of node ``x``'s set."""
        self.flush()
        return int(_find(self.parent, x))

    def union(self, a: int, b: int) -> bool:
        """Join ``b``'s set to ``a``'s, whose root stays the root; whether they were apart.

        No union by size here: a caller may name a set by the root its first member gave it (the audit convolves
        its clusters of opponents in the order of their roots).  It is for a few nodes at a time; batches of
        matches go through :meth:`link`, by size.
        """
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return False
        self.parent[rb] = ra
        self.size[ra] += self.size[rb]
        return True

    def labels(self, n: int) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """Component labels of nodes ``0 .. n-1`` (largest first, ties to the lowest node) and the sizes."""
        self.flush()
        with small(n):
            return _relabel(_roots(self.parent, n), np.ones(n, dtype=np.bool_))


class JoinBehind:
    """A :class:`UnionFind`'s :meth:`~UnionFind.link` of each batch done on a thread of its own, in order, while
    the caller goes on: a League streaming a history (``League.record_many`` of :func:`podium.scan_matches`)
    replays a batch on one core while the batch before is joined on the other, instead of after it (the union-find
    was a fifth of the main thread's time at 100 M matches among 10 M players).

    Until :meth:`close`, nothing else may touch the union-find (the League grows it only through :meth:`put`).
    At most ``depth`` batches wait; :meth:`put` blocks beyond that.  An error in the thread is raised by the next
    :meth:`put` or by :meth:`close`.
    """

    def __init__(self, linked: UnionFind, depth: int = 2) -> None:
        self._linked = linked
        self._jobs: queue.Queue[tuple[Any, NDArray[np.int64], int] | None] = queue.Queue(maxsize=depth)
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._work, name="podium-components", daemon=True)
        self._thread.start()

    def _work(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            if self._error is None:
                packed, rows, capacity = job
                try:
                    self._linked.grow(capacity)
                    self._linked.link(packed, rows)
                except BaseException as error:  # raised in the caller, in its turn
                    self._error = error

    def put(self, packed: Any, rows: NDArray[np.int64], capacity: int) -> None:
        """Join the players of ``packed`` (rows ``rows``; nodes up to ``capacity``) after the batches before."""
        if self._error is not None:
            raise self._error
        self._jobs.put((packed, rows, capacity))

    def close(self, *, check: bool = True) -> None:
        """Wait for every batch put to be joined; raise the thread's error, if any, where ``check``."""
        self._jobs.put(None)
        self._thread.join()
        if check and self._error is not None:
            raise self._error


# -- connectivity before each match (for evaluate) -----------------------------------------------------------
@jit
def connected_before(match_start: NDArray[np.int64], team_start: NDArray[np.int64], player: NDArray[np.int64],
                     n_players: int) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    """Which pairs of teams, and which matches, were connected before they were played.

    Pairs are every ``a < b`` of teams of every match, grouped by match (the order of
    :func:`podium.evaluation.replay.pair_structure`).  A pair is connected when every player of both teams was in one
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
