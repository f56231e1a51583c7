"""The prologue's sizes, seed counts, step sizes and tolerances (``Config``)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import seeds
from ..chapter_config import ChapterConfig, Knob
from .model import Problem, sparse_regression

_PRESETS = {
    "smoke": dict(n_tau=6, k_max=400, n_seeds=2,
                  taus_flow=(0.04, 0.02, 0.01, 0.005)),
    "standard": dict(n_tau=12, k_max=2_000, n_seeds=8,
                     taus_flow=(0.08, 0.04, 0.02, 0.01, 0.005, 0.0025)),
    "paper": dict(n_tau=24, k_max=10_000, n_seeds=32,
                  taus_flow=(0.08, 0.04, 0.02, 0.01, 0.005, 0.0025, 0.00125, 0.000625)),
}


@dataclass(frozen=True)
class Config(ChapterConfig):
    """Every size, seed count, step and tolerance of the prologue.

    Knobs (declared domain): ``K_FIXED`` in [2, 100], the steps after which the drift is
    read against tau; ``TAU_K`` in [1e-4, 1e-2], the step of the drift-vs-k curve. The fit
    windows follow them into the regime the frozen-gradient prediction needs, ``tau k <=
    regime_tk`` (0.1): taus from ``regime_tk / (10 K_FIXED)`` to ``regime_tk / K_FIXED``, and
    the k-exponent window up to ``k_early = regime_tk / TAU_K`` (at most ``k_max``).

    dtype is float64 throughout (numpy, and torch for the batched drift sweep, also on
    CUDA): the one-step identity is checked to ``tol_identity`` and the drift at ``tau = 1e-3``
    is of order 1e-6, below float32's resolution of ``h``.

    Kinds and tolerances (``rules.KINDS``; none is evidence, the prologue has no paper).
    The gradient against finite differences of the loss is an identity (calculus on the
    book's code), the GD-to-flow order a derivation (Euler's method is first order); the
    one-step identity and the two drift exponents are identities, which follow from it while
    ``tau k << 1`` (the drift is ``tau^2 sum_j q(g_j)`` exactly; the gradients move by a
    relative ``O(tau k)``), as chapter 1 labels them; their tolerance 0.1 is that
    correction's size, ``tau k <= 0.1``. Hard tolerances from 24 seeds (problem and start
    drawn from SEED = 0..23): the fitted Euler order is 1.0053 +- 0.0031 at smoke (max
    1.0145), 1.0068 +- 0.0038 at standard (max 1.0186), 1.0045 +- 0.0026 at paper (max
    1.0124) (drawn before the named streams of ``seeds``; with them, 1.0050 +- 0.0017 at
    smoke, max 1.0085); ``tol_flow_order`` = 0.05 is more than 10 standard deviations
    beyond the worst mean (it was 0.1 before this calibration; tightened for power, never
    widened). The gradient/finite-difference ratio (eps 1e-5, 16 directions at 5 points of
    the identity run) is 1 - 3e-12 +- 1.2e-11 (max ``|dev|`` 2.2e-11); ``tol_grad_fd`` =
    1e-8. Each of the two would need a deviation of over 10 standard deviations to FAIL on
    correct code.

    Cost model (one thread of a 2-core CPU, float64, measured): smoke (2 starts, k_max 400,
    four flow taus) about 3 s of compute; paper (32 starts in 4 blocks of 8, each block one
    round of the drift sweep; k_max 10,000; eight flow taus down to 6.25e-4, i.e. 3,200
    Euler steps) 12 s in all, of which under 2 s per drift block. On one GPU the batched
    drift is latency-bound (10,000 sequential small float64 matmuls, about a second per
    block), so ``paper`` takes well under a minute there. The prologue's models are complete
    at that size, so it declares no larger ``full`` preset (``full`` runs ``paper``).
    """

    KNOBS = {"K_FIXED": Knob("k_fixed", 2, 100, integer=True, log=True),
             "TAU_K": Knob("tau_k", 1e-4, 1e-2, log=True)}
    CI_SETTINGS = [{"K_FIXED": 3, "TAU_K": 1e-2, "SEED": 5},
                   {"K_FIXED": 60, "TAU_K": 2e-4, "SEED": 17}]
    PRESETS = _PRESETS
    BUDGET_WEIGHTS = {"prologue_drift": 0.6, "prologue_flow_error": 0.3}   # 0.1 for the rest

    scale: str = "standard"
    seed: int = 0
    n: int = 20                   # diagonal network: samples, width, teacher sparsity
    d: int = 50
    k_sparse: int = 3
    init_u: float = 0.5           # u0 = init_u + init_noise * N(0, 1), v0 = init_v
    init_v: float = 0.3
    init_noise: float = 0.1
    tau_id: float = 0.05          # the exact one-step identity (gf-eq-sum)
    steps_id: int = 200
    n_tau: int = 12               # drift vs tau at fixed k (tau k <= regime_tk)
    k_fixed: int = 10
    tau_k: float = 5e-3           # drift vs k at fixed tau; exponent fitted on k <= k_early
    k_max: int = 2_000
    regime_tk: float = 0.1        # largest tau * k inside the exponent fits
    t_fixed: float = 2.0          # GD -> flow at fixed time t = tau k
    taus_flow: tuple[float, ...] = (0.08, 0.04, 0.02, 0.01, 0.005, 0.0025)
    n_seeds: int = 8
    seeds_per_task: int = 8       # seeds batched in one task of the drift sweep
    n_boot: int = 500
    dtype: str = "float64"
    tol_identity: float = 1e-12
    tol_tau_exponent: float = 0.1
    tol_k_exponent: float = 0.1
    tol_flow_order: float = 0.05
    fd_eps: float = 1e-5          # gradient against central differences of the loss
    fd_dirs: int = 16
    fd_points: int = 5            # points of the identity run, k = 0 .. steps_id
    tol_grad_fd: float = 1e-8

    @property
    def tau_range(self) -> tuple[float, float]:
        """Step sizes of the drift-vs-tau fit: tau * k_fixed from regime_tk / 10 to regime_tk."""
        return (self.regime_tk / (10 * self.k_fixed), self.regime_tk / self.k_fixed)

    @property
    def k_early(self) -> int:
        """Last k of the drift-vs-k fit: tau_k * k <= regime_tk, at most k_max."""
        return int(min(self.k_max, self.regime_tk / self.tau_k + 1e-9))

    @property
    def taus(self) -> np.ndarray:
        """The step sizes of the drift-vs-tau sweep."""
        return np.geomspace(*self.tau_range, self.n_tau)

    def problem(self) -> tuple[Problem, np.ndarray]:
        """The sparse-regression data (problem, teacher): stream ``(seed, "problem")``."""
        return sparse_regression(self.n, self.d, self.k_sparse,
                                 seed=seeds.numpy(self.seed, "problem"))

    def start(self, which: int | str) -> tuple[np.ndarray, np.ndarray]:
        """The start (u0, v0) ``which`` (the index of a random start, or ``"reference"``,
        the start of the identity run and the flow comparison): stream
        ``(seed, "start", which)``."""
        rng = seeds.numpy(self.seed, "start", which)
        return (self.init_u + self.init_noise * rng.standard_normal(self.d),
                np.full(self.d, self.init_v))


DOMAIN = Config.domain()
CI_SETTINGS = Config.CI_SETTINGS
sample_setting = Config.sample_setting
