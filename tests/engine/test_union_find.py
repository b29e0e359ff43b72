"""The union-find a League keeps as it records (podium.engine.union_find), against networkx's connected components.

The batches below grow the node set as they go and join components of very different sizes, so that the
shortcut of ``link_matches`` (the bitset of the nodes known to be in the anchor's component) is exercised where
it can go wrong: while the anchor moves from component to component, and when the anchor's component merges
into a larger one.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from podium.engine.union_find import UnionFind

nx = pytest.importorskip("networkx")


def partition_of(found: UnionFind, n: int) -> set[frozenset[int]]:
    labels, sizes = found.labels(n)
    groups = [frozenset(np.flatnonzero(labels == k).tolist()) for k in range(len(sizes))]
    assert [len(g) for g in groups] == sizes.tolist()
    return set(groups)


@st.composite
def batches(draw: st.DrawFn) -> tuple[int, list[list[list[int]]]]:
    """Up to 40 nodes; matches of 2-4 nodes, mostly within a few clusters with the odd bridge, in 1-6 batches."""
    n = draw(st.integers(2, 40))
    clusters = draw(st.integers(1, 4))
    matches = []
    for _ in range(draw(st.integers(0, 60))):
        if draw(st.integers(0, 9)) == 0:  # a bridge: anyone with anyone
            pool = list(range(n))
        else:
            c = draw(st.integers(0, clusters - 1))
            pool = [x for x in range(n) if x % clusters == c] or list(range(n))
        size = min(len(pool), draw(st.integers(2, 4)))
        if size < 2:
            continue
        matches.append(draw(st.lists(st.sampled_from(pool), min_size=size, max_size=size, unique=True)))
    cuts = sorted(draw(st.sets(st.integers(0, len(matches)), max_size=5)))
    return n, [matches[a:b] for a, b in zip([0, *cuts], [*cuts, len(matches)])]


@settings(max_examples=300, deadline=None)
@given(batches(), st.booleans())
def test_batches_against_networkx(case: tuple[int, list[list[list[int]]]], shuffled_rows: bool) -> None:
    n, parts = case
    # Nodes are rows of a row map that the batches share, as a League's state rows: a permutation, so that node
    # numbers and the order of first appearance differ.
    rows = np.random.default_rng(n).permutation(n).astype(np.int64) if shuffled_rows else np.arange(n, dtype=np.int64)
    found = UnionFind(0)
    graph = nx.Graph()
    graph.add_nodes_from(range(n))
    for part in parts:
        if not part:
            continue
        seen = max(int(rows[x]) for match in part for x in match) + 1
        found.grow(seen)  # nodes arrive as the batches name them
        player = np.array([x for match in part for x in match], dtype=np.int64)
        team_start = np.arange(len(player) + 1, dtype=np.int64)  # one player a team
        match_start = np.r_[0, np.cumsum([len(match) for match in part])].astype(np.int64)
        found.join(match_start, team_start, player, rows)
        for match in part:
            nx.add_path(graph, [int(rows[x]) for x in match])
    found.grow(n)
    assert partition_of(found, n) == {frozenset(c) for c in nx.connected_components(graph)}
    # The bitset's promise: every node marked is in the anchor's component.
    if found.anchor[0] >= 0:
        marked = np.flatnonzero(np.unpackbits(found.near, bitorder="little")[:n])
        assert all(found.find(int(x)) == found.find(int(found.anchor[0])) for x in marked)


def test_the_anchor_moves_to_a_component_grown_past_twice_its_size() -> None:
    found = UnionFind(20)
    ident = np.arange(20, dtype=np.int64)

    def join(a: int, b: int) -> None:  # one duel: two teams of one
        found.join(np.array([0, 2], dtype=np.int64), np.array([0, 1, 2], dtype=np.int64),
                   np.array([a, b], dtype=np.int64), ident)

    join(0, 1)
    assert found.anchor[0] == 0
    for k in range(3, 9):  # a chain 2-3-...-8 of 7 nodes: past twice the anchor's 2
        join(k - 1, k)
    assert found.find(int(found.anchor[0])) == found.find(2)
    marked = set(np.flatnonzero(np.unpackbits(found.near, bitorder="little")).tolist())
    assert marked and marked <= set(range(2, 9)) and not marked & {0, 1}
    join(1, 5)  # the old anchor's pair joins: marks stay true
    assert found.labels(20)[1][0] == 9


def test_joining_behind_gives_the_same_components_and_raises_in_turn() -> None:
    from types import SimpleNamespace

    from podium.engine.union_find import JoinBehind

    rng = np.random.default_rng(4)
    direct, behind = UnionFind(0), UnionFind(0)
    joiner = JoinBehind(behind, depth=1)
    for size in (5, 40, 200, 60):  # duels among a growing population, batch by batch
        pairs = rng.integers(0, size, size=(size, 2))
        pairs = pairs[pairs[:, 0] != pairs[:, 1]]
        batch = SimpleNamespace(match_start=np.arange(0, 2 * len(pairs) + 1, 2, dtype=np.int64),
                                team_start=np.arange(2 * len(pairs) + 1, dtype=np.int64),
                                player=pairs.reshape(-1).astype(np.int64))
        rows = np.arange(size, dtype=np.int64)
        direct.grow(size)
        direct.link(batch, rows)  # type: ignore[arg-type]
        joiner.put(batch, rows, size)
    joiner.close()
    assert partition_of(behind, 200) == partition_of(direct, 200)
    # An error in the thread comes out of the next put (or close), not lost.
    # (A batch without arrays fails when the thread joins it; when that happens is the thread's business, so wait
    # for it rather than race it: the put after the failure raises, and so does close.)
    import time

    failing = JoinBehind(UnionFind(3))
    failing.put(SimpleNamespace(), np.arange(3, dtype=np.int64), 3)
    deadline = time.monotonic() + 60
    while failing._error is None and time.monotonic() < deadline:
        time.sleep(0.001)
    with pytest.raises(AttributeError):
        failing.put(SimpleNamespace(), np.arange(3, dtype=np.int64), 3)
    with pytest.raises(AttributeError):
        failing.close()
    # Without a failure in between, close raises nothing.
    closing = JoinBehind(UnionFind(3))
    closing.close()
