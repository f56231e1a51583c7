"""The ± diagonal linear network, its exact gradient flow and batched full-batch GD.

Network (one coordinate d of D, two pathways)::

    f(x) = βᵀx,   β = w₊ ⊙ v₊ − w₋ ⊙ v₋ ∈ ℝᴰ

``w`` is the first ("early") layer, ``v`` the readout. Loss ``L = ‖Xβ − y‖² / (2N)``.

Gradient flow with ``g = ∇_β L`` and the dual time ``s(t) = −∫₀ᵗ g`` gives, from a
per-coordinate initialisation ``w±(0) = w0``, ``v±(0) = v0``::

    w± = w0 cosh s ± v0 sinh s,   v± = v0 cosh s ± w0 sinh s,   β = c sinh(2s)

with ``c = w0² + v0²``. Conserved: ``w±² − v±² = cλ`` (the prologue's u² − v² law, with
``λ = (w0² − v0²)/c``) and ``w₊w₋ + v₊v₋ = c``.

Step size is ``tau`` (the prologue's τ, elsewhere called the learning rate), time ``t = τk``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch


def init_scales(c, lam):
    """First-layer and readout scales ``(w0, v0)`` with ``w0² + v0² = c`` and
    ``(w0² − v0²)/c = lam``: ``w0 = √(c(1+λ)/2)``, ``v0 = √(c(1−λ)/2)``.

    Broadcasts over array inputs. Raises ``ValueError`` if ``c <= 0`` or ``|lam| > 1``.
    """
    c = np.asarray(c, dtype=float)
    lam = np.asarray(lam, dtype=float)
    if np.any(~np.isfinite(c)) or np.any(c <= 0):
        raise ValueError(f"c must lie in (0, inf), got {c}")
    if np.any(~np.isfinite(lam)) or np.any(np.abs(lam) > 1):
        raise ValueError(f"lam must lie in [-1, 1], got {lam}")
    return np.sqrt(c * (1 + lam) / 2), np.sqrt(c * (1 - lam) / 2)


@dataclass
class DiagWeights:
    """The four weight vectors, each of shape ``(..., D)`` (numpy or torch)."""

    wp: object
    wm: object
    vp: object
    vm: object

    @property
    def beta(self):
        """``β = w₊v₊ − w₋v₋``."""
        return self.wp * self.vp - self.wm * self.vm

    def numpy(self) -> DiagWeights:
        f = lambda a: a.detach().cpu().numpy() if isinstance(a, torch.Tensor) else np.asarray(a)
        return DiagWeights(f(self.wp), f(self.wm), f(self.vp), f(self.vm))


def flow_weights(s, w0, v0) -> DiagWeights:
    """Exact gradient-flow weights at dual time ``s`` (shape ``(..., D)``) from the
    balanced-path init ``w±(0) = w0``, ``v±(0) = v0`` (broadcastable)."""
    ch, sh = np.cosh(s), np.sinh(s)
    return DiagWeights(w0 * ch + v0 * sh, w0 * ch - v0 * sh, v0 * ch + w0 * sh, v0 * ch - w0 * sh)


def flow_weights_from_beta(beta, c, lam) -> DiagWeights:
    """Closed-form end-of-training weights as a function of the learned β:
    ``s = ½ asinh(β/c)`` inserted into :func:`flow_weights`."""
    w0, v0 = init_scales(c, lam)
    s = 0.5 * np.arcsinh(np.asarray(beta, dtype=float) / c)
    return flow_weights(s, w0, v0)


def invariants(W: DiagWeights):
    """The two conserved quantities per coordinate, shape ``(..., D)`` each:
    ``(w₊² − v₊², w₋² − v₋², w₊w₋ + v₊v₋)``."""
    return W.wp**2 - W.vp**2, W.wm**2 - W.vm**2, W.wp * W.wm + W.vp * W.vm


def rebalance(W: DiagWeights, b) -> DiagWeights:
    """Pathway-rebalanced FT init: both first layers set to ``a = w₊ + w₋``, both readouts
    re-initialised to ``b`` (= γ_FT). Then ``β_FT(0) = 0`` and ``c_d = a_d² + b²``."""
    a = W.wp + W.wm
    return DiagWeights(a, a * 1, b + 0 * a, b + 0 * a)


def network_ft_scales(beta_pt, c, lam, gamma, kappa=1.0):
    """The per-coordinate scale ``c_d = w_d(0)² + v_d(0)²`` of the FT network itself: the
    end-of-PT weights of the flow at ``β_PT`` (:func:`flow_weights_from_beta`), rebalanced
    with readout ``γ`` (:func:`rebalance`), the first layer then multiplied by ``kappa``
    (the digits stand-in's intervention, section 9). The simulations build their FT
    potential from these weights, so a formula for ``c_d`` (``bias.ft_scales``) is tested
    against the network, not against itself (the two agree when that formula is right)."""
    W = rebalance(flow_weights_from_beta(beta_pt, c, lam), gamma)
    return (kappa * np.asarray(W.wp, dtype=float)) ** 2 + np.asarray(W.vp, dtype=float) ** 2


def kappa_lambda_eff(kappa, lam0):
    """The relative PT scale that the first-layer shrink ``kappa`` amounts to: with rebalanced
    FT and a re-initialised readout, shrinking the first layer of a network pretrained at
    ``lam0`` gives the FT scales ``c_d`` of a network pretrained at ``lam_eff`` (same
    ``c_PT``, hence the same ``β_PT``), ``1 + lam_eff = kappa² (1 + lam0)``."""
    return np.asarray(kappa, dtype=float) ** 2 * (1 + np.asarray(lam0, dtype=float)) - 1


def readout_reinit(W: DiagWeights, b) -> DiagWeights:
    """Non-rebalanced FT init (Lippl & Lindsey): keep ``w±``, set ``v± = b``;
    ``β_FT(0) = b(w₊ − w₋) ≠ 0`` in general."""
    return DiagWeights(W.wp * 1, W.wm * 1, b + 0 * W.wp, b + 0 * W.wp)


def uniform_init(c, lam, shape, device=None) -> DiagWeights:
    """Torch float64 weights of ``shape = (B, D)`` with per-problem ``c``/``lam`` (shape (B,)
    or scalars) on both paths."""
    w0, v0 = init_scales(c, lam)
    w0 = torch.as_tensor(np.broadcast_to(np.reshape(w0, (-1, 1)), shape).copy(), device=device)
    v0 = torch.as_tensor(np.broadcast_to(np.reshape(v0, (-1, 1)), shape).copy(), device=device)
    return DiagWeights(w0.clone(), w0.clone(), v0.clone(), v0.clone())


def sharpness(X, c_d, beta=None) -> float:
    """Largest eigenvalue of the loss Hessian (in the weights) of the rebalanced FT network
    with scales ``c_d`` at a point of the flow where the network computes ``beta`` (default
    0, the FT initialisation) and the residual vanishes.

    Derivation: along the flow from the rebalanced init (``w± = a``, ``v± = γ``,
    ``c_d = a² + γ²``), ``w± = a cosh s ± γ sinh s``, ``v± = γ cosh s ± a sinh s``, so the
    squared gradient of ``β_d`` in the coordinate's four weights is
    ``w₊² + v₊² + w₋² + v₋² = 2 c_d cosh 2s = 2√(c_d² + β_d²)`` (with ``β_d = c_d sinh 2s``).
    At zero residual the Hessian of ``L = ‖Xβ − y‖²/2N`` is ``JᵀXᵀXJ/N`` (J = ∂β/∂θ), whose
    non-zero spectrum is that of ``X diag(2√(c_d² + β_d²)) Xᵀ / N``. GD is stable near such a
    point only for ``τ < 2 / sharpness``; the sharpness grows with ``c_d`` (10⁴ times from
    ``c_PT = 10⁻³`` to 10), so a fixed step that suits the rich regime diverges in the lazy one.
    """
    X = np.asarray(X, dtype=float)
    c_d = np.broadcast_to(np.asarray(c_d, dtype=float), X.shape[-1:])
    b = np.zeros_like(c_d) if beta is None else np.asarray(beta, dtype=float)
    k = 2.0 * np.hypot(c_d, b)
    G = (X * k) @ X.T / X.shape[0]
    return float(np.linalg.eigvalsh(G)[-1])


@dataclass
class GDResult:
    weights: DiagWeights  # torch tensors (B, D)
    steps: int
    loss: torch.Tensor  # (B,) final losses


def train_gd(X, y, W: DiagWeights, tau, *, max_steps: int = 100_000,
             tol: float = 1e-12, check_every: int = 50) -> GDResult:
    """Batched full-batch GD on ``L_b = ‖X_b β_b − y_b‖² / (2N)`` for B problems at once.

    X: (B, N, D), y: (B, N), weights (B, D) (torch, float64); tau: a float or one step size
    per problem (shape (B,)). Update, with ``g = X_bᵀr_b/N``:
    ``w₊ −= τ g v₊``, ``v₊ −= τ g w₊``, ``w₋ += τ g v₋``, ``v₋ += τ g w₋`` (simultaneous).
    Stops when every problem has loss ≤ ``tol`` or after ``max_steps``; problems that have
    converged keep stepping (harmless: their gradient is ~0).
    """
    X = torch.as_tensor(X)
    tau_np = np.asarray(tau, dtype=float)
    if not np.all(np.isfinite(tau_np)) or np.any(tau_np <= 0):
        raise ValueError(f"tau must be finite and > 0 (step size in (0, inf)), got {tau}")
    if isinstance(max_steps, bool) or not isinstance(max_steps, (int, np.integer)) or max_steps < 1:
        raise ValueError(f"max_steps must be an integer in [1, inf), got {max_steps!r}")
    if not np.isfinite(tol) or tol < 0:
        raise ValueError(f"tol must lie in [0, inf), got {tol}")
    if tau_np.ndim == 1:
        tau = torch.as_tensor(tau_np, device=X.device).reshape(-1, 1)
    y = torch.as_tensor(y, device=X.device)
    if X.ndim != 3 or y.ndim != 2 or y.shape != X.shape[:2]:
        raise ValueError(f"X must be (B, N, D) and y (B, N); got {tuple(X.shape)}, {tuple(y.shape)}")
    n = X.shape[1]
    wp, wm, vp, vm = (t.clone() for t in (W.wp, W.wm, W.vp, W.vm))
    Xt = X.transpose(1, 2)
    loss = None
    k = 0
    for k in range(1, max_steps + 1):
        beta = wp * vp - wm * vm
        r = torch.bmm(X, beta.unsqueeze(-1)).squeeze(-1) - y
        g = torch.bmm(Xt, r.unsqueeze(-1)).squeeze(-1) / n
        wp, vp, wm, vm = wp - tau * g * vp, vp - tau * g * wp, wm + tau * g * vm, vm + tau * g * wm
        if k % check_every == 0:
            beta = wp * vp - wm * vm
            r = torch.bmm(X, beta.unsqueeze(-1)).squeeze(-1) - y
            loss = 0.5 * (r**2).mean(-1)
            if bool((loss <= tol).all()) or not bool(torch.isfinite(loss).all()):
                break  # converged, or diverged (a step past 2 / sharpness): stop either way
    beta = wp * vp - wm * vm
    r = torch.bmm(X, beta.unsqueeze(-1)).squeeze(-1) - y
    loss = 0.5 * (r**2).mean(-1)
    return GDResult(DiagWeights(wp, wm, vp, vm), k, loss)


def train_gd_loop(X, y, W: DiagWeights, tau, *, max_steps: int = 100_000,
                  tol: float = 1e-12, check_every: int = 50) -> GDResult:
    """Reference implementation: the same GD run one problem at a time (for the benchmark)."""
    outs, steps, losses = [], 0, []
    for b in range(X.shape[0]):
        Wb = DiagWeights(W.wp[b:b + 1], W.wm[b:b + 1], W.vp[b:b + 1], W.vm[b:b + 1])
        tb = tau if np.ndim(tau) == 0 else np.asarray(tau)[b:b + 1]
        res = train_gd(X[b:b + 1], y[b:b + 1], Wb, tb, max_steps=max_steps, tol=tol,
                       check_every=check_every)
        outs.append(res.weights)
        steps = max(steps, res.steps)
        losses.append(res.loss)
    cat = lambda name: torch.cat([getattr(o, name) for o in outs])
    return GDResult(DiagWeights(cat("wp"), cat("wm"), cat("vp"), cat("vm")), steps, torch.cat(losses))
