"""Participation ratio (PR) and effective number of shared dimensions (ENSD).

For activations ``A`` of shape (n, features), take the n×n sample Gram matrix
``G = A Aᵀ`` (optionally after centring the rows' mean, as Giaffar et al. do) and
``C = G / tr G``::

    PR(A) = 1 / tr(C²) = (tr G)² / tr(G²),     ENSD(A₁, A₂) = PR₁ · PR₂ · tr(C₁ C₂)

with ``tr(G₁ G₂) = ‖A₁ᵀ A₂‖_F²``. The sample-space form needs only the rows to be aligned,
so the two representations may have different widths; it equals the feature-space form
(``AᵀA``) for PR, since ``AᵀA`` and ``AAᵀ`` share their non-zero eigenvalues, and
``ENSD(A, A R) = PR(A)`` for any orthogonal ``R``.
"""

from __future__ import annotations

import numpy as np


def _prep(a, center: bool):
    a = np.asarray(a, dtype=float)
    if a.ndim != 2:
        raise ValueError(f"activations must be 2-D (n, features), got shape {a.shape}")
    return a - a.mean(0, keepdims=True) if center else a


def participation_ratio(a, *, center: bool = False) -> float:
    """``(tr G)² / tr(G²)`` of the (uncentred by default) sample Gram matrix ``G = A Aᵀ``."""
    a = _prep(a, center)
    g = a @ a.T
    return float(np.trace(g) ** 2 / np.sum(g * g))


def ensd(a1, a2, *, center: bool = False) -> float:
    """ENSD between two representations of the same n inputs (rows aligned; widths may
    differ): ``PR₁ PR₂ ‖A₁ᵀA₂‖_F² / (tr G₁ tr G₂)``."""
    a1, a2 = _prep(a1, center), _prep(a2, center)
    if a1.shape[0] != a2.shape[0]:
        raise ValueError(f"a1 and a2 need the same number of rows, got {a1.shape[0]}, {a2.shape[0]}")
    g1, g2 = a1 @ a1.T, a2 @ a2.T
    t1, t2 = np.trace(g1), np.trace(g2)
    tau = np.sum((a1.T @ a2) ** 2) / (t1 * t2)
    return float(participation_ratio(a1) * participation_ratio(a2) * tau)
