""":class:`Strings`: a read-only sequence of ``str`` held in Arrow, the player and match ids of a batch read from
Parquet or Arrow (:func:`podium.scan_matches`, :meth:`podium.Matches.from_arrow`), which a League maps through
its :class:`podium.data.names.NameIndex` without making a Python ``str`` per id.

A column of integer ids (a game's numeric account ids) is held as the integers: its ids are their decimal
strings, made only when something reads them as text, and a League's index maps the integers themselves
(:meth:`podium.data.names.NameIndex.rows`), the bytes of no name being hashed.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, overload

import numpy as np
from numpy.typing import NDArray

__all__ = ["Strings"]


class Strings(Sequence[str]):
    """A read-only sequence of ``str`` held in a pyarrow string or integer array without nulls.

    Indexing gives ``str`` (an integer's decimal digits); a slice gives a ``Strings``; it equals a list or tuple
    of the same strings.
    """

    __slots__ = ("_array", "_integers")

    def __init__(self, array: Any) -> None:
        import pyarrow as pa

        if isinstance(array, pa.ChunkedArray):
            array = array.combine_chunks()
        if array.null_count:
            raise ValueError("Strings holds no nulls.")
        self._integers: Any = None  # the ids as an Arrow integer array, where they came as integers
        self._array: Any = None
        if pa.types.is_integer(array.type):
            self._integers = array
        elif pa.types.is_string(array.type) or pa.types.is_large_string(array.type):
            self._array = array
        else:
            self._array = array.cast(pa.large_string())

    @property
    def array(self) -> Any:
        """The strings as an Arrow string array (integer ids turned into their decimal digits on first use)."""
        if self._array is None:
            import pyarrow as pa

            self._array = self._integers.cast(pa.large_string())
        return self._array

    @property
    def holds_integers(self) -> bool:
        """Whether the ids came as integers (their decimal digits: always valid player ids)."""
        return self._integers is not None

    @property
    def integers(self) -> NDArray[np.int64] | None:
        """The ids as ``int64`` where they came as integers that ``int64`` holds, else None."""
        values = self._integers
        if values is None:
            return None
        import pyarrow as pa

        if pa.types.is_uint64(values.type) and len(values):
            import pyarrow.compute as pc

            if pc.max(values).as_py() >= 2 ** 63:
                return None
        return np.asarray(values.to_numpy(zero_copy_only=False), dtype=np.int64)

    def _held(self) -> Any:
        return self._integers if self._integers is not None else self._array

    def __len__(self) -> int:
        return len(self._held())

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> Strings: ...

    def __getitem__(self, i: int | slice) -> str | Strings:
        held = self._held()
        if isinstance(i, slice):
            start, stop, step = i.indices(len(held))
            if step != 1:
                return Strings(held.take(np.arange(start, stop, step)))
            return Strings(held.slice(start, max(stop - start, 0)))
        n = len(held)
        j = int(i)
        if j < 0:
            j += n
        if not 0 <= j < n:
            raise IndexError(f"index {i} out of range for {n} strings")
        return str(held[j].as_py())

    def __iter__(self) -> Iterator[str]:
        step = 1 << 16
        for start in range(0, len(self), step):
            yield from self.array.slice(start, step).to_pylist()

    def to_list(self) -> list[str]:
        return list(self.array.to_pylist())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Strings):
            return (self._integers is not None and other._integers is not None and self._integers.equals(other._integers)) \
                or bool(self.array.equals(other.array)) or self.to_list() == other.to_list()
        if isinstance(other, (list, tuple)):
            return len(other) == len(self) and self.to_list() == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        shown = [str(x) for x in self._held().slice(0, 5).to_pylist()]
        return f"Strings({shown!r}{' ...' if len(self) > 5 else ''}, {len(self)} strings)"

    def buffers(self) -> tuple[NDArray[np.uint8], NDArray[Any]]:
        """The UTF-8 bytes and offsets (int32 or int64; ``len(self) + 1`` of them, not necessarily from 0)."""
        array = self.array
        _, offsets_buffer, data_buffer = array.buffers()
        wide = array.type.id == _large_string_id()
        offsets = np.frombuffer(offsets_buffer, dtype=np.int64 if wide else np.int32)
        offsets = offsets[array.offset:array.offset + len(array) + 1]
        data = np.frombuffer(data_buffer, dtype=np.uint8) if data_buffer is not None else np.zeros(0, np.uint8)
        return data, offsets

    def take(self, indices: Any) -> Strings:
        return Strings(self._held().take(np.asarray(indices, dtype=np.int64)))


def _large_string_id() -> int:
    import pyarrow as pa

    return int(pa.large_string().id)
