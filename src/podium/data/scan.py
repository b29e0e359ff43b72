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
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

from . import longform
from .io import _format_of, _jsonl_batches, _open_text, _Progress, _read_csv
from .match import MatchError, check_errors, skipped_summary
from .matches import Matches
from .names import NameIndex
from .readahead import read_ahead

__all__ = ["scan_matches"]


def scan_matches(path: str | os.PathLike[str], *, batch_size: int = 100_000, errors: str = "raise",
                 progress: bool = False) -> Iterator[Matches]:
    """The history at ``path``, ``batch_size`` matches at a time, in the order played.

    Reads what :func:`podium.read_matches` reads (JSONL, the CSV long form, optionally gzip; Parquet), with
    the same checks and messages: a malformed record raises :class:`MatchError` naming its line (the batches
    before it have been yielded), or with ``errors="skip"`` is left out, and a ``UserWarning`` at the end says
    how many.  Each batch is a :class:`Matches` of its own (its own player list; a Parquet batch keeps its
    player and match ids in Arrow, a read-only list of ``str`` that ``League.record_many`` maps without making
    the ``str``).  ``League.record_many`` given this iterator reads the next batch on a thread of its own while
    it replays one.

    Parameters
    ----------
    path : path-like
    batch_size : int, default 100,000
        Matches per batch: memory is about a kilobyte per match of a batch while it is read (about 100
        bytes for Parquet).
    errors : {"raise", "skip"}
    progress : bool, default False
        Show a progress bar over the bytes of the file (rich).
    """
    return _Scan(Path(path) if isinstance(path, (str, os.PathLike)) else path, batch_size, errors, progress)


class _Scan(Iterator[Matches]):
    """What :func:`scan_matches` returns: its batches, and (``_read_ahead``) the same without the closing warning
    for a League that reads them on another thread and warns on its own."""

    def __init__(self, path: Path, batch_size: int, errors: str, progress: bool) -> None:
        self._args = (path, batch_size, errors, progress)
        self._skipped: list[str] = []
        self._batches: Iterator[tuple[Matches, longform.Lookup | None]] | None = None

    def __iter__(self) -> _Scan:
        return self

    def __next__(self) -> Matches:
        if self._batches is None:
            self._batches = _batches(*self._args, self._skipped)
        try:
            return next(self._batches)[0]
        except StopIteration:
            _warn_skipped(self._args[0], self._skipped, stacklevel=3)
            self._skipped.clear()
            raise

    def close(self) -> None:
        close = getattr(self._batches, "close", None)
        if close is not None:
            close()

    def _read_ahead(self, index: NameIndex | None = None
                    ) -> tuple[Iterator[tuple[Matches, longform.Lookup | None]], Callable[[], None]]:
        """The batches, each with its players' rows in ``index`` where they were looked up as it was read, and what
        to call after the last: the warning of the skipped records.  Given a League's ``index`` (before any batch is
        read), the players of a Parquet batch are looked up in it as the batch is read
        (:func:`podium.data.longform.complete`; other formats' batches come with None): the League must then leave
        the index alone until the last batch is read."""
        if self._batches is None:
            self._batches = _batches(*self._args, self._skipped, index)
        def finish() -> None:
            _warn_skipped(self._args[0], self._skipped, stacklevel=4)
            self._skipped.clear()
        return self._batches, finish


def _batches(path: Path, batch_size: int, errors: str, progress: bool, skipped: list[str],
             index: NameIndex | None = None) -> Iterator[tuple[Matches, longform.Lookup | None]]:
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"'batch_size' must be an int >= 1. Got {batch_size!r}.")
    check_errors(errors)
    path = Path(path)
    kind = _format_of(path)
    if kind == "parquet":
        yield from _scan_parquet(path, batch_size, errors, skipped, index)
        return
    with _open_text(path, "r") as handle:
        bar = _Progress(path, handle, progress)
        try:
            if kind == "jsonl":
                batches = _jsonl_batches(handle, str(path), skipped if errors == "skip" else None, bar, batch_size)
            else:
                batches = _scan_csv(handle, str(path), batch_size, skipped if errors == "skip" else None, bar)
            for batch in batches:
                yield batch, None
        finally:
            bar.close()


def _warn_skipped(path: Path, skipped: list[str], stacklevel: int = 3) -> None:
    if skipped:
        warnings.warn(skipped_summary(str(path), skipped), UserWarning, stacklevel=stacklevel)


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


def _scan_parquet(path: Path, batch_size: int, errors: str, skipped: list[str], index: NameIndex | None = None
                  ) -> Iterator[tuple[Matches, longform.Lookup | None]]:
    """Parquet in the long form, read a record batch at a time and cut between matches into batches of exactly
    ``batch_size`` matches (the last may be shorter).  Rows are counted within each batch in messages, which
    name the batch's first match.  Only the long form's columns are read (with ``score``, ``higher_is_better``,
``advantage`` and ``match_weight`` where the file has them: each batch carries them).

    Three threads: one decodes the Parquet, one cuts and converts the batches but for their players
    (:func:`podium.data.longform.prepare`), and the caller's numbers the players (:func:`podium.data.longform.complete`,
    through the League's ``index`` where given): each a batch ahead of the next.
    """
    for table, prepared, name in read_ahead(_prepared_tables(path, batch_size), _as_is):
        lost: list[str] = []
        columns, checked, lookup = longform.complete(table, prepared, name, lost if errors == "skip" else None,
                                                     lazy=True, index=index)
        if lost:  # a batch's skipped matches make one entry of skipped (what podium.data.tables.from_arrow warns)
            skipped.append(skipped_summary(name, lost, "match(es)"))
        yield Matches._of(columns, validate=not checked), lookup


def _prepared_tables(path: Path, batch_size: int) -> Iterator[tuple[Any, longform.Prepared | None, str]]:
    """The batches' tables, each prepared (:func:`podium.data.longform.prepare`) and named for messages."""
    import numpy as np

    from .arrow import _pyarrow
    from .results import RESULT_COLUMNS
    from .tables import LONG_COLUMNS, run_starts

    pa = _pyarrow()  # (a clear message where the tables extra is not installed)
    import pyarrow.parquet as pq

    def match_starts(table: Any) -> np.ndarray:
        return run_starts(table.column("match"))

    def batch(table: Any, starts: np.ndarray) -> tuple[Any, longform.Prepared | None, str]:
        first = table.column("match")[0].as_py() if table.num_rows else None
        name = f"{path} (the batch from match {first!r})"
        return table, longform.prepare(table, name, starts), name

    file = pq.ParquetFile(path)
    names = list(file.schema_arrow.names)
    wanted = [c for c in names if c in LONG_COLUMNS + RESULT_COLUMNS] \
        if len(set(names)) == len(names) and "match" in names else None
    buffer: Any = None

    def record_batches() -> Iterator[Any]:
        # A reader a row group: one reader over the whole file keeps memory from every row group it read
        # (pyarrow 26: 25 MB a row group of 2,000,000 rows).
        for group in range(file.num_row_groups):
            # Two rows a match at least, so that most batches lie within one record batch, not copied to be cut.
            yield from file.iter_batches(batch_size=max(65_536, 2 * batch_size), row_groups=[group], columns=wanted)

    for record_batch in record_batches():
        piece = pa.Table.from_batches([record_batch])
        buffer = piece if buffer is None else pa.concat_tables([buffer, piece])
        starts = match_starts(buffer)
        while len(starts) > batch_size:  # batch_size whole matches, and the start of one more
            cut = int(starts[batch_size])
            yield batch(buffer.slice(0, cut), starts[:batch_size])
            # (without the emptied chunks, which would keep every record batch read so far alive)
            buffer = pa.Table.from_batches([b for b in buffer.slice(cut).to_batches() if b.num_rows],
                                           schema=buffer.schema)
            starts = starts[batch_size:] - cut
    if buffer is not None and buffer.num_rows:
        starts = match_starts(buffer)
        for first in range(0, len(starts), batch_size):
            stop = int(starts[first + batch_size]) if first + batch_size < len(starts) else buffer.num_rows
            yield batch(buffer.slice(int(starts[first]), stop - int(starts[first])),
                        starts[first:first + batch_size] - starts[first])


def _as_is(item: Any) -> Any:
    return item
