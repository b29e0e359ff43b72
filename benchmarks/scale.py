"""A history larger than memory: written as Parquet, replayed by streaming (podium.scan_matches) and in memory.

    python benchmarks/scale.py                                  # the issue's target: 100,000,000 matches, 10,000,000 players
    python benchmarks/scale.py --matches 2000000 --players 200000   # a try at a smaller scale

The history is simulated in chunks (one-on-one games among ``--players`` players with fixed skills, Gaussian
performances) and written as Parquet in podium's long form.  Each replay runs in a process of its own, so that
its peak resident memory (``ru_maxrss``) is its own: Elo with ``keep_history=False``.  The in-memory replay
reads the whole file first (``read_matches``) and is measured only where it fits (``--in-memory-limit``
matches); the streaming one reads and rates a batch at a time.  Printed: matches/s of both, their ratio, peak
memory, and the time projected for 1,000,000,000 matches at the streaming rate.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def write_history(path: Path, n_matches: int, n_players: int, chunk: int, seed: int) -> float:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    skill = rng.normal(size=n_players)
    names = np.array([f"p{i:08d}" for i in range(n_players)], dtype=object)
    began = time.perf_counter()
    with pq.ParquetWriter(path, pa.schema([("match", pa.string()), ("team", pa.int32()), ("player", pa.string()),
                                           ("rank", pa.int32()), ("weight", pa.float64()),
                                           ("time", pa.float64())])) as writer:
        for start in range(0, n_matches, chunk):
            m = min(chunk, n_matches - start)
            a = rng.integers(0, n_players, m)
            b = (a + rng.integers(1, n_players, m)) % n_players  # never a player against itself
            first = skill[a] + rng.normal(size=m) > skill[b] + rng.normal(size=m)
            ids = np.repeat(np.array([f"m{j}" for j in range(start, start + m)], dtype=object), 2)
            players = np.empty(2 * m, dtype=object)
            players[0::2], players[1::2] = names[a], names[b]
            rank = np.empty(2 * m, dtype=np.int32)
            rank[0::2], rank[1::2] = np.where(first, 0, 1), np.where(first, 1, 0)
            writer.write_table(pa.table({
                "match": pa.array(ids, pa.string()), "team": pa.array(np.tile([0, 1], m).astype(np.int32)),
                "player": pa.array(players, pa.string()), "rank": pa.array(rank),
                "weight": pa.array(np.ones(2 * m)), "time": pa.array(np.repeat(np.arange(start, start + m, dtype=float), 2)),
            }))
    return time.perf_counter() - began


def replay(path: str, how: str, batch: int) -> dict[str, float]:
    """Run in a child process: one replay, its time and this process's peak memory."""
    import podium

    league = podium.League(podium.Elo(), keep_history=False)
    began = time.perf_counter()
    if how == "stream":
        league.record_many(podium.scan_matches(path, batch_size=batch))
        read = 0.0
    else:
        matches = podium.read_matches(path)
        read = time.perf_counter() - began
        league.record_many(matches)
    seconds = time.perf_counter() - began
    if how == "stream":  # where the time goes: reading and converting the batches alone
        t0 = time.perf_counter()
        for _ in podium.scan_matches(path, batch_size=batch):
            pass
        read = time.perf_counter() - t0
    return {"matches": league.n_matches, "players": len(league), "seconds": seconds, "read": read,
            "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def child(path: Path, how: str, batch: int) -> dict[str, float]:
    out = subprocess.run([sys.executable, __file__, "--child", how, "--path", str(path), "--batch", str(batch)],
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--matches", type=int, default=100_000_000)
    parser.add_argument("--players", type=int, default=10_000_000)
    parser.add_argument("--batch", type=int, default=1_000_000)
    parser.add_argument("--in-memory-limit", type=int, default=5_000_000,
                        help="Measure the in-memory replay on the whole file only up to this many matches.")
    parser.add_argument("--dir", type=Path, default=None, help="Where to write the Parquet file (default: a temp dir).")
    parser.add_argument("--child", choices=["stream", "memory"], help=argparse.SUPPRESS)
    parser.add_argument("--path", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(replay(args.path, args.child, args.batch)))
        return
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        path = Path(tmp) / "history.parquet"
        wrote = write_history(path, args.matches, args.players, min(args.batch, 1_000_000), seed=1)
        print(f"{args.matches:,} matches among {args.players:,} players written as Parquet in {wrote:.0f} s "
              f"({path.stat().st_size / 1e6:,.0f} MB)")
        stream = child(path, "stream", args.batch)
        rate = stream["matches"] / stream["seconds"]
        print(f"streaming (batches of {args.batch:,}): {rate:,.0f} matches/s, peak memory {stream['peak_mb']:,.0f} MB"
              f" (target under 2,000 MB: {'met' if stream['peak_mb'] < 2000 else 'NOT met'}); reading and converting "
              f"the batches alone takes {stream['read']:.1f} s of its {stream['seconds']:.1f} s")
        if args.matches <= args.in_memory_limit:
            memory = child(path, "memory", args.batch)
            whole = memory["matches"] / memory["seconds"]
            replay_only = memory["matches"] / (memory["seconds"] - memory["read"])
            print(f"in memory (read_matches, then record_many): {whole:,.0f} matches/s including the read "
                  f"({memory['read']:.1f} s of {memory['seconds']:.1f} s), {replay_only:,.0f} matches/s for the "
                  f"replay alone; peak memory {memory['peak_mb']:,.0f} MB")
            print(f"streaming / in memory: {rate / whole:.2f} with the read, {rate / replay_only:.2f} against the "
                  "replay alone (target at least 0.75)")
        else:
            print(f"in memory: not measured above {args.in_memory_limit:,} matches (--in-memory-limit)")
        print(f"projected for 1,000,000,000 matches at the streaming rate: {1e9 / rate / 3600:.1f} h")


if __name__ == "__main__":
    main()
