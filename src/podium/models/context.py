"""One advantage per context: the home side's edge in each league, a surface's, a venue's (issue 31).

A model's ``advantage`` is a number (one edge everywhere) or a :class:`ByContext`, which reads each match's context
from a key of its ``meta`` (``"surface"``, ``"league"``) and gives each context its own value, with a ``default``
for the contexts it does not list and the matches that have none.  What the value multiplies is unchanged: the
advantage a match records for a team (1 for the home side); a match's teams are shifted by
``value(context_m) * a_t`` (``docs/design.md``, "What a result says beyond the order").
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..data.matches import Matches

__all__ = ["ByContext", "MIN_CONTEXT_MATCHES", "MIN_CONTEXT_SHARE"]

#: :func:`podium.fit` gives a context its own advantage when at least this many matches of the history, and
#: :data:`MIN_CONTEXT_SHARE` of those that record an advantage, record one in it; rarer contexts share the default
#: (a value fitted on a handful of matches is noise, and a search over a hundred values would not end).
MIN_CONTEXT_MATCHES = 30
MIN_CONTEXT_SHARE = 0.02


def _context_name(value: Any) -> str | None:
    """A meta value as a context: strings as they are, other values (numbers, booleans) as their text; None and
    NaN are no context."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return value if isinstance(value, str) else str(value)


class ByContext:
    """An advantage per context, for a model's ``advantage`` hyperparameter.

    Parameters
    ----------
    key : str
        The ``meta`` key that names a match's context (``Match(..., meta={"surface": "Clay"})``).
    values : mapping of str to float, optional
        Each context's advantage, in the model's rating units.
    default : float, default 0
        The advantage in a context not in ``values``, and in a match without the key.

    Examples
    --------
    >>> import podium
    >>> elo = podium.Elo(advantage=podium.ByContext("surface", {"Clay": 20.0, "Grass": 60.0}, default=35.0))
    >>> elo.advantage.value("Grass"), elo.advantage.value("Carpet")
    (60.0, 35.0)
    """

    __slots__ = ("key", "_values", "default")

    def __init__(self, key: str, values: Mapping[str, float] | None = None, *, default: float = 0.0) -> None:
        if not isinstance(key, str) or not key:
            raise ValueError(f"ByContext: 'key' must be a non-empty string (a meta key). Got {key!r:.80}.")
        if values is not None and not isinstance(values, Mapping):
            raise ValueError(f"ByContext: 'values' must be a mapping of context to advantage. Got {values!r:.80}.")
        checked: dict[str, float] = {}
        for name, value in (values or {}).items():
            if not isinstance(name, str):
                raise ValueError(f"ByContext: each context must be a string. Got {name!r:.80}.")
            checked[name] = _finite(f"values[{name!r}]", value)
        self.key = key
        self._values = tuple(sorted(checked.items()))
        self.default = _finite("default", default)

    @property
    def values(self) -> dict[str, float]:
        """Each listed context's advantage."""
        return dict(self._values)

    def value(self, context: Any) -> float:
        """The advantage in ``context`` (the default when it is not listed, or None)."""
        name = _context_name(context)
        for k, v in self._values:
            if k == name:
                return v
        return self.default

    def per_match(self, matches: Matches) -> NDArray[np.float64]:
        """Each match's advantage, from its ``meta[key]`` (the default where a match has no meta or no key)."""
        out = np.full(len(matches), self.default)
        if matches.meta is None or not self._values:
            return out
        table = dict(self._values)
        key = self.key
        for m, meta in enumerate(matches.meta):
            if meta:
                name = _context_name(meta.get(key))
                if name is not None and name in table:
                    out[m] = table[name]
        return out

    def contexts(self, matches: Matches, least: int | None = None, *, leaving_out: Sequence[str | None] = (),
                 unnamed: bool = False) -> list[str | None]:
        """The contexts of ``matches`` in which at least ``least`` matches record an advantage, most frequent
        first, less those in ``leaving_out``; with ``unnamed``, None stands for the matches without a context.
        ``least`` None: :data:`MIN_CONTEXT_MATCHES` and :data:`MIN_CONTEXT_SHARE` of the matches that record an
        advantage (the contexts :func:`podium.fit` gives their own value)."""
        if matches.advantage is None or not len(matches):
            return []
        recorded = np.add.reduceat(np.abs(matches.advantage), matches.match_start[:-1]) > 0
        counts: dict[str | None, int] = {}
        metas = matches.meta if matches.meta is not None else [None] * len(matches)
        for meta, has in zip(metas, recorded.tolist()):
            if has:
                name = _context_name(meta.get(self.key)) if meta else None
                if name is not None or unnamed:
                    counts[name] = counts.get(name, 0) + 1
        if least is None:
            least = max(MIN_CONTEXT_MATCHES, math.ceil(MIN_CONTEXT_SHARE * int(recorded.sum())))
        skip = set(leaving_out)
        ordered = sorted(counts.items(), key=lambda kv: (-kv[1], "" if kv[0] is None else kv[0]))
        return [k for k, c in ordered if c >= least and k not in skip]

    def with_value(self, context: str | None, value: float) -> ByContext:
        """A copy with ``context``'s advantage (None: the default) set to ``value``."""
        if context is None:
            return ByContext(self.key, self.values, default=value)
        return ByContext(self.key, {**self.values, context: value}, default=self.default)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, ByContext) and (self.key, self._values, self.default)
                == (other.key, other._values, other.default))

    def __hash__(self) -> int:
        return hash((self.key, self._values, self.default))

    def __repr__(self) -> str:
        return f"ByContext({self.key!r}, {self.values!r}, default={self.default!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return _rebuild, (self.key, self.values, self.default)


def _rebuild(key: str, values: dict[str, float], default: float) -> ByContext:
    return ByContext(key, values, default=default)


def _finite(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) or not math.isfinite(value):
        raise ValueError(f"ByContext: {name!r} must be a finite number. Got {value!r:.80}.")
    return float(value)
