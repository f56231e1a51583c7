"""Replica-symmetric (= AMP state-evolution) theory of minimum-potential interpolation.

For ``β̂ = argmin Σ_d C_d h(β_d/C_d)`` s.t. ``Xβ = Xβ*`` with ``X ∈ ℝ^{N×D}`` iid Gaussian,
``N = αD``, ``D → ∞``, the estimator decouples into a scalar channel (brief §2.8; a
reconstruction of the paper's Proposition 4.2 via Rangan–Fletcher–Goyal's MAP decoupling)::

    u = B + τ Z,  Z ~ N(0, 1);   η(u; θ, C) = argmin_b ½(b − u)² + θ C h(b/C)
                                            ⇔  b + θ asinh(b/C) = u
    η'(u) = 1 / (1 + θ / √(C² + η²))
    fixed point:   α τ² = E[(η(B + τZ) − B)²],     α = E[η'(B + τZ)]
    error:         e_gen = E[(η − B)²] = α τ²

(B, C) follow the joint law of ``(|β*_FT,d|, c_d)``; the law is given by weighted atoms.
Imperfect PT (α_PT < 1) is a two-stage calculation: first PT with ``C ≡ c_PT``, which gives
``β̂_PT = η(B_PT + τ_PT Z'; θ_PT, c_PT)``, then FT with atoms over (category, Z').
Expectations over Z use probabilists' Gauss–Hermite quadrature.

The chapter writes the effective noise ``τ`` of this module as ``σ`` (``τ`` is the GD step
there); the code keeps the name ``tau``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.polynomial.hermite_e import hermegauss
from scipy import optimize

from .bias import ft_scales
from .data import Task


def gauss_hermite(n: int):
    """Nodes and weights (summing to 1) for ``E f(Z)``, ``Z ~ N(0, 1)``."""
    if n < 2:
        raise ValueError(f"n must be >= 2, got {n}")
    z, w = hermegauss(n)
    return z, w / w.sum()


def prox(u, theta, C, iters: int = 40):
    """Solve ``b + θ asinh(b/C) = u`` (odd in u), vectorised.

    Substituting ``b = C sinh z`` gives the convex increasing equation
    ``C sinh z + θ z = |u|``; Newton from ``z0 = min(asinh(|u|/C), |u|/θ)`` (a point right of
    the root) decreases monotonically to the root.
    """
    u = np.asarray(u, dtype=float)
    a = np.abs(u)
    C = np.asarray(C, dtype=float)
    z = np.minimum(np.arcsinh(a / C), a / theta)
    for _ in range(iters):
        sh = np.sinh(z)
        g = C * sh + theta * z - a
        z_new = np.maximum(z - g / (C * np.cosh(z) + theta), 0.0)
        if np.all(np.abs(z_new - z) <= 1e-13 * (1 + z)):
            z = z_new
            break
        z = z_new
    return np.sign(u) * C * np.sinh(z)


def prox_deriv(b, theta, C):
    """``η' = 1 / (1 + θ/√(C² + b²))`` at the prox output ``b``."""
    return 1.0 / (1.0 + theta / np.hypot(C, b))


@dataclass
class ReplicaResult:
    tau: float
    theta: float
    error: float  # e_gen = E[(η − B)²]
    converged: bool
    iterations: int


class ScalarChannel:
    """Atoms ``(p, B, C)`` (shape (K,)) plus Gauss–Hermite nodes; evaluates the state."""

    def __init__(self, p, B, C, n_nodes: int = 121):
        self.p = np.asarray(p, dtype=float)
        self.B = np.abs(np.asarray(B, dtype=float))
        self.C = np.asarray(C, dtype=float)
        if not (self.p.shape == self.B.shape == self.C.shape) or self.p.ndim != 1:
            raise ValueError("p, B and C must be 1-D arrays of the same length")
        if np.any(self.C <= 0):
            raise ValueError("C must be > 0")
        keep = self.p > 0
        self.p, self.B, self.C = self.p[keep] / self.p[keep].sum(), self.B[keep], self.C[keep]
        self.z, self.w = gauss_hermite(n_nodes)
        self.EB2 = float(self.p @ self.B**2)

    def state(self, tau: float, theta: float):
        """``(E[(η − B)²], E[η'])`` at ``(τ, θ)``."""
        u = self.B[:, None] + tau * self.z[None, :]
        C = self.C[:, None]
        b = prox(u, theta, C)
        pw = self.p[:, None] * self.w[None, :]
        return float(np.sum(pw * (b - self.B[:, None]) ** 2)), float(np.sum(pw * prox_deriv(b, theta, C)))

    def theta_for(self, tau: float, alpha: float, guess: float | None = None) -> float:
        """θ with ``E[η'] = α`` at fixed τ (E η' decreases in θ; brentq on log θ, bracket
        ±2 around ``guess`` widened as needed, else [−30, 30])."""
        f = lambda lt: self.state(tau, np.exp(lt))[1] - alpha
        if guess is not None:
            lo, hi = np.log(guess) - 2.0, np.log(guess) + 2.0
            while f(lo) < 0 and lo > -30:
                lo -= 4.0
            while f(hi) > 0 and hi < 30:
                hi += 4.0
        else:
            lo, hi = -30.0, 30.0
        if f(lo) < 0:
            return float(np.exp(lo))
        if f(hi) > 0:
            return float(np.exp(hi))
        return float(np.exp(optimize.brentq(f, lo, hi, xtol=1e-12)))

    def gap(self, tau: float, alpha: float, guess: float | None = None) -> float:
        """``G(τ) = E[(η − B)²]/(α τ²) − 1`` with θ = θ(τ): negative above the stable fixed
        point, zero at a fixed point."""
        return self.state(tau, self.theta_for(tau, alpha, guess))[0] / (alpha * tau**2) - 1.0

    def solve(self, alpha: float, *, plain_iters: int = 6, tol: float = 1e-10,
              tau_min: float = 1e-9) -> ReplicaResult:
        """Solve the fixed point, selecting the largest root below ``τ_top = 10 τ0``,
        ``τ0² = E B²/α`` (the solution state evolution reaches from an uninformed start).

        Plain iterations, then Powell's hybrid root on (log τ, log θ). The root is accepted
        only if ``G < 0`` on a grid between it and τ_top (no larger fixed point). Otherwise a
        downward scan in τ from τ_top (factor 0.7) brackets the largest root for ``brentq``; if none is
        found above ``tau_min·√E B²`` the error is 0 (exact recovery).
        """
        if not 0 < alpha < 1:
            raise ValueError(f"alpha must lie in (0, 1), got {alpha}")
        scale = np.sqrt(self.EB2)
        tau0 = tau = np.sqrt(self.EB2 / alpha)
        theta = 1.0
        it = 0
        for it in range(1, plain_iters + 1):
            theta = self.theta_for(tau, alpha, None if it == 1 else theta)
            tau_new = np.sqrt(self.state(tau, theta)[0] / alpha)
            if tau_new < tau_min * scale:
                return ReplicaResult(0.0, theta, 0.0, True, it)
            done = abs(tau_new - tau) <= tol * tau
            tau = tau_new
            if done:
                return ReplicaResult(tau, theta, alpha * tau**2, True, it)

        def F(v):
            t, th = np.exp(v)
            mse, d = self.state(t, th)
            return [np.log(mse / alpha) - 2 * v[0], d - alpha]

        sol = optimize.root(F, [np.log(tau), np.log(theta)], method="hybr", options={"xtol": 1e-12})
        if sol.success and np.max(np.abs(F(sol.x))) < 1e-8:
            t, th = np.exp(sol.x)
            grid = t * np.geomspace(1.3, max(1.3, 10 * tau0 / t), 5)
            if t <= 10 * tau0 and all(self.gap(g, alpha, th) < 0 for g in grid):
                return ReplicaResult(float(t), float(th), float(alpha * t**2), True, it + sol.nfev)
        # robust path: scan down from τ0 for the first sign change of G
        hi, g_hi = 10 * tau0, self.gap(10 * tau0, alpha)
        n = 0
        while hi > tau_min * scale:
            lo = 0.7 * hi
            g_lo = self.gap(lo, alpha)
            n += 1
            if g_lo >= 0 > g_hi:
                lt = optimize.brentq(lambda x: self.gap(np.exp(x), alpha), np.log(lo), np.log(hi), xtol=1e-12)
                t = float(np.exp(lt))
                return ReplicaResult(t, self.theta_for(t, alpha), alpha * t**2, True, it + n)
            hi, g_hi = lo, g_lo
        return ReplicaResult(0.0, self.theta_for(hi, alpha), 0.0, True, it + n)


def ft_atoms(task: Task, c_pt: float, lam_pt: float, gamma: float, *, alpha_pt: float | None = None,
             n_nodes_pt: int = 41):
    """Atoms ``(p, B, C)`` of the FT channel.

    ``alpha_pt=None`` (or ≥ 1): perfect PT, ``β̂_PT = β*_PT`` — four atoms. Otherwise the
    PT stage is solved first and the atoms run over (category, Z') with ``n_nodes_pt`` nodes.
    Returns ``(p, B, C, pt_result)`` (``pt_result`` is None for perfect PT).
    """
    p, b_pt, b_ft = task.atoms()
    if alpha_pt is None or alpha_pt >= 1:
        return p, b_ft, ft_scales(b_pt, c_pt, lam_pt, gamma), None
    pt = ScalarChannel([task.rho_pt, 1 - task.rho_pt], [1 / np.sqrt(task.rho_pt), 0.0],
                       [c_pt, c_pt]).solve(alpha_pt)
    z, w = gauss_hermite(n_nodes_pt)
    bhat = prox(b_pt[:, None] + pt.tau * z[None, :], pt.theta, c_pt)  # (4, M')
    P = p[:, None] * w[None, :]
    Bf = np.broadcast_to(b_ft[:, None], bhat.shape)
    return P.ravel(), Bf.ravel(), ft_scales(bhat, c_pt, lam_pt, gamma).ravel(), pt


def replica_error(task: Task, alpha_ft: float, c_pt: float, lam_pt: float, gamma: float, *,
                  alpha_pt: float | None = None, n_nodes: int = 121, n_nodes_pt: int = 41) -> ReplicaResult:
    """Replica prediction of the FT generalisation error ``‖β̂_FT − β*_FT‖²/D``."""
    p, B, C, _ = ft_atoms(task, c_pt, lam_pt, gamma, alpha_pt=alpha_pt, n_nodes_pt=n_nodes_pt)
    return ScalarChannel(p, B, C, n_nodes=n_nodes).solve(alpha_ft)


def replica_pt_error(task: Task, alpha_pt: float, c_pt: float, n_nodes: int = 121) -> ReplicaResult:
    """Replica prediction of the PT error ``‖β̂_PT − β*_PT‖²/D`` (C ≡ c_PT)."""
    return ScalarChannel([task.rho_pt, 1 - task.rho_pt], [1 / np.sqrt(task.rho_pt), 0.0],
                         [c_pt, c_pt], n_nodes=n_nodes).solve(alpha_pt)
