"""Finite-D experiments: PT then FT, by exact minimisers (dual Newton) or by GD on the network.

One run draws teachers from a :class:`~.data.Task`, a PT design (unless PT is perfect) and an
FT design, and returns the FT generalisation error ``‖β̂_FT − β*_FT‖²/D`` plus what the
chapter needs to compute (ℓ, PD) of the learned solution.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ..runtime import as_generator
from .bias import ft_scales, solve_bias
from .data import Task, gen_error, rel_error, sample_design, sample_teachers
from .model import flow_weights_from_beta, rebalance, train_gd
from .regimes import l_order_pd

#: The four regime settings of the chapter: (c_PT, λ_PT), with γ_FT = 1e-3.
REGIMES = {"I": (1e-3, -1.0), "II": (1e-3, 1.0), "III": (10.0, 0.0), "IV": (1e-3, -0.9)}


@dataclass
class FTRun:
    error: float
    beta_ft: np.ndarray  # learned β̂_FT (D,)
    beta_pt: np.ndarray  # β̂_PT used for c_d (D,)
    star_ft: np.ndarray
    star_pt: np.ndarray
    X: np.ndarray  # FT design (N, D)
    c_d: np.ndarray

    @property
    def teacher_energy(self) -> float:
        """``‖β*_FT‖²/D`` (1 in expectation; fluctuates with the number of active coordinates)."""
        return float(np.mean(self.star_ft**2))

    @property
    def rel_error(self) -> float:
        """``‖β̂_FT − β*_FT‖² / ‖β*_FT‖²`` = ``error / teacher_energy``."""
        return float(rel_error(self.beta_ft, self.star_ft))


def run_exact(task: Task, d: int, alpha_ft: float, c_pt: float, lam_pt: float, gamma: float,
              seed: int, *, alpha_pt: float | None = None) -> FTRun:
    """PT (perfect when ``alpha_pt`` is None or ≥ 1, else the exact PT minimiser with
    ``C ≡ c_PT``) followed by the exact rebalanced-FT minimiser."""
    rng = as_generator(seed)
    s_pt, s_ft = sample_teachers(task, d, rng)
    if alpha_pt is None or alpha_pt >= 1:
        b_pt = s_pt
    else:
        Xp = sample_design(max(1, round(alpha_pt * d)), d, rng)
        b_pt = solve_bias(Xp, Xp @ s_pt, c_pt).beta
    X = sample_design(max(1, round(alpha_ft * d)), d, rng)
    cd = ft_scales(b_pt, c_pt, lam_pt, gamma)
    b_ft = solve_bias(X, X @ s_ft, cd).beta
    return FTRun(float(gen_error(b_ft, s_ft)), b_ft, b_pt, s_ft, s_pt, X, cd)


def run_gd_ft(run: FTRun, c_pt: float, lam_pt: float, gamma: float, tau: float, *,
              max_steps: int = 200_000, tol: float = 1e-12, device=None):
    """Train the network itself on the FT data of ``run``: end-of-PT weights from the
    closed form at ``β̂_PT`` (exact for gradient flow), rebalance with readout ``γ``, then
    full-batch GD with step ``tau``. Returns ``(error, β_GD, steps, final loss)``."""
    W = flow_weights_from_beta(run.beta_pt, c_pt, lam_pt)
    W0 = rebalance(W, gamma)
    to_t = lambda a: torch.as_tensor(np.asarray(a, dtype=float)[None], device=device)
    from .model import DiagWeights

    Wt = DiagWeights(to_t(W0.wp), to_t(W0.wm), to_t(W0.vp), to_t(W0.vm))
    y = run.X @ run.star_ft
    res = train_gd(to_t(run.X), to_t(y), Wt, tau, max_steps=max_steps, tol=tol)
    beta = res.weights.numpy().beta[0]
    return float(gen_error(beta, run.star_ft)), beta, res.steps, float(res.loss[0])


def learned_l_pd(run: FTRun, c_pt: float, lam_pt: float, gamma: float):
    """Mean (ℓ, PD) of the learned β̂_FT over the shared active coordinates (PT and FT on)."""
    on = (run.star_pt != 0) & (run.star_ft != 0)
    ell, pd = l_order_pd(run.beta_ft[on], run.beta_pt[on], c_pt, lam_pt, gamma)
    return float(np.mean(ell)), float(np.mean(pd))
