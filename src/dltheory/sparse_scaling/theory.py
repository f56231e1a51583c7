"""Closed forms and exact finite sums for the sparse-feature scaling laws.

Model-limited (D = infinity), deterministic equivalent of the random projection:

    sum_j lambda_j/(lambda_j + kappa) = N,   l_DE(N) = sum_j lambda_j kappa/(lambda_j + kappa) = N kappa
    l_DE(N) ~ c_a^(a+1) N^-a,   a = alpha_N,   c_a = (pi/(a+1)) / sin(pi/(a+1)).

Data-limited (N = infinity): the never-seen floor and the number of observed coordinates,

    E T(D) = sum_j lambda_j (1 - p_j)^D ~ Gamma(alpha_D)/(alpha1+1) D^-alpha_D,
    E K(D) = sum_j [1 - (1 - p_j)^D]    ~ Gamma(alpha1/(alpha1+1)) D^(1/(alpha1+1))   (Heaps).

Over-parameterised ridgeless branch (N > r + 1): E l = T_obs (N - 1)/(N - r - 1).
Compute-optimal frontier under C = N D min(N, D). (The GD failure law is in :mod:`.gd`.)
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize, special

from .. import validation
from .data import SparseSpectrum


def kappa(lam, N: float) -> float:
    """Root of sum_j lambda_j/(lambda_j + kappa) = N (needs 0 < N < M)."""
    lam = np.asarray(lam, dtype=float)
    if not np.isfinite(N) or not 0 < N < lam.size:
        raise ValueError(f"N must be in (0, M={lam.size}), got {N}")
    g = lambda lk: np.sum(lam / (lam + np.exp(lk))) - N
    return float(np.exp(optimize.brentq(g, -200.0, 50.0, xtol=1e-14)))


def loss_de(lam, Ns) -> np.ndarray:
    """Deterministic-equivalent model-limited loss l_DE(N) = N kappa(N), (len(Ns),)."""
    return np.array([float(N) * kappa(lam, float(N)) for N in np.atleast_1d(Ns)])


def de_constant(a: float) -> float:
    """Asymptotic prefactor c_a^(a+1) of l_DE(N) ~ c N^-a for lambda_j = j^-(a+1)."""
    a = validation.real("a", a, 0.0, np.inf, lo_open=True)
    t = math.pi / (a + 1)
    return (t / math.sin(t)) ** (a + 1)


def expected_floor(spec: SparseSpectrum, Ds) -> np.ndarray:
    """E T(D) = sum_j lambda_j (1 - p_j)^D, the expected never-seen loss, (len(Ds),)."""
    lq = _log1m(spec.p)
    return np.array([float(np.sum(spec.lam * np.exp(float(D) * lq))) for D in np.atleast_1d(Ds)])


def floor_variance(spec: SparseSpectrum, Ds) -> np.ndarray:
    """Var T(D) = sum_j lambda_j^2 q_j (1 - q_j), q_j = (1 - p_j)^D, for one data set of D rows
    (exact: the coordinates are activated independently), (len(Ds),)."""
    lq = _log1m(spec.p)
    out = []
    for D in np.atleast_1d(Ds):
        q = np.exp(float(D) * lq)
        out.append(float(np.sum(spec.lam ** 2 * q * (1 - q))))
    return np.array(out)


def expected_observed(spec: SparseSpectrum, Ds) -> np.ndarray:
    """E K(D) = sum_j [1 - (1 - p_j)^D], the expected number of observed coordinates."""
    lq = _log1m(spec.p)
    return np.array([float(np.sum(-np.expm1(float(D) * lq))) for D in np.atleast_1d(Ds)])


def observed_variance(spec: SparseSpectrum, Ds) -> np.ndarray:
    """Var K(D) = sum_j q_j (1 - q_j), q_j = (1 - p_j)^D, for one data set of D rows (exact:
    the coordinates are activated independently), (len(Ds),)."""
    lq = _log1m(spec.p)
    out = []
    for D in np.atleast_1d(Ds):
        q = np.exp(float(D) * lq)
        out.append(float(np.sum(q * (1 - q))))
    return np.array(out)


def expected_observed_inf(alpha1: float, Ds, J: int = 4096) -> np.ndarray:
    """E K(D) for p_j = j^-(a1+1) and M = infinity: the exact sum over j <= J plus the tail
    as an integral, int_(J+1/2)^inf [1 - exp(-D x^-(a1+1))] dx (incomplete-gamma form)."""
    j = np.arange(1, J + 1, dtype=float)
    lq = np.full(J, -np.inf)
    lq[1:] = np.log1p(-(j[1:] ** -(alpha1 + 1)))
    D = np.atleast_1d(np.asarray(Ds, dtype=float))
    head = -np.expm1(D[:, None] * lq[None, :]).sum(1)
    s = 1 / (alpha1 + 1)
    T = D * (J + 0.5) ** -(alpha1 + 1)
    tail = (np.expm1(-T) * T ** -s / s + special.gamma(1 - s) * special.gammainc(1 - s, T) / s)
    return head + D ** s * s * tail


def _log1m(p: np.ndarray) -> np.ndarray:
    """log(1 - p) with log(0) = -inf for p = 1 (no warning)."""
    out = np.full(p.shape, -np.inf)
    m = p < 1
    out[m] = np.log1p(-p[m])
    return out


def floor_constant(alpha1: float, alpha2: float) -> float:
    """Gamma(alpha_D)/(alpha1 + 1): E T(D) D^alpha_D -> this as D -> infinity."""
    alpha1 = validation.real("alpha1", alpha1, 0.0, np.inf, lo_open=True)
    alpha2 = validation.real("alpha2", alpha2, -alpha1 - 1, np.inf, lo_open=True)
    return float(special.gamma((alpha1 + alpha2 + 1) / (alpha1 + 1)) / (alpha1 + 1))


def heaps_constant(alpha1: float) -> float:
    """Gamma(alpha1/(alpha1 + 1)): E K(D) / D^(1/(alpha1+1)) -> this."""
    alpha1 = validation.real("alpha1", alpha1, 0.0, np.inf, lo_open=True)
    return float(special.gamma(alpha1 / (alpha1 + 1)))


def overparam_loss(T_obs, N, r, K):
    """Ridgeless loss for N > r + 1: T_obs (N - 1)/(N - r - 1) (inverse-Wishart leakage).

    Exact in expectation over Gaussian u and w only when X_obs has full column rank,
    r = rank X = K (the K observed coordinates are then identified and the observed error
    is zero); with r < K some observed coordinates are not identified and the formula does
    not hold, so it is refused (ValueError), as is N <= r + 1 and r > K."""
    N, r, K = np.asarray(N, dtype=float), np.asarray(r), np.asarray(K)
    if np.any(r < K):
        raise ValueError("overparam_loss needs rank X = K (full column rank); r < K leaves "
                         "observed coordinates unidentified and the formula does not hold")
    if np.any(r > K):
        raise ValueError("rank X cannot exceed the number of observed coordinates K")
    if np.any(N <= r + 1):
        raise ValueError("overparam_loss needs N > r + 1")
    return np.asarray(T_obs) * (N - 1) / (N - r - 1)


# ------------------------------------------------------------------------- frontier
def compute_cost(N, D):
    """Nominal training compute C = N D min(N, D) (the paper's cost model)."""
    N, D = np.asarray(N, dtype=float), np.asarray(D, dtype=float)
    return N * D * np.minimum(N, D)


def envelope_frontier(loss_N, loss_D, Cs, Ngrid):
    """Minimise l(N) + l(D) along each iso-compute curve C = N D min(N, D).

    loss_N, loss_D: callables on arrays; Ngrid: candidate N values (dense log grid).
    Returns (N*, D*, l*) arrays of len(Cs). For each N, D solves C = N D min(N, D).
    """
    Ngrid = np.asarray(Ngrid, dtype=float)
    lN = loss_N(Ngrid)
    Ns, Ds, Ls = [], [], []
    for C in np.atleast_1d(Cs):
        D = np.where(C / Ngrid**2 >= Ngrid, C / Ngrid**2, np.sqrt(C / Ngrid))
        L = lN + loss_D(D)
        i = int(np.argmin(L))
        Ns.append(Ngrid[i])
        Ds.append(D[i])
        Ls.append(L[i])
    return np.array(Ns), np.array(Ds), np.array(Ls)


def frontier_exponents(alpha1: float, alpha2: float) -> dict[str, float]:
    """Closed-form exponents of N*(C), D*(C), l*(C) for C = N^2 D (N* << D*)."""
    alpha1 = validation.real("alpha1", alpha1, 0.0, np.inf)
    alpha2 = validation.real("alpha2", alpha2, -alpha1 - 1, np.inf, lo_open=True)
    aN = alpha1 + alpha2 + 1
    return {"N": 1 / (alpha1 + 3), "D": (alpha1 + 1) / (alpha1 + 3), "loss": -aN / (alpha1 + 3)}


def two_term_frontier_exponents(a: float, b: float) -> dict[str, float]:
    """Frontier exponents of A N^-a + B D^-b under C = N^2 D: N* ~ C^(b/(a+2b)), etc."""
    return {"N": b / (a + 2 * b), "D": a / (a + 2 * b), "loss": -a * b / (a + 2 * b)}
