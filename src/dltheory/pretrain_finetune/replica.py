"""Replica-symmetric (= AMP state-evolution) theory of minimum-potential interpolation.

For ``β̂ = argmin Σ_d C_d h(β_d/C_d)`` s.t. ``Xβ = Xβ*`` with ``X ∈ ℝ^{N×D}`` iid Gaussian,
``N = αD``, ``D → ∞``, the estimator decouples into a scalar channel (a reconstruction of
the paper's Proposition 4.2 via Rangan–Fletcher–Goyal's MAP decoupling)::

    u = B + τ Z,  Z ~ N(0, 1);   η(u; θ, C) = argmin_b ½(b − u)² + θ C h(b/C)
                                            ⇔  b + θ asinh(b/C) = u
    η'(u) = 1 / (1 + θ / √(C² + η²))
    fixed point:   α τ² = E[(η(B + τZ) − B)²],     α = E[η'(B + τZ)]
    error:         e_gen = E[(η − B)²] = α τ²

(B, C) follow the joint law of ``(|β*_FT,d|, c_d)``, given by weighted atoms. Imperfect PT
(α_PT < 1) is a two-stage calculation: first PT with ``C ≡ c_PT``, which gives
``β̂_PT = η(B_PT + τ_PT Z'; θ_PT, c_PT)``, then FT with atoms over (category, Z').

**Quadrature.** For small ``C`` the prox is nearly a soft threshold: ``η`` bends on the scale
``θ + C`` around ``u = 0``. Gauss–Hermite nodes (spacing ~ τ/3) miss that bend once
``τ ≫ θ + C``; the error in ``E η'`` then reaches several per cent and the fixed-point map
acquires spurious roots. Expectations therefore use composite Gauss–Legendre panels: unit
panels in ``z`` plus geometrically graded panels (ratio √2) around the bend at ``u = 0``,
accurate to ~1e-12 on the whole parameter domain (tests compare with a 4e5-point rule).

**Root selection.** The fixed point is the largest root of
``G(τ) = E[(η − B)²]/(α τ²) − 1`` (θ = θ(τ) from ``E η' = α``) below ``τ_top = 10 τ0``,
``τ0² = E B²/α`` (state evolution from the uninformed start β = 0 decreases towards it).
A candidate from a 2-D Newton-type solve is accepted only when it is *stable* (G > 0 just
below, G < 0 just above) and G < 0 on a grid from it up to τ_top; otherwise a downward scan
brackets the largest root. ``ReplicaResult.verified`` records that check.

The chapter writes the effective noise ``τ`` of this module as ``σ`` (``τ`` is the GD step
there); the code keeps the name ``tau``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from numpy.polynomial.legendre import leggauss
from scipy import linalg, optimize

from .. import validation as V
from .bias import ft_scales
from .data import Task

_L = 9.0  # |z| range of the quadrature (Gaussian mass beyond: 2e-19)


@lru_cache(maxsize=64)
def _legendre(m: int):
    """Gauss–Legendre nodes and weights on [-1, 1] (read-only; computed once per ``m``: the
    solver asks for them tens of thousands of times per chapter)."""
    x, w = leggauss(m)
    x.setflags(write=False)
    w.setflags(write=False)
    return x, w


def gauss_hermite(n: int):
    """Nodes and weights (summing to 1) for ``E f(Z)``, ``Z ~ N(0, 1)`` (Golub–Welsch: stable
    for any ``n``, unlike the three-term recurrence, which overflows near n = 400)."""
    n = V.integer("n", n, 2, 5000)
    off = np.sqrt(np.arange(1, n, dtype=float))
    z, vec = linalg.eigh_tridiagonal(np.zeros(n), off)
    w = vec[0] ** 2
    return z, w / w.sum()


def panel_nodes(B, C, tau: float, theta: float, *, m: int = 6, ratio: float = np.sqrt(2.0),
                h: float = 1.0):
    """Composite Gauss–Legendre nodes ``z`` and weights (each ``(K, M)``) for
    ``E f(B_k + τZ)``, graded towards the bend of the prox at ``u = 0`` (scale θ + C_k)."""
    B = np.asarray(B, dtype=float)[:, None]
    C = np.asarray(C, dtype=float)[:, None]
    k = B.shape[0]
    zu = np.broadcast_to(np.arange(-_L, _L + 1e-9, h)[None, :], (k, int(round(2 * _L / h)) + 1))
    s = (theta + C) / 8.0
    top = np.abs(B) + _L * tau
    j = int(min(200, np.ceil(np.log(np.max(top / s)) / np.log(ratio)) + 1))
    g = s * ratio ** np.arange(max(j, 1))[None, :]
    zk = np.concatenate([(g - B) / tau, (-g - B) / tau, -B / tau], axis=1)
    bp = np.sort(np.clip(np.concatenate([zu, zk], axis=1), -_L, _L), axis=1)
    a, b = bp[:, :-1], bp[:, 1:]
    order = np.argsort(b - a <= 0, axis=1, kind="stable")  # non-empty panels first
    a, b = np.take_along_axis(a, order, 1), np.take_along_axis(b, order, 1)
    keep = int((b - a > 0).sum(1).max())
    a, b = a[:, :keep, None], b[:, :keep, None]
    x, w = _legendre(m)
    z = (a + b) / 2 + (b - a) / 2 * x
    wt = (b - a) / 2 * w * np.exp(-(z**2) / 2) / np.sqrt(2 * np.pi)
    return z.reshape(k, -1), wt.reshape(k, -1)


def prox(u, theta, C, iters: int = 60):
    """Solve ``b + θ asinh(b/C) = u`` (odd in u), vectorised; θ > 0, C > 0.

    Substituting ``b = C sinh z`` gives the convex increasing equation
    ``C sinh z + θ z = |u|``; Newton from ``z0 = min(asinh(|u|/C), |u|/θ)`` (a point right of
    the root) decreases monotonically to the root.
    """
    u = np.asarray(u, dtype=float)
    if np.any(np.asarray(theta) <= 0):
        raise ValueError(f"theta must be > 0, got {theta}")
    if np.any(np.asarray(C) <= 0):
        raise ValueError("C must be > 0 (entrywise)")
    a = np.abs(u)
    C = np.asarray(C, dtype=float)
    z = np.minimum(np.arcsinh(a / C), a / theta)
    for _ in range(iters):
        g = C * np.sinh(z) + theta * z - a
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
    verified: bool = True  # the accepted root passed the stability / largest-root check


class ScalarChannel:
    """Atoms ``(p, B, C)`` (shape (K,)); evaluates the state with graded Gauss–Legendre
    panels of ``n_nodes`` nodes each."""

    def __init__(self, p, B, C, n_nodes: int = 6):
        self.p = V.array("p", p, 0.0, np.inf)
        self.B = np.abs(V.array("B", B))
        self.C = V.array("C", C, 0.0, np.inf, lo_open=True)
        if not (self.p.shape == self.B.shape == self.C.shape) or self.p.ndim != 1:
            raise ValueError("p, B and C must be 1-D arrays of the same length")
        if self.p.sum() <= 0:
            raise ValueError("p must have positive total mass")
        self.m = V.integer("n_nodes", n_nodes, 2, 64)
        keep = self.p > 1e-13 * self.p.max()  # drops < 1e-10 of the mass
        self.p, self.B, self.C = self.p[keep] / self.p[keep].sum(), self.B[keep], self.C[keep]
        self.EB2 = float(self.p @ self.B**2)
        self.evals = 0

    def state(self, tau: float, theta: float):
        """``(E[(η − B)²], E[η'])`` at ``(τ, θ)``."""
        self.evals += 1
        z, w = panel_nodes(self.B, self.C, tau, theta, m=self.m)
        u = self.B[:, None] + tau * z
        C = self.C[:, None]
        b = prox(u, theta, C)
        pw = self.p[:, None] * w
        return float(np.sum(pw * (b - self.B[:, None]) ** 2)), float(np.sum(pw * prox_deriv(b, theta, C)))

    def theta_for(self, tau: float, alpha: float, guess: float | None = None) -> float:
        """θ with ``E[η'] = α`` at fixed τ (E η' decreases in θ; brentq on log θ)."""
        f = lambda lt: self.state(tau, np.exp(lt))[1] - alpha
        if guess is not None:
            lo, hi = np.log(guess) - 1.0, np.log(guess) + 1.0
            while f(lo) < 0 and lo > -40:
                lo -= 3.0
            while f(hi) > 0 and hi < 40:
                hi += 3.0
        else:
            lo, hi = -40.0, 40.0
        if f(lo) < 0:
            return float(np.exp(lo))
        if f(hi) > 0:
            return float(np.exp(hi))
        return float(np.exp(optimize.brentq(f, lo, hi, xtol=1e-13)))

    def gap(self, tau: float, alpha: float, guess: float | None = None) -> float:
        """``G(τ) = E[(η − B)²]/(α τ²) − 1`` with θ = θ(τ): negative above the stable fixed
        point, zero at a fixed point."""
        return self.state(tau, self.theta_for(tau, alpha, guess))[0] / (alpha * tau**2) - 1.0

    def _accept(self, t, th, alpha, tau_top) -> bool:
        """Stable root and no larger root up to ``tau_top``."""
        if not 0 < t <= tau_top:
            return False
        if self.gap(t / 1.02, alpha, th) <= 0 or self.gap(t * 1.02, alpha, th) >= 0:
            return False
        grid = t * np.geomspace(1.3, max(1.3, tau_top / t), 4)
        return all(self.gap(g, alpha, th) < 0 for g in grid)

    def solve(self, alpha: float, *, tol: float = 1e-10, tau_min: float = 1e-9) -> ReplicaResult:
        """Solve the fixed point (see the module docstring for the root selection)."""
        alpha = V.real("alpha", alpha, 0.0, 1.0, lo_open=True, hi_open=True)
        scale = np.sqrt(self.EB2)
        if scale == 0:
            return ReplicaResult(0.0, 1.0, 0.0, True, 0, True)
        tau0 = tau = np.sqrt(self.EB2 / alpha)
        tau_top = 10 * tau0
        theta = None
        it = 0
        for it in range(1, 4):  # noqa: B007  (it counts the steps after the loop)
            theta = self.theta_for(tau, alpha, theta)
            tau_new = np.sqrt(self.state(tau, theta)[0] / alpha)
            if tau_new < tau_min * scale:
                break
            done = abs(tau_new - tau) <= tol * tau
            tau = tau_new
            if done:
                break

        def F(v):
            t, th = np.exp(np.clip(v, -60.0, np.log(tau_top)))
            mse, d = self.state(t, th)
            return [np.log(mse / alpha) - 2 * v[0], d - alpha]

        if tau >= tau_min * scale:
            sol = optimize.root(F, [np.log(tau), np.log(theta)], method="hybr", options={"xtol": 1e-12})
            if sol.success and np.max(np.abs(F(sol.x))) < 1e-8:
                t, th = np.exp(sol.x)
                if self._accept(t, th, alpha, tau_top):
                    return ReplicaResult(float(t), float(th), float(alpha * t**2), True, it + sol.nfev, True)
        # robust path: scan down from tau_top for the first sign change of G
        hi, g_hi = tau_top, self.gap(tau_top, alpha)
        n = 0
        while hi > tau_min * scale:
            lo = 0.7 * hi
            g_lo = self.gap(lo, alpha)
            n += 1
            if g_lo >= 0 > g_hi:
                lt = optimize.brentq(lambda x: self.gap(np.exp(x), alpha), np.log(lo), np.log(hi), xtol=1e-12)
                t = float(np.exp(lt))
                return ReplicaResult(t, self.theta_for(t, alpha), alpha * t**2, True, it + n, True)
            hi, g_hi = lo, g_lo
        return ReplicaResult(0.0, self.theta_for(hi, alpha), 0.0, True, it + n, True)


def _pt_channel(task: Task, c_pt: float, n_nodes: int) -> ScalarChannel:
    return ScalarChannel([task.rho_pt, 1 - task.rho_pt], [1 / np.sqrt(task.rho_pt), 0.0],
                         [c_pt, c_pt], n_nodes=n_nodes)


def ft_atoms(task: Task, c_pt: float, lam_pt: float, gamma: float, *, alpha_pt: float | None = None,
             n_nodes: int = 6, pt_rule: tuple | None = None):
    """Atoms ``(p, B, C)`` of the FT channel.

    ``alpha_pt=None`` (or ≥ 1): perfect PT, ``β̂_PT = β*_PT`` — four atoms. Otherwise the
    PT stage is solved first (same quadrature) and the atoms run over (category, Z'), Z'
    on the graded panels of :func:`pt_stage_rule` (``pt_rule = (m, ratio, h)`` overrides
    it, for tests). Returns ``(p, B, C, pt_result)`` (``pt_result`` is None for perfect PT).
    """
    _check_knobs(c_pt=c_pt, lam_pt=lam_pt, gamma=gamma)
    if not isinstance(task, Task):
        raise ValueError(f"task must be a Task, got {type(task).__name__}")
    p, b_pt, b_ft = task.atoms()
    if alpha_pt is None or alpha_pt >= 1:
        return p, b_ft, ft_scales(b_pt, c_pt, lam_pt, gamma), None
    alpha_pt = V.real("alpha_pt", alpha_pt, 0.0, 1.0, lo_open=True)
    pt = _pt_channel(task, c_pt, n_nodes).solve(alpha_pt)
    cats = np.array([1 / np.sqrt(task.rho_pt), 0.0])
    tau = max(pt.tau, 1e-300)
    m, ratio, h = pt_rule if pt_rule is not None else pt_stage_rule(n_nodes)
    z, w = panel_nodes(cats, [c_pt, c_pt], tau, pt.theta, m=m, ratio=ratio, h=h)
    bhat_cat = prox(cats[:, None] + pt.tau * z, pt.theta, c_pt)  # (2, M')
    which = np.array([0, 0, 1, 1])  # PT category of the 4 (PT, FT) atoms
    bhat, wz = bhat_cat[which], w[which]
    P = p[:, None] * wz
    Bf = np.broadcast_to(b_ft[:, None], bhat.shape)
    return P.ravel(), Bf.ravel(), ft_scales(bhat, c_pt, lam_pt, gamma).ravel(), pt


def pt_stage_rule(n_nodes: int) -> tuple[int, float, float]:
    """Quadrature ``(m, ratio, h)`` over the PT noise Z' of the two-stage calculation:
    ``m = max(3, n_nodes // 2)`` Gauss-Legendre nodes per panel, panels graded by
    ``ratio = √2`` towards the PT prox's bend at ``u' = 0`` and unit panels of width 1.5.

    Why √2: the FT scales ``c_d = c_d(β̂_PT(Z'))`` inherit the bend of the PT prox on the
    scale θ_PT + c_PT, which the FT stage's own rule resolves by √2 grading. The former
    grading by 2 left a relative error of about 1e-4 in the FT error where ``c_d`` follows
    ``|β̂_PT|`` closely (λ_PT = +1 after a failed dense PT: ρ_PT = 0.5, α_PT = 0.2,
    c_PT = γ = 1e-4, α_FT = 0.35: 1.2e-4 against a fine reference, 1.3e-4 against its own
    8-node value; 7.5e-5 at the chapter's defaults with λ_PT = 0); √2 brings both to about
    2.5e-6 for 1.6 times the atoms (4 nodes per panel would give 1e-7 for 2.1 times)."""
    V.integer("n_nodes", n_nodes, 2, 64)
    return max(3, n_nodes // 2), float(np.sqrt(2.0)), 1.5


def _check_knobs(*, c_pt=None, lam_pt=None, gamma=None):
    if c_pt is not None:
        V.real("c_pt", c_pt, 0.0, np.inf, lo_open=True)
    if lam_pt is not None:
        V.real("lam_pt", lam_pt, -1.0, 1.0)
    if gamma is not None:
        V.real("gamma", gamma, 0.0, np.inf)


class ReplicaUndefined(ValueError):
    """The FT potential the theory builds has a scale ``c_d`` that is not positive and finite,
    so the replica equations have no prediction there. With the formula of
    :func:`~.bias.ft_scales` this never happens in the declared domain (``c_d >= γ² > 0``);
    the chapter records it as a failed prediction (``PF.replica.defined``), not a crash."""


def replica_error(task: Task, alpha_ft: float, c_pt: float, lam_pt: float, gamma: float, *,
                  alpha_pt: float | None = None, n_nodes: int = 6) -> ReplicaResult:
    """Replica prediction of the FT generalisation error ``‖β̂_FT − β*_FT‖²/D``.

    ``n_nodes``: Gauss–Legendre nodes per quadrature panel, used by both stages. Raises
    :class:`ReplicaUndefined` when the FT scales ``c_d`` are not all positive and finite."""
    alpha_ft = V.real("alpha_ft", alpha_ft, 0.0, 1.0, lo_open=True, hi_open=True)
    p, B, C, _ = ft_atoms(task, c_pt, lam_pt, gamma, alpha_pt=alpha_pt, n_nodes=n_nodes)
    C = np.asarray(C, dtype=float)
    if not np.all(np.isfinite(C) & (C > 0)):
        raise ReplicaUndefined(f"FT scales c_d must be positive and finite; got min {np.nanmin(C):.3g} at "
                               f"c_PT={c_pt:g}, lambda_PT={lam_pt:g}, gamma={gamma:g}")
    return ScalarChannel(p, B, C, n_nodes=n_nodes).solve(alpha_ft)


def replica_pt_error(task: Task, alpha_pt: float, c_pt: float, n_nodes: int = 6) -> ReplicaResult:
    """Replica prediction of the PT error ``‖β̂_PT − β*_PT‖²/D`` (C ≡ c_PT)."""
    if not isinstance(task, Task):
        raise ValueError(f"task must be a Task, got {type(task).__name__}")
    alpha_pt = V.real("alpha_pt", alpha_pt, 0.0, 1.0, lo_open=True, hi_open=True)
    _check_knobs(c_pt=c_pt)
    return _pt_channel(task, c_pt, n_nodes).solve(alpha_pt)
