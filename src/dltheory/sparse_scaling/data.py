"""The sparse data model and its dense Gaussian baseline.

Coordinate ``j = 1..M`` of ``x in R^M`` is active with probability ``p_j = j^-(a1+1)``; an
active coordinate carries a zero-mean amplitude of variance ``s_j^2 = j^-(a2+1)``, so

    lambda_j = E x_j^2 = p_j s_j^2 = j^-(a1+a2+2),      Sigma = E x x^T = diag(lambda).

This is the reading of the paper's data model that reproduces all four stated exponents
(a reconstruction: only the abstract was available); ``p`` and ``s2`` are kept apart so other
readings can be run by building a :class:`SparseSpectrum` by hand.

The sampler is coordinate-major: for each coordinate it draws how many of the D rows
activate it and then which rows, so its cost is O(D sum_j p_j) and not O(D M).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .. import validation
from ..validation import as_generator


def check_penalties(name: str, values) -> np.ndarray:
    """Ridge penalties: finite and >= 0 (0 is the min-norm fit)."""
    arr = np.atleast_1d(np.asarray(values, dtype=float))
    if arr.size == 0 or not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise ValueError(f"{name} must be finite ridge penalties in [0, inf), got {values!r}")
    return arr


def exponent_N(alpha1: float, alpha2: float) -> float:
    """Model-limited exponent alpha_N = a1 + a2 + 1 (the one definition in the package)."""
    return alpha1 + alpha2 + 1


def exponent_D(alpha1: float, alpha2: float) -> float:
    """Data-limited exponent alpha_D = (a1 + a2 + 1)/(a1 + 1)."""
    return exponent_N(alpha1, alpha2) / (alpha1 + 1)


def exponent_nu(alpha1: float, alpha2: float) -> float:
    """GD-failure exponent nu = (a1 + a2 + 1)/(-a2 - 1): P_fail(D) ~ D^-nu, for a2 < -1."""
    return exponent_N(alpha1, alpha2) / (-alpha2 - 1)


class Exponents:
    """The exponents of an object with ``alpha1`` and ``alpha2`` (a spectrum, the Config)."""

    @property
    def alpha_N(self) -> float:
        """Model-limited exponent a1 + a2 + 1."""
        return exponent_N(self.alpha1, self.alpha2)

    @property
    def alpha_D(self) -> float:
        """Data-limited exponent (a1 + a2 + 1)/(a1 + 1)."""
        return exponent_D(self.alpha1, self.alpha2)

    @property
    def nu(self) -> float:
        """GD-failure exponent (a1 + a2 + 1)/(-a2 - 1); only meaningful for a2 < -1."""
        return exponent_nu(self.alpha1, self.alpha2)


@dataclass(frozen=True)
class SparseSpectrum(Exponents):
    """Activation probabilities ``p`` (M,), active-amplitude variances ``s2`` (M,).

    ``lam = p * s2`` is the diagonal of Sigma. ``alpha1``/``alpha2`` are kept for the
    exponent formulas (nan for a hand-built spectrum).
    """

    p: np.ndarray
    s2: np.ndarray
    alpha1: float = float("nan")
    alpha2: float = float("nan")

    @property
    def M(self) -> int:
        return int(self.p.size)

    @property
    def lam(self) -> np.ndarray:
        return self.p * self.s2


def spectrum(M: int, alpha1: float, alpha2: float) -> SparseSpectrum:
    """The power-law spectrum ``p_j = j^-(a1+1)``, ``s_j^2 = j^-(a2+1)``, j = 1..M."""
    if int(M) < 1:
        raise ValueError(f"M must be >= 1, got {M}")
    alpha1 = validation.real("alpha1", alpha1, 0.0, np.inf)          # p_j <= 1
    alpha2 = validation.real("alpha2", alpha2)
    if alpha1 + alpha2 + 1 <= 0:
        raise ValueError(f"alpha1 + alpha2 + 1 must be > 0, got alpha1={alpha1}, alpha2={alpha2}")
    j = np.arange(1, int(M) + 1, dtype=float)
    return SparseSpectrum(j ** -(alpha1 + 1.0), j ** -(alpha2 + 1.0), float(alpha1), float(alpha2))


@dataclass(frozen=True)
class Entries:
    """The non-zeros of ``trials`` independent D x M data matrices (COO, 0-based).

    trial, row, col: int64 arrays of equal length; val: float64 amplitudes.
    """

    trial: np.ndarray
    row: np.ndarray
    col: np.ndarray
    val: np.ndarray
    trials: int
    D: int
    M: int

    def csr(self, t: int = 0) -> sp.csr_matrix:
        """Trial ``t`` as a D x M CSR matrix."""
        m = self.trial == t
        return sp.csr_matrix((self.val[m], (self.row[m], self.col[m])), shape=(self.D, self.M))

    def observed_counts(self) -> np.ndarray:
        """K per trial: the number of distinct coordinates active at least once, (trials,)."""
        key = np.unique(self.trial * self.M + self.col)
        return np.bincount(key // self.M, minlength=self.trials)


def _dedupe_rows(trial, col, row, D, M, rng, max_rounds: int = 200):
    """Redraw the row of every repeated (trial, col, row) until all are distinct.

    The result is invariant under permutations of the rows and has the drawn count per
    (trial, col), hence it is a uniformly random subset of that size (sampling without
    replacement). Only used where counts are below D/4, so it converges in a few rounds.
    """
    for _ in range(max_rounds):
        key = (trial * M + col) * D + row
        _, first = np.unique(key, return_index=True)
        dup = np.ones(key.size, dtype=bool)
        dup[first] = False
        if not dup.any():
            return row
        row[dup] = rng.integers(0, D, int(dup.sum()))
    raise RuntimeError("row de-duplication did not converge")


def sample_entries(spec: SparseSpectrum, D: int, seed, *, trials: int = 1,
                   amplitude: str = "rademacher", p_dense: float = 0.25,
                   p_poisson: float = 1e-4) -> Entries:
    """Draw ``trials`` independent data sets of D samples each, as COO entries.

    Coordinates are handled in three groups (all with exact marginals E x_j^2 = lambda_j):

    - ``p_j >= p_dense``: one Bernoulli(p_j) per row (exact);
    - ``p_poisson <= p_j < p_dense``: count ~ Binomial(D, p_j), then that many distinct
      rows (exact);
    - ``p_j < p_poisson``: a Poisson(D sum p_j) number of events per trial, coordinates
      drawn with probability proportional to p_j (Poisson thinning; the count variance is
      D p_j instead of D p_j (1 - p_j), a relative error below ``p_poisson``).

    amplitude: "rademacher" (x_j = +-s_j, the default) or "gaussian" (x_j ~ N(0, s_j^2)).
    """
    D, trials = int(D), int(trials)
    if D < 1 or trials < 1:
        raise ValueError(f"D and trials must be >= 1, got D={D}, trials={trials}")
    if amplitude not in ("rademacher", "gaussian"):
        raise ValueError(f"amplitude must be 'rademacher' or 'gaussian', got {amplitude!r}")
    rng = as_generator(seed)
    p, M = spec.p, spec.M
    parts_t, parts_r, parts_c = [], [], []

    dense_cols = np.flatnonzero(p >= p_dense)
    for j in dense_cols:                               # (trials, D) Bernoulli masks
        t, r = np.nonzero(rng.random((trials, D)) < p[j])
        parts_t.append(t)
        parts_r.append(r)
        parts_c.append(np.full(t.size, j))

    mid = np.flatnonzero((p < p_dense) & (p >= p_poisson))
    if mid.size:
        counts = rng.binomial(D, np.broadcast_to(p[mid], (trials, mid.size)))  # (trials, J)
        t_idx, j_idx = np.nonzero(counts)
        reps = counts[t_idx, j_idx]
        parts_t.append(np.repeat(t_idx, reps))
        parts_c.append(np.repeat(mid[j_idx], reps))
        parts_r.append(rng.integers(0, D, int(reps.sum())))

    tail = np.flatnonzero(p < p_poisson)
    if tail.size:
        cum = np.cumsum(p[tail])
        n_ev = rng.poisson(D * cum[-1], trials)
        parts_t.append(np.repeat(np.arange(trials), n_ev))
        u = rng.random(int(n_ev.sum())) * cum[-1]
        parts_c.append(tail[np.minimum(np.searchsorted(cum, u, side="right"), tail.size - 1)])
        parts_r.append(rng.integers(0, D, int(n_ev.sum())))

    trial = np.concatenate(parts_t).astype(np.int64) if parts_t else np.zeros(0, np.int64)
    col = np.concatenate(parts_c).astype(np.int64) if parts_c else np.zeros(0, np.int64)
    row = np.concatenate(parts_r).astype(np.int64) if parts_r else np.zeros(0, np.int64)
    row = _dedupe_rows(trial, col, row, D, M, rng)
    if amplitude == "rademacher":
        xi = rng.integers(0, 2, col.size) * 2.0 - 1.0
    else:
        xi = rng.standard_normal(col.size)
    val = np.sqrt(spec.s2[col]) * xi
    return Entries(trial, row, col, val, trials, D, M)


def sample_sparse(spec: SparseSpectrum, D: int, seed, **kw) -> sp.csr_matrix:
    """One D x M sparse data matrix (CSR) from :func:`sample_entries`."""
    return sample_entries(spec, D, seed, trials=1, **kw).csr(0)


def sample_dense(spec: SparseSpectrum, D: int, seed) -> np.ndarray:
    """The dense Gaussian baseline with the same Sigma: x ~ N(0, diag(lambda)), (D, M)."""
    rng = as_generator(seed)
    return rng.standard_normal((int(D), spec.M)) * np.sqrt(spec.lam)[None, :]
