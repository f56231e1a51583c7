"""ℓ-order, pretraining dependence (PD) and the four regimes of the FT potential.

For one coordinate with ``x = |β_FT| / c_d`` and ``Q_d = c_d h(x)``::

    ℓ  = ∂ log Q_d / ∂ log|β_FT| = x asinh(x) / h(x)                  ∈ (1, 2]
    ε  = ∂ log c_d / ∂ log|β_PT| = (1+λ) β_PT² / (√(c² + β_PT²) c_d)   ∈ [0, 1)
    PD = ∂ log Q_d / ∂ log|β_PT| = (1 − ℓ) ε
    ⇒  ℓ + PD = 1 + (ℓ − 1)(1 − ε) ∈ [1, 2]      (the trade-off)

For ``x → 0`` the ratio is 0/0; the series ``ℓ ≈ 2 − x²/6`` is used below ``|x| < 1e-4``.
"""

from __future__ import annotations

import numpy as np

from .bias import ft_scales, h

#: (ℓ, PD) at |β_FT| = |β_PT| = 1, γ = 1e-3 (computed from the formula); regime II at |β_FT| = 0.1.
CORNERS = {
    "I": dict(c_pt=1e-4, lam_pt=-1.0, gamma=1e-3, beta_ft=1.0, beta_pt=1.0, expect=(1.07, 0.00)),
    "II": dict(c_pt=1e-4, lam_pt=1.0, gamma=1e-3, beta_ft=0.1, beta_pt=1.0, expect=(2.00, -1.00)),
    "III": dict(c_pt=100.0, lam_pt=0.0, gamma=1e-3, beta_ft=1.0, beta_pt=1.0, expect=(2.00, 0.00)),
    "IV": dict(c_pt=1e-4, lam_pt=-0.9, gamma=1e-3, beta_ft=1.0, beta_pt=1.0, expect=(1.43, -0.43)),
}


def l_order_x(x):
    """ℓ-order of ``c h(β/c)`` at ``x = |β|/c`` (array)."""
    x = np.abs(np.asarray(x, dtype=float))
    small = x < 1e-4
    xs = np.where(small, 1.0, x)
    out = xs * np.arcsinh(xs) / h(xs)
    return np.where(small, 2.0 - x**2 / 6.0, out)


def l_order_pd(beta_ft, beta_pt, c_pt, lam_pt, gamma):
    """``(ℓ, PD)`` of the rebalanced FT potential at ``(|β_FT|, |β_PT|)`` (broadcasting)."""
    bft = np.abs(np.asarray(beta_ft, dtype=float))
    bpt = np.abs(np.asarray(beta_pt, dtype=float))
    cd = ft_scales(bpt, c_pt, lam_pt, gamma)
    ell = l_order_x(bft / cd)
    eps = (1 + lam_pt) * bpt**2 / (np.hypot(c_pt, bpt) * cd)
    return ell, (1 - ell) * eps


def l_order_pd_fd(beta_ft, beta_pt, c_pt, lam_pt, gamma, rel: float = 1e-5):
    """The same two derivatives by central finite differences of ``log Q`` (for tests)."""
    def logq(bf, bp):
        cd = ft_scales(bp, c_pt, lam_pt, gamma)
        return np.log(cd * h(bf / cd))

    bf, bp = float(abs(beta_ft)), float(abs(beta_pt))
    e = rel
    ell = (logq(bf * np.exp(e), bp) - logq(bf * np.exp(-e), bp)) / (2 * e)
    pd = (logq(bf, bp * np.exp(e)) - logq(bf, bp * np.exp(-e))) / (2 * e)
    return ell, pd


def corner_values():
    """``{regime: (measured (ℓ, PD), expected (ℓ, PD))}`` for :data:`CORNERS`."""
    out = {}
    for name, k in CORNERS.items():
        ell, pd = l_order_pd(k["beta_ft"], k["beta_pt"], k["c_pt"], k["lam_pt"], k["gamma"])
        out[name] = ((float(ell), float(pd)), k["expect"])
    return out
