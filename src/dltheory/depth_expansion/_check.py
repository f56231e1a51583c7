"""Argument checks shared by the subpackage: fail fast with the argument's name and range."""

from __future__ import annotations

import math

import numpy as np


def real(name: str, value, *, lo: float | None = None, hi: float | None = None,
         lo_open: bool = False, hi_open: bool = False) -> float:
    """``value`` as a float; ``ValueError`` naming ``name`` and the range if it is NaN,
    infinite (unless a bound is infinite) or outside [lo, hi] (open ends as requested)."""
    lo_s = "-inf" if lo is None else f"{lo:g}"
    hi_s = "inf" if hi is None else f"{hi:g}"
    rng = f"{'(' if lo_open or lo is None else '['}{lo_s}, {hi_s}{')' if hi_open or hi is None else ']'}"
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a real number in {rng}, got {value!r}") from None
    if math.isnan(v) or (math.isinf(v) and not (hi is None and v > 0)):
        raise ValueError(f"{name} must be a finite number in {rng}, got {value!r}")
    if lo is not None and (v < lo or (lo_open and v == lo)):
        raise ValueError(f"{name} must be in {rng}, got {value!r}")
    if hi is not None and (v > hi or (hi_open and v == hi)):
        raise ValueError(f"{name} must be in {rng}, got {value!r}")
    return v


def integer(name: str, value, *, lo: int | None = None, hi: int | None = None) -> int:
    """``value`` as an int; ``ValueError`` naming ``name`` and [lo, hi] otherwise."""
    rng = f"[{'-inf' if lo is None else lo}, {'inf' if hi is None else hi}]"
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        if isinstance(value, (float, np.floating)) and float(value).is_integer():
            value = int(value)
        else:
            raise ValueError(f"{name} must be an integer in {rng}, got {value!r}")
    v = int(value)
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        raise ValueError(f"{name} must be an integer in {rng}, got {v}")
    return v


def array(name: str, values, *, lo: float | None = None, hi: float | None = None,
          lo_open: bool = False) -> np.ndarray:
    """Finite float array with every entry in the range (``ValueError`` naming ``name``)."""
    a = np.asarray(values, dtype=float)
    rng = f"{'(' if lo_open else '['}{'-inf' if lo is None else lo}, {'inf' if hi is None else hi}]"
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be finite (entries in {rng}), got non-finite entries")
    if lo is not None and (np.any(a < lo) or (lo_open and np.any(a == lo))):
        raise ValueError(f"{name} entries must be in {rng}, got min {a.min():g}")
    if hi is not None and np.any(a > hi):
        raise ValueError(f"{name} entries must be in {rng}, got max {a.max():g}")
    return a
