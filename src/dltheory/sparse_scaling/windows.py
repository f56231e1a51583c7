"""The windows of chapter 3: data sizes, grids and regime flags that follow the knobs.

Data sizes are placed through the number of observed coordinates, D(K) from the exact Heaps
sum E K(D) = sum_j [1 - (1 - p_j)^D], so that K(D) ~ D^(1/(a1+1)) lands in the same range at
every alpha1, and are capped by the Config's size fields. Where a scale cannot reach the
regime a claim needs, a ``valid_*`` flag says so and the chapter reports the claim as
INCONCLUSIVE with the reason. ``Config`` inherits :class:`Windows`; the fields it reads are
the Config's.
"""

from __future__ import annotations

import functools
import math

import numpy as np


@functools.lru_cache(maxsize=64)
def _heaps_table(alpha1: float) -> tuple[np.ndarray, np.ndarray]:
    """(log D, E K(D)) on a log grid for M = infinity (exact head sum + tail integral)."""
    from .theory import expected_observed_inf

    logD = np.linspace(0.0, np.log(1e20), 161)
    return logD, expected_observed_inf(alpha1, np.exp(logD))


def heaps_K(alpha1: float, D) -> np.ndarray:
    """E K(D) = sum_j [1 - (1 - p_j)^D] for M = infinity (interpolated exact sum)."""
    logD, K = _heaps_table(float(alpha1))
    return np.exp(np.interp(np.log(np.asarray(D, dtype=float)), logD, np.log(K)))


def heaps_D(alpha1: float, K) -> np.ndarray:
    """The data size at which E K(D) = K (inverse of :func:`heaps_K`)."""
    logD, Ks = _heaps_table(float(alpha1))
    return np.exp(np.interp(np.log(np.asarray(K, dtype=float)), np.log(Ks), logD))


def sparse_D(alpha1: float) -> float:
    """Smallest D with E K(D) <= 0.3 D (the sparse regime, where rank X ~ K(D))."""
    logD, K = _heaps_table(float(alpha1))
    ok = np.flatnonzero(K <= 0.3 * np.exp(logD))
    return float(np.exp(logD[ok[0]])) if ok.size else float("inf")


def _geo_ints(lo: float, hi: float, n: int) -> tuple[int, ...]:
    return tuple(int(v) for v in np.unique(np.round(np.geomspace(lo, hi, n)).astype(int)))


class Windows:
    """Derived grids and regime flags of the sparse-scaling Config (a mixin: reads its fields)."""

    @property
    def d_moments(self) -> int:
        """Enough rows for p_j D >= 2500 (2% relative error) at j = 20, capped."""
        return int(min(self.d_moments_cap, 2500 * 20 ** (self.alpha1 + 1)))

    @property
    def heaps_trials_used(self) -> int:
        """Heaps draws, capped at 4e6 sampled rows in all."""
        return int(max(20, min(self.heaps_trials, 4e6 // self.d_heaps)))

    def rank_draws_at(self, D: float) -> int:
        """Data sets per D for the mean rank, capped at 4e6 sampled rows per D."""
        return int(max(4, min(self.rank_draws, 4e6 // max(D, 1))))

    @property
    def moment_coords(self) -> int:
        """Coordinates whose second moment is checked: p_j D >= 2500, at most 20."""
        j = int((self.d_moments / 2500.0) ** (1 / (self.alpha1 + 1)) + 1e-9)
        return int(min(20, max(1, j)))

    @property
    def d_heaps(self) -> int:
        """D where the sampled K is compared with E K: about 30 coordinates observed."""
        return int(min(self.d_cap, max(100.0, float(heaps_D(self.alpha1, 30.0)))))

    @property
    def n_grid(self) -> tuple:
        return _geo_ints(self.n_lo, self.n_hi, self.n_points)

    @property
    def floor_window(self) -> tuple:
        """Exact-sum D window for the slope of E T(D): K from k_floor[0] to k_floor[1]."""
        return tuple(float(v) for v in heaps_D(self.alpha1, self.k_floor))

    @property
    def m_floor(self) -> int:
        """Truncation for the exact sums: D_max p_M << 1 and the cut tail negligible."""
        return int(min(4_000_000, max(200_000, 300 * self.k_floor[1])))

    @property
    def d_sampled(self) -> tuple:
        """Sampled D grid (N = infinity loss): up to K = k_cap or D = d_cap, 2 decades, or
        from K = k_asym_window where that is higher (at least 1.5 decades)."""
        hi = float(min(self.d_cap, heaps_D(self.alpha1, self.k_cap)))
        lo = max(30.0, min(hi / 30.0, max(hi / 100.0, float(heaps_D(self.alpha1, self.k_asym_window)))))
        return _geo_ints(lo, hi, self.d_points)

    @property
    def valid_alpha_d_window(self) -> bool:
        """The sampled N = inf loss is the never-seen floor only in the sparse regime."""
        return self.sparse_regime(self.d_sampled[0])

    @property
    def sampled_is_asymptotic(self) -> bool:
        """The sampled window starts where K(D) >= k_asym_window (asymptotic regime)."""
        return bool(heaps_K(self.alpha1, self.d_sampled[0]) >= self.k_asym_window)

    @property
    def m_d(self) -> int:
        """M for the sampled alpha_D: >= 30 K(D_max) (coverage must not saturate)."""
        k = float(heaps_K(self.alpha1, self.d_sampled[-1]))
        return int(max(16384, 2 ** math.ceil(math.log2(30 * k))))

    @property
    def d_dd(self) -> tuple:
        """D values whose rank X spans k_dd (capped by d_cap_dd)."""
        lo = float(max(30.0, heaps_D(self.alpha1, self.k_dd[0])))
        hi = float(max(min(self.d_cap_dd, heaps_D(self.alpha1, self.k_dd[1])), lo))
        return _geo_ints(lo, hi, self.dd_points)

    @property
    def d_dense_peak(self) -> tuple:
        """Dense data sizes for the N = D peak: the four largest dense_octaves whose D-th
        direction the min-norm fit resolves (D^-(alpha_N + 3)/2 >= dense_resolve)."""
        ok = [D for D in self.dense_octaves if D ** (-(self.alpha_N + 3) / 2) >= self.dense_resolve]
        return tuple(ok[-4:])

    def dense_draws_at(self, D: int) -> int:
        return int(max(self.dense_draws, -(-self.dense_rows // int(D))))

    @property
    def n_dense(self) -> tuple:
        """N grid of the dense peak: 8 points per octave (every octave D on it) from D_min/2 to
        2 D_max, and every integer within 2 of each D."""
        d = self.d_dense_peak
        k = np.arange(8 * np.log2(d[0] / 2), 8 * np.log2(2 * max(d)) + 1)
        g = np.round(2.0 ** (k / 8)).astype(int)
        return tuple(int(v) for v in np.unique(np.concatenate([g] + [np.arange(D - 2, D + 3) for D in d])))

    @property
    def dense_mus(self) -> tuple:
        lo, hi = self.dense_mus_decades
        return (0.0,) + tuple(float(v) for v in 10.0 ** np.arange(lo, hi + 1e-9, 0.5))

    def sparse_regime(self, D: float) -> bool:
        """K(D) <= 0.3 D: most rows are distinct in their rare coordinates, rank X ~ K(D).

        Below this (small alpha1 at affordable D) the data are dense-like: rank X ~ D < K(D).
        """
        return bool(heaps_K(self.alpha1, D) <= 0.3 * D)

    @property
    def valid_dd(self) -> bool:
        """Peak-vs-K claims: sparse regime at the smallest D and a decade of D."""
        d = self.d_dd
        return self.sparse_regime(d[0]) and d[-1] >= 10 * d[0]

    @property
    def n_dd(self) -> tuple:
        """N grid for the double descent: every integer near the small peaks, log-spaced above."""
        k_hi = float(heaps_K(self.alpha1, self.d_dd[-1]))
        n_max = int(max(48, 4 * k_hi))
        return tuple(int(v) for v in np.unique(np.concatenate([
            np.arange(2, min(n_max, 64) + 1),
            np.round(np.geomspace(8, n_max, self.n_dd_points)).astype(int)])))

    @property
    def grid_d_range(self) -> tuple:
        """D range of the (N, D) grid: from K ~ 4 to K ~ 4 N_max, capped by grid_d_cap."""
        lo = float(max(30.0, heaps_D(self.alpha1, 4.0), min(sparse_D(self.alpha1), 1e12)))
        hi = float(min(self.grid_d_cap, heaps_D(self.alpha1, 2 * self.grid_n_range[1])))
        return lo, hi

    @property
    def valid_combined_law(self) -> bool:
        """Both regimes on the grid: K(D_max) >= k_grid_min, so N from 8 up is model-limited somewhere."""
        lo, hi = self.grid_d_range
        return bool(heaps_K(self.alpha1, hi) >= self.k_grid_min and hi >= 30 * lo)

    @property
    def m_grid(self) -> int:
        k = float(heaps_K(self.alpha1, self.grid_d_range[1]))
        return int(max(8192, 2 ** math.ceil(math.log2(30 * k))))

    @property
    def d_op(self) -> int:
        """D of the near-peak over-parameterised check: E K(D) = op_k (at least 2 op_k rows)."""
        return int(max(2 * self.op_k, float(heaps_D(self.alpha1, self.op_k))))

    @property
    def frontier_n_lo(self) -> float:
        """Smallest N* >= 16 with D(K = N*)/N* >= frontier_sep (the closed form needs N* << D*,
        and the frontier hugs N = K(D)); inf when beyond N = 256 (the envelope's table)."""
        Ns = np.geomspace(16, 256, 65)
        ok = np.flatnonzero(heaps_D(self.alpha1, Ns) / Ns >= self.frontier_sep)
        return float(Ns[ok[0]]) if ok.size else float("inf")

    @property
    def valid_frontier(self) -> bool:
        return bool(np.isfinite(self.frontier_n_lo))

    @property
    def relu_j0(self) -> int:
        """Head size of the stratified ReLU loss: the tail mass sum_{j>J0} p_j <= relu_tail_max."""
        j = np.arange(1, self.relu_m + 1, dtype=float)
        tail = np.cumsum((j ** -(self.alpha1 + 1))[::-1])[::-1]     # tail[k] = sum_{j>=k+1}
        ok = np.flatnonzero(tail <= self.relu_tail_max)
        return int(ok[0]) if ok.size else self.relu_m

    @property
    def valid_relu(self) -> bool:
        return self.relu_j0 <= self.relu_j0_max

    @property
    def relu_d_fixed(self) -> int:
        return int(min(self.relu_d_fixed_cap, heaps_D(self.alpha1, 4 * max(self.relu_n_sweep))))

    @property
    def valid_relu_asymmetry(self) -> bool:
        """The N sweep is model-limited (K(D) >= 2 N_max) and the D sweep spans a decade."""
        ok_n = heaps_K(self.alpha1, self.relu_d_fixed) >= 2 * max(self.relu_n_sweep)
        d = self.relu_d_sweep
        return bool(self.valid_relu and ok_n and d[-1] >= 10 * d[0])

    @property
    def relu_d_sweep(self) -> tuple:
        hi = float(min(self.relu_d_cap, heaps_D(self.alpha1, self.relu_n_fixed / 3)))
        return _geo_ints(30.0, max(hi, 60.0), self.relu_d_points)
