"""The Arrow primitives the long-form readers share (:mod:`podium.data.tables`, :mod:`podium.data.results`,
:mod:`podium.data.longform`): pyarrow imported on first use, and a column as one array, its codes, nulls and numbers.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray


def _pyarrow() -> Any:
    try:
        import pyarrow
        import pyarrow.compute  # noqa: F401  (pyarrow.compute is used through the module)
    except ImportError as error:
        raise ImportError(f"Match tables need pyarrow ({error}): pip install podium[tables]") from None
    return pyarrow


def _column(table: Any, column: str, name: str) -> Any:
    """A column as one Arrow array: dictionaries decoded, strings as large_string."""
    pa = _pyarrow()
    chunks = table.column(column)
    array = chunks.chunk(0) if chunks.num_chunks == 1 else chunks.combine_chunks()  # (which copies even one chunk)
    if pa.types.is_dictionary(array.type):
        array = array.dictionary_decode()
    if pa.types.is_string(array.type) or getattr(pa.types, "is_string_view", lambda t: False)(array.type):
        array = array.cast(pa.large_string())
    return array


def _is_text(pa: Any, kind: Any) -> bool:
    return bool(pa.types.is_large_string(kind))


def _codes(array: Any) -> tuple[NDArray[np.int64], list[Any]]:
    """Dictionary codes (first-appearance order; null -> -1) and the distinct values."""
    encoded = array.dictionary_encode()
    codes = encoded.indices.to_numpy(zero_copy_only=False)
    if encoded.indices.null_count:
        codes = np.where(np.isnan(codes), -1, codes)
    return np.asarray(codes, dtype=np.int64), encoded.dictionary.to_pylist()


def _nulls(array: Any) -> NDArray[np.bool_]:
    if array.null_count == 0:
        return np.zeros(len(array), dtype=bool)
    return np.asarray(array.is_null().to_numpy(zero_copy_only=False), dtype=bool)


def _numbers(array: Any) -> NDArray[np.float64]:
    """A numeric Arrow array as float64, null -> NaN."""
    pa = _pyarrow()
    return np.asarray(array.cast(pa.float64()).to_numpy(zero_copy_only=False), dtype=np.float64)
