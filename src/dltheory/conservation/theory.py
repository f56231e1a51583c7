"""Predictions beyond the exact identities (the checks compare measurements with these).

The exact statements (orthogonality, the tau^2 q(g) identity, the weight-decay recurrence)
live in ``laws`` and ``train``; the law counts in ``laws.theory_count``. What is here follows
from the gradient-flow limit of those identities:

* GD with step tau tracks the flow, so ``h_k - h_0 = tau^2 sum_j q(g_j) ~ tau F(tau k)`` with
  ``F(t) = int_0^t q(g(s)) ds``: at matched learning progress (fixed ``t = tau k``) the drift
  grows like ``tau^1``; fitted as ``tau^alpha k^beta`` on any window, ``alpha - beta = 1``.
* Adam's update is not in the gradient span: the drift is first order per step, ``~ lr k``;
  at matched progress (``lr k`` fixed) it does not depend on the learning rate (slope 0),
  and on a fixed-k grid the tau exponent is 1.
* Coupled weight decay: ``h_k ~ (1 - tau lam)^(2k) h_0`` up to the ``tau^2 q`` terms.
"""

from __future__ import annotations


def matched_slope(optimizer: str) -> float:
    """Slope of log drift against log learning rate at matched learning progress."""
    slopes = {"gd": 1.0, "sgd": 1.0, "adam": 0.0}
    if optimizer not in slopes:
        raise ValueError(f"optimizer must be one of {sorted(slopes)}, got {optimizer!r}")
    return slopes[optimizer]


def late_window_gap() -> float:
    """alpha - beta of the fit err ~ tau^alpha k^beta in the flow regime (any window)."""
    return 1.0


def adam_tau_exponent() -> float:
    """tau exponent of Adam's drift on a fixed-k grid (first order per step)."""
    return 1.0


def wd_decay(tau: float, lam: float, k: int) -> float:
    """Factor by which coupled weight decay shrinks |h| after k steps (tau^2 q neglected)."""
    import numpy as np
    if not (np.isfinite(tau) and tau > 0 and np.isfinite(lam) and 0 <= tau * lam < 1):
        raise ValueError(f"tau > 0 and lam >= 0 with tau * lam < 1 needed, got tau={tau!r}, "
                         f"lam={lam!r}")
    if np.any(np.asarray(k) < 0):
        raise ValueError(f"k must be >= 0, got {k!r}")
    return (1.0 - tau * lam) ** (2 * k)
