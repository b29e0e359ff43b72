"""Integer player ids for :class:`podium.data.names.NameIndex`: the integer itself mapped to its row.

A player id is a string; a column of integers (a game's account ids) names the players whose ids are the
integers' decimal digits.  Looking those up by hashing their digits reads a random slot of the string table,
then the offsets and the bytes of the name it points to (about 110 ns among ten million players).  Two maps
serve instead, one at a time:

* while the ids are small and dense (``0 <= id <`` :data:`DENSITY` per player, or :data:`MIN_SPAN`), a direct
  array with the row of each id (``int32``, -1 for none: 40 MB for ten million players);
* from the first id that is not, for good, a hash table of ``(integer, row)`` slots (16 bytes each, at most
  :data:`MAX_LOAD` full: 268 MB for ten million), for any ``int64``: sparse 64-bit account ids, negative ones.

Either way a lookup reads one place, and the reads of a block of lookups overlap.  The direct array is the
smaller (40 MB against 268 MB for ten million ids) and was the faster on the dense ids of
``benchmarks/scale.py`` (21.3 s against 25.9 s for the hash table alone, in runs an hour apart).

The table and the names agree both ways: a name added as text that is an integer's canonical decimal form
(``0``, or an optional ``-`` and digits without a leading zero, within ``int64``: :func:`parse`) is entered before
the next integer lookup, and an integer added through the table gets its digits as its name (:func:`digits`),
hashed into the string table before the next lookup by text.  Rows enter in row order and leave latest first
(:func:`remove`), which with linear probing leaves the table as it was before they came.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ..jit import kernel

__all__ = ["DENSITY", "MAX_LOAD", "MIN_SPAN", "digits", "direct_find_or_add", "find_or_add", "insert",
           "insert_names", "new_table", "parse", "remove"]

DENSITY = 4  # the direct array: up to this many entries a player (or a slot of the batch looked up) ...
MIN_SPAN = 1 << 24  # ... or this many, whichever is more (64 MB of int32, made only as far as the ids go)
MAX_LOAD = 0.7  # the hash table: entries per slot at most (a slot is 16 bytes: 268 MB for ten million ids)
_EMPTY = -1  # the row of a free slot

_jit = kernel(cache=True, nogil=True)


def new_table(size: int) -> NDArray[np.int64]:
    """An empty table of ``size`` slots (a power of two), each ``(integer, row)``."""
    return np.full(2 * size, _EMPTY, dtype=np.int64)


@_jit
def _slot(value: int | np.int64, mask: int) -> np.int64:
    """The home slot of ``value``: the MurmurHash3 finalizer (consecutive ids land far apart)."""
    h = np.uint64(value)
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xFF51AFD7ED558CCD)
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xC4CEB9FE1A85EC53)
    h ^= h >> np.uint64(33)
    return np.int64(h & np.uint64(mask))


@_jit
def find_or_add(table: NDArray[np.int64], values: NDArray[np.int64], n: int, add: bool, out: NDArray[np.int64]
                ) -> tuple[int, NDArray[np.int64], int]:
    """Each value's row into ``out`` (-1: none); with ``add``, a value not there gets row ``n`` (then ``n + 1``,
    ...), the caller having made room for all of them.  Returns the number of names after, the values added (in
    order), and a sum of the early reads for the caller to drop (so that they are not left out)."""
    mask = len(table) // 2 - 1
    added = np.empty(len(values), dtype=np.int64)
    homes = np.empty(128, dtype=np.int64)
    k = 0
    sink = 0
    for i0 in range(0, len(values), 128):  # the block's first probes read together (as names._touch)
        i1 = min(i0 + 128, len(values))
        for i in range(i0, i1):
            homes[i - i0] = _slot(values[i], mask)
        for i in range(i0, i1):
            sink ^= table[2 * homes[i - i0]]
        for i in range(i0, i1):
            v = values[i]
            slot = homes[i - i0]
            while True:
                r = table[2 * slot + 1]
                if r == _EMPTY:
                    if add:
                        table[2 * slot] = v
                        table[2 * slot + 1] = n
                        added[k] = v
                        k += 1
                        r = n
                        n += 1
                    break
                if table[2 * slot] == v:
                    break
                slot = (slot + 1) & mask
            out[i] = r
    return n, added[:k].copy(), sink


@_jit
def direct_find_or_add(row_of: NDArray[np.int32], values: NDArray[np.int64], n: int, add: bool,
                       out: NDArray[np.int64]) -> tuple[int, NDArray[np.int64], int]:
    """:func:`find_or_add` through the direct array (the values within it)."""
    added = np.empty(len(values), dtype=np.int64)
    k = 0
    sink = 0
    for i0 in range(0, len(values), 128):  # the block's reads first, together
        i1 = min(i0 + 128, len(values))
        for i in range(i0, i1):
            sink ^= row_of[values[i]]
        for i in range(i0, i1):
            v = values[i]
            r = row_of[v]
            if r < 0 and add:
                r = n
                row_of[v] = n
                added[k] = v
                k += 1
                n += 1
            out[i] = r
    return n, added[:k].copy(), sink


@_jit
def _enter(table: NDArray[np.int64], value: int | np.int64, row: int) -> None:
    mask = len(table) // 2 - 1
    slot = _slot(value, mask)
    while table[2 * slot + 1] != _EMPTY:
        slot = (slot + 1) & mask
    table[2 * slot] = value
    table[2 * slot + 1] = row


@_jit
def insert(table: NDArray[np.int64], values: NDArray[np.int64], rows: NDArray[np.int64]) -> None:
    """Enter each ``(value, row)``, in order (values not in the table yet)."""
    for i in range(len(values)):
        _enter(table, values[i], rows[i])


@_jit
def insert_names(table: NDArray[np.int64], data: NDArray[np.uint8], offsets: NDArray[np.int64], stop: int) -> int:
    """Enter rows ``0 .. stop - 1`` whose names are integers (:func:`parse`), in row order, making no array the size
    of the names (a rebuild's memory); how many."""
    count = 0
    for r in range(stop):
        value, ok = _parse_one(data, offsets[r], offsets[r + 1])
        if ok:
            _enter(table, value, r)
            count += 1
    return count


@_jit
def remove(table: NDArray[np.int64], values: NDArray[np.int64], rows: NDArray[np.int64]) -> None:
    """Take each ``(value, row)`` out, the last first: each is then the latest entry left, which no other entry's
    probe went past, so emptying its slot leaves the table as it was before it was entered."""
    mask = len(table) // 2 - 1
    for i in range(len(values) - 1, -1, -1):
        slot = _slot(values[i], mask)
        while not (table[2 * slot + 1] == rows[i] and table[2 * slot] == values[i]):
            slot = (slot + 1) & mask
        table[2 * slot + 1] = _EMPTY


@_jit
def digits(values: NDArray[np.int64]) -> tuple[NDArray[np.uint8], NDArray[np.int64]]:
    """The decimal digits of ``values`` (``-`` first for a negative one), as UTF-8 bytes in one buffer and their
    offsets."""
    n = len(values)
    offsets = np.empty(n + 1, dtype=np.int64)
    offsets[0] = 0
    for i in range(n):
        v = values[i]
        u = np.uint64(-(v + 1)) + np.uint64(1) if v < 0 else np.uint64(v)  # |v|, INT64_MIN too
        k = 1 + (v < 0)
        while u >= np.uint64(10):
            u //= np.uint64(10)
            k += 1
        offsets[i + 1] = offsets[i] + k
    data = np.empty(offsets[n], dtype=np.uint8)
    for i in range(n):
        v = values[i]
        u = np.uint64(-(v + 1)) + np.uint64(1) if v < 0 else np.uint64(v)
        j = offsets[i + 1] - 1
        while True:
            data[j] = 48 + np.int64(u % np.uint64(10))
            u //= np.uint64(10)
            j -= 1
            if u == np.uint64(0):
                break
        if v < 0:
            data[offsets[i]] = 45
    return data, offsets


@_jit
def _parse_one(data: NDArray[np.uint8], a: int, b: int) -> tuple[np.int64, bool]:
    """The integer ``data[a:b]`` is the canonical decimal form of, and whether it is one (see :func:`parse`)."""
    negative = b > a and data[a] == 45
    a += negative
    if b <= a or b - a > 19 or (data[a] == 48 and (b - a > 1 or negative)):
        return np.int64(0), False
    u = np.uint64(0)
    for i in range(a, b):
        d = data[i]
        if d < 48 or d > 57:
            return np.int64(0), False
        u = u * np.uint64(10) + np.uint64(d - 48)  # 19 digits stay below 2**64
    if u > np.uint64(9223372036854775807) + np.uint64(negative):
        return np.int64(0), False
    return (-np.int64(u - np.uint64(1)) - 1 if negative else np.int64(u)), True


@_jit
def parse(data: NDArray[np.uint8], offsets: NDArray[np.int64], start: int, stop: int
          ) -> tuple[NDArray[np.int64], NDArray[np.bool_]]:
    """For rows ``start .. stop - 1`` of a name buffer, the integer each name is the canonical decimal form of
    (what :func:`digits` writes: ``0``, or an optional ``-`` and 1-19 digits without a leading zero, within
    ``int64``), and whether it is one."""
    values = np.zeros(stop - start, dtype=np.int64)
    ok = np.zeros(stop - start, dtype=np.bool_)
    for r in range(start, stop):
        values[r - start], ok[r - start] = _parse_one(data, offsets[r], offsets[r + 1])
    return values, ok
