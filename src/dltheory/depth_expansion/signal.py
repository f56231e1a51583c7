"""Activation gradients, the first-order signal, its permutation null, and jumpboard models.

Notation (reconstructed definitions, see the chapter). Loss: clipped cross-entropy
``l = min(CE, B)``. At the split point z = f_bot(x) of the old model:

    g(x, y) = d l(f_top(z), y) / dz                          activation gradient, (n, d)
    C = E[ g phi_U(z)^T ] = dR/dV at V = 0                    first-order signal, (d, k)
    gamma = ||C||_F,  v = C / ||C||_F                         strength and direction

so that along theta = -eta v the risk starts with slope ``dR/deta = -gamma``. A jumpboard
model is the expanded model at theta = -eta* v with eta* from a line search.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
from torch.nn import functional as F

from .. import validation
from ..runtime import as_generator
from .models import SplitNet, ZeroInitBlock

B_DEFAULT = 5.0


def clipped_ce(logits: torch.Tensor, y: torch.Tensor, B: float = B_DEFAULT) -> torch.Tensor:
    """Per-sample ``min(CE(logits, y), B)``: (n, classes), (n,) -> (n,). Bounded in [0, B]
    so Hoeffding and Rademacher bounds apply; its gradient is CE's where CE < B, else 0."""
    validation.real("B", B, lo=0, lo_open=True)
    return F.cross_entropy(logits, y, reduction="none").clamp(max=B)


@torch.no_grad()
def per_sample_loss(model, X: torch.Tensor, y: torch.Tensor, B: float = B_DEFAULT,
                    batch: int = 8192) -> torch.Tensor:
    """(n,) clipped losses of ``model`` on (X, y), evaluated in batches, eval mode."""
    was = model.training
    model.eval()
    out = torch.cat([clipped_ce(model(X[i:i + batch]), y[i:i + batch], B)
                     for i in range(0, len(y), batch)])
    model.train(was)
    return out


def risk(model, X: torch.Tensor, y: torch.Tensor, B: float = B_DEFAULT) -> float:
    """Empirical risk: mean clipped loss on (X, y)."""
    return float(per_sample_loss(model, X, y, B).mean())


def activation_grads(model: SplitNet, l: int, X: torch.Tensor, y: torch.Tensor,
                     B: float = B_DEFAULT) -> tuple[torch.Tensor, torch.Tensor]:
    """(z, g): z = f_bot(x) and per-sample g_i = d l_i / d z_i, both (n, d) or (n, c, H, W).

    One backward pass of the *summed* loss: samples do not interact (RMSNorm/GroupNorm
    normalise within a sample), so d(sum_j l_j)/dz_i = d l_i / dz_i.
    """
    with torch.no_grad():
        z = model.bottom(X, l)
    z = z.detach().requires_grad_(True)
    loss = clipped_ce(model.top(z, l), y, B).sum()
    (g,) = torch.autograd.grad(loss, z)
    return z.detach(), g.detach()


def activation_grads_loop(model: SplitNet, l: int, X: torch.Tensor, y: torch.Tensor,
                          B: float = B_DEFAULT) -> torch.Tensor:
    """Reference implementation: one backward pass per sample. g: (n, ...)."""
    gs = []
    for i in range(len(y)):
        z = model.bottom(X[i:i + 1], l).detach().requires_grad_(True)
        (gi,) = torch.autograd.grad(clipped_ce(model.top(z, l), y[i:i + 1], B).sum(), z)
        gs.append(gi)
    return torch.cat(gs)


def signal_matrix(g: torch.Tensor, phi: torch.Tensor) -> torch.Tensor:
    """C = (1/n) sum_i g_i phi_i^T.

    MLP: g (n, d), phi (n, k) -> (d, k); token sequences: g (n, T, d), phi (n, T, k) ->
    (d, k), summing over tokens. Conv with a 1x1 V: g (n, d, H, W), phi (n, k, H, W)
    -> (d, k, 1, 1), summing over positions (the gradient of the mean loss w.r.t. V's kernel).
    """
    n = g.shape[0]
    if g.dim() == 2:
        return g.T @ phi / n
    if g.dim() == 3:   # token sequences (n, T, d): sum over tokens
        return torch.einsum("ntd,ntk->dk", g, phi) / n
    return torch.einsum("nchw,nkhw->ck", g, phi)[..., None, None] / n


def direction_image(block: ZeroInitBlock, phi: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """h_v(z): the block's output when its zero factor equals ``v`` (linear in v)."""
    if block.kind == "mlp":
        return F.linear(phi, v)
    if block.kind == "conv":
        return F.conv2d(phi, v)
    return v * block.V(phi)


@dataclass(frozen=True)
class Signal:
    """First-order signal of one inserted block on one sample.

    C: dR/d(zero factor) at 0; gamma = ||C||_F; v = C / gamma; z, g, phi: the per-sample
    activations, activation gradients and block features it was computed from."""

    C: torch.Tensor
    gamma: float
    v: torch.Tensor
    z: torch.Tensor
    g: torch.Tensor
    phi: torch.Tensor


def first_order_signal(model: SplitNet, l: int, block: ZeroInitBlock, X: torch.Tensor,
                       y: torch.Tensor, B: float = B_DEFAULT) -> Signal:
    """C, gamma and v for ``block`` inserted before layer ``l`` of ``model`` (block's zero
    factor must be 0). Uses the per-sample decomposition C = mean_i g_i phi_i^T."""
    if block.zero_param.detach().abs().max() != 0:
        raise ValueError("block's zero factor must be 0 (the expansion point)")
    z, g = activation_grads(model, l, X, y, B)
    with torch.no_grad():
        phi = block.features(z)
        if block.kind == "rezero":
            C = (g * block.V(phi)).sum() / len(y)
        else:
            C = signal_matrix(g, phi)
    gamma = float(C.norm())
    v = C / gamma if gamma > 0 else torch.zeros_like(C)
    return Signal(C, gamma, v, z, g, phi)


def first_order_signal_autograd(expanded: SplitNet, block: ZeroInitBlock, X: torch.Tensor,
                                y: torch.Tensor, B: float = B_DEFAULT) -> torch.Tensor:
    """C by autograd: the gradient of the mean clipped loss of the expanded model with
    respect to the block's zero factor (the oracle for ``first_order_signal``)."""
    loss = clipped_ce(expanded(X), y, B).mean()
    (C,) = torch.autograd.grad(loss, block.zero_param)
    return C.detach()


def permutation_null(sig: Signal, *, n_perm: int = 200, seed: int | np.random.Generator
                     ) -> np.ndarray:
    """||C_perm||_F for ``n_perm`` shuffles of g across samples (breaks the pairing between
    g and phi(z)); MLP/conv kinds. Returns (n_perm,)."""
    validation.integer("n_perm", n_perm, lo=2)
    rng = as_generator(seed)
    n = sig.g.shape[0]
    out = np.empty(n_perm)
    for i in range(n_perm):
        perm = torch.as_tensor(rng.permutation(n), device=sig.g.device)
        out[i] = float(signal_matrix(sig.g[perm], sig.phi).norm())
    return out


def cosine(a: torch.Tensor, b: torch.Tensor) -> float:
    """cos(a, b) of two flattened tensors (e.g. C_S and C_pop)."""
    a, b = a.flatten(), b.flatten()
    return float(a @ b / (a.norm() * b.norm()))


@torch.no_grad()
def risk_along(model: SplitNet, l: int, block: ZeroInitBlock, X: torch.Tensor,
               y: torch.Tensor, v: torch.Tensor, etas, B: float = B_DEFAULT) -> np.ndarray:
    """R(eta) := risk of f_top(z - eta h_v(z)) on (X, y) for each eta: (len(etas),).

    z and phi are computed once; each eta costs one pass through f_top."""
    was = model.training
    model.eval()
    z = model.bottom(X, l)
    hv = direction_image(block, block.features(z), v)
    out = np.array([float(clipped_ce(model.top(z - float(eta) * hv, l), y, B).mean())
                    for eta in np.atleast_1d(etas)])
    model.train(was)
    return out


def slope_fd(model: SplitNet, l: int, block: ZeroInitBlock, X: torch.Tensor, y: torch.Tensor,
             v: torch.Tensor, eta: float = 1e-5, B: float = B_DEFAULT) -> float:
    """Central finite difference (R(eta) - R(-eta)) / (2 eta) of the risk along theta = -eta v;
    first-order theory: -<C, v> (= -gamma for v = C/||C||). Use float64."""
    eta = validation.real("eta", eta, lo=0, lo_open=True)
    rp, rm = risk_along(model, l, block, X, y, v, [eta, -eta], B)
    return float((rp - rm) / (2 * eta))


@dataclass(frozen=True)
class Jumpboard:
    """The line-search jumpboard theta = -eta v on one sample: the grid, R on it, eta*."""

    v: torch.Tensor
    etas: np.ndarray
    risks: np.ndarray
    eta: float
    gain: float                      # R(0) - R(eta*) on the sample used for the search

    def block(self, template: ZeroInitBlock) -> ZeroInitBlock:
        """A copy of ``template`` with its zero factor set to -eta* v (the jumpboard block)."""
        import copy

        b = copy.deepcopy(template)
        with torch.no_grad():
            b.zero_param.copy_(-self.eta * self.v)
        return b


def jumpboard(model: SplitNet, l: int, block: ZeroInitBlock, X: torch.Tensor, y: torch.Tensor,
              v: torch.Tensor, etas, B: float = B_DEFAULT) -> Jumpboard:
    """Line search of R(-eta v) on (X, y) over the grid ``etas`` (eta = 0 is included)."""
    etas = np.unique(np.concatenate([[0.0], validation.array("etas", etas, lo=0).ravel()]))
    r = risk_along(model, l, block, X, y, v, etas, B)
    i = int(np.argmin(r))
    return Jumpboard(v, etas, r, float(etas[i]), float(r[0] - r[i]))


def null_mean_square(g: torch.Tensor, phi: torch.Tensor) -> float:
    """Exact mean of ||C_pi||_F^2 over uniformly random permutations pi of the samples,
    C_pi = (1/n) sum_i g_{pi(i)} phi_i^T (MLP shapes: g (n, d), phi (n, k)):

        n^2 E||C_pi||^2 = a sum_i ||phi_i||^2 + b (||sum_i phi_i||^2 - sum_i ||phi_i||^2),
        a = mean_p ||g_p||^2,   b = (||sum_p g_p||^2 - sum_p ||g_p||^2) / (n (n - 1)),

    since pi(i) = pi(j) exactly when i = j, and for i != j the pair (pi(i), pi(j)) is a
    uniformly random ordered pair of distinct samples. The b term carries the rank-one
    "mean part" g_bar phi_bar^T that the shuffle keeps."""
    if g.dim() != 2 or phi.dim() != 2 or g.shape[0] != phi.shape[0] or g.shape[0] < 2:
        raise ValueError(f"g and phi must be (n >= 2, .) with the same n, got "
                         f"{tuple(g.shape)}, {tuple(phi.shape)}")
    n = g.shape[0]
    g, phi = g.double(), phi.double()
    g2, p2 = g.pow(2).sum(1), phi.pow(2).sum(1)
    a = float(g2.mean())
    b = float((g.sum(0).pow(2).sum() - g2.sum()) / (n * (n - 1)))
    s_phi, s_phi_all = float(p2.sum()), float(phi.sum(0).pow(2).sum())
    return (a * s_phi + b * (s_phi_all - s_phi)) / n**2


def directional_t(g: torch.Tensor, phi: torch.Tensor, v: torch.Tensor) -> tuple[float, float]:
    """Held-out first-order test of Condition 1: for a direction ``v`` chosen on *other*
    data, the per-sample slopes s_i = <g_i, v phi_i> (MLP shapes; token sequences sum over
    tokens) have mean <C, v>; returns
    (mean, t) with t = mean / (sd / sqrt(n)). Under "no first-order signal" (C = 0) the mean
    is 0 and t is about standard normal, whatever the network."""
    if g.dim() not in (2, 3):
        raise ValueError(f"g must be (n, d) or (n, T, d), got {tuple(g.shape)}")
    s = ((g @ v) * phi).flatten(1).sum(1).double()
    n = s.shape[0]
    sd = float(s.std())
    mean = float(s.mean())
    return mean, (mean / (sd / math.sqrt(n)) if sd > 0 else float("inf"))


def selection_shrink(sig: Signal) -> float:
    """Shrinkage of a line-search step for the selection bias of its direction.

    The direction v = C_hat / ||C_hat|| is fitted to the same sample that measures its
    slope, so the slope there, ||C_hat||, overstates the population slope <C, v>. With
    per-sample terms X_i = g_i phi_i^T, E||C_hat||^2 = ||C||^2 + tr Cov(X) / n, and
    tr Cov(X) = mean_i ||g_i||^2 ||phi_i||^2 - ||C_hat||^2 (up to n / (n - 1)). So
    <C, v> ~ ||C||^2 / ||C_hat|| = kappa ||C_hat|| with
    kappa = 1 - tr Cov(X) / (n ||C_hat||^2), clipped to [0, 1]; on a locally quadratic risk
    the best step scales with the slope, so the step is multiplied by kappa. MLP shapes."""
    g, phi = sig.g.double(), sig.phi.double()
    if g.dim() != 2:
        raise ValueError(f"selection_shrink needs MLP shapes (n, d), got {tuple(g.shape)}")
    n = g.shape[0]
    m2 = float((g.pow(2).sum(1) * phi.pow(2).sum(1)).mean())
    c2 = sig.gamma**2
    if c2 <= 0 or n < 2:
        return 0.0
    noise = max(m2 - c2, 0.0) / (n - 1)
    return float(min(1.0, max(0.0, 1.0 - noise / c2)))
