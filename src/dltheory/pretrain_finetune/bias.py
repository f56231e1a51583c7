"""Implicit-bias potentials of PT and FT and their exact constrained minimisers.

Hyperbolic entropy (Woodworth et al.; Azulay et al.; written ψ in the book, where h is the
prologue's conservation law), convex, ``h(0) = 0``,
``h'(x) = asinh x``, conjugate ``h*(s) = cosh s − 1``::

    h(x) = x asinh(x) − √(1+x²) + 1 = x asinh(x) − x² / (1 + √(1+x²))   (stable form)

Potentials (all minimised subject to ``Xβ = y``)::

    PT:                 Q(β) = Σ_d c h(β_d / c)
    rebalanced FT:      Q(β) = Σ_d c_d h(β_d / c_d),
                        c_d = (1+λ)(c + √(c² + β_PT,d²)) + γ²
    non-rebalanced FT:  Q(β) = Σ_d [r_d h(β_d / r_d) − φ_d β_d],  r_d = √(c̄_d² − β0_d²),
                        φ_d = asinh(β0_d / r_d)   (the tilted potential)

The exact minimiser solves the smooth convex dual ``min_ν Σ_d r_d cosh((Xᵀν)_d + φ_d) − νᵀy``
by Newton's method (Cholesky of the N×N Hessian ``X diag(r cosh a) Xᵀ``, Armijo
backtracking) with continuation in a global scale of ``r``; then ``β = r ⊙ sinh(Xᵀν + φ)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import linalg, optimize

from . import _validate as V


def h(x):
    """Hyperbolic entropy ``h(x) = x asinh x − √(1+x²) + 1``, evaluated stably."""
    x = np.asarray(x, dtype=float)
    return x * np.arcsinh(x) - x**2 / (1.0 + np.hypot(1.0, x))


def potential(beta, c, phi=0.0):
    """``Σ_d c_d h(β_d/c_d) − φ_d β_d`` (last axis summed); ``c`` broadcasts against β."""
    beta = np.asarray(beta, dtype=float)
    c = np.asarray(c, dtype=float)
    return np.sum(c * h(beta / c) - phi * beta, axis=-1)


def ft_scales(beta_pt, c_pt: float, lam_pt: float, gamma: float):
    """Effective FT scales after pathway rebalancing (all arguments broadcast)::

        c_d = (1+λ)(c + √(c² + β_PT,d²)) + γ²
    """
    c_pt = V.array("c_pt", c_pt, 0.0, np.inf, lo_open=True)
    lam_pt = V.array("lam_pt", lam_pt, -1.0, 1.0)
    gamma = V.array("gamma", gamma, 0.0, np.inf)
    b = V.array("beta_pt", beta_pt)
    return (1 + lam_pt) * (c_pt + np.hypot(c_pt, b)) + gamma**2


def tilted_params(wp, wm, gamma):
    """``(r, φ, β0)`` of the non-rebalanced FT potential after ``v± ← γ``::

        c̄ = (w₊² + w₋²)/2 + γ²,  β0 = γ(w₊ − w₋),  r = √(c̄² − β0²),  φ = asinh(β0/r)
    """
    wp, wm = V.array("wp", wp), V.array("wm", wm)
    gamma = V.scalar("gamma", gamma, 0.0, np.inf)
    cbar = 0.5 * (wp**2 + wm**2) + gamma**2
    beta0 = gamma * (wp - wm)
    r = np.sqrt((cbar - beta0) * (cbar + beta0))
    return r, np.arcsinh(beta0 / r), beta0


@dataclass
class BiasSolution:
    beta: np.ndarray  # (D,)
    nu: np.ndarray  # (N,) dual variable
    newton_steps: int
    residual: float  # ‖Xβ − y‖


def _dual_F(nu, X, y, r, phi):
    a = X.T @ nu + phi
    if np.max(np.abs(a)) > 700:
        return np.inf
    return float(np.sum(r * np.cosh(a)) - nu @ y)


def solve_bias(X, y, c, phi=0.0, *, tol: float = 1e-10, max_newton: int = 400) -> BiasSolution:
    """``argmin_β Σ_d c_d h(β_d/c_d) − φ_d β_d`` subject to ``Xβ = y`` (dual Newton).

    X: (N, D) with full row rank, y: (N,), c: (D,) or scalar > 0, phi: (D,) or scalar.
    Continuation: solve with ``t·c`` for ``t`` from ``max(1, 10 max|y| / (√D min c))`` down
    to 1 (two levels per decade), warm-starting ν. Raises ``RuntimeError`` if the final
    constraint residual exceeds ``1e-6 (1 + ‖y‖)``.
    """
    X, y = _check_xy(X, y)
    n, d = X.shape
    c = _bcast("c", V.array("c", c, 0.0, np.inf, lo_open=True), d)
    phi = _bcast("phi", V.array("phi", phi), d)
    V.scalar("tol", tol, 0.0, 1.0, lo_open=True)
    V.integer("max_newton", max_newton, 1)
    ynorm = 1.0 + np.linalg.norm(y)
    t0 = max(1.0, 10 * np.abs(y).max() / np.sqrt(d) / c.min())
    ts = np.geomspace(t0, 1.0, int(np.ceil(2 * np.log10(t0))) + 2) if t0 > 1 else np.array([1.0])
    nu = np.zeros(n)
    steps = 0
    for t in ts:
        r = t * c
        last = t == ts[-1]
        tol_t = tol if last else 1e-6
        f = _dual_F(nu, X, y, r, phi)
        for _ in range(max_newton if last else 60):
            a = X.T @ nu + phi
            g = X @ (r * np.sinh(a)) - y
            if np.linalg.norm(g) <= tol_t * ynorm:
                break
            H = (X * (r * np.cosh(a))) @ X.T
            H[np.diag_indices(n)] += 1e-14 * np.trace(H) / n
            step = linalg.cho_solve(linalg.cho_factor(H), g)
            s, dec = 1.0, g @ step
            while True:
                f_new = _dual_F(nu - s * step, X, y, r, phi)
                if f_new <= f - 1e-4 * s * dec or s < 1e-12:
                    break
                s *= 0.5
            nu = nu - s * step
            f = f_new
            steps += 1
    beta = c * np.sinh(X.T @ nu + phi)
    res = float(np.linalg.norm(X @ beta - y))
    if res > 1e-6 * ynorm:
        raise RuntimeError(f"dual Newton did not reach the constraint: residual {res:.2e}")
    return BiasSolution(beta, nu, steps, res)


def _check_xy(X, y):
    X, y = V.array("X", X), V.array("y", y)
    if X.ndim != 2 or X.shape[0] < 1 or X.shape[1] < 1:
        raise ValueError(f"X must be a non-empty 2-D array (N, D), got shape {X.shape}")
    if y.shape != (X.shape[0],):
        raise ValueError(f"y must have shape ({X.shape[0]},) to match X, got {y.shape}")
    return X, y


def _bcast(name, a, d):
    try:
        return np.broadcast_to(a, (d,))
    except ValueError:
        raise ValueError(f"{name} must be a scalar or have shape ({d},), got {a.shape}") from None


# --------------------------------------------------------------------------- references
def min_l1(X, y):
    """Minimum-ℓ1 interpolant (basis pursuit) by ``linprog`` (HiGHS): β = p − q, p, q ≥ 0."""
    X, y = _check_xy(X, y)
    n, d = X.shape
    res = optimize.linprog(np.ones(2 * d), A_eq=np.hstack([X, -X]), b_eq=y,
                           bounds=(0, None), method="highs")
    if res.status != 0:
        raise RuntimeError(f"linprog failed: {res.message}")
    return res.x[:d] - res.x[d:]


def min_l2(X, y):
    """Minimum-ℓ2 interpolant ``X⁺y`` (lstsq)."""
    X, y = _check_xy(X, y)
    return np.linalg.lstsq(X, y, rcond=None)[0]


def solve_bias_slsqp(X, y, c, phi=0.0, *, maxiter: int = 500):
    """Primal SLSQP on the same problem (slow, loose; D ≲ 100 only), starting from X⁺y."""
    X, y = _check_xy(X, y)
    d = X.shape[1]
    c = _bcast("c", V.array("c", c, 0.0, np.inf, lo_open=True), d)
    phi = _bcast("phi", V.array("phi", phi), d)
    V.integer("maxiter", maxiter, 1)
    fun = lambda b: potential(b, c, phi)
    jac = lambda b: np.arcsinh(b / c) - phi
    cons = {"type": "eq", "fun": lambda b: X @ b - y, "jac": lambda b: X}
    res = optimize.minimize(fun, min_l2(X, y), jac=jac, constraints=[cons], method="SLSQP",
                            options={"maxiter": maxiter, "ftol": 1e-14})
    return res.x
