"""Exact loss curves in N and in D, and the predicted exponents, for *your* spectrum.

Chapter 3 (:doc:`/book/03_sparse_scaling`) studies a linear random-feature readout of
sparse data: coordinate ``j`` is active with probability ``p_j`` and then has variance
``s2_j``, so ``Sigma = diag(lam)``, ``lam = p * s2``; the target is ``y = w^T x``, ``w_j ~
N(0, 1)``. :func:`scaling_curves` takes ``p`` and ``s2`` as arrays (any spectrum, not only
power laws) and returns

* the model-limited loss ``L(N)`` at ``D = infinity``: exact for one Gaussian feature draw
  ``u`` (N, M), averaged over the target (the chapter's
  :func:`~dltheory.sparse_scaling.linear.loss_infinite_data`), and its deterministic
  equivalent (:func:`~dltheory.sparse_scaling.theory.loss_de`);
* the data-limited loss ``L(D)`` at ``N = infinity``: the expected never-seen floor
  ``E T(D) = sum_j lam_j (1 - p_j)^D`` (:func:`~dltheory.sparse_scaling.theory.expected_floor`),
  the loss of the Bayes readout once every observed coordinate is identified;
* the exponents: measured as log-log slopes of those exact curves, and predicted by the
  chapter's formulas ``alpha_N = a1 + a2 + 1``, ``alpha_D = (a1 + a2 + 1) / (a1 + 1)`` from
  power-law fits ``p_j ~ j^-(a1+1)``, ``s2_j ~ j^-(a2+1)`` of your arrays (sorted by ``lam``).
  For a spectrum that is not a power law the fitted exponents are a summary, and the curves
  are the answer.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .data import SparseSpectrum, exponent_D, exponent_N
from .linear import gaussian_features, loss_infinite_data
from .theory import expected_floor, loss_de

__all__ = ["ScalingCurves", "scaling_curves", "slope"]


@dataclass(frozen=True)
class ScalingCurves:
    Ns: np.ndarray
    loss_N: np.ndarray         # exact model-limited loss at each N (one feature draw)
    loss_N_de: np.ndarray      # its deterministic equivalent
    Ds: np.ndarray
    loss_D: np.ndarray         # expected data-limited loss E T(D) at each D
    alpha1: float              # fitted: p_j ~ j^-(alpha1 + 1)
    alpha2: float              # fitted: s2_j ~ j^-(alpha2 + 1)
    alpha_N: float             # predicted model-limited exponent
    alpha_D: float             # predicted data-limited exponent
    slope_N: float             # measured -dlog L / dlog N over the upper half of Ns
    slope_D: float             # measured -dlog L / dlog D over the upper half of Ds


def slope(x, y) -> float:
    """``-d log y / d log x`` by least squares over the upper half of the points (nan for
    fewer than 2 points)."""
    x, y = np.log(np.asarray(x, float)), np.log(np.asarray(y, float))
    if len(x) < 2:
        return float("nan")
    h = min(len(x) // 2, len(x) - 2)
    return float(-np.polyfit(x[h:], y[h:], 1)[0])


def _powerlaw(v):
    j = np.arange(1, len(v) + 1, dtype=float)
    m = v > 0
    return float(-np.polyfit(np.log(j[m]), np.log(v[m]), 1)[0] - 1.0)


def scaling_curves(p, s2, Ns, Ds, *, seed: int = 0) -> ScalingCurves:
    """Exact ``L(N)``, ``L(D)`` and the exponents for activation probabilities ``p`` (M,)
    in (0, 1] and variances ``s2`` (M,) > 0. ``Ns`` must lie in [1, M - 1]."""
    p, s2 = np.asarray(p, dtype=float), np.asarray(s2, dtype=float)
    if p.shape != s2.shape or p.ndim != 1:
        raise ValueError(f"p and s2 must be 1-D arrays of one length, got {p.shape}, {s2.shape}")
    if not (np.all((p > 0) & (p <= 1)) and np.all(s2 > 0)):
        raise ValueError("p must lie in (0, 1] and s2 must be > 0")
    order = np.argsort(-(p * s2), kind="stable")
    p, s2 = p[order], s2[order]
    lam = p * s2
    Ns, Ds = np.asarray(Ns, dtype=int), np.asarray(Ds, dtype=int)
    u = gaussian_features(int(Ns.max()), len(p), seed)
    lN = loss_infinite_data(u, lam, Ns)
    spec = SparseSpectrum(p, s2)
    a1, a2 = _powerlaw(p), _powerlaw(s2)
    lD = expected_floor(spec, Ds)
    return ScalingCurves(Ns, lN, loss_de(lam, Ns), Ds, lD, a1, a2, exponent_N(a1, a2),
                         exponent_D(a1, a2), slope(Ns, lN), slope(Ds, lD))
