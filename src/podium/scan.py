"""Histories larger than memory: :func:`scan_matches` reads one in columnar batches, in order.

``League.record_many`` takes the batches as they come, so that a replay holds the players' state and a batch
or two, never the whole history::

    league = podium.League(podium.Elo(), keep_history=False)
    league.record_many(podium.scan_matches("year.jsonl.gz", batch_size=200_000), progress=True)

A league that keeps history (``keep_history=True``, the default) keeps every batch's ratings too; for a
history larger than memory, use ``keep_history=False``.
"""

from __future__ import annotations

import csv
import io
import os
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from .io import _format_of, _jsonl_batches, _open_text, _Progress, _read_csv
from .match import MatchError
from .matches import Matches

__all__ = ["scan_matches"]


def scan_matches(path: str | os.PathLike[str], *, batch_size: int = 100_000, errors: str = "raise",
                 progress: bool = False) -> Iterator[Matches]:
    """The history at ``path``, ``batch_size`` matches at a time, in the order played.

    Reads what :func:`podium.read_matches` reads (JSONL, the CSV long form, optionally gzip; Parquet), with
    the same checks and messages: a malformed record raises :class:`MatchError` naming its line (the batches
    before it have been yielded), or with ``errors="skip"`` is left out, and a ``UserWarning`` at the end says
    how many.  Each batch is a :class:`Matches` of its own (its own player list).

    Parameters
    ----------
    path : path-like
    batch_size : int, default 100,000
        Matches per batch: memory is about a kilobyte per match of a batch while it is read.
    errors : {"raise", "skip"}
    progress : bool, default False
        Show a progress bar over the bytes of the file (rich).
    """
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"'batch_size' must be an int >= 1. Got {batch_size!r}.")
    if errors not in ("raise", "skip"):
        raise ValueError(f"'errors' must be 'raise' or 'skip'. Got {errors!r}.")
    path = Path(path)
    kind = _format_of(path)
    skipped: list[str] = []
    if kind == "parquet":
        yield from _scan_parquet(path, batch_size, errors, skipped)
        _warn_skipped(path, skipped)
        return
    with _open_text(path, "r") as handle:
        bar = _Progress(path, handle, progress)
        try:
            if kind == "jsonl":
                yield from _jsonl_batches(handle, str(path), skipped if errors == "skip" else None, bar, batch_size)
            else:
                yield from _scan_csv(handle, str(path), batch_size, skipped if errors == "skip" else None, bar)
        finally:
            bar.close()
    _warn_skipped(path, skipped)


def _warn_skipped(path: Path, skipped: list[str]) -> None:
    if skipped:
        shown = "; ".join(skipped[:3])
        warnings.warn(f"{path}: skipped {len(skipped)} malformed record(s): {shown}{' ...' if len(skipped) > 3 else ''}",
                      UserWarning, stacklevel=3)


def _scan_csv(handle: IO[str], name: str, batch_size: int, skipped: list[str] | None, bar: _Progress
              ) -> Iterator[Matches]:
    """The long form, cut between matches: each batch's rows (with the header) read by the CSV reader."""
    reader = csv.reader(handle)
    header = next(reader, None)
    if header is None:
        return
    match_column = [h.strip() for h in header].index("match") if "match" in [h.strip() for h in header] else None
    if match_column is None:  # let the reader say what is missing
        _read_csv(io.StringIO(",".join(header) + "\n"), name)
        return
    rows: list[list[str]] = []
    matches = 0
    last: str | None = None
    first_line = 2
    for number, row in enumerate(reader, start=2):
        if number % 8192 == 0:
            bar.update()
        key = row[match_column] if len(row) > match_column else None
        if key != last:
            if matches >= batch_size:
                yield _csv_batch(header, rows, name, first_line, skipped)
                rows, matches, first_line = [], 0, number
            matches += 1
            last = key
        rows.append(row)
    if rows:
        yield _csv_batch(header, rows, name, first_line, skipped)


def _csv_batch(header: list[str], rows: list[list[str]], name: str, first_line: int, skipped: list[str] | None
               ) -> Matches:
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    text.seek(0)
    try:
        return _read_csv(text, name, skipped)
    except MatchError as error:  # line numbers within the batch: say where the batch starts
        raise MatchError(f"{error} (in the batch of rows from line {first_line} on)") from None


def _scan_parquet(path: Path, batch_size: int, errors: str, skipped: list[str]) -> Iterator[Matches]:
    """Parquet in the long form, read a record batch at a time and cut between matches into batches of exactly
    ``batch_size`` matches (the last may be shorter).  Rows are counted within each batch in messages, which
    name the batch's first match."""
    import numpy as np

    from .tables import _pyarrow

    pa = _pyarrow()  # (a clear message where the tables extra is not installed)
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    def run_starts(table: Any) -> np.ndarray:
        column = table.column("match")
        if table.num_rows < 2:
            return np.zeros(min(1, table.num_rows), dtype=np.int64)
        changed = pc.not_equal(column.slice(1), column.slice(0, table.num_rows - 1))
        return np.r_[0, np.flatnonzero(changed.to_numpy(zero_copy_only=False)) + 1].astype(np.int64)

    buffer: Any = None
    for record_batch in pq.ParquetFile(path).iter_batches(batch_size=max(65_536, 4 * batch_size)):
        piece = pa.Table.from_batches([record_batch])
        buffer = piece if buffer is None else pa.concat_tables([buffer, piece])
        starts = run_starts(buffer)
        while len(starts) > batch_size:  # batch_size whole matches, and the start of one more
            cut = int(starts[batch_size])
            yield _from_table(buffer.slice(0, cut), path, errors, skipped)
            buffer = buffer.slice(cut)
            starts = starts[batch_size:] - cut
    if buffer is not None and buffer.num_rows:
        starts = run_starts(buffer)
        for first in range(0, len(starts), batch_size):
            stop = int(starts[first + batch_size]) if first + batch_size < len(starts) else buffer.num_rows
            yield _from_table(buffer.slice(int(starts[first]), stop - int(starts[first])), path, errors, skipped)


def _from_table(table: object, path: Path, errors: str, skipped: list[str]) -> Matches:
    first = table.column("match")[0].as_py() if table.num_rows else None  # type: ignore[attr-defined]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UserWarning)
        batch = Matches.from_arrow(table, errors=errors, name=f"{path} (the batch from match {first!r})")
    skipped.extend(str(w.message) for w in caught)
    return batch

