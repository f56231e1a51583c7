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

from .. import validation as V


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
    """Effective FT scales after pathway rebalancing.

    All arguments broadcast::

        c_d = (1+λ)(c + √(c² + β_PT,d²)) + γ²
    """
    c_pt = V.array("c_pt", c_pt, 0.0, np.inf, lo_open=True)
    lam_pt = V.array("lam_pt", lam_pt, -1.0, 1.0)
    gamma = V.array("gamma", gamma, 0.0, np.inf)
    b = V.array("beta_pt", beta_pt)
    return (1 + lam_pt) * (c_pt + np.hypot(c_pt, b)) + gamma**2


def tilted_params(wp, wm, gamma):
    """``(r, φ, β0)`` of the non-rebalanced FT potential after ``v± ← γ``.

    With the readout reset to γ::

        c̄ = (w₊² + w₋²)/2 + γ²,  β0 = γ(w₊ − w₋),  r = √(c̄² − β0²),  φ = asinh(β0/r)
    """
    wp, wm = V.array("wp", wp), V.array("wm", wm)
    gamma = V.real("gamma", gamma, 0.0, np.inf)
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
    # sum r (cosh a - 1), written as 2 r sinh^2(a/2): the constant sum r (thousands at large
    # scales) would swamp the line search's decrease in float64 (Newton then stalls near 1e-4)
    return float(np.sum(2 * r * np.sinh(a / 2) ** 2) - nu @ y)


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
    V.real("tol", tol, 0.0, 1.0, lo_open=True)
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


# --------------------------------------------------------------------------- batched (torch)
def solve_bias_batched(X, y, c, *, tol: float = 1e-10, max_newton: int = 400, device=None):
    """:func:`solve_bias` for B problems at once, in torch (float64) on ``device``.

    X: (B, N, D), y: (B, N), c: (B, D) or broadcastable, all > 0 (no tilt). The same dual
    Newton with continuation, one Cholesky per problem per step (batched), a vectorised
    Armijo line search, and a convergence mask; the host is synchronised once every few
    steps only. Returns ``(beta (B, D), residual (B,))`` as numpy arrays; raises
    ``RuntimeError`` if a residual exceeds ``1e-6 (1 + ‖y_b‖)``.
    """
    import torch

    X = torch.as_tensor(np.asarray(X, dtype=float) if not torch.is_tensor(X) else X, device=device,
                        dtype=torch.float64)
    if X.ndim != 3:
        raise ValueError(f"X must have shape (B, N, D), got {tuple(X.shape)}")
    b, n, d = X.shape
    y = torch.as_tensor(np.asarray(y, dtype=float) if not torch.is_tensor(y) else y, device=X.device,
                        dtype=torch.float64)
    if tuple(y.shape) != (b, n):
        raise ValueError(f"y must have shape ({b}, {n}), got {tuple(y.shape)}")
    c_np = V.array("c", c if not torch.is_tensor(c) else c.cpu().numpy(), 0.0, np.inf, lo_open=True)
    try:
        c_np = np.broadcast_to(c_np, (b, d))
    except ValueError:
        raise ValueError(f"c must broadcast to ({b}, {d}), got {c_np.shape}") from None
    V.real("tol", tol, 0.0, 1.0, lo_open=True)
    V.integer("max_newton", max_newton, 1)
    c = torch.as_tensor(np.array(c_np), device=X.device)
    Xt = X.transpose(1, 2)
    ynorm = 1.0 + torch.linalg.vector_norm(y, dim=1)
    t0 = max(1.0, float((10 * y.abs().amax(1) / np.sqrt(d) / c.amin(1)).max()))
    ts = np.geomspace(t0, 1.0, int(np.ceil(2 * np.log10(t0))) + 2) if t0 > 1 else np.array([1.0])
    nu = torch.zeros(b, n, dtype=torch.float64, device=X.device)

    def dual(nu_, r):
        a = (Xt @ nu_.unsqueeze(-1)).squeeze(-1)
        f = (2 * r * torch.sinh(a.clamp(-700, 700) / 2) ** 2).sum(1) - (nu_ * y).sum(1)
        return torch.where(a.abs().amax(1) > 700, torch.full_like(f, float("inf")), f)

    eye = torch.eye(n, dtype=torch.float64, device=X.device)
    for t in ts:
        r = float(t) * c
        last = t == ts[-1]
        tol_t = tol if last else 1e-6
        f = dual(nu, r)
        stalled = torch.zeros(b, dtype=torch.bool, device=X.device)
        for k in range(max_newton if last else 60):
            a = (Xt @ nu.unsqueeze(-1)).squeeze(-1)
            g = (X @ (r * torch.sinh(a)).unsqueeze(-1)).squeeze(-1) - y
            active = (torch.linalg.vector_norm(g, dim=1) > tol_t * ynorm) & ~stalled
            if k % 4 == 0 and not bool(active.any()):
                break
            H = (X * (r * torch.cosh(a)).unsqueeze(1)) @ Xt
            H = H + 1e-14 * (H.diagonal(dim1=1, dim2=2).mean(1))[:, None, None] * eye
            L, info = torch.linalg.cholesky_ex(H)
            step = torch.cholesky_solve(g.unsqueeze(-1), L).squeeze(-1)
            step = torch.where((active & (info == 0)).unsqueeze(-1), step, torch.zeros_like(step))
            dec = (g * step).sum(1)
            s = torch.ones(b, dtype=torch.float64, device=X.device)
            done = ~active
            f_new = f
            for _ in range(45):
                trial = dual(nu - s[:, None] * step, r)
                ok = (trial <= f - 1e-4 * s * dec) | (s < 1e-12) | (dec <= 0)
                f_new = torch.where(ok & ~done, trial, f_new)
                done = done | ok
                if bool(done.all()):
                    break
                s = torch.where(done, s, 0.5 * s)
            nu = nu - s[:, None] * step
            f = torch.where(done, f_new, f)
            stalled = stalled | (active & (s < 1e-10))  # no descent left: at the float64 floor
    beta = c * torch.sinh((Xt @ nu.unsqueeze(-1)).squeeze(-1))
    res = torch.linalg.vector_norm((X @ beta.unsqueeze(-1)).squeeze(-1) - y, dim=1)
    bad = res > 1e-6 * ynorm
    if bool(bad.any()):
        raise RuntimeError(f"batched dual Newton did not reach the constraint for {int(bad.sum())} of {b} "
                           f"problems: max residual {float(res.max()):.2e}")
    return beta.cpu().numpy(), res.cpu().numpy()
