"""Integer player ids for :class:`podium.names.NameIndex`: a direct map from the integer to its row.

A player id is a string; a column of integers (a game's account ids) names the players whose ids are the
integers' decimal digits.  Looking those up by hashing their digits costs a random read of a hash table and one
of the name it points to (about 110 ns among ten million players); a table with an entry per integer costs one
read, and the reads of many lookups overlap.  The index keeps such a map while the integers stay small next to
the number of players (:data:`DENSITY`), and otherwise looks the digits up as any name.

The map and the names agree both ways: a name added as a string that is an integer's canonical decimal form
(no sign, no leading zero) is entered in the map before the next integer lookup (:func:`parse`), and an integer
added through the map gets its digits as its name (:func:`digits`), hashed into the string table before the
next lookup by string.
"""

from __future__ import annotations

import numba as nb
import numpy as np
from numpy.typing import NDArray

__all__ = ["DENSITY", "MIN_SPAN", "digits", "find_or_add", "parse", "unmap"]

DENSITY = 4  # a map up to this many entries a player (or a slot of the batch being looked up) ...
MIN_SPAN = 1 << 24  # ... or this many, whichever is more (64 MB of int32, made only as far as the ids go)
_MAX_DIGITS = 18  # below 10**18 < 2**63: no overflow while parsing

_jit = nb.njit(cache=True, nogil=True)


@_jit
def digits(values: NDArray[np.int64]) -> tuple[NDArray[np.uint8], NDArray[np.int64]]:
    """The decimal digits of the non-negative ``values``, as UTF-8 bytes in one buffer and their offsets."""
    n = len(values)
    offsets = np.empty(n + 1, dtype=np.int64)
    offsets[0] = 0
    for i in range(n):
        v = values[i]
        k = 1
        while v >= 10:
            v //= 10
            k += 1
        offsets[i + 1] = offsets[i] + k
    data = np.empty(offsets[n], dtype=np.uint8)
    for i in range(n):
        v = values[i]
        j = offsets[i + 1] - 1
        while True:
            data[j] = 48 + v % 10
            v //= 10
            j -= 1
            if v == 0:
                break
    return data, offsets


@_jit
def parse(data: NDArray[np.uint8], offsets: NDArray[np.int64], start: int, stop: int) -> NDArray[np.int64]:
    """For rows ``start .. stop - 1`` of a name buffer, the integer each name is the canonical decimal form of
    (``0`` or digits without a leading zero, at most 18 of them), or -1."""
    out = np.full(stop - start, -1, dtype=np.int64)
    for r in range(start, stop):
        a, b = offsets[r], offsets[r + 1]
        if b <= a or b - a > _MAX_DIGITS or (data[a] == 48 and b - a > 1):
            continue
        v = 0
        ok = True
        for i in range(a, b):
            d = data[i]
            if d < 48 or d > 57:
                ok = False
                break
            v = v * 10 + (d - 48)
        if ok:
            out[r - start] = v
    return out


@_jit
def find_or_add(row_of: NDArray[np.int32], values: NDArray[np.int64], n: int, add: bool, out: NDArray[np.int64]
                ) -> tuple[int, NDArray[np.int64], int]:
    """Each value's row through ``row_of`` (-1: none) into ``out``; with ``add``, a value not there gets row ``n``
    (then ``n + 1``, ...).  Returns the number of names after, the values added (in order), and a sum of the
    early reads for the caller to drop (so that they are not left out).  The values must be within ``row_of``."""
    added = np.empty(len(values), dtype=np.int64)
    k = 0
    sink = 0
    block = 128
    for i0 in range(0, len(values), block):  # the block's reads first, together (as names._touch)
        i1 = min(i0 + block, len(values))
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
def unmap(row_of: NDArray[np.int32], values: NDArray[np.int64], rows_from: int) -> None:
    """Take the ``values`` (-1: none) out of ``row_of`` where they map to row ``rows_from`` or later."""
    for v in values:
        if 0 <= v < len(row_of) and row_of[v] >= rows_from:
            row_of[v] = -1
