"""Participation ratio (PR) and effective number of shared dimensions (ENSD).

For activations ``A`` of shape (n, features), ``C = AᵀA / tr(AᵀA)`` (optionally after
centring the rows' mean, as Giaffar et al. do)::

    PR(A) = 1 / tr(C²),     ENSD(A₁, A₂) = PR₁ · PR₂ · tr(C₁ C₂)

Computed through the n×n Gram matrices (cheaper when n < features): ``tr(C₁C₂) =
‖A₁A₂ᵀ‖_F² / (tr G₁ tr G₂)``.
"""

from __future__ import annotations

import numpy as np


def _prep(a, center: bool):
    a = np.asarray(a, dtype=float)
    if a.ndim != 2:
        raise ValueError(f"activations must be 2-D (n, features), got shape {a.shape}")
    return a - a.mean(0, keepdims=True) if center else a


def participation_ratio(a, *, center: bool = False) -> float:
    """``(tr C)² / tr(C²)`` of the (uncentred by default) second-moment matrix."""
    a = _prep(a, center)
    g = a @ a.T
    return float(np.trace(g) ** 2 / np.sum(g * g))


def ensd(a1, a2, *, center: bool = False) -> float:
    """ENSD between two representations of the same n inputs (rows aligned)."""
    a1, a2 = _prep(a1, center), _prep(a2, center)
    if a1.shape[0] != a2.shape[0]:
        raise ValueError(f"a1 and a2 need the same number of rows, got {a1.shape[0]}, {a2.shape[0]}")
    g1, g2 = a1 @ a1.T, a2 @ a2.T
    t1, t2 = np.trace(g1), np.trace(g2)
    tau = np.sum((a1.T @ a2) ** 2) / (t1 * t2)
    return float(participation_ratio(a1) * participation_ratio(a2) * tau)
