"""Argument checks shared by the chapter's public functions.

Every check raises ``ValueError`` naming the argument, the valid range and the value, before
any work is done (so no scipy or numpy message reaches the caller without the argument name).
"""

from __future__ import annotations

import math

import numpy as np


def _fmt_range(lo, hi, lo_open, hi_open) -> str:
    left = "(" if lo_open else "["
    right = ")" if hi_open else "]"
    return f"{left}{lo:g}, {hi:g}{right}"


def scalar(name: str, value, lo: float = -math.inf, hi: float = math.inf, *,
           lo_open: bool = False, hi_open: bool = False) -> float:
    """``value`` as a finite float inside the interval, else ``ValueError``."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a real number in {_fmt_range(lo, hi, lo_open, hi_open)}, "
                         f"got {value!r}") from None
    bad = not math.isfinite(v) or v < lo or v > hi or (lo_open and v == lo) or (hi_open and v == hi)
    if bad:
        raise ValueError(f"{name} must lie in {_fmt_range(lo, hi, lo_open, hi_open)}, got {value!r}")
    return v


def integer(name: str, value, lo: int, hi: int | float = math.inf) -> int:
    """``value`` as an int in ``[lo, hi]``, else ``ValueError``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        if not (isinstance(value, (float, np.floating)) and float(value).is_integer()):
            raise ValueError(f"{name} must be an integer in [{lo}, {hi}], got {value!r}")
    v = int(value)
    if v < lo or v > hi:
        raise ValueError(f"{name} must be an integer in [{lo}, {hi}], got {value!r}")
    return v


def array(name: str, value, lo: float = -math.inf, hi: float = math.inf, *,
          lo_open: bool = False, hi_open: bool = False) -> np.ndarray:
    """``value`` as a finite float array whose entries lie in the interval."""
    try:
        a = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be real numbers in {_fmt_range(lo, hi, lo_open, hi_open)}, "
                         f"got {value!r}") from None
    if a.size:
        bad = ~np.isfinite(a) | (a < lo) | (a > hi)
        if lo_open:
            bad |= a == lo
        if hi_open:
            bad |= a == hi
        if bad.any():
            first = a[bad].ravel()[0]
            raise ValueError(f"{name} must lie in {_fmt_range(lo, hi, lo_open, hi_open)} "
                             f"(entrywise), got {first!r}")
    return a


def choice(name: str, value, options) -> object:
    if value not in options:
        raise ValueError(f"{name} must be one of {tuple(options)}, got {value!r}")
    return value
