"""Where would a new residual block help? The first-order signal of inserting a
zero-initialised block at each insertion point of *your* trained residual network.

Chapter 4 (:doc:`/book/04_depth_expansion`) inserts ``z -> z + V relu(U z)`` with ``V = 0``
(so the function is unchanged) and reads the gain off the gradient at ``V = 0``::

    C = dR/dV = mean_i g_i phi_i^T,   g_i = dl_i/dz_i,  phi_i = relu(U z_i),
    gamma = ||C||_F,  v = C / gamma   (along V = -eta v the risk starts with slope -gamma)

:func:`insertion_signals` does this for any ``nn.Module`` whose residual blocks you list:
insertion point ``k`` is the output of ``blocks[k]`` (the residual stream after it), reached
with a forward hook, so the network needs no rewriting. For each point it reports the
training signal ``gamma``, the *test* slope ``<C_test, v>`` with a bootstrap interval over
test samples (a positive interval: the first-order gain survives on fresh data), the
jumpboard ``V = -eta* v`` from a line search on the training set, and the Route B bound of
the chapter on ``L_test(f_new) - L_test(f_old)`` (Route A too when a large population-proxy
set is given). Uses the chapter's :func:`~dltheory.depth_expansion.signal.clipped_ce`,
:func:`~dltheory.fitting.bootstrap_mean_ci`,
:class:`~dltheory.depth_expansion.models.ZeroInitBlock` and
:func:`~dltheory.depth_expansion.bounds.route_a` / :func:`~.bounds.route_b`.

Assumes the blocks' outputs are ``(n, d)`` or ``(n, T, d)`` tensors and that samples do not
interact in the forward pass (the model is put in eval mode; no batch statistics).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from .. import seeds
from ..fitting import bootstrap_mean_ci
from .bounds import Risks, RouteA, RouteB, route_a, route_b
from .models import ZeroInitBlock
from .signal import B_DEFAULT, clipped_ce

__all__ = ["InsertionSignal", "insertion_signals", "risk_with_block"]


@dataclass(frozen=True)
class InsertionSignal:
    """The first-order signal of a zero-initialised block after ``blocks[point]``."""

    point: int
    gamma: float               # ||C||_F on the training set: the initial rate of gain
    test_slope: float          # <C_test, v>: the same rate on the test set
    test_ci: tuple[float, float]   # bootstrap interval of test_slope over test samples
    v: torch.Tensor            # the direction C / ||C|| (d, k)
    eta: float                 # line-search step of the jumpboard V = -eta v (training set)
    old: Risks                 # risks of the network as it is
    new: Risks                 # risks of the jumpboard network
    route_b: RouteB
    route_a: RouteA | None     # only with a population-proxy set

    @property
    def helps(self) -> bool:
        """The test slope's interval lies above 0: a new block here lowers the test risk
        to first order, beyond sampling noise of the test set."""
        return self.test_ci[0] > 0


def _stream(model, block, X):
    """Run the model with a hook on ``block``: returns (logits, z) with z the block's output
    made a leaf that requires grad (so g = dl/dz comes from one backward pass)."""
    store = {}

    def hook(_m, _inp, out):
        z = out.detach().requires_grad_(True)
        store["z"] = z
        return z

    h = block.register_forward_hook(hook)
    try:
        logits = model(X)
    finally:
        h.remove()
    return logits, store["z"]


def _grads(model, block, X, y, B):
    logits, z = _stream(model, block, X)
    (g,) = torch.autograd.grad(clipped_ce(logits, y, B).sum(), z)
    return z.detach(), g.detach()


def _gphi(g, phi):
    """Per-sample terms g_i phi_i^T (n, d, k), summing over tokens for (n, T, d)."""
    if g.dim() == 2:
        return g[:, :, None] * phi[:, None, :]
    return torch.einsum("ntd,ntk->ndk", g, phi)


@torch.no_grad()
def risk_with_block(model: nn.Module, block: nn.Module, new: ZeroInitBlock, V: torch.Tensor,
                    X: torch.Tensor, y: torch.Tensor, B: float = B_DEFAULT) -> float:
    """Mean clipped loss of ``model`` with ``z -> z + V relu(U z)`` inserted after ``block``
    (``U`` from ``new``; ``V`` (d, k) any matrix)."""
    def hook(_m, _inp, out):
        return out + new.features(out) @ V.T

    h = block.register_forward_hook(hook)
    try:
        return float(clipped_ce(model(X), y, B).mean())
    finally:
        h.remove()


def insertion_signals(model: nn.Module, blocks, X: torch.Tensor, y: torch.Tensor, *,
                      X_test: torch.Tensor, y_test: torch.Tensor,
                      X_pop: torch.Tensor | None = None, y_pop: torch.Tensor | None = None,
                      hidden: int | None = None, B: float = B_DEFAULT, seed: int = 0,
                      etas=None, n_boot: int = 1000, level: float = 0.95
                      ) -> list[InsertionSignal]:
    """The first-order signal of a zero-initialised block at each insertion point.

    Parameters
    ----------
    model
        A trained classifier (logits out).
    blocks
        Its residual blocks, in order (``list(model.blocks)``); point k is the output of
        ``blocks[k]``.
    X, y
        The training set (the signal and the line search).
    X_test, y_test
        A test set.
    X_pop, y_pop
        Optional large held-out set used as the population proxy (Route A).
    hidden
        Width k of the inserted block (default d).
    B
        The loss clip (the chapter's 5).
    seed
        Fixes U.
    etas
        The line-search grid (default geometric up to 10 / gamma).

    Returns
    -------
    list of InsertionSignal
        One per block.
    """
    blocks = list(blocks)
    if not blocks:
        raise ValueError("blocks is empty: pass the model's residual blocks, in order")
    was = model.training
    model.eval()
    out = []
    try:
        for k, blk in enumerate(blocks):
            z, g = _grads(model, blk, X, y, B)
            d = z.shape[-1]
            new = ZeroInitBlock(d, hidden, seed=seed, stream=("layer", k)).to(dtype=z.dtype,
                                                                              device=z.device)
            with torch.no_grad():
                phi = new.features(z)
                C = _gphi(g, phi).mean(0)
            gamma = float(C.norm())
            v = C / gamma if gamma > 0 else torch.zeros_like(C)
            zt, gt = _grads(model, blk, X_test, y_test, B)
            with torch.no_grad():
                st = (_gphi(gt, new.features(zt)) * v).sum((1, 2)).cpu().numpy()
            mean, lo, hi = bootstrap_mean_ci(st, n_boot=n_boot, level=level,
                                             seed=seeds.numpy(seed, "test-slope bootstrap", k))
            grid = (np.geomspace(1e-3, 10.0, 40) / max(gamma, 1e-12)) if etas is None else etas
            grid = np.concatenate([[0.0], np.asarray(grid, dtype=float)])
            rs = [risk_with_block(model, blk, new, -float(e) * v, X, y, B) for e in grid]
            eta = float(grid[int(np.argmin(rs))])

            def risks(V, _blk=blk, _new=new):
                pop = (risk_with_block(model, _blk, _new, V, X_pop, y_pop, B)
                       if X_pop is not None else math.nan)
                return Risks(risk_with_block(model, _blk, _new, V, X, y, B), pop,
                             risk_with_block(model, _blk, _new, V, X_test, y_test, B))

            zero = torch.zeros_like(v)
            old, jb = risks(zero), risks(-eta * v)
            ra = None
            if X_pop is not None:
                rp = [risk_with_block(model, blk, new, -float(e) * v, X_pop, y_pop, B)
                      for e in grid]
                f_pop = risks(-float(grid[int(np.argmin(rp))]) * v)
                ra = route_a(old, f_pop, jb, K=len(y_test), B=B)
            out.append(InsertionSignal(k, gamma, float(mean), (float(lo), float(hi)), v, eta,
                                       old, jb, route_b(old, jb, jb), ra))
    finally:
        model.train(was)
    return out
