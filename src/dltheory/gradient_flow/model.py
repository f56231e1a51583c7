"""Gradient flow and gradient descent on the diagonal linear network (the prologue).

Model: ``f(x) = <u ⊙ v, x>`` with ``u, v ∈ R^d`` (``d = 1`` is the two-parameter model
``f(x) = u v x``). Loss on data ``X: (n, d)``, ``y: (n,)``::

    L(u, v) = 1/(2n) ||X (u ⊙ v) - y||²,   r = X^T (X (u ⊙ v) - y) / n ∈ R^d,
    g_u = ∇_u L = v ⊙ r,                    g_v = ∇_v L = u ⊙ r.

Conservation law of the flow ``θ' = -∇L(θ)``: ``h = u² - v²`` (coordinate-wise), since
``d/dt (u² - v²) = -2 (u g_u - v g_v) = -2 (u v r - v u r) = 0``.

One GD step ``θ ← θ - τ g`` changes it by exactly the second-order term::

    h_{k+1} - h_k = τ² q(g_k),   q(g) = g_u² - g_v²      (gf-eq-step)

(the first-order term is the flow's zero). On this model ``q(g) = -r² h``, so
``h_{k+1} = (1 - τ² r_k²) h_k``: GD shrinks ``|h|``, by ``τ² Σ_j r_j² |h|`` at first order.

The single-run functions are pure numpy float64. ``gd_drift_batched`` runs many GD
trajectories at once (one row per seed and step size) with torch on the device. The
prologue's role files (``config``, ``experiments``, ``checks``, ``figures``,
``mutations``) are built on this module. Nothing here touches global state.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.integrate import solve_ivp

from .. import runtime
from ..validation import as_generator


@dataclass(frozen=True)
class Problem:
    """Least squares data for the diagonal network. X: (n, d); y: (n,)."""

    X: np.ndarray
    y: np.ndarray

    def __post_init__(self):
        if self.X.ndim != 2 or self.y.shape != (self.X.shape[0],):
            raise ValueError(f"need X (n, d) and y (n,), got {self.X.shape} and {self.y.shape}")

    @property
    def n(self) -> int:
        return self.X.shape[0]

    @property
    def d(self) -> int:
        return self.X.shape[1]


def scalar_problem(x: float = 1.0, y: float = 1.0) -> Problem:
    """The two-parameter model ``f(x) = u v x`` on one example: ``L = (u v x - y)² / 2``."""
    return Problem(np.array([[float(x)]]), np.array([float(y)]))


def sparse_regression(n: int, d: int, k: int, *, noise: float = 0.0,
                      seed: int | np.random.Generator) -> tuple[Problem, np.ndarray]:
    """Gaussian design ``X_ij ~ N(0, 1)`` and a k-sparse teacher ``β*`` with ±1 entries.

    Returns (problem, beta_star). ``y = X β* + noise · ε``.
    """
    if not (1 <= k <= d) or n < 1:
        raise ValueError(f"need n >= 1 and 1 <= k <= d, got n={n}, d={d}, k={k}")
    rng = as_generator(seed)
    X = rng.standard_normal((n, d))
    beta = np.zeros(d)
    support = rng.choice(d, size=k, replace=False)
    beta[support] = rng.choice([-1.0, 1.0], size=k)
    y = X @ beta + noise * rng.standard_normal(n)
    return Problem(X, y), beta


def residual_grad(p: Problem, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``r = X^T (X (u ⊙ v) - y) / n``, shape (d,)."""
    return p.X.T @ (p.X @ (u * v) - p.y) / p.n


def loss(p: Problem, u: np.ndarray, v: np.ndarray) -> float:
    res = p.X @ (u * v) - p.y
    return float(res @ res / (2 * p.n))


def grad(p: Problem, u: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(g_u, g_v) = (v ⊙ r, u ⊙ r)``."""
    r = residual_grad(p, u, v)
    return v * r, u * r


def loss_gradient_ratio(p: Problem, U: np.ndarray, V: np.ndarray, *, n_dirs: int = 16,
                        eps: float = 1e-5, seed: int | np.random.Generator = 0) -> float:
    """How the gradient used by GD compares with the derivative of the loss it descends.

    At each point ``(U[i], V[i])`` (U, V: (m, d)) and along ``n_dirs`` random unit directions
    ``w = (w_u, w_v)`` of R^{2d}, the analytic directional derivative ``a = <g_u, w_u> +
    <g_v, w_v>`` (from ``grad``) is set against the central difference of the loss,
    ``f = (L(θ + εw) - L(θ - εw)) / (2ε)``. Returns the least-squares ratio ``Σ a f / Σ f²``:
    1 up to the finite-difference error (``O(ε²)`` truncation, ``O(1e-16 L / ε)`` rounding),
    2 for a gradient twice its loss's.
    """
    U, V = np.atleast_2d(U), np.atleast_2d(V)
    if U.shape != V.shape or U.shape[1] != p.d:
        raise ValueError(f"U and V must have shape (m, {p.d}), got {U.shape} and {V.shape}")
    if not (np.isfinite(eps) and eps > 0) or n_dirs < 1:
        raise ValueError(f"need eps > 0 and n_dirs >= 1, got eps={eps}, n_dirs={n_dirs}")
    rng = as_generator(seed)
    a, f = [], []
    for u, v in zip(U, V, strict=True):
        gu, gv = grad(p, u, v)
        for _ in range(n_dirs):
            w = rng.standard_normal(2 * p.d)
            wu, wv = np.split(w / np.linalg.norm(w), 2)
            a.append(gu @ wu + gv @ wv)
            f.append((loss(p, u + eps * wu, v + eps * wv)
                      - loss(p, u - eps * wu, v - eps * wv)) / (2 * eps))
    a, f = np.array(a), np.array(f)
    return float(a @ f / (f @ f))


def balance(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """The conserved quantity of the flow, ``h = u² - v²`` (coordinate-wise)."""
    return u * u - v * v


def q(g_u: np.ndarray, g_v: np.ndarray) -> np.ndarray:
    """The quadratic form of the law evaluated at the gradient: ``g_u² - g_v²``."""
    return g_u * g_u - g_v * g_v


@dataclass(frozen=True)
class Trajectory:
    """A GD run. U, V: (steps + 1, d) the iterates; h: (steps + 1, d) the law after each
    step; q_sum: (steps + 1, d) the accumulator ``Σ_{j<k} τ² q(g_j)`` (exact drift per
    gf-eq-step)); loss: (steps + 1,)."""

    U: np.ndarray
    V: np.ndarray
    h: np.ndarray
    q_sum: np.ndarray
    loss: np.ndarray
    tau: float

    @property
    def u(self) -> np.ndarray:
        """Final u, shape (d,)."""
        return self.U[-1]

    @property
    def v(self) -> np.ndarray:
        """Final v, shape (d,)."""
        return self.V[-1]

    @property
    def drift(self) -> np.ndarray:
        """``||h_k - h_0||_2`` for every k, shape (steps + 1,)."""
        return np.linalg.norm(self.h - self.h[0], axis=1)

    @property
    def identity_error(self) -> float:
        """``max_k ||(h_k - h_0) - Σ_{j<k} τ² q(g_j)||_∞``: zero up to rounding by the one-step identity."""
        return float(np.abs((self.h - self.h[0]) - self.q_sum).max())


def gd(p: Problem, u0: np.ndarray, v0: np.ndarray, *, tau: float, steps: int) -> Trajectory:
    """Plain GD ``(u, v) ← (u, v) - τ (g_u, g_v)`` for ``steps`` steps, recording the law,
    the exact τ² accumulator and the loss after every step."""
    if not (np.isfinite(tau) and tau > 0) or steps < 0:   # NaN tau is refused too
        raise ValueError(f"need a finite step size tau > 0 and steps >= 0, got tau={tau}, "
                         f"steps={steps}")
    u, v = np.array(u0, dtype=float), np.array(v0, dtype=float)
    if u.shape != (p.d,) or v.shape != (p.d,):
        raise ValueError(f"u0 and v0 must have shape ({p.d},), got {u.shape} and {v.shape}")
    U = np.empty((steps + 1, p.d))
    V = np.empty((steps + 1, p.d))
    Q = np.zeros((steps + 1, p.d))
    L = np.empty(steps + 1)
    U[0], V[0], L[0] = u, v, loss(p, u, v)
    for k in range(steps):
        gu, gv = grad(p, u, v)
        Q[k + 1] = Q[k] + tau * tau * q(gu, gv)
        u, v = u - tau * gu, v - tau * gv
        U[k + 1], V[k + 1], L[k + 1] = u, v, loss(p, u, v)
    return Trajectory(U, V, balance(U, V), Q, L, float(tau))


def flow(p: Problem, u0: np.ndarray, v0: np.ndarray, t: float | np.ndarray, *,
         rtol: float = 1e-12, atol: float = 1e-14) -> tuple[np.ndarray, np.ndarray]:
    """Gradient flow ``θ' = -∇L(θ)`` integrated with scipy's DOP853.

    t: a time or a non-decreasing array of times (repeats and 0 allowed). Returns (u, v) of
    shape (d,) or (len(t), d).
    """
    ts = np.atleast_1d(np.asarray(t, dtype=float))
    if np.any(ts < 0) or np.any(np.diff(ts) < 0):
        raise ValueError("times must be >= 0 and increasing")
    d = p.d

    def rhs(_, z):
        u, v = z[:d], z[d:]
        gu, gv = grad(p, u, v)
        return np.concatenate([-gu, -gv])

    z0 = np.concatenate([np.asarray(u0, float), np.asarray(v0, float)])
    # solve_ivp wants strictly increasing times and a non-empty span: each distinct time
    # once, and all of them 0 is the start itself
    uniq, back = np.unique(ts, return_inverse=True)
    if uniq[-1] == 0:
        Z = z0[None, :]
    else:
        sol = solve_ivp(rhs, (0.0, float(uniq[-1])), z0, method="DOP853", t_eval=uniq,
                        rtol=rtol, atol=atol)
        if not sol.success:
            raise RuntimeError(f"solve_ivp failed: {sol.message}")
        Z = sol.y.T
    Z = Z[back.reshape(-1)]
    U, V = Z[:, :d], Z[:, d:]
    if np.ndim(t) == 0:
        return U[0], V[0]
    return U, V


def gd_to_flow_error(p: Problem, u0, v0, *, t: float, taus) -> np.ndarray:
    """``||θ_GD(k = t/τ) - θ_flow(t)||_2`` for each τ in ``taus`` (t/τ must be an integer)."""
    uf, vf = flow(p, u0, v0, t)
    out = []
    for tau in taus:
        k = int(round(t / tau))
        if not np.isclose(k * tau, t, rtol=1e-9):
            raise ValueError(f"t / tau must be an integer, got t={t}, tau={tau}")
        tr = gd(p, u0, v0, tau=tau, steps=k)
        out.append(np.sqrt(np.sum((tr.u - uf) ** 2) + np.sum((tr.v - vf) ** 2)))
    return np.array(out)


# --------------------------------------------------------------------------- batched GD
def gd_drift_batched(p: Problem, U0: np.ndarray, V0: np.ndarray, taus, *, steps: int,
                     device=None, dtype: str = "float64") -> np.ndarray:
    """Drift ``||h_k - h_0||_2`` of B independent GD runs at once, shape (B, steps + 1).

    U0, V0: (B, d) starts; taus: (B,) step sizes (or one float). Row b equals
    ``gd(p, U0[b], V0[b], tau=taus[b], steps=steps).drift`` up to rounding; the runs share
    one matmul per step on ``device`` (default: cuda when present), with no host sync
    until the end.
    """
    import torch

    U0, V0 = np.atleast_2d(U0), np.atleast_2d(V0)
    B = U0.shape[0]
    if U0.shape != (B, p.d) or V0.shape != (B, p.d) or steps < 0:
        raise ValueError(f"need U0, V0 of shape (B, {p.d}) and steps >= 0, got "
                         f"{U0.shape}, {V0.shape}, steps={steps}")
    dev = runtime.get_device(device)
    dt = getattr(torch, dtype)
    X = torch.as_tensor(p.X, dtype=dt, device=dev)
    y = torch.as_tensor(p.y, dtype=dt, device=dev)
    tau = torch.as_tensor(np.broadcast_to(np.asarray(taus, float), (B,)).copy(), dtype=dt,
                          device=dev)[:, None]
    if not bool(torch.all(torch.isfinite(tau) & (tau > 0))):
        raise ValueError(f"taus (step sizes) must be finite and > 0, got {taus!r}")
    U = torch.as_tensor(U0, dtype=dt, device=dev).clone()
    V = torch.as_tensor(V0, dtype=dt, device=dev).clone()
    h0 = U * U - V * V
    drift = torch.zeros(B, steps + 1, dtype=dt, device=dev)
    for k in range(steps):
        r = ((U * V) @ X.T - y) @ X / p.n              # (B, d): X^T (X beta - y) / n per run
        U, V = U - tau * (V * r), V - tau * (U * r)
        drift[:, k + 1] = torch.linalg.vector_norm(U * U - V * V - h0, dim=1)
    return drift.cpu().numpy()
