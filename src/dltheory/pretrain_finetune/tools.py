"""Fine-tuning error and regime for *your* task parameters and pretrained scales.

Chapter 2 (:doc:`/book/02_pretrain_finetune`) models pretraining then fine-tuning of a
diagonal linear network: gradient flow from the pretrained weights interpolates the FT data
with the minimum of the potential ``sum_d c_d h(beta_d / c_d)``, where the scales
``c_d = (1 + lam_PT)(c_PT + sqrt(c_PT^2 + beta_PT,d^2)) + gamma^2`` remember the pretrained
solution. :func:`predict_finetune` returns the replica prediction of the FT error
``||beta_FT - beta*_FT||^2 / D`` at each sample ratio ``alpha_FT = N/D`` (the chapter's
:func:`~dltheory.pretrain_finetune.replica.replica_error`) and the regime of the potential
on the FT teacher's support: its l-order (2: lazy, L2-like, kernel regime; 1: rich,
L1-like, feature-learning) and its pretraining dependence PD (the chapter's
:func:`~dltheory.pretrain_finetune.regimes.l_order_pd`). :func:`simulate_finetune` is the
same quantity by a direct simulation (Gaussian design, the exact minimiser by dual Newton,
:func:`~dltheory.pretrain_finetune.bias.solve_bias`): the independent check.

Task parameters: ``rho_pt`` (density of the PT teacher), ``rho_sh`` (fraction of the PT
features the FT teacher keeps), ``rho_new`` (density of new FT features off the PT support).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .bias import ft_scales, solve_bias
from .data import Task, rel_error, sample_design, sample_teachers
from .regimes import l_order_pd
from .replica import replica_error

__all__ = ["FinetunePrediction", "predict_finetune", "simulate_finetune"]


@dataclass(frozen=True)
class FinetunePrediction:
    alpha_ft: np.ndarray       # the sample ratios N / D
    error: np.ndarray          # replica FT error ||beta - beta*||^2 / D at each
    ell: float                 # l-order on the FT support (2 lazy ... 1 rich)
    pd: float                  # pretraining dependence on the FT support (0 ... -1)
    ell_by_kind: dict          # {"shared": ell, "new": ell} per FT support kind present

    @property
    def regime(self) -> str:
        """"lazy" (l-order above 1.5 on every FT support kind: the potential is L2-like,
        no sparsity bias), "rich" (below 1.5 on every kind: L1-like, the FT solution is
        sparse), or "mixed (rich on new features)" and the like when the kinds differ."""
        lazy = {k: v > 1.5 for k, v in self.ell_by_kind.items()}
        if all(lazy.values()):
            return "lazy"
        if not any(lazy.values()):
            return "rich"
        return "mixed (rich on " + ", ".join(f"{k} features" for k, v in lazy.items() if not v) + ")"


def predict_finetune(rho_pt: float, rho_sh: float, rho_new: float, alpha_ft, *,
                     c_pt: float, lam_pt: float = 0.0, gamma: float = 0.0,
                     alpha_pt: float | None = None, n_nodes: int = 6) -> FinetunePrediction:
    """Replica FT error at each ``alpha_ft`` in (0, 1) and the potential's regime.

    c_pt : the PT initial scale (small: rich PT); lam_pt in [-1, 1] : the PT init's
    imbalance; gamma : the scale the readout is re-initialised to for FT;
    alpha_pt : PT sample ratio (None: perfect PT, beta_PT = beta*_PT).
    """
    task = Task(rho_pt, rho_sh, rho_new)
    a = np.atleast_1d(np.asarray(alpha_ft, dtype=float))
    err = np.array([replica_error(task, float(x), c_pt, lam_pt, gamma, alpha_pt=alpha_pt,
                                  n_nodes=n_nodes).error for x in a])
    p, b_pt, b_ft = task.atoms()
    on = b_ft > 0                                     # FT support: (PT on, FT on), (PT off, FT on)
    ell, pd = l_order_pd(b_ft[on], b_pt[on], c_pt, lam_pt, gamma)
    w = p[on] / p[on].sum()
    kinds = {k: float(e) for k, e, q in zip(("shared", "new"), ell, p[on], strict=True)
             if q > 0}
    return FinetunePrediction(a, err, float(w @ ell), float(w @ pd), kinds)


def simulate_finetune(rho_pt: float, rho_sh: float, rho_new: float, alpha_ft, *,
                      c_pt: float, lam_pt: float = 0.0, gamma: float = 0.0, d: int = 400,
                      seeds=range(4)) -> tuple[np.ndarray, np.ndarray]:
    """Direct simulation of the same FT error (perfect PT): draw teachers and a Gaussian
    design of ``N = alpha_ft d`` rows, minimise the FT potential exactly, average over seeds.
    The error is ``||beta - beta*||^2 / ||beta*||^2`` (the chapter's ``rel_error``: the same
    replica limit as ``/ D`` since ``E beta*^2 = 1``, without the teacher's energy
    fluctuating from draw to draw). Returns ``(mean, standard error)`` at each ``alpha_ft``."""
    task = Task(rho_pt, rho_sh, rho_new)
    a = np.atleast_1d(np.asarray(alpha_ft, dtype=float))
    errs = np.zeros((len(list(seeds)), len(a)))
    for i, s in enumerate(seeds):
        b_pt, b_ft = sample_teachers(task, d, [s, 0])
        c = ft_scales(b_pt, c_pt, lam_pt, gamma)
        Xfull = sample_design(int(np.ceil(a.max() * d)), d, [s, 1])
        for j, x in enumerate(a):
            X = Xfull[:max(1, int(round(x * d)))]
            errs[i, j] = rel_error(solve_bias(X, X @ b_ft, c).beta, b_ft)
    n = errs.shape[0]
    return errs.mean(0), errs.std(0, ddof=1) / np.sqrt(n) if n > 1 else np.zeros(len(a))
