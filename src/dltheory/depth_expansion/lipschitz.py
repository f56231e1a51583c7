"""The Lipschitz constants the theorems assume, against what the chapter's networks do.

The norm-based uniform deviation (``bounds.norm_bound_proxy``) composes the block class with
an ``L_top``-Lipschitz f_top and an ``L_loss``-Lipschitz loss. Two statements can be checked:

* **the loss.** Cross-entropy's gradient with respect to the logits is ``p - e_y``, whose
  Euclidean norm is at most ``sqrt(2)`` (``(1 - p_y)^2 + sum_{j != y} p_j^2 <= 2 (1 - p_y)^2
  <= 2``), approached when the model puts all its mass on one wrong class; the clipped loss
  ``min(CE, B)`` has gradient 0 where CE > B, so its constant is
  ``sqrt((1 - e^-B)^2 + (1 - e^-B)^2)`` at most (``loss_lipschitz``);
* **f_top.** A post-norm block ``z -> N(z + V relu(U z))`` has Jacobian
  ``J_N(u) (I + V D U)`` (D: the relu's 0/1 diagonal), so at every input
  ``||J_top(z)||_2 <= ||W_head||_2 prod_b ||g_b||_inf / sqrt(RMS(u_b)^2 + eps) (1 + ||V_b||_2
  ||U_b||_2)`` with u_b the block's pre-normalisation sum at that input
  (``top_lipschitz_bounds``). The exact Jacobian norms (``top_jacobian_norms``) must stay
  under it at every sample.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch.nn import functional as F

from .. import validation
from . import diagnostics
from .models import SplitNet


def loss_lipschitz(B: float) -> float:
    """Euclidean Lipschitz constant in the logits of ``min(CE, B)``: sqrt(2) (1 - e^-B).

    Where CE < B, p_y > e^-B and ||p - e_y||^2 = (1 - p_y)^2 + sum_{j != y} p_j^2
    <= 2 (1 - p_y)^2 < 2 (1 - e^-B)^2."""
    B = validation.real("B", B, lo=0, lo_open=True)
    return math.sqrt(2.0) * (1.0 - math.exp(-B))


def loss_grad_norms(logits: torch.Tensor, y: torch.Tensor, B: float) -> np.ndarray:
    """||d min(CE, B) / d logits||_2 per sample: ||p - e_y|| where CE < B, else 0."""
    with torch.no_grad():
        p = torch.softmax(logits.double(), -1)
        g = p - F.one_hot(y, p.shape[-1]).double()
        ce = F.cross_entropy(logits.double(), y, reduction="none")
        return (g.norm(dim=-1) * (ce < B)).cpu().numpy()


def top_jacobian_norms(model: SplitNet, l: int, z: torch.Tensor) -> np.ndarray:
    """Exact ||d f_top(z_i) / d z_i||_2 per sample (autograd, in the model's dtype)."""
    from torch.func import jacrev, vmap

    with torch.no_grad():
        J = vmap(jacrev(lambda x: model.top(x[None], l)[0]))(z.detach())
        return torch.linalg.matrix_norm(J.flatten(2), ord=2).cpu().double().numpy()


def block_lipschitz(block, u_rms: np.ndarray) -> np.ndarray:
    """Local Lipschitz bound of a post-norm MLP block at inputs whose pre-normalisation sum
    has RMS ``u_rms``: ||g||_inf / sqrt(RMS^2 + eps) * (1 + ||V||_2 ||U||_2)."""
    V = torch.linalg.matrix_norm(block.V.weight.detach().double(), ord=2)
    U = torch.linalg.matrix_norm(block.U.weight.detach().double(), ord=2)
    norm = diagnostics.rmsnorm_jacobian_bound(block.norm.gain, u_rms, block.norm.eps)
    return np.asarray(norm) * (1.0 + float(V) * float(U))


def top_lipschitz_bounds(model: SplitNet, l: int, z: torch.Tensor) -> np.ndarray:
    """Certified per-sample bound on ||J_top(z_i)||_2: the head's spectral norm times the
    product of the blocks' local bounds (``block_lipschitz``) along the sample's path."""
    out = np.full(len(z), float(torch.linalg.matrix_norm(model.head.weight.detach().double(),
                                                        ord=2)))
    with torch.no_grad():
        h = z
        for b in model.blocks[l:]:
            u = h + b.V(torch.relu(b.U(h)))
            out = out * block_lipschitz(b, diagnostics.rms(u))
            h = b.norm(u)
    return out
