"""The ``math`` functions the kernels use, with the IEEE results numba's compiled ``math`` gives where Python's
raises: ``log(0) = -inf``, ``log(-1) = nan``, ``exp(1000) = inf`` (C's ``libm``, which numba calls).

Interpreted kernels see this module as ``math`` (:mod:`podium.jit`); everything else is :mod:`math` itself.
"""

from __future__ import annotations

import builtins
import ctypes
import ctypes.util
import math
import types
from collections.abc import Callable
from typing import Any

import numpy as np
from math import (ceil, comb, e, erf, erfc, factorial, floor, fsum, gamma, inf, isfinite, isinf, isnan,  # noqa: F401
                  nan, pi, tanh, tau, trunc)

__all__ = ["numpy", "power", "acosh", "asinh", "atanh", "cosh", "exp", "expm1", "hypot", "lgamma", "log", "log10",
           "log1p", "log2", "pow", "sinh", "sqrt"]


def _log(f: Callable[[float], float], x: float) -> float:
    try:
        return f(x)
    except ValueError:  # zero or below the domain
        return -inf if x == 0.0 else nan


def log(x: float) -> float:
    """``ln x``; ``-inf`` at 0 and ``nan`` below."""
    return _log(math.log, x) if x <= 0.0 else math.log(x)


def log2(x: float) -> float:
    """``log2 x``; ``-inf`` at 0 and ``nan`` below."""
    return _log(math.log2, x) if x <= 0.0 else math.log2(x)


def log10(x: float) -> float:
    """``log10 x``; ``-inf`` at 0 and ``nan`` below."""
    return _log(math.log10, x) if x <= 0.0 else math.log10(x)


def log1p(x: float) -> float:
    """``ln(1 + x)``; ``-inf`` at -1 and ``nan`` below."""
    if x > -1.0:
        return math.log1p(x)
    return -inf if x == -1.0 else nan


def sqrt(x: float) -> float:
    """``sqrt x``; ``nan`` below 0."""
    return math.sqrt(x) if x >= 0.0 else nan


def _overflow(f: Callable[..., float], x: float, *more: float) -> float:
    try:
        return f(x, *more)
    except OverflowError:
        return inf


def exp(x: float) -> float:
    """``e**x``; ``inf`` past the largest double."""
    return math.exp(x) if x < 709.0 else _overflow(math.exp, x)


def expm1(x: float) -> float:
    """``e**x - 1``; ``inf`` past the largest double."""
    return math.expm1(x) if x < 709.0 else _overflow(math.expm1, x)


def sinh(x: float) -> float:
    """``sinh x``; ``+-inf`` past the largest double."""
    try:
        return math.sinh(x)
    except OverflowError:
        return math.copysign(inf, x)


def cosh(x: float) -> float:
    """``cosh x``; ``inf`` past the largest double."""
    return _overflow(math.cosh, x)


def hypot(x: float, y: float) -> float:
    """``sqrt(x**2 + y**2)`` as numba and numpy compute it (Python's ``math.hypot`` is its own)."""
    return float(np.hypot(x, y))


def pow(x: float, y: float) -> float:
    """``x**y``; ``inf`` past the largest double, ``nan`` outside the domain."""
    try:
        return math.pow(x, y)
    except OverflowError:
        return inf
    except ValueError:  # a pole (0 to a negative power: signed for an odd integer one) or a negative base
        if x == 0.0:
            return math.copysign(inf, x) if y % 2.0 == 1.0 else inf
        return nan


def _libm_lgamma() -> Callable[[float], float] | None:
    """C's ``lgamma`` (numba calls it; Python's ``math.lgamma`` is its own and differs in the last digits)."""
    try:
        library = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
        function = library.lgamma
    except (OSError, AttributeError):  # pragma: no cover  (no C library to call: Python's, a few units off)
        return None
    function.restype, function.argtypes = ctypes.c_double, [ctypes.c_double]
    return function


_lgamma = _libm_lgamma()


def lgamma(x: float) -> float:
    """``ln |Gamma(x)|`` (C's); ``inf`` at the poles (0, -1, -2, ...)."""
    if _lgamma is not None:
        return float(_lgamma(x))
    try:
        return math.lgamma(x)
    except (ValueError, OverflowError):
        return inf


def atanh(x: float) -> float:
    """``artanh x``; ``+-inf`` at +-1 and ``nan`` beyond."""
    if -1.0 < x < 1.0:
        return math.atanh(x)
    return math.copysign(inf, x) if abs(x) == 1.0 else nan


def asinh(x: float) -> float:
    """``arsinh x``."""
    return math.asinh(x)


def acosh(x: float) -> float:
    """``arcosh x``; ``nan`` below 1."""
    return math.acosh(x) if x >= 1.0 else nan


_INT = (int, np.integer)
_WRAP = 1 << 64


def power(a: Any, b: Any) -> Any:
    """``a ** b`` as numba compiles it (the interpreted kernels' ``**``).

    An integer exponent is applied by repeated squaring (``1 / r`` for a negative one; the generic ``pow`` past
    ``2**16``), an integer base and exponent give a 64-bit integer (0 for a negative exponent unless the base is
    +-1), and a real exponent is C's ``pow`` (``nan`` for a negative base, where Python gives a complex number).
    """
    if isinstance(b, _INT) and not isinstance(b, bool):
        n = int(b)
        if isinstance(a, _INT) and not isinstance(a, bool):
            base = int(a)
            if n < 0:
                if base == 0:
                    raise ZeroDivisionError("0 cannot be raised to a negative power")
                return base if base in (1, -1) and n % 2 else (1 if base in (1, -1) else 0)
            return ((builtins.pow(base, n, _WRAP) + (1 << 63)) % _WRAP) - (1 << 63)  # int64 wraps
        x = float(a)
        e = -n if n < 0 else n
        if e > 0x10000:
            return pow(x, float(n))
        r = 1.0
        while e:
            if e & 1:
                r *= x
            e >>= 1
            if e:
                x *= x
        return 1.0 / r if n < 0 else r
    return pow(float(a), float(b))


def _on_scalars(name: str, scalar: Callable[[float], float]) -> Callable[[Any], Any]:
    def f(x: Any) -> Any:
        if isinstance(x, np.ndarray):
            return np.array([scalar(v) for v in x.ravel().tolist()], dtype=np.float64).reshape(x.shape)
        return scalar(x)

    f.__name__ = name
    f.__doc__ = f"``numpy.{name}`` with C's ``{name}`` for each element, as numba computes it"
    return f


numpy = types.ModuleType("podium.jit.ieee.numpy", "numpy as the interpreted kernels see it: its exp and log families "
                                               "computed by C's libm, as numba's compiled numpy calls are.")
for _name in ("exp", "expm1", "log", "log1p", "log2", "log10", "sinh", "cosh", "tanh", "arcsinh", "arctanh"):
    setattr(numpy, _name, _on_scalars(_name, globals()[{"arcsinh": "asinh", "arctanh": "atanh"}.get(_name, _name)]))
setattr(numpy, "__getattr__", lambda name: getattr(np, name))  # everything else is numpy's


def __getattr__(name: str) -> object:
    """Any other name of :mod:`math`, as it is (those that never raise on a double)."""
    return getattr(math, name)
