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
from typing import IO

from .io import _format_of, _open_text, _parse_record, _Progress, _read_csv
from .match import MatchError, Matches, _Packer

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
        yield from _scan_parquet(path, batch_size)
        return
    with _open_text(path, "r") as handle:
        bar = _Progress(path, handle, progress)
        try:
            if kind == "jsonl":
                yield from _scan_jsonl(handle, str(path), batch_size, skipped if errors == "skip" else None, bar)
            else:
                yield from _scan_csv(handle, str(path), batch_size, skipped if errors == "skip" else None, bar)
        finally:
            bar.close()
    if skipped:
        shown = "; ".join(skipped[:3])
        warnings.warn(f"{path}: skipped {len(skipped)} malformed record(s): {shown}{' ...' if len(skipped) > 3 else ''}",
                      UserWarning, stacklevel=2)


def _scan_jsonl(handle: IO[str], name: str, batch_size: int, skipped: list[str] | None,
                bar: _Progress) -> Iterator[Matches]:
    builder = _Packer()
    for number, line in enumerate(handle, start=1):
        if number % 8192 == 0:
            bar.update()
        try:
            _parse_record(builder, line, number, name)
        except MatchError as error:
            if skipped is None:
                raise
            skipped.append(str(error))
            continue
        if len(builder.ids) >= batch_size:
            yield _built(builder, name)
            builder = _Packer()
    if builder.ids:
        yield _built(builder, name)


def _built(builder: _Packer, name: str) -> Matches:
    try:
        return builder.build()
    except MatchError as error:
        raise MatchError(f"{name}: {error}") from None


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


def _scan_parquet(path: Path, batch_size: int) -> Iterator[Matches]:
    """Parquet in the long form, row groups read as they come; a match cut by a batch's end is carried over."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:  # pragma: no cover - the tables extra
        raise ImportError("Reading Parquet needs pyarrow: pip install 'podium[tables]'.") from None
    from .tables import from_arrow

    source = pq.ParquetFile(path)
    carry: pa.Table | None = None
    pending: list[pa.Table] = []
    matches = 0
    for record_batch in source.iter_batches(batch_size=max(1024, batch_size * 2)):
        table = pa.Table.from_batches([record_batch])
        if carry is not None:
            table = pa.concat_tables([carry, table])
            carry = None
        ids = table.column("match").to_pylist()
        if not ids:
            continue
        # Hold back the last match (it may go on in the next batch).
        cut = len(ids) - 1
        while cut > 0 and ids[cut - 1] == ids[-1]:
            cut -= 1
        carry = table.slice(cut)
        table = table.slice(0, cut)
        if table.num_rows:
            pending.append(table)
            matches += _count_runs(ids[:cut])
        if matches >= batch_size:
            yield from_arrow(pa.concat_tables(pending))
            pending, matches = [], 0
    if carry is not None and carry.num_rows:
        pending.append(carry)
    if pending:
        yield from_arrow(pa.concat_tables(pending))


def _count_runs(ids: list[object]) -> int:
    return sum(1 for i, value in enumerate(ids) if i == 0 or value != ids[i - 1])
