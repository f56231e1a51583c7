"""Sizes, knobs and seeds of the depth-expansion chapter; tolerances, kinds and the
pre-registered power calculation are in ``rules``, costs in ``cost``, measurements in the
calibration record. Declared domain: width 16-256, depth 2-12, 1 <= L_STAR <= DEPTH - 1,
any seed in [0, 100000]. Scales: ``smoke`` (CI, one CPU thread, about a minute),
``standard`` (a few CPU-minutes), ``paper`` (one GPU, estimated: conv ResNets on 16x16
digits, widths 8-32, depths 2-16), ``full`` (CIFAR-10 at 32x32 when on disk). Budget rule
(smoke, standard): epochs divided by the cost relative to width 64, depth 4 above one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

import numpy as np

from .. import validation
from ..chapter_config import ChapterConfig, Knob
from .cost import BudgetRule

_PAPER_COMMON = dict(   # paper and full differ in the grid's data, widths and seeds
    n_seeds=5, n_test=10_000, n_pop=50_000, n_eta=41, n_perm=500, n_curve=10_000,
    align_seeds=5, twin_max_epochs=100, align_ns=(1000, 4000, 16_000, 64_000), align_steps=960,
    grid_depths=(2, 4, 8, 16), grid_res=16, grid_epochs=100, grid_target_ce=0.3,
    obs_widths=(16, 64, 256, 512), obs_seeds=16, obs_target_ce=0.9, prog_n=16_000,
    prog_rounds=12, prog_epochs=10, conv_widths=(16, 32, 64), conv_epochs=30,
    conv_n_signal=10_000, tf_seeds=3, reg_seeds=8, reg_epochs=20, device="auto")

_NONNEG = ("seed", "wd", "tf_noise", "grid_target_ce")   # may be 0; every other number > 0


@dataclass(frozen=True)
class Config(BudgetRule, ChapterConfig):
    """Knobs WIDTH (log-uniform when drawn), DEPTH, L_STAR; SEED seeds the data pool, the
    old models (SEED, SEED + 1, ...), the blocks and the nulls."""

    KNOBS = {"WIDTH": Knob("width", 16, 256, integer=True, log=True),
             "DEPTH": Knob("depth", 2, 12, integer=True),
             "L_STAR": Knob("l_star", 1, 11, integer=True)}
    CI_SETTINGS = [   # off the defaults: small and shallow, wide and deep, narrow and deep
        {"WIDTH": 16, "DEPTH": 2, "L_STAR": 1, "SEED": 7},
        {"WIDTH": 200, "DEPTH": 11, "L_STAR": 9, "SEED": 4321},
        {"WIDTH": 24, "DEPTH": 12, "L_STAR": 2, "SEED": 99},
    ]
    PRESETS = {"smoke": {},   # smoke: the field defaults below
        "standard": dict(
            n_seeds=3, n_test=4000, n_pop=20_000, n_eta=31, n_perm=200, twin_max_epochs=60,
            n_curve=4000, align_seeds=3, align_ns=(1000, 4000, 16_000), align_steps=480,
            grid_widths=(4, 8, 16), grid_depths=(1, 2, 4, 8), grid_seeds=4,
            grid_target_ce=0.4, grid_epochs=40, obs_widths=(16, 64, 128), obs_seeds=16,
            obs_target_ce=0.9, obs_max_epochs=60, prog_n=8000, prog_rounds=8, prog_epochs=6,
            conv_widths=(8, 16, 32), conv_epochs=20, n_train=4000, reg_seeds=8, reg_epochs=10),
        "paper": {**_PAPER_COMMON, **dict(grid_widths=(8, 16, 32), grid_seeds=5,
                                          obs_max_epochs=100)},
        "full": {**_PAPER_COMMON, **dict(grid_widths=(16, 32, 64), grid_seeds=4,
                                         obs_max_epochs=200, conv_data="cifar10")},
    }
    # Shares of the chapter budget by sweep (``dltheory.budget``); "fits": the rest.
    BUDGET_WEIGHTS = {"depth_expansion.expansion": 0.25, "depth_expansion.transformer": 0.04,
                      "depth_expansion.conv": 0.03, "depth_expansion.alignment": 0.04,
                      "depth_expansion.grid_conv": 0.27, "depth_expansion.observability": 0.20,
                      "depth_expansion.progressive": 0.03, "depth_expansion.regression": 0.02,
                      "fits": 0.12}

    width: int = 64               # post-norm residual MLP of the main demonstration
    depth: int = 4
    l_star: int = 2               # the new block goes before block l_star
    n_train: int = 4000           # MNIST-1D pool: train / test / fresh "population"
    n_test: int = 2000
    n_pop: int = 6000             # halves: A chooses directions and steps, B evaluates
    n_seeds: int = 2              # old models per setting (min over seeds in every check)
    epochs_old: int = 15          # AdamW with weight decay: not interpolating
    min_epochs: int = 3           # floor of the budget rule
    lr: float = 3e-3
    wd: float = 0.05
    batch: int = 128
    block_epochs: int = 5         # block-only training of the expanded model (and control)
    twin_max_epochs: int = 40     # interpolating twin: no weight decay, early-stopped at
    twin_target_ce: float = 0.01  # this training cross-entropy (the degenerate regime)
    eta_min: float = 1e-3         # jumpboard line-search grid (log-spaced)
    eta_max: float = 3.0
    n_eta: int = 15
    n_curve: int = 1000           # samples per set for the line-search figure's curves
    n_perm: int = 100             # permutation null of ||C||
    n_lip: int = 512              # samples whose RMSNorm Jacobian is computed exactly
    B: float = 5.0                # losses are min(CE, B)
    fd_eta: float = 1e-5          # central finite difference (float64)
    ci_level: float = 0.95        # bootstrap interval of Delta_R
    route_delta: float = 0.05     # level of eps_M, eps_K in the routes on redrawn samples
    tf_d: int = 32                # pre-norm Transformer on majority-vote sequences
    tf_depth: int = 2
    tf_l: int = 1
    tf_len: int = 12
    tf_classes: int = 5
    tf_noise: float = 0.1         # labels redrawn: the population risk stays above 0
    tf_n_train: int = 2000
    tf_n_test: int = 1000
    tf_n_pop: int = 6000
    tf_epochs: int = 5
    tf_batch: int = 64
    tf_seeds: int = 1
    align_ns: tuple = (1000, 2000, 4000)  # data: the same AdamW steps at every n
    align_steps: int = 240
    align_seeds: int = 1
    grid_arch: str = "conv"       # depth x width grid of post-norm GroupNorm conv ResNets
    grid_widths: tuple = (8, 16)
    grid_depths: tuple = (1, 2, 4)
    grid_seeds: int = 2           # < 3 seeds per cell: the grid claims are INCONCLUSIVE
    grid_res: int = 8             # digits upsampled to grid_res x grid_res
    grid_test_fraction: float = 0.4
    grid_target_ce: float = 0.6   # every cell trained to this training CE (matched loss)
    grid_epochs: int = 20         # at most
    grid_lr: float = 1e-2         # divided by sqrt(max(1, depth / 4))
    grid_batch: int = 64
    obs_widths: tuple = (16, 64)  # observability: widths early-stopped at obs_target_ce
    obs_seeds: int = 2
    obs_target_ce: float = 1.2
    obs_max_epochs: int = 40
    prog_n: int = 4000            # progressive deepening from a 2-block network
    prog_rounds: int = 4
    prog_epochs: int = 4
    conv_data: str = ""           # "" = sklearn digits; "cifar10" when torchvision has it
    conv_widths: tuple = (8, 16)
    conv_epochs: int = 10
    conv_n_signal: int = 2000
    reg_outputs: int = 64         # Assumption 3 with a regression head: reg_outputs >
    reg_width: int = 16           # reg_width, so Sigma_g is not rank-limited
    reg_epochs: int = 6
    reg_seeds: int = 3
    reg_n_cov: int = 2000
    device: str = "cpu"
    train_dtype: str = "float32"  # training and risks; identities and the FD slope: float64

    def validate(self) -> None:
        if not 1 <= self.l_star <= self.depth - 1:
            raise ValueError(f"L_STAR = {self.l_star} must be an intermediate layer: "
                             f"1 <= L_STAR <= DEPTH - 1 = {self.depth - 1} (DEPTH = {self.depth})")
        for f in fields(self):
            if f.type in ("int", "float") and f.name not in _NONNEG:
                v = getattr(self, f.name)
                (validation.integer(f.name, v, 1) if f.type == "int"
                 else validation.real(f.name, v, 0.0, math.inf, lo_open=True))
        checks = [(self.eta_min < self.eta_max, "need eta_min < eta_max"),
                  (0 < self.grid_test_fraction < 1 and 0 < self.ci_level < 1,
                   "grid_test_fraction and ci_level must be in (0, 1)"),
                  (self.n_perm >= 2 and min(self.align_ns) >= 10,
                   "need n_perm >= 2 and align_ns >= 10"),
                  (self.grid_arch in ("mlp", "conv"), "grid_arch must be 'mlp' or 'conv'"),
                  (0 < self.route_delta < 0.25, "route_delta must be in (0, 0.25)"),
                  (1 <= self.tf_l <= self.tf_depth - 1, "tf_l must be an intermediate layer")]
        for ok, why in checks:
            if not ok:
                raise ValueError(f"{why} ({self.__class__.__name__} at {self.scale})")

    # ---- derived sizes (the budget rule is ``cost.BudgetRule``) --------------------------
    @property
    def seeds(self) -> tuple[int, ...]:
        return tuple(range(self.seed, self.seed + self.n_seeds))

    @property
    def n_pool_train(self) -> int:
        return max(self.n_train, self.prog_n, *self.align_ns)

    @property
    def lr_old(self) -> float:
        """lr / sqrt(max(1, depth / 4)), with one epoch of warmup (``warmup_old``): without
        both a width-256, depth-12 network stays at chance in the epochs the budget allows."""
        return self.lr / math.sqrt(max(1.0, self.depth / 4))

    @property
    def warmup_old(self) -> int:
        return math.ceil(self.n_train / self.batch)

    @property
    def etas(self) -> np.ndarray:
        return np.geomspace(self.eta_min, self.eta_max, self.n_eta)



DOMAIN = Config.domain()
CI_SETTINGS = Config.CI_SETTINGS
sample_setting = Config.sample_setting
