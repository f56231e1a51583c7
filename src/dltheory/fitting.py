"""Fits and intervals: log-log OLS over a declared window, local slopes, bootstrap
intervals over seeds, the two-term law ``L = A x^-a + B y^-b (+ E)``, and intervals for a
mean (``mean_ci``: Student t; ``bootstrap_mean_ci``: percentile bootstrap). The one module
for both: chapters take their fits and intervals from here.

All functions take numpy arrays (or anything ``np.asarray`` accepts) and return small
frozen dataclasses. Windows are closed intervals on x; points with non-positive x or y
are dropped from log-log fits (and counted in ``n_dropped``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import optimize

from . import validation
from .validation import as_generator


@dataclass(frozen=True)
class PowerFit:
    """``y ~ C x^slope`` fitted by OLS of log y on log x.

    slope, intercept: of ``log y = intercept + slope * log x`` (natural logs);
    stderr: OLS standard error of the slope (nan with 2 points); r2: coefficient of
    determination in log space; n: points used; n_dropped: non-positive points dropped;
    window: the x-interval that was used.
    """

    slope: float
    intercept: float
    stderr: float
    r2: float
    n: int
    n_dropped: int
    window: tuple[float, float]

    @property
    def prefactor(self) -> float:
        return float(np.exp(self.intercept))

    def __call__(self, x):
        return self.prefactor * np.asarray(x, dtype=float) ** self.slope


def _window_mask(x: np.ndarray, window: tuple[float, float] | None) -> np.ndarray:
    if window is None:
        return np.ones_like(x, dtype=bool)
    lo, hi = window
    if not lo <= hi:   # also rejects NaN ends
        raise ValueError(f"window must be (lo, hi) with lo <= hi, both numbers; got {window}")
    return (x >= lo) & (x <= hi)


def loglog_fit(x, y, window: tuple[float, float] | None = None) -> PowerFit:
    """OLS slope of log y against log x over ``window`` (closed, on x)."""
    x = np.asarray(x, dtype=float).ravel()
    y = np.asarray(y, dtype=float).ravel()
    if x.shape != y.shape:
        raise ValueError(f"x and y must have the same length, got {x.shape} and {y.shape}")
    m = _window_mask(x, window) & np.isfinite(x) & np.isfinite(y)
    pos = m & (x > 0) & (y > 0)
    n_dropped = int(m.sum() - pos.sum())
    if pos.sum() < 2:
        raise ValueError(f"need >= 2 positive points in window {window}, got {int(pos.sum())}")
    lx, ly = np.log(x[pos]), np.log(y[pos])
    A = np.stack([np.ones_like(lx), lx], axis=1)
    coef, *_ = np.linalg.lstsq(A, ly, rcond=None)
    resid = ly - A @ coef
    n = lx.size
    sxx = np.sum((lx - lx.mean()) ** 2)
    stderr = float(np.sqrt(resid @ resid / (n - 2) / sxx)) if n > 2 and sxx > 0 else float("nan")
    sst = np.sum((ly - ly.mean()) ** 2)
    r2 = float(1 - resid @ resid / sst) if sst > 0 else 1.0
    w = (float(x[pos].min()), float(x[pos].max()))
    return PowerFit(float(coef[1]), float(coef[0]), stderr, r2, n, n_dropped, w)


def local_slopes(x, y) -> tuple[np.ndarray, np.ndarray]:
    """Finite-difference slopes d log y / d log x between neighbours.

    Returns (x_mid, slope) with x_mid the geometric midpoints; length len(x) - 1.
    """
    x = np.asarray(x, dtype=float).ravel()
    y = np.asarray(y, dtype=float).ravel()
    if x.size != y.size or x.size < 2:
        raise ValueError("x and y need the same length >= 2")
    order = np.argsort(x)
    lx, ly = np.log(x[order]), np.log(y[order])
    return np.exp(0.5 * (lx[1:] + lx[:-1])), np.diff(ly) / np.diff(lx)


@dataclass(frozen=True)
class BootstrapFit:
    """Slope of the seed-mean curve with a percentile bootstrap interval over seeds."""

    slope: float
    lo: float
    hi: float
    level: float
    n_seeds: int
    samples: np.ndarray

    @property
    def halfwidth(self) -> float:
        return 0.5 * (self.hi - self.lo)


def bootstrap_slope(x, ys, window: tuple[float, float] | None = None, *,
                    n_boot: int = 1000, level: float = 0.95,
                    seed: int | np.random.Generator) -> BootstrapFit:
    """Log-log slope of the mean over seeds, with a bootstrap over seeds.

    x: (P,) points; ys: (S, P) one curve per seed. Each bootstrap replicate resamples the
    S seeds with replacement, averages, and refits over ``window``.
    """
    ys = np.atleast_2d(np.asarray(ys, dtype=float))
    x = np.asarray(x, dtype=float).ravel()
    if ys.shape[1] != x.size:
        raise ValueError(f"ys must be (seeds, {x.size}), got {ys.shape}")
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    if not isinstance(n_boot, (int, np.integer)) or n_boot < 1:
        raise ValueError(f"n_boot must be an integer >= 1, got {n_boot!r}")
    rng = as_generator(seed)
    S = ys.shape[0]
    central = loglog_fit(x, ys.mean(0), window).slope
    idx = rng.integers(0, S, size=(n_boot, S))
    samples = np.array([loglog_fit(x, ys[i].mean(0), window).slope for i in idx])
    a = (1 - level) / 2
    lo, hi = np.quantile(samples, [a, 1 - a])
    return BootstrapFit(central, float(lo), float(hi), level, S, samples)


@dataclass(frozen=True)
class TwoTermFit:
    """``L(x, y) = A x^-a + B y^-b + E`` (E = 0 unless fitted)."""

    A: float
    a: float
    B: float
    b: float
    E: float
    rmse_log: float

    def __call__(self, x, y):
        x = np.asarray(x, dtype=float)
        y = np.asarray(y, dtype=float)
        return self.A * x ** (-self.a) + self.B * y ** (-self.b) + self.E


def fit_two_term(x, y, L, *, with_floor: bool = False,
                 p0: tuple[float, ...] | None = None) -> TwoTermFit:
    """Fit ``L = A x^-a + B y^-b (+ E)`` by least squares on log L (relative errors).

    x, y, L: arrays of the same shape (e.g. a grid of model size N and data size D).
    Parameters are optimised in log space (log A, a, log B, b[, log E]) so all stay
    positive; ``p0`` (A, a, B, b[, E]) seeds the search, default from one-variable fits.
    """
    x = np.asarray(x, dtype=float).ravel()
    y = np.asarray(y, dtype=float).ravel()
    L = np.asarray(L, dtype=float).ravel()
    if not (x.size == y.size == L.size):
        raise ValueError("x, y and L must have the same number of points")
    for name, v in (("x", x), ("y", y), ("L", L)):
        if not np.all(np.isfinite(v)):
            raise ValueError(f"{name} must be finite, got {int((~np.isfinite(v)).sum())} "
                             f"non-finite value(s)")
        if np.any(v <= 0):
            raise ValueError(f"{name} must be positive (the fit is on log scales), got min "
                             f"{float(v.min())}")
    n_par = 5 if with_floor else 4
    if x.size <= n_par:
        raise ValueError(f"fit_two_term fits {n_par} parameters: need more than {n_par} "
                         f"points (L), got {x.size}")
    if np.unique(x).size < 2 or np.unique(y).size < 2:
        raise ValueError("x and y must each take at least 2 distinct values (exponents a, b "
                         "are not identifiable otherwise)")
    if p0 is not None and (len(p0) != n_par or not np.all(np.isfinite(p0))
                           or min(p0[0], p0[2], *(p0[4:] or (1,))) <= 0):
        raise ValueError(f"p0 must be {n_par} finite numbers (A, a, B, b{', E' if with_floor else ''})"
                         f" with A, B{', E' if with_floor else ''} > 0, got {p0}")
    if p0 is None:
        p0 = (float(np.median(L)) * float(np.median(x)) ** 0.5, 0.5,
              float(np.median(L)) * float(np.median(y)) ** 0.5, 0.5)
        if with_floor:
            p0 = (*p0, 0.1 * float(L.min()))
    p0 = np.asarray(p0, dtype=float)
    z0 = np.array([np.log(p0[0]), p0[1], np.log(p0[2]), p0[3]]
                  + ([np.log(p0[4])] if with_floor else []))
    lL = np.log(L)

    def model(z):
        out = np.exp(z[0]) * x ** (-z[1]) + np.exp(z[2]) * y ** (-z[3])
        if with_floor:
            out = out + np.exp(z[4])
        return out

    def resid(z):
        return np.log(model(z)) - lL

    best = None
    for scale_a in (1.0, 0.3, 3.0):  # a few restarts: the problem is mildly non-convex
        z = z0.copy()
        z[1] *= scale_a
        z[3] /= scale_a
        sol = optimize.least_squares(resid, z, method="trf", max_nfev=20000)
        if best is None or sol.cost < best.cost:
            best = sol
    z = best.x
    E = float(np.exp(z[4])) if with_floor else 0.0
    rmse = float(np.sqrt(np.mean(resid(z) ** 2)))
    return TwoTermFit(float(np.exp(z[0])), float(z[1]), float(np.exp(z[2])), float(z[3]), E, rmse)


# --------------------------------------------------------------------------- intervals
def mean_ci(x, level: float = 0.95) -> tuple[float, float, float]:
    """``(mean, lo, hi)``: the mean of the samples ``x`` and its Student-t interval at
    ``level`` (at least 2 finite samples)."""
    from scipy import stats

    x = np.asarray(x, dtype=float).ravel()
    validation.real("level", level, 0.0, 1.0, lo_open=True, hi_open=True)
    if x.size < 2:
        raise ValueError(f"x: need at least 2 samples, got {x.size}")
    if not np.all(np.isfinite(x)):
        raise ValueError("x must be finite")
    m, se = x.mean(), x.std(ddof=1) / np.sqrt(x.size)
    half = stats.t.ppf(0.5 + level / 2, x.size - 1) * se
    return float(m), float(m - half), float(m + half)


def bootstrap_mean_ci(x, *, n_boot: int = 2000, level: float = 0.95,
                      seed: int | np.random.Generator) -> tuple[float, float, float]:
    """``(mean, lo, hi)``: the mean of ``x`` (n >= 2 values) and its percentile bootstrap
    interval at ``level`` from ``n_boot`` resamples drawn from ``seed``."""
    x = validation.array("x", x).ravel()
    if x.size < 2:
        raise ValueError(f"x needs >= 2 values, got {x.size}")
    validation.integer("n_boot", n_boot, lo=10)
    level = validation.real("level", level, lo=0, hi=1, lo_open=True, hi_open=True)
    rng = as_generator(seed)
    idx = rng.integers(0, x.size, size=(n_boot, x.size))
    means = x[idx].mean(1)
    a = (1 - level) / 2
    lo, hi = np.quantile(means, [a, 1 - a])
    return float(x.mean()), float(lo), float(hi)
