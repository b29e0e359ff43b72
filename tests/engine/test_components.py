"""Connected components, groups and thin links (podium.components), against networkx.

networkx is the reference throughout: components are ``nx.connected_components`` of the player graph (every
match joins all its players); groups are computed by merging, with networkx's connected components, every two
groups that at least ``thin`` matches join until none do (the definition, run literally); a thin link's count
and matches are ``nx.minimum_cut`` on Lawler's gadget of the match hypergraph (a match is an arc of capacity 1
from its entry to its exit node, its players joined to both by arcs of unbounded capacity), for every pair of
large groups of a component, without podium's shortcut through groups already known to be well connected.
"""

from __future__ import annotations

import itertools
import random
import time
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import podium
from podium import League, Match, Matches

from ..shared import load

nx = pytest.importorskip("networkx")

SETS = ["racetime_maprando", "f1_races", "intl_football", "chess_worldcup", "atp_singles", "atp_doubles",
        "riichi_mahjong", "nascar2002"]


# -- the networkx reference ---------------------------------------------------------------------------------
def plays(matches: Matches) -> list[list[int]]:
    """Each match's players (indices into matches.players)."""
    ms, ts, pl = matches.match_start, matches.team_start, matches.player
    return [pl[ts[ms[j]]:ts[ms[j + 1]]].tolist() for j in range(len(matches))]


def player_graph(matches: Matches) -> nx.Graph:
    graph = nx.Graph()
    for ps in plays(matches):
        graph.add_nodes_from(ps)
        graph.add_edges_from(itertools.combinations(ps, 2))
    return graph


def expected_labels(blocks: list[set[int]], n: int) -> tuple[np.ndarray, list[int]]:
    """Labels by the documented rule: largest first, ties to the block whose lowest player comes first."""
    ordered = sorted(blocks, key=lambda b: (-len(b), min(b)))
    labels = np.full(n, -1)
    for label, block in enumerate(ordered):
        labels[sorted(block)] = label
    return labels, [len(b) for b in ordered]


def reference_groups(matches: Matches, thin: int) -> list[set[int]]:
    """The definition, literally: merge (through a networkx graph of merges) every two groups that at least
    ``thin`` matches join, recounting after each round, until no two groups are joined that often."""
    every = plays(matches)
    merges = nx.Graph()
    merges.add_nodes_from(p for ps in every for p in ps)
    while True:
        blocks = list(nx.connected_components(merges))
        block = {p: i for i, b in enumerate(blocks) for p in b}
        count: Counter[tuple[int, int]] = Counter()
        for ps in every:
            for a, b in itertools.combinations(sorted({block[p] for p in ps}), 2):
                count[a, b] += 1
        heavy = [(a, b) for (a, b), c in count.items() if c >= thin]
        if not heavy:
            return blocks
        merges.add_edges_from((min(blocks[a]), min(blocks[b])) for a, b in heavy)


def gadget(matches: Matches) -> nx.DiGraph:
    """Lawler's gadget of the match hypergraph: one unit through each match, between any two of its players."""
    graph = nx.DiGraph()
    for e, ps in enumerate(plays(matches)):
        graph.add_edge(("in", e), ("out", e), capacity=1)
        for p in ps:
            graph.add_edge(("p", p), ("in", e))  # no capacity attribute: unbounded
            graph.add_edge(("out", e), ("p", p))
    return graph


def reference_cut(graph: nx.DiGraph, near: set[int], far: set[int]) -> tuple[int, list[int]]:
    """The fewest matches separating ``near`` from ``far``, and of the minimum cuts the one nearest to ``near``:
    networkx's partition puts on the sink side exactly the nodes that can still reach the sink, so with
    ``near`` at the sink its side is the smallest."""
    graph = graph.copy()
    graph.add_edges_from(("S", ("p", p)) for p in far)
    graph.add_edges_from((("p", p), "T") for p in near)
    value, (source_side, sink_side) = nx.minimum_cut(graph, "S", "T")
    cut = sorted(node[1] for node in source_side if isinstance(node, tuple) and node[0] == "in"
                 and ("out", node[1]) in sink_side)
    assert value == len(cut)
    return value, cut


def reference_links(matches: Matches, thin: int, min_size: int) -> list[tuple]:
    """Every pair of large groups of one component that fewer than ``thin`` matches separate, with its count,
    matches (nearest to the smaller group), direct matches and example players (most games first)."""
    n = len(matches.players)
    comp_labels, _ = expected_labels(list(nx.connected_components(player_graph(matches))), n)
    group_labels, group_sizes = expected_labels(reference_groups(matches, thin), n)
    games = np.bincount(matches.player, minlength=n)
    large = [g for g, size in enumerate(group_sizes) if size >= min_size]
    members = {g: set(np.flatnonzero(group_labels == g).tolist()) for g in large}
    graph = gadget(matches) if len(large) > 1 else None
    every = plays(matches)
    out = []
    for a, b in itertools.combinations(large, 2):
        component = comp_labels[min(members[a])]
        if component != comp_labels[min(members[b])]:
            continue
        value, cut = reference_cut(graph, members[b], members[a])
        if value >= thin:
            continue
        direct = sum(1 for ps in every if members[a] & set(ps) and members[b] & set(ps))
        examples = tuple(tuple(matches.players[p] for p in sorted(members[g], key=lambda p: (-games[p], p))[:3])
                         for g in (a, b))
        out.append((int(component), (a, b), (len(members[a]), len(members[b])), examples, cut, direct))
    return out


def check_against_networkx(matches: Matches, thin: int, min_size: int) -> podium.Components:
    found = podium.components(matches, thin=thin, min_size=min_size)
    n = len(matches.players)
    labels, sizes = expected_labels(list(nx.connected_components(player_graph(matches))), n)
    np.testing.assert_array_equal(found.labels, labels)
    assert found.sizes.tolist() == sizes
    group_labels, group_sizes = expected_labels(reference_groups(matches, thin), n)
    np.testing.assert_array_equal(found.groups, group_labels)
    assert found.group_sizes.tolist() == group_sizes
    got = [(link.component, link.groups, link.sizes, link.examples, link.matches.tolist(), link.direct)
           for link in found.thin_links]
    assert got == reference_links(matches, thin, min_size)
    return found


# -- histories -----------------------------------------------------------------------------------------------
def scenes_history(rng: random.Random, scenes: list[int], matches_per_scene: int, bridges: int, kind: str,
                   travellers: int = 0) -> Matches:
    """Scenes of players who play among themselves, a few bridge matches between scenes, and travellers who
    play a couple of matches in two scenes; matches are duels, free-for-alls, team games or a mix."""
    ids = [[f"s{s}p{i}" for i in range(size)] for s, size in enumerate(scenes)]
    out: list[Match] = []

    def make(pool: list[str]) -> Match:
        shape = rng.choice(["duel", "ffa", "teams"]) if kind == "mixed" else kind
        if shape == "duel" or len(pool) < 3:
            who = rng.sample(pool, 2)
            return Match([[who[0]], [who[1]]])
        if shape == "ffa":
            return Match.ffa(rng.sample(pool, rng.randint(3, min(6, len(pool)))))
        size = rng.randint(1, max(1, min(3, len(pool) // 2)))
        who = rng.sample(pool, 2 * size)
        return Match([who[:size], who[size:]], ranks=[0, rng.choice([0, 1])])

    for s in range(len(scenes)):
        out += [make(ids[s]) for _ in range(matches_per_scene)]
    if len(scenes) < 2:
        bridges = travellers = 0
    for _ in range(bridges):
        s, t = rng.sample(range(len(scenes)), 2)
        out.append(Match([[rng.choice(ids[s])], [rng.choice(ids[t])]]))
    for k in range(travellers):
        s, t = rng.sample(range(len(scenes)), 2)
        out += [Match([[f"traveller{k}"], [rng.choice(ids[s])]]), Match([[f"traveller{k}"], [rng.choice(ids[t])]])]
    rng.shuffle(out)
    return Matches.from_matches(out)


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("kind", ["duel", "ffa", "teams", "mixed"])
def test_random_scenes_against_networkx(seed: int, kind: str) -> None:
    rng = random.Random(seed * 10 + len(kind))
    scenes = [rng.randint(2, 9) for _ in range(rng.randint(1, 4))]
    history = scenes_history(rng, scenes, rng.randint(3, 25), rng.randint(0, 5), kind, travellers=rng.randint(0, 3))
    for thin, min_size in [(1, 1), (2, 2), (3, 3), (4, 2), (6, 4)]:
        check_against_networkx(history, thin, min_size)
    # A slice shares the whole history's player list: the players it leaves out have no label.
    part = history[len(history) // 2:]
    found = check_against_networkx(part, 3, 2)
    absent = np.setdiff1d(np.arange(len(history.players)), part.player)
    assert np.all(found.labels[absent] == -1) and np.all(found.groups[absent] == -1)
    assert found.n_players == len(np.unique(part.player))


@st.composite
def histories(draw: st.DrawFn) -> Matches:
    """Small histories of any shape: 2-7 players per match from a pool of up to 12, split into 2+ teams."""
    pool = draw(st.integers(2, 12))
    out = []
    for _ in range(draw(st.integers(0, 30))):
        players = draw(st.lists(st.integers(0, pool - 1), min_size=2, max_size=min(7, pool), unique=True))
        cuts = sorted(draw(st.sets(st.integers(1, len(players) - 1), min_size=1)))
        teams = [players[a:b] for a, b in zip([0, *cuts], [*cuts, len(players)])]
        out.append(Match([[f"p{i}" for i in team] for team in teams]))
    return Matches.from_matches(out)


@settings(max_examples=150)
@given(histories(), st.integers(1, 4), st.integers(1, 4))
def test_any_history_against_networkx(history: Matches, thin: int, min_size: int) -> None:
    found = check_against_networkx(history, thin, min_size)
    assert found.thin == thin and found.min_size == min_size
    # The groups' defining property: any two share fewer than `thin` matches.
    shared: Counter[tuple[int, int]] = Counter()
    for ps in plays(history):
        for pair in itertools.combinations(sorted({int(found.groups[p]) for p in ps}), 2):
            shared[pair] += 1
    assert all(count < thin for count in shared.values())


def test_the_bridge_between_two_scenes_is_found() -> None:
    """Two round robins played five times, joined by two matches and by a traveller who played two matches in
    each: four matches separate them (two routes through the traveller)."""
    east = [Match([[a], [b]]) for a, b in itertools.combinations("abcde", 2)] * 5
    west = [Match([[a], [b]]) for a, b in itertools.combinations("vwxyz", 2)] * 5
    bridge = [Match([["a"], ["v"]]), Match([["b"], ["w"]])]
    traveller = [Match([["t"], ["c"]]), Match([["t"], ["x"]]), Match([["t"], ["d"]]), Match([["t"], ["y"]])]
    history = Matches.from_matches(east + west + bridge + traveller)
    found = podium.components(history, thin=5, min_size=5)
    assert found.n_components == 1 and found.sizes.tolist() == [11]
    assert found.group_sizes.tolist() == [5, 5, 1]
    (link,) = found.thin_links
    assert link.sizes == (5, 5) and link.direct == 2 and link.count == 4
    first = len(east) + len(west)
    # Nearest to the smaller (second-seen) group: the bridges and the traveller's two matches against it.
    assert link.matches.tolist() == [first, first + 1, first + 3, first + 5]
    assert podium.components(history, thin=4, min_size=5).thin_links == ()  # four matches are not thin at 4
    check_against_networkx(history, 5, 5)


def test_a_flow_that_must_cancel_a_match_it_used() -> None:
    """Unit flows between t and s: the first shortest route t-v-u-s blocks both others unless the second
    search sends its unit back through u-v (t-x-u, u-v undone, v-w-s): two matches separate s from t."""
    history = Matches.from_matches([Match([[a], [b]]) for a, b in
                                    ["su", "uv", "vt", "ux", "xt", "sw", "wv"]])
    found = check_against_networkx(history, 3, 1)  # every player is a group of one, and a large one
    assert found.group_members(0) == ["s"] and found.group_members(3) == ["t"]
    link = next(link for link in found.thin_links if link.groups == (0, 3))
    assert link.count == 2 and link.direct == 0
    assert link.matches.tolist() == [2, 4]  # nearest to t (seen after s): its own two matches


def test_result_accessors() -> None:
    history = Matches.from_matches([Match([["a"], ["b"]]), Match([["c"], ["d"], ["e"]]), Match([["b"], ["f"]])])
    found = podium.components(history)
    assert found.n_components == 2 and found.sizes.tolist() == [3, 3] and found.n_players == 6
    assert found.largest == 0 and found.members(0) == ["a", "b", "f"]  # a tie: the component seen first
    assert found.component_of("d") == 1 and found.as_dict() == {"a": 0, "b": 0, "c": 1, "d": 1, "e": 1, "f": 0}
    assert found.connected.tolist() == [True, True, False, False, False, True]
    assert found.share == 0.5 and found.group_members(0) == ["a"]  # no two players met five times
    assert "2 components" in repr(found)
    with pytest.raises(KeyError, match="'zed'"):
        found.component_of("zed")
    with pytest.raises(ValueError, match="'label'"):
        found.members(2)
    # An iterable of Match works as Matches does; nothing at all has no components.
    assert podium.components(list(history)).labels.tolist() == found.labels.tolist()
    empty = podium.components([])
    assert empty.n_components == 0 and empty.largest == -1 and empty.thin_links == ()


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"thin": 0}, "'thin' must be an int >= 1. Got 0"),
    ({"thin": 2.5}, "'thin' must be an int >= 1. Got 2.5"),
    ({"thin": True}, "'thin' must be an int >= 1. Got True"),
    ({"min_size": 0}, "'min_size' must be an int >= 1. Got 0"),
    ({"min_size": "3"}, "'min_size' must be an int >= 1. Got '3'"),
])
def test_bad_parameters_name_themselves(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        podium.components([Match([["a"], ["b"]])], **kwargs)
    with pytest.raises(podium.MatchError, match=r"matches\[0\]"):
        podium.components(["not a match"])  # type: ignore[list-item]


# -- the League keeps its components as it records --------------------------------------------------------------
def partition(names: list[str], labels: np.ndarray) -> set[frozenset[str]]:
    return {frozenset(n for n, c in zip(names, labels) if c == label) for label in set(labels.tolist()) if label >= 0}


@pytest.mark.parametrize("seed", range(8))
def test_league_components_equal_the_batch_after_any_split(seed: int) -> None:
    rng = random.Random(seed)
    history = scenes_history(rng, [rng.randint(2, 8) for _ in range(4)], 10, rng.randint(0, 3),
                             ["duel", "ffa", "teams", "mixed"][seed % 4], travellers=1)
    batch = podium.components(history)
    league = League(podium.PlackettLuce(), keep_history=seed % 2 == 0)
    position = 0
    while position < len(history):  # single records, Matches slices and lists of Match, in any mix
        step = rng.randint(1, 12)
        how = rng.choice(["record", "slice", "list"])
        if how == "record":
            league.record(history[position])
            step = 1
        elif how == "slice":
            league.record_many(history[position:position + step])
        else:
            league.record_many(list(history[position:position + step]))
        position += step
        if rng.random() < 0.3:  # reading between batches must not disturb what follows
            league.components()
    mine = league.components()
    assert partition(mine.players, mine.labels) == partition(batch.players, batch.labels)
    assert mine.sizes.tolist() == batch.sizes.tolist()
    assert sorted(mine.players) == sorted(np.array(batch.players)[batch.labels >= 0].tolist())


def test_league_components_with_progress_chunks_and_known_players() -> None:
    # Two disconnected halves of 100,000 duels each, recorded in chunks of 65,536 behind a progress bar.
    rng = np.random.default_rng(3)
    a = rng.integers(0, 50, size=(100_000, 2))
    b = rng.integers(50, 80, size=(100_000, 2))
    pairs = np.concatenate([a, b])
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    history = Matches.from_arrays(np.arange(0, 2 * len(pairs) + 1, 2), np.arange(2 * len(pairs) + 1),
                                  np.tile([0, 1], len(pairs)), pairs.reshape(-1))
    league = League(podium.Elo(), {"stranger": podium.Rating(1600.0)}, keep_history=False)
    league.record_many(history, progress=True)
    found = league.components()
    assert found.sizes.tolist() == [50, 30, 1]
    assert found.component_of("stranger") == 2  # given a rating, in no recorded match: alone
    assert partition(found.players, found.labels) == partition(*_batch_partition(history)) | {frozenset({"stranger"})}


def _batch_partition(history: Matches) -> tuple[list[str], np.ndarray]:
    found = podium.components(history)
    return found.players, found.labels


def test_leaderboard_marks_and_filters_players_outside_the_largest_component() -> None:
    big = [Match([["a"], ["b"]]), Match([["b"], ["c"]]), Match([["c"], ["a"]])]
    small = [Match([["x"], ["y"]])] * 3  # x beats y three times: x tops the board, unconnected to a, b, c
    league = League(podium.Elo(k=32), {"newcomer": podium.Rating(1700.0)})
    league.record_many(big + small)
    rows = league.leaderboard()
    by_player = {row.player: row for row in rows}
    assert rows[0].player == "newcomer" and not rows[0].connected  # rated, never played: comparable with no one
    assert by_player["x"].mu > by_player["a"].mu and not by_player["x"].connected
    assert [p for p in "abcxy" if by_player[p].connected] == ["a", "b", "c"]
    kept = league.leaderboard(connected_only=True)
    assert [row.player for row in kept] == [row.player for row in rows if row.connected]
    assert [row.rank for row in kept] == [1, 2, 3]
    assert league.leaderboard(connected_only=True, top=1)[0].player == kept[0].player
    # One match joins the two: everyone who played is then comparable.
    league.record(Match([["x"], ["a"]]))
    assert {row.player for row in league.leaderboard(connected_only=True)} == set("abcxy")
    with pytest.raises(TypeError, match="'connected_only' must be a bool"):
        league.leaderboard(connected_only="yes")  # type: ignore[arg-type]


def test_leaderboard_ties_for_the_largest_go_to_the_component_seen_first() -> None:
    league = League(podium.Elo()).record_many([Match([["x"], ["y"]]), Match([["a"], ["b"]])])
    assert {row.player: row.connected for row in league.leaderboard()} == {"x": True, "y": True, "a": False,
                                                                             "b": False}


# -- the shared real histories ---------------------------------------------------------------------------------


@pytest.mark.parametrize("folder", SETS)
def test_real_history_against_networkx(folder: str) -> None:
    history = load(folder)
    found = check_against_networkx(history, 5, 10)
    if folder != "atp_singles":  # the literal merging takes seconds a round there; once is enough
        check_against_networkx(history, 3, 4)
    if folder == "f1_races":  # the Indianapolis 500 of 1950-1960, in the championship, met the Grand Prix field
        (link,) = found.thin_links  # in three races
        assert link.sizes == (394, 21) and link.count == link.direct == 3
        assert "rodger-ward" in link.examples[1]


def test_speed_on_atp_singles() -> None:
    history = load("atp_singles")
    podium.components(history[:100])  # load the compiled kernels
    times = []
    for _ in range(5):
        start = time.perf_counter()
        found = podium.components(history)
        times.append(time.perf_counter() - start)
    league = League(podium.Elo(), keep_history=False).record_many(history)
    start = time.perf_counter()
    league.components()
    linked = time.perf_counter() - start
    print(f"\ncomponents() on atp_singles ({len(history):,} matches): {1000 * min(times):.1f} ms best of 5 "
          f"({found.n_components} components, largest {int(found.sizes[0]):,} of {found.n_players:,}); "
          f"a League's first components() after its replay: {1000 * linked:.1f} ms")
    assert min(times) < 1.0  # a few milliseconds here; a regression to Python loops would take seconds


# -- evaluate(connected_only=True) --------------------------------------------------------------------------------
def connected_pairs_by_networkx(history: Matches) -> tuple[list[bool], list[bool], list[bool]]:
    """Per pair of teams (the order of evaluate's pairs): whether its order is decided and whether every player
    of both teams was in one component of the matches before it; per match, whether all its players were."""
    graph = nx.Graph()
    decided, pair_ok, match_ok = [], [], []
    for match in history:
        teams = [list(team) for team in match.teams]

        def together(players: list[str]) -> bool:
            if not all(graph.has_node(p) for p in players):
                return False  # a player's first match: alone before it
            return set(players) <= nx.node_connected_component(graph, players[0])

        for i, j in itertools.combinations(range(len(teams)), 2):
            ri, rj = match.ranks[i], match.ranks[j]
            decided.append(ri != rj)  # a draw, or two non-finishers (None == None), is not decided
            pair_ok.append(together(teams[i] + teams[j]))
        match_ok.append(together(match.players))
        graph.add_edges_from(itertools.combinations(match.players, 2))
    return decided, pair_ok, match_ok


def two_scenes_that_meet(seed: int) -> Matches:
    """Two scenes that play apart for a while (duels, draws, team games, free-for-alls with non-finishers), then
    meet, then play on mixed."""
    rng = random.Random(seed)
    east, west = [f"e{i}" for i in range(6)], [f"w{i}" for i in range(6)]
    out = []

    def game(pool: list[str]) -> Match:
        shape = rng.choice(["duel", "draw", "teams", "race"])
        if shape in ("duel", "draw"):
            a, b = rng.sample(pool, 2)
            return Match([[a], [b]], ranks=[0, 0] if shape == "draw" else None)
        if shape == "teams":
            who = rng.sample(pool, 4)
            return Match([who[:2], who[2:]])
        who = rng.sample(pool, 4)
        return Match.from_scores([[p] for p in who], [3, 2, None, None])

    for _ in range(30):
        out.append(game(rng.choice([east, west])))
    for _ in range(3):  # the first meetings: a player from each side
        out.append(Match([[rng.choice(east)], [rng.choice(west)]]))
    for _ in range(30):
        out.append(game(east + west + ["late"]))  # and a latecomer, whose first match is never connected
    return Matches.from_matches(out)


@pytest.mark.parametrize("seed", range(4))
def test_evaluate_connected_only_scores_what_was_connected_before_the_match(seed: int) -> None:
    history = two_scenes_that_meet(seed)
    decided, pair_ok, match_ok = (np.array(x) for x in connected_pairs_by_networkx(history))
    assert not match_ok.all() and match_ok.any() and (decided & ~pair_ok).any()
    model = podium.PlackettLuce()

    class Adapter:  # the same model through evaluate's match-by-match path for other libraries
        def rate(self, match: Match, ratings: dict) -> dict:
            return model.rate(match, ratings)

        def win_probabilities(self, teams: list, ratings: dict, weights: list | None = None) -> list[float]:
            return model.win_probabilities(teams, ratings, weights)

    full = podium.evaluate(history, {"pl": model})
    mine = podium.evaluate(history, {"pl": model, "adapter": Adapter()}, connected_only=True)
    assert mine.connected_only and not full.connected_only and full.dropped_pairs == full.dropped_matches == 0
    assert mine.dropped_pairs == int(np.sum(decided & ~pair_ok))
    assert mine.pairs == int(np.sum(decided & pair_ok)) and mine.pairs + mine.dropped_pairs == full.pairs
    assert mine.matches == int(match_ok.sum()) and mine.dropped_matches == len(history) - mine.matches
    # The same pairs as the full evaluation's connected ones, with the same probabilities.
    keep = pair_ok[decided]
    for metric in ("pair_error", "pair_log_loss"):
        expected = float(np.mean(full.pair_values("pl", metric)[keep]))
        assert mine["pl"][metric] == pytest.approx(expected, rel=1e-12)
        assert mine["adapter"][metric] == pytest.approx(expected, rel=1e-9)
    log_likelihoods = League(model).record_many(history).log_likelihoods
    assert mine["pl"]["log_likelihood"] == pytest.approx(float(np.mean(log_likelihoods[match_ok])), rel=1e-12)
    data = mine.to_dict()
    assert (data["connected_only"], data["dropped_pairs"], data["dropped_matches"]) == (
        True, mine.dropped_pairs, mine.dropped_matches)
    title = " ".join(str(mine).split())  # the table's title wraps
    assert f"connected only: {mine.dropped_pairs:,} pairs and {mine.dropped_matches:,} matches left out" in title


def test_evaluate_connected_only_refuses_a_non_bool() -> None:
    with pytest.raises(ValueError, match="'connected_only' must be a bool. Got 'yes'"):
        podium.evaluate([Match([["a"], ["b"]])], {"elo": podium.Elo()}, connected_only="yes")  # type: ignore[arg-type]
