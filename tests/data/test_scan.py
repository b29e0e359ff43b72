"""podium.scan_matches and League.record_many over batches: the same history and the same ratings as reading and
replaying it whole, with the same checks."""

from __future__ import annotations

import gzip
import math
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import podium
from podium import League, Matches, MatchError
from podium.cli import app


def history() -> Matches:
    return podium.simulate(200, 5000, teams=3, team_size=2, draw_probability=0.1, seed=3).matches


def same(a: Matches, b: Matches) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert (x.teams, x.ranks, x.weights, x.id) == (y.teams, y.ranks, y.weights, y.id)
        assert x.time == y.time or (x.time is None and y.time is None)


@pytest.mark.parametrize("suffix", [".jsonl", ".jsonl.gz", ".csv", ".csv.gz", ".parquet"])
@pytest.mark.parametrize("batch", [1, 999, 5000, 100_000])
def test_batches_are_the_history_in_order(tmp_path: Path, suffix: str, batch: int) -> None:
    matches = history()[:2000] if batch == 1 else history()
    path = tmp_path / f"h{suffix}"
    podium.write_matches(matches, path)
    batches = list(podium.scan_matches(path, batch_size=batch))
    assert [len(b) for b in batches] == [min(batch, len(matches) - i) for i in range(0, len(matches), batch)]
    same(Matches.concat(batches), podium.read_matches(path))


@pytest.mark.parametrize("model", [podium.Elo(), podium.TrueSkill(), podium.PlackettLuce(),
                                   podium.Glicko2(period=50.0)], ids=lambda m: type(m).__name__)
def test_replaying_batches_equals_replaying_the_whole(tmp_path: Path, model: podium.Model) -> None:
    matches = history() if not isinstance(model, podium.Elo) else podium.simulate(200, 5000, seed=3).matches
    path = tmp_path / "h.jsonl.gz"
    podium.write_matches(matches, path)
    whole = League(model, keep_history=False).record_many(matches)
    streamed = League(model, keep_history=False).record_many(podium.scan_matches(path, batch_size=777))
    assert streamed.n_matches == whole.n_matches == len(matches)
    want, got = whole.states(), streamed.states()
    assert set(want) == set(got)
    for player, state in want.items():  # the same arithmetic in the same order: equal to the bit
        other = got[player]
        assert (other.mu, other.sigma, other.games) == (state.mu, state.sigma, state.games)
        assert other.extra == state.extra or all(math.isnan(a) and math.isnan(b) or a == b
                                                 for a, b in zip(other.extra, state.extra))


def test_batches_sharing_a_growing_player_list() -> None:
    """Batches whose player list is one list, grown at its end just before each batch is replayed, map each
    player once and rate as the whole."""
    matches = podium.simulate(20_000, 5000, seed=3).matches  # new players in every batch
    names: list[str] = []
    index: dict[str, int] = {}

    def batches() -> Iterator[Matches]:
        for start in range(0, len(matches), 1000):
            part = matches[start:start + 1000]
            used = np.unique(part.player)
            for p in (part.players[i] for i in used.tolist()):
                if p not in index:
                    index[p] = len(index)
                    names.append(p)  # the same list object, longer than when the last batch was replayed
            remap = np.full(len(part.players), -1, dtype=np.int64)
            remap[used] = [index[part.players[i]] for i in used.tolist()]
            yield Matches(part.match_start, part.team_start, part.team_rank, remap[part.player], part.weight,
                          part.time, names, part.ids, validate=False)

    grown = []
    whole = League(podium.TrueSkill(), keep_history=False).record_many(matches)
    shared = League(podium.TrueSkill(), keep_history=False)
    for batch in batches():
        grown.append(len(names))
        shared.record_many(iter([batch]))
    assert grown == sorted(grown) and grown[0] < grown[-1]  # the list did grow between batches
    assert shared.ratings == whole.ratings


def test_a_bad_record_names_its_line_after_the_batches_before_it(tmp_path: Path) -> None:
    matches = history()[:100]
    path = tmp_path / "h.jsonl"
    podium.write_matches(matches, path)
    lines = path.read_text().splitlines()
    lines[57] = '{"teams": [["a"], ["a"]]}'
    path.write_text("\n".join(lines) + "\n")
    seen = []
    with pytest.raises(MatchError, match="line 58"):
        for batch in podium.scan_matches(path, batch_size=20):
            seen.append(len(batch))
    assert seen == [20, 20]
    with pytest.warns(UserWarning, match="skipped 1 malformed record"):
        kept = list(podium.scan_matches(path, batch_size=20, errors="skip"))
    assert sum(len(b) for b in kept) == 99


def test_arguments_are_checked(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    podium.write_matches(history()[:10], path)
    with pytest.raises(ValueError, match="'batch_size' must be an int >= 1. Got 0"):
        next(podium.scan_matches(path, batch_size=0))
    with pytest.raises(ValueError, match="'errors' must be 'raise' or 'skip'"):
        next(podium.scan_matches(path, errors="ignore"))
    with pytest.raises(TypeError, match="mixes Matches batches"):
        League(podium.TrueSkill()).record_many(iter([history()[:5], "nope"]))  # type: ignore[list-item]


def test_podium_rate_streams_the_file(tmp_path: Path) -> None:
    matches = history()
    path = tmp_path / "h.csv.gz"
    podium.write_matches(matches, path)
    out = CliRunner().invoke(app, ["rate", str(path), "--model", "trueskill", "--top", "3"])
    assert out.exit_code == 0, out.output
    assert f"{len(matches):,} matches, 200 players" in out.output
    best = League(podium.TrueSkill(), keep_history=False).record_many(matches).leaderboard(k=3, top=1)[0]
    assert best.player in out.output
    broken = tmp_path / "broken.jsonl.gz"
    with gzip.open(broken, "wt") as handle:
        handle.write('{"teams": [["a"], ["b"]]}\n{"teams": 7}\n')
    out = CliRunner().invoke(app, ["rate", str(broken)])
    assert out.exit_code == 1 and "line 2" in out.output and "--skip-invalid" in out.output
