"""A history larger than memory: written as Parquet, replayed by streaming (podium.scan_matches) and in memory.

    python benchmarks/scale.py                                      # the issue's target: 100,000,000 matches, 10,000,000 players
    python benchmarks/scale.py --matches 2000000 --players 200000   # a try at a smaller scale

The history is simulated in chunks (one-on-one games among ``--players`` players with fixed skills, Gaussian
performances) and written as Parquet in podium's long form, a row group per chunk, so that the writer holds one
chunk (under 2 GB at any size).  Match and player ids are integers by default, as a large game's are (a player's
id is then its decimal digits, and a League maps the integers themselves to rows: ``podium.data.decimal_ids``);
``--ids text`` writes ``m0000000000`` and ``p00000000`` instead, looked up by hashing.  Each replay runs in a
process of its own, so that its peak resident memory (``ru_maxrss``) is its own; Elo with ``keep_history=False``
in both:

* streaming: ``League.record_many(podium.scan_matches(path, batch_size=--batch))`` over the whole file;
* in memory: the first ``--in-memory`` matches of the same file (the same population, a history that fits) read
  into one ``Matches`` first, then ``League.record_many(matches)`` timed alone (and, for reference, with the read).
  The timed part leaves out what the read did (every player id looked up once) and the league's components
  (joined on their first read), both of which the streamed replay does as it goes.

Printed: matches/s of both, their ratio (the target: streaming at least 0.75 of in memory), the streaming
process's peak memory (target: under 2,000 MB), and the time for 1,000,000,000 matches projected from the
streaming rate.  ``--breakdown`` also times reading and converting the batches and looking their players up,
alone (one more pass).

Measured on the development machine (2 cores shared with other jobs, 23 GB; Thu 26 Nov 2026, 15:30 UTC) with
``python benchmarks/scale.py --repeat 3 --breakdown --dir /tmp/scale`` (the defaults: 100,000,000 matches among
10,000,000 players, integer ids, batches of 250,000; medians of three runs, each replay in a process of its
own)::

    100,000,000 matches among 10,000,000 players (int ids) written as Parquet in 37 s (2,595 MB; writer's peak memory 308 MB)
    in memory (10,000,000 matches, 8,647,399 players, read first): 4,403,833 matches/s for the replay alone (2.3 s),
        567,413 with the read; peak memory 5,334 MB
    streaming (100,000,000 matches, 10,000,000 players, batches of 250,000): 4,316,758 matches/s (23.2 s),
        peak memory 1,442 MB (target under 2,000 MB: met)
    streaming / in memory: 0.98 (target at least 0.75: met); runs: stream [31.8, 22.9, 23.2] s,
        in memory [2.0, 2.3, 2.4] s
    reading and converting the batches and looking their players up, alone: 12.3 s (8,104,274 matches/s)
    projected for 1,000,000,000 matches at the streaming rate: 4 min

Earlier runs of the same dense-id path that afternoon gave 1.14 (21.3 s against 2.4 s) and 0.92 (31.6 s
against 2.9 s): the machine's speed changes by the hour.  With sparse 64-bit player ids (``--ids sparse``: the hash table of ``podium.data.decimal_ids``, one
run): 3,617,763 matches/s (27.6 s) against 4,295,859 in memory, 0.84, peak 1,806 MB.

The same machine is up to twice as fast at other hours, the in-memory replay more than the rest: the morning
before these changes, it ran the in-memory replay at 8.1 M matches/s (1.2 s) and streamed the text ids in 35 s.
With text ids (``--ids text``, one run), streaming ran at 2,042,009 matches/s (49.0 s, peak 1,760 MB) against
4,202,277 in memory: 0.49, the target not met that way.

Where the streaming time goes (timers around the League's steps, one run; about 41 s of CPU in 22 s): the
main thread replays (about 20 s of Elo, at the in-memory replay's speed per match, which is now the bound);
a thread of its own joins the components a batch behind (about 6-8 s, most of it while the big component forms:
afterwards a match among its members costs two bits, ``podium.engine.union_find``); the rest, about 12 s of CPU, is
the reader's two threads decoding the Parquet (about 26 ms a row group of 250,000 matches, timed alone), cutting
the batches and mapping the players.  Before
this session the ids were text: every player slot was a hash lookup among ten million names (~110 ns, 23 s of
CPU), and the union-find read two random ``parent`` entries a match (9 s on the main thread); streaming ran at
0.35-0.67 of the in-memory replay.
"""

from __future__ import annotations

import os as _os

_os.environ.setdefault("PODIUM_JIT", "compiled")  # the compiled speed: warm-up calls compile, timed ones do not

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np


def fixed_width_ids(prefix: str, values: np.ndarray, digits: int) -> Any:
    """``prefix`` followed by ``values`` written in ``digits`` decimal digits, as an Arrow string array made from its
    buffers (no Python str per id)."""
    import pyarrow as pa

    width = len(prefix) + digits
    text = np.empty((len(values), width), dtype=np.uint8)
    text[:, :len(prefix)] = np.frombuffer(prefix.encode(), dtype=np.uint8)
    rest = values.astype(np.int64)
    for column in range(width - 1, len(prefix) - 1, -1):
        text[:, column] = 48 + rest % 10
        rest = rest // 10
    offsets = np.arange(0, (len(values) + 1) * width, width, dtype=np.int64)
    return pa.LargeStringArray.from_buffers(len(values), pa.py_buffer(offsets), pa.py_buffer(text))


_STEAM = 76561197960265728  # the first of Steam's 64-bit account ids


def write_history(path: Path, n_matches: int, n_players: int, chunk: int, seed: int, ids: str = "int") -> float:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    skill = rng.normal(size=n_players)
    digits = max(8, len(str(n_players - 1)))
    match_digits = max(10, len(str(n_matches - 1)))
    numeric = ids in ("int", "sparse")
    schema = pa.schema([("match", pa.int64() if numeric else pa.large_string()), ("team", pa.int32()),
                        ("player", pa.int64() if numeric else pa.large_string()),
                        ("rank", pa.int32()), ("weight", pa.float64()), ("time", pa.float64())])
    began = time.perf_counter()
    with pq.ParquetWriter(path, schema) as writer:
        for start in range(0, n_matches, chunk):
            m = min(chunk, n_matches - start)
            a = rng.integers(0, n_players, m)
            b = (a + rng.integers(1, n_players, m)) % n_players  # never a player against itself
            first = skill[a] + rng.normal(size=m) > skill[b] + rng.normal(size=m)
            who = np.empty(2 * m, dtype=np.int64)
            who[0::2], who[1::2] = a, b
            rank = np.empty(2 * m, dtype=np.int32)
            rank[0::2], rank[1::2] = np.where(first, 0, 1), np.where(first, 1, 0)
            match = np.repeat(np.arange(start, start + m, dtype=np.int64), 2)
            writer.write_table(pa.table({
                "match": pa.array(match) if numeric else fixed_width_ids("m", match, match_digits),
                "team": pa.array(np.tile(np.array([0, 1], np.int32), m)),
                "player": pa.array(who) if ids == "int" else pa.array(_STEAM + 7919 * who) if ids == "sparse"
                else fixed_width_ids("p", who, digits),
                "rank": pa.array(rank), "weight": pa.array(np.ones(2 * m)),
                "time": pa.array(match.astype(float)),
            }, schema=schema), row_group_size=2 * m)
    return time.perf_counter() - began


def replay(path: str, how: str, batch: int, in_memory: int) -> dict[str, float]:
    """Run in a child process: one replay, its time and this process's peak memory."""
    import podium

    with tempfile.TemporaryDirectory() as tmp:  # everything compiled (or loaded from numba's cache) before the timing
        small = Path(tmp) / "small.parquet"
        podium.write_matches(podium.simulate(50, 200, seed=1).matches, small)
        podium.League(podium.Elo(), keep_history=False).record_many(podium.scan_matches(small, batch_size=64))
        podium.League(podium.Elo(), keep_history=False).record_many(podium.read_matches(small))
    league = podium.League(podium.Elo(), keep_history=False)
    out: dict[str, float] = {}
    if how == "stream":
        began = time.perf_counter()
        league.record_many(podium.scan_matches(path, batch_size=batch))
        out["seconds"] = time.perf_counter() - began
    elif how == "read":  # reading and converting the batches, their players looked up, alone
        from podium.data.names import NameIndex

        began = time.perf_counter()
        n = 0
        parts, _ = podium.scan_matches(path, batch_size=batch)._read_ahead(NameIndex())  # (as a League reads)
        for part, _ in parts:
            n += len(part)
        out["seconds"] = time.perf_counter() - began
        out["matches"] = n
    else:
        import pyarrow.parquet as pq

        began = time.perf_counter()
        file = pq.ParquetFile(path)
        pieces, rows = [], 0
        for record_batch in file.iter_batches(batch_size=1 << 20):
            pieces.append(record_batch)
            rows += record_batch.num_rows
            if rows >= 2 * in_memory:  # two rows a match
                break
        import pyarrow as pa

        table = pa.Table.from_batches(pieces).slice(0, 2 * in_memory)
        matches = podium.Matches.from_arrow(table)
        del pieces, table
        out["read"] = time.perf_counter() - began
        began = time.perf_counter()
        league.record_many(matches)
        out["seconds"] = time.perf_counter() - began
    out.setdefault("matches", league.n_matches)
    out["players"] = len(league)
    out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def child(path: Path, how: str, batch: int, in_memory: int) -> dict[str, float]:
    out = subprocess.run([sys.executable, __file__, "--child", how, "--path", str(path), "--batch", str(batch),
                          "--in-memory", str(in_memory)], check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--matches", type=int, default=100_000_000)
    parser.add_argument("--players", type=int, default=10_000_000)
    parser.add_argument("--batch", type=int, default=250_000, help="Matches per streamed batch.")
    parser.add_argument("--in-memory", type=int, default=10_000_000,
                        help="Matches of the in-memory replay (the first ones of the file).")
    parser.add_argument("--repeat", type=int, default=1, help="Run each replay this many times; medians are shown.")
    parser.add_argument("--breakdown", action="store_true", help="Also time reading and converting alone.")
    parser.add_argument("--ids", choices=["int", "sparse", "text"], default="int",
                        help="Player and match ids as integers 0, 1, ... (the default), as sparse 64-bit player ids "
                             "(76561197960265728 + 7919 k, as Steam's), or as text (p00000000, m0000000000, ...).")
    parser.add_argument("--dir", type=Path, default=None, help="Where to write the Parquet file (default: a temp dir).")
    parser.add_argument("--keep", type=Path, default=None, help="Use (or write, if absent) this Parquet file.")
    parser.add_argument("--child", choices=["stream", "memory", "read"], help=argparse.SUPPRESS)
    parser.add_argument("--path", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(replay(args.path, args.child, args.batch, args.in_memory)))
        return
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        path = args.keep if args.keep is not None else Path(tmp) / "history.parquet"
        if not path.exists():
            wrote = write_history(path, args.matches, args.players, min(args.batch, 1_000_000), seed=1, ids=args.ids)
            print(f"{args.matches:,} matches among {args.players:,} players ({args.ids} ids) written as Parquet in {wrote:.0f} s "
                  f"({path.stat().st_size / 1e6:,.0f} MB; writer's peak memory "
                  f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MB)")
        in_memory = min(args.in_memory, args.matches)

        def median(runs: list[dict[str, float]], key: str) -> float:
            return float(np.median([r[key] for r in runs]))

        streams, memories = [], []
        for _ in range(args.repeat):  # one heavy process at a time
            memories.append(child(path, "memory", args.batch, in_memory))
            streams.append(child(path, "stream", args.batch, in_memory))
        n_stream, n_memory = streams[0]["matches"], memories[0]["matches"]
        rate = n_stream / median(streams, "seconds")
        whole = n_memory / median(memories, "seconds")
        with_read = n_memory / (median(memories, "seconds") + median(memories, "read"))
        print(f"in memory ({n_memory:,.0f} matches, {memories[0]['players']:,.0f} players, read first): "
              f"{whole:,.0f} matches/s for the replay alone ({median(memories, 'seconds'):.1f} s), {with_read:,.0f} "
              f"with the read; peak memory {median(memories, 'peak_mb'):,.0f} MB")
        print(f"streaming ({n_stream:,.0f} matches, {streams[0]['players']:,.0f} players, batches of {args.batch:,}): "
              f"{rate:,.0f} matches/s ({median(streams, 'seconds'):.1f} s), peak memory "
              f"{median(streams, 'peak_mb'):,.0f} MB (target under 2,000 MB: "
              f"{'met' if median(streams, 'peak_mb') < 2000 else 'NOT met'})")
        print(f"streaming / in memory: {rate / whole:.2f} (target at least 0.75: {'met' if rate / whole >= 0.75 else 'NOT met'})"
              + (f"; runs: stream {[round(r['seconds'], 1) for r in streams]} s, in memory "
                 f"{[round(r['seconds'], 1) for r in memories]} s" if args.repeat > 1 else ""))
        if args.breakdown:
            read = child(path, "read", args.batch, in_memory)
            print(f"reading and converting the batches and looking their players up, alone: {read['seconds']:.1f} s "
                  f"({read['matches'] / read['seconds']:,.0f} matches/s)")
        print(f"projected for 1,000,000,000 matches at the streaming rate: {1e9 / rate / 60:,.0f} min")


if __name__ == "__main__":
    main()
