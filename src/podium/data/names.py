"""Player ids kept compactly: the names of a population in one UTF-8 buffer, found by a compiled hash table.

A :class:`podium.League` of ten million players keeps their ids here rather than in a ``dict`` and a ``list`` of
``str`` (about 1.5 GB): the names' bytes in one growing ``uint8`` buffer with ``int64`` offsets (row ``r`` is
``data[offsets[r]:offsets[r + 1]]``), and an open-addressing table (linear probing, at most half full) whose
entries hold a row and 23 bits of its name's hash, so that a probe reads a name only when the tags agree.  A
batch of names is looked up, and the new ones added, by one compiled call over the bytes of an Arrow string
array or of a list of ``str`` encoded at once: no Python object per name.  Names become ``str`` again only when
asked for (:meth:`NameIndex.name`, :meth:`NameIndex.names`, :meth:`NameIndex.to_list`).  Ten million names of
nine bytes take about 440 MB (the table 268 MB of it) where a ``dict`` and a ``list`` took 1.5 GB.

Memory, not arithmetic, is the cost of a lookup among millions: each reads a random slot of the table and then
the name it points to.  The lookups go in blocks of 128, each stage for the whole block in a loop of its own
(the hashes, then the slots, then the names), so that the processor waits for a block's cache misses together:
about 110 ns a lookup among ten million names on the benchmark's machine (20 ns among ten thousand, which stay
in the cache), where one lookup at a time took two to three times as long.

:class:`podium.data.strings.Strings` is a read-only sequence of ``str`` held in Arrow (the player and match ids of a
batch read from Parquet, :func:`podium.scan_matches`), which a League maps through its index without making the
``str``.  Where it holds integer ids, the index maps the integers through a table of its own
(:mod:`podium.data.decimal_ids`): one slot read a lookup, no digits hashed.

Strings are kept as UTF-8; a Python ``str`` with a lone surrogate (which UTF-8 cannot hold) is kept with the
``surrogatepass`` error handler, so it comes back as it went in.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..jit import kernel
from . import decimal_ids
from .ids import stored_form
from .strings import Strings

__all__ = ["NameIndex", "distinct", "encode", "enlarge", "grown"]

_EMPTY = -1  # a free slot; a used one holds (23 bits of the name's hash) << 40 | row
_MAX_LOAD = 0.5

_jit = kernel(cache=True, nogil=True)


def _hash_of(data: NDArray[np.uint8], start: int, stop: int) -> np.uint64:
    """FNV-1a over the bytes, then the MurmurHash3 finalizer (so that low and high bits are both well mixed)."""
    h = np.uint64(0xCBF29CE484222325)
    prime = np.uint64(0x100000001B3)
    for i in range(start, stop):
        h = (h ^ np.uint64(data[i])) * prime
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xFF51AFD7ED558CCD)
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xC4CEB9FE1A85EC53)
    h ^= h >> np.uint64(33)
    return h


_hash = _jit(_hash_of)  # interpreted, numpy's uint64 wraps as the compiled code does (its warnings are off there)


@_jit
def _same(a: NDArray[np.uint8], a0: int, a1: int, b: NDArray[np.uint8], b0: int, b1: int) -> bool:
    if a1 - a0 != b1 - b0:
        return False
    for i in range(a1 - a0):
        if a[a0 + i] != b[b0 + i]:
            return False
    return True


@_jit
def _place(table: NDArray[np.int64], h: np.uint64, row: int) -> None:
    """Put ``row`` (known not to be in the table) in the first free slot of its probe sequence."""
    mask = len(table) - 1
    slot = np.int64(h & np.uint64(mask))
    while table[slot] != -1:
        slot = (slot + 1) & mask
    table[slot] = (np.int64(h >> np.uint64(41)) << 40) | row


@_jit
def _insert_rows(table: NDArray[np.int64], data: NDArray[np.uint8], offsets: NDArray[np.int64], start: int,
                 stop: int) -> None:
    """Hash rows ``start .. stop - 1`` (distinct names, none in the table yet) into the table."""
    for r in range(start, stop):
        _place(table, _hash(data, offsets[r], offsets[r + 1]), r)


_BLOCK = 128  # queries hashed, and their first probes read, together: the reads of a block overlap in memory


@_jit
def _touch(table: NDArray[np.int64], data: NDArray[np.uint8], offsets: NDArray[np.int64], q_data: NDArray[np.uint8],
           q_offsets: Any, i0: int, i1: int, hashes: NDArray[np.uint64], starts: NDArray[np.int64]) -> int:
    """Hash queries ``i0 .. i1 - 1`` into ``hashes``, then read what their first probes will read (the table's
    slot, then the offsets and first byte of the name there), each stage for the whole block before the next, in
    loops that do nothing else: the cache misses of a block are waited for together rather than one after
    another.  Returns a sum the caller keeps (so that the reads are not left out)."""
    mask = np.uint64(len(table) - 1)
    for i in range(i0, i1):
        hashes[i - i0] = _hash(q_data, q_offsets[i], q_offsets[i + 1])
    for k in range(i1 - i0):
        starts[k] = table[np.int64(hashes[k] & mask)]
    for k in range(i1 - i0):
        entry = starts[k]
        starts[k] = offsets[entry & 0xFFFFFFFFFF] if entry != -1 else -1
    sink = 0
    for k in range(i1 - i0):
        if 0 <= starts[k] < len(data):
            sink ^= data[starts[k]]
    return sink


@_jit
def _find_or_add(table: NDArray[np.int64], data: NDArray[np.uint8], offsets: NDArray[np.int64], n: int,
                 limit: int, q_data: NDArray[np.uint8], q_offsets: Any, q_first: int, q_stop: int,
                 add: bool, out: NDArray[np.int64]) -> tuple[int, int]:
    """Look up queries ``q_first .. q_stop - 1`` (``q_data[q_offsets[i]:q_offsets[i + 1]]``), writing each one's
    row to ``out[i]``; with ``add``, a name not found gets row ``n`` (then ``n + 1``, ...), its bytes appended to
    ``data`` (whose capacity the caller made sure of), else -1.  Stops before the query that would make the
    table hold more than ``limit`` names.  Returns ``(the next query, the number of names)``."""
    mask = len(table) - 1
    end = offsets[n]
    hashes = np.empty(_BLOCK, dtype=np.uint64)
    starts = np.empty(_BLOCK, dtype=np.int64)
    sink = 0
    for i0 in range(q_first, q_stop, _BLOCK):
        i1 = min(i0 + _BLOCK, q_stop)
        sink ^= _touch(table, data, offsets, q_data, q_offsets, i0, i1, hashes, starts)
        for i in range(i0, i1):  # in order: a name added is found by the later queries of the block
            a0, a1 = q_offsets[i], q_offsets[i + 1]
            h = hashes[i - i0]
            tag = np.int64(h >> np.uint64(41))
            slot = np.int64(h & np.uint64(mask))
            found = -1
            while True:
                entry = table[slot]
                if entry == -1:
                    break
                if (entry >> 40) == tag:
                    r = entry & 0xFFFFFFFFFF
                    if _same(data, offsets[r], offsets[r + 1], q_data, a0, a1):
                        found = r
                        break
                slot = (slot + 1) & mask
            if found < 0 and add:
                if n >= limit:
                    return i, n + (sink == -12345)
                length = a1 - a0
                for j in range(length):
                    data[end + j] = q_data[a0 + j]
                end += length
                offsets[n + 1] = end
                table[slot] = (tag << 40) | n
                found = n
                n += 1
            out[i] = found
    return q_stop, n + (sink == -12345)


@_jit
def _remove_rows(table: NDArray[np.int64], data: NDArray[np.uint8], offsets: NDArray[np.int64], start: int,
                 stop: int) -> None:
    """Take rows ``stop - 1`` down to ``start`` out of the table, the last added first.  Each is then the latest
    entry left, which no other entry's probe went past: emptying its slot leaves the table as it was before it
    was added (a rehash adds the rows in order, so this holds after one too)."""
    mask = len(table) - 1
    for r in range(stop - 1, start - 1, -1):
        slot = np.int64(_hash(data, offsets[r], offsets[r + 1]) & np.uint64(mask))
        while (table[slot] & 0xFFFFFFFFFF) != r or table[slot] == -1:
            slot = (slot + 1) & mask
        table[slot] = -1


@_jit
def _dense(slot_rows: NDArray[np.int64], scratch: NDArray[np.int32]
           ) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """Number the distinct rows of ``slot_rows`` in order of first appearance: each slot's number, the slot where
    each first appears, and each one's row.  ``scratch`` (one entry a row, never cleared) remembers a row's number;
    a stale entry is told apart by the row its number stands for."""
    n = len(slot_rows)
    codes = np.empty(n, dtype=np.int64)
    first = np.empty(n, dtype=np.int64)
    code_rows = np.empty(n, dtype=np.int64)
    k = 0
    sink = 0
    for i0 in range(0, n, _BLOCK):
        i1 = min(i0 + _BLOCK, n)
        for i in range(i0, i1):  # the block's reads of scratch first, together (as in _touch)
            sink ^= scratch[slot_rows[i]]
        for i in range(i0, i1):
            r = slot_rows[i]
            c = int(scratch[r])
            if c < 0 or c >= k or code_rows[c] != r:
                c = k
                scratch[r] = k
                code_rows[k] = r
                first[k] = i
                k += 1
            codes[i] = c
    if sink == -12345:
        codes[0] = codes[0]
    return codes, first[:k].copy(), code_rows[:k].copy()


@_jit
def distinct(q_data: NDArray[np.uint8], q_offsets: Any) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Each string's number among the distinct ones, in order of first appearance, and where each first
    appears: ``dictionary_encode``, compiled (and about as fast as Arrow's, without the GIL)."""
    count = len(q_offsets) - 1
    size = 64
    while size * _MAX_LOAD < count:
        size *= 2
    table = np.full(size, -1, dtype=np.int64)
    first = np.empty(count, dtype=np.int64)  # where each distinct string first appears
    codes = np.empty(count, dtype=np.int64)
    mask = size - 1
    hashes = np.empty(_BLOCK, dtype=np.uint64)
    n = 0
    sink = 0
    entries = np.empty(_BLOCK, dtype=np.int64)
    for i0 in range(0, count, _BLOCK):  # each stage for a block at once, as in _touch
        i1 = min(i0 + _BLOCK, count)
        for i in range(i0, i1):
            hashes[i - i0] = _hash(q_data, q_offsets[i], q_offsets[i + 1])
        for k in range(i1 - i0):
            entries[k] = table[np.int64(hashes[k] & np.uint64(mask))]
        for k in range(i1 - i0):
            if entries[k] != -1:
                sink ^= first[entries[k] & 0xFFFFFFFFFF]
        for i in range(i0, i1):
            a0, a1 = q_offsets[i], q_offsets[i + 1]
            h = hashes[i - i0]
            tag = np.int64(h >> np.uint64(41))
            slot = np.int64(h & np.uint64(mask))
            while True:
                entry = table[slot]
                if entry == -1:
                    table[slot] = (tag << 40) | n
                    first[n] = i
                    codes[i] = n
                    n += 1
                    break
                if (entry >> 40) == tag:
                    c = entry & 0xFFFFFFFFFF
                    r = first[c]
                    if _same(q_data, q_offsets[r], q_offsets[r + 1], q_data, a0, a1):
                        codes[i] = c
                        break
                slot = (slot + 1) & mask
    if sink == -12345:
        first[0] = first[0]
    return codes, first[:n].copy()


def grown(size: int) -> int:
    """The next capacity of a growing array: half as much again, a quarter beyond a million entries (at ten million
    players, the slack of a League's arrays is hundreds of MB)."""
    return size + (size // 2 if size < 1 << 20 else size // 4)


_grown = grown


def enlarge(owner: Any, attribute: str, length: int, fill: Any = 0) -> None:
    """Make the array ``owner.attribute`` ``length`` long along its first axis, the new entries ``fill``: in place
    where nothing else refers to it (``ndarray.resize``, whose ``realloc`` moves a large array's pages rather than
    copying them, so that growing does not hold the old and the new array at once), else by a copy."""
    array = getattr(owner, attribute)
    old = len(array)
    if length <= old:
        return
    setattr(owner, attribute, None)  # (so that the array's one reference is this function's)
    try:
        array.resize((length, *array.shape[1:]), refcheck=True)
        grown = array
    except ValueError:  # referred to elsewhere, or not its own memory: copy
        grown = np.empty((length, *array.shape[1:]), dtype=array.dtype)
        grown[:old] = array
    finally:
        setattr(owner, attribute, array)
    grown[old:] = fill
    setattr(owner, attribute, grown)


def encode(names: Sequence[str]) -> tuple[NDArray[np.uint8], NDArray[np.int64]]:
    """The UTF-8 bytes of ``names`` in one buffer and their offsets (``len(names) + 1`` of them)."""
    if isinstance(names, Strings):
        return names.buffers()
    joined = "".join(names)
    offsets = np.zeros(len(names) + 1, dtype=np.int64)
    if joined.isascii():  # one byte a character: the lengths are the offsets' steps
        np.cumsum(np.fromiter(map(len, names), dtype=np.int64, count=len(names)), out=offsets[1:])
        return np.frombuffer(joined.encode("ascii"), dtype=np.uint8), offsets
    encoded = [name.encode("utf-8", "surrogatepass") for name in names]
    np.cumsum(np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded)), out=offsets[1:])
    return np.frombuffer(b"".join(encoded), dtype=np.uint8), offsets


class NameIndex:
    """Distinct names, numbered ``0, 1, ...`` in the order added: name -> number by a compiled hash table.

    Names added with :meth:`extend_new` (known to be new and distinct: a fresh League's first batch) are hashed
    only on the first lookup after, so a replay that never looks a name up never hashes one; a fresh index keeps
    such a list of ``str`` as it is (``_pending``) until something reads the buffers, because encoding 100,000
    names costs ~3 ms, a tenth of a million-match Elo replay (``make bench``).
    """

    __slots__ = ("_data", "_offsets", "_n", "_table", "_hashed", "_cache", "_scratch", "_pending", "_row_of",
                 "_ints", "_int_count", "_mapped")

    _CACHE = 65536  # single lookups remembered (rows never change), so that rating("x") in a loop stays cheap

    def __init__(self) -> None:
        self._data = np.zeros(1024, dtype=np.uint8)
        self._offsets = np.zeros(1025, dtype=np.int64)
        self._n = 0
        self._table = np.full(64, _EMPTY, dtype=np.int64)
        self._hashed = 0  # rows below this are in the table
        self._cache: dict[str, int] = {}
        self._scratch = np.empty(0, dtype=np.int32)  # for dense
        self._pending: list[str] | None = None  # a fresh index's names, not encoded yet (see the class docstring)
        # integer id -> row (podium.data.decimal_ids): a direct array while the ids are dense, else (for good) a hash table
        self._row_of: NDArray[np.int32] | None = np.empty(0, dtype=np.int32)
        self._ints = np.empty(0, dtype=np.int64)
        self._int_count = 0  # entries in _ints
        self._mapped = 0  # rows below this are mapped where their names are integers

    def _settle(self) -> None:
        """Encode the pending names into the buffers (before anything reads or grows them)."""
        if self._pending is not None:
            pending, self._pending, self._n = self._pending, None, 0
            self._append(pending)

    def __len__(self) -> int:
        return self._n

    @property
    def nbytes(self) -> int:
        """Memory held (the buffers' capacity)."""
        self._settle()
        return int(self._data.nbytes + self._offsets.nbytes + self._table.nbytes + self._ints.nbytes
                   + (self._row_of.nbytes if self._row_of is not None else 0))

    # -- growth ---------------------------------------------------------------------------------------------
    def _reserve(self, names: int, nbytes: int) -> None:
        """Room for ``names`` more names of ``nbytes`` bytes in all (growing by :func:`grown`)."""
        self._settle()
        need = int(self._offsets[self._n]) + nbytes
        if need > len(self._data):
            enlarge(self, "_data", max(need, _grown(len(self._data))))
        if self._n + names + 1 > len(self._offsets):
            enlarge(self, "_offsets", max(self._n + names + 1, _grown(len(self._offsets))))

    def _limit(self) -> int:
        return int(len(self._table) * _MAX_LOAD)

    def _rehash(self, names: int) -> None:
        """A table for at least ``names`` names, holding every row added so far."""
        size = len(self._table)
        while size * _MAX_LOAD < names:
            size *= 2
        if size != len(self._table):
            self._table = np.empty(0, dtype=np.int64)  # (the old one let go first: it is rebuilt from the names)
            self._table = np.full(size, _EMPTY, dtype=np.int64)
            self._hashed = 0
        if self._hashed < self._n:
            _insert_rows(self._table, self._data, self._offsets, self._hashed, self._n)
            self._hashed = self._n

    # -- adding and finding -----------------------------------------------------------------------------------
    def extend_new(self, names: Sequence[str]) -> None:
        """Add names known to be distinct and not yet here (not checked), as the next rows."""
        if self._n == 0 and self._pending is None and isinstance(names, list):
            self._pending = list(names)
            self._n = len(self._pending)
            return
        self._settle()
        self._append(names)

    def _append(self, names: Sequence[str]) -> None:
        self._append_bytes(*encode(names))

    def _append_bytes(self, data: NDArray[np.uint8], offsets: NDArray[Any]) -> None:
        """Add the names ``data[offsets[i]:offsets[i + 1]]`` as the next rows (not hashed: see :meth:`_rehash`)."""
        count = len(offsets) - 1
        if count == 0:
            return
        nbytes = int(offsets[-1] - offsets[0])
        self._reserve(count, nbytes)
        end = int(self._offsets[self._n])
        self._data[end:end + nbytes] = data[int(offsets[0]):int(offsets[-1])]
        self._offsets[self._n + 1:self._n + count + 1] = offsets[1:] - offsets[0] + end
        self._n += count

    def rows(self, names: Sequence[str], *, add: bool = True
             ) -> NDArray[np.int64]:
        """The row of each name; with ``add``, names not here are added (in order) as the next rows, else -1.

        Names held as integers (:attr:`podium.data.strings.Strings.integers`) go through the integer table
        (:mod:`podium.data.decimal_ids`), their digits never hashed.
        """
        self._settle()
        values = names.integers if isinstance(names, Strings) else None
        if values is not None:
            return self._integer_rows(values, add)
        data, offsets = encode(names)
        count = len(offsets) - 1
        out = np.empty(count, dtype=np.int64)
        if count == 0:
            return out
        if add:
            self._reserve(count, int(offsets[-1] - offsets[0]))
        self._rehash(self._n + (min(count, 1 << 16) if add else 0))
        first = 0
        while first < count:
            first, self._n = _find_or_add(self._table, self._data, self._offsets, self._n, self._limit(), data,
                                          offsets, first, count, add, out)
            self._hashed = self._n
            if first < count:  # the table is at its load limit: double it and go on
                self._rehash(int(len(self._table) * _MAX_LOAD) + 1)
        return out

    def _ints_for(self, values: NDArray[np.int64], add: bool) -> None:
        """Make the integer map ready for ``values``: the integers among the names added as text since entered,
        room made, and the direct array given up for the hash table where it cannot hold them."""
        rows = np.zeros(0, dtype=np.int64)
        found = rows
        if self._mapped < self._n:  # the integers among the names added as text since
            found, ok = decimal_ids.parse(self._data, self._offsets, self._mapped, self._n)
            rows = np.flatnonzero(ok)
            found, rows = found[rows], rows + self._mapped
        more = len(values) if add else 0
        if self._row_of is not None:
            span = max(decimal_ids.MIN_SPAN, decimal_ids.DENSITY * (self._n + more))
            lo = min(int(values.min()) if len(values) else 0, int(found.min()) if len(found) else 0)
            hi = max(int(values.max()) if len(values) else -1, int(found.max()) if len(found) else -1)
            if lo >= 0 and hi < span:
                if hi >= len(self._row_of):
                    enlarge(self, "_row_of", min(max(hi + 1, _grown(len(self._row_of))), span), -1)
                self._row_of[found] = rows
                self._mapped = self._n
                return
            self._row_of = None  # for good: the hash table, built below from every name so far
            self._ints, self._int_count, self._mapped = decimal_ids.new_table(64), 0, 0
            return self._ints_for(values, add)
        need = self._int_count + len(rows) + more
        size = len(self._ints) // 2
        if need > size * decimal_ids.MAX_LOAD:
            while need > size * decimal_ids.MAX_LOAD:
                size *= 2
            self._ints = np.empty(0, dtype=np.int64)  # (the old one let go first: rebuilt from the names, in order)
            self._ints = decimal_ids.new_table(size)
            self._int_count = decimal_ids.insert_names(self._ints, self._data, self._offsets, self._mapped)
        if len(rows):
            decimal_ids.insert(self._ints, found, rows)
            self._int_count += len(rows)
        self._mapped = self._n

    def _integer_rows(self, values: NDArray[np.int64], add: bool) -> NDArray[np.int64]:
        """:meth:`rows` of integer ids; the new ones' names are their digits (hashed for text later)."""
        self._ints_for(values, add)
        out = np.empty(len(values), dtype=np.int64)
        if self._row_of is not None:
            _, added, _ = decimal_ids.direct_find_or_add(self._row_of, values, self._n, add, out)
        else:
            _, added, _ = decimal_ids.find_or_add(self._ints, values, self._n, add, out)
        if len(added):
            self._append_bytes(*decimal_ids.digits(added))  # the rows find_or_add gave them, in order
            self._mapped = self._n
            self._int_count += len(added) if self._row_of is None else 0
        return out

    def get(self, name: str) -> int | None:
        """The row of ``name``, or None."""
        row = self._cache.get(name)
        if row is not None:
            return row
        if not isinstance(name, str) or self._n == 0:
            return None
        name = stored_form(name)  # ids are kept in NFC: a decomposed "é" finds its player
        found = int(self.rows([name], add=False)[0])
        if found < 0:
            return None
        if len(self._cache) >= self._CACHE:
            self._cache.clear()
        self._cache[name] = found
        return found

    def add(self, name: str) -> int:
        """The row of ``name``, added if new."""
        row = self.get(name)
        return row if row is not None else int(self.rows([name])[0])

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    def truncate(self, n: int) -> None:
        """Forget the names from row ``n`` on (the latest added), in time proportional to how many."""
        self._settle()
        if n < self._n:
            if self._hashed > n:
                _remove_rows(self._table, self._data, self._offsets, n, self._hashed)
            if self._mapped > n:  # the integers among the names forgotten, the latest first
                found, ok = decimal_ids.parse(self._data, self._offsets, n, self._mapped)
                rows = np.flatnonzero(ok)
                if self._row_of is not None:
                    self._row_of[found[rows]] = -1
                else:
                    decimal_ids.remove(self._ints, found[rows], rows + n)
                    self._int_count -= len(rows)
            self._n = n
            self._hashed = min(self._hashed, n)
            self._mapped = min(self._mapped, n)
            self._cache.clear()

    def dense(self, slot_rows: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
        """For the rows of one name a slot (:meth:`rows`): each slot's number among the distinct names in order of
        first appearance, the slot where each first appears, and each one's row (the numbering of
        ``dictionary_encode``, the rows of :meth:`rows` of the distinct names), with no second hash."""
        if len(self._scratch) < self._n:
            size = max(self._n, _grown(len(self._scratch)))
            self._scratch = np.empty(0, dtype=np.int32)  # (its contents do not matter: not copied)
            self._scratch = np.empty(size, dtype=np.int32)
        return _dense(slot_rows, self._scratch)

    # -- reading --------------------------------------------------------------------------------------------
    def name(self, row: int) -> str:
        self._settle()
        start, stop = int(self._offsets[row]), int(self._offsets[row + 1])
        return self._data[start:stop].tobytes().decode("utf-8", "surrogatepass")

    def names(self, rows: Any) -> list[str]:
        """The names of the given rows, in order."""
        self._settle()
        rows = np.asarray(rows, dtype=np.int64).reshape(-1)
        if len(rows) == 0:
            return []
        starts, stops = self._offsets[rows], self._offsets[rows + 1]
        lengths = stops - starts
        total = int(lengths.sum())
        ends = np.cumsum(lengths)
        picked = self._data[np.repeat(starts - (ends - lengths), lengths) + np.arange(total, dtype=np.int64)] \
            if total else np.zeros(0, np.uint8)
        return _split(picked, np.r_[0, ends])

    def to_list(self) -> list[str]:
        """Every name, in row order."""
        if self._pending is not None:
            return list(self._pending)
        return _split(self._data[:int(self._offsets[self._n])], self._offsets[:self._n + 1])

    def __iter__(self) -> Iterator[str]:
        step = 1 << 16
        for start in range(0, self._n, step):
            yield from self.names(np.arange(start, min(start + step, self._n)))


def _split(data: NDArray[np.uint8], offsets: NDArray[np.int64]) -> list[str]:
    """``data`` cut at ``offsets`` (starting at 0) into ``str``."""
    raw = data.tobytes()
    bounds = (offsets - offsets[0]).tolist()
    if raw.isascii():
        text = raw.decode("ascii")
        return [text[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
    return [raw[a:b].decode("utf-8", "surrogatepass") for a, b in zip(bounds[:-1], bounds[1:])]
