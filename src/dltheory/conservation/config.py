"""Every size, seed count, step size, window and tolerance of the conservation-law chapter.

``Config.for_scale(scale, **overrides)`` holds the smoke / standard / paper / full presets;
the headline knobs are the block dimensions (``DOMAIN``, keyed by the chapter's parameter
names) and every block of the chapter is built from them. The rules that decide whether a
claim is checked (windows, reachability, countability) are in ``rules``; the tolerances
below come from seed spreads measured across the declared domain (the calibration record
``book/calibration/conservation_laws.smoke.json`` holds the measurements).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..chapter_config import ChapterConfig, Knob, per_scale


@dataclass(frozen=True)
class Config(ChapterConfig):
    """Sizes, steps, windows and tolerances; the knobs are the block dimensions.

    Cost (float64 throughout: identities to 1e-12 and exponent fits need it): smoke is
    about a minute of one CPU thread; ``paper`` is sized for about 8 minutes on one H100
    (the char-LM, d=128, 4 layers, 1.9 M parameters, dominates: about 9 s per recorded GD
    step on one CPU thread); ``full`` takes our reconstruction of the paper's unstated run
    sizes (13.6 M parameters), 1-2 hours on one H100. Under ``DLTHEORY_BUDGET`` the seed
    sweeps run in rounds and the widened counts, the LM and the ViT sweeps start only when a
    cost probe says their first round fits their share (``BUDGET_WEIGHTS``).

    Joint constraints: HEAD_DIM even (RoPE rotates pairs), HEAD_DIM and VALUE_DIM <= D_MODEL
    (full-rank head maps), TOPK <= EXPERTS, EXPERTS <= D_MODEL + 1 (a bias-free linear
    router reaches every expert only when its rows are vertices of their convex hull).
    """

    KNOBS = {
        "D_MODEL": Knob("d", 2, 8, integer=True),
        "HIDDEN": Knob("m", 1, 8, integer=True),
        "HEADS": Knob("H", 1, 4, integer=True),
        "HEAD_DIM": Knob("dk", 2, 4, integer=True),
        "VALUE_DIM": Knob("dv", 1, 4, integer=True),
        "EXPERTS": Knob("E", 2, 6, integer=True),
        "TOPK": Knob("k", 1, 6, integer=True),
    }
    #: off-default settings spread over the domain, run at smoke in CI
    CI_SETTINGS = [
        dict(D_MODEL=2, HIDDEN=7, HEADS=4, HEAD_DIM=2, VALUE_DIM=1, EXPERTS=3, TOPK=1),
        dict(D_MODEL=7, HIDDEN=1, HEADS=1, HEAD_DIM=4, VALUE_DIM=4, EXPERTS=6, TOPK=4),
        dict(D_MODEL=5, HIDDEN=5, HEADS=3, HEAD_DIM=4, VALUE_DIM=3, EXPERTS=2, TOPK=2),
    ]
    PRESETS = per_scale(
        disc_seeds=(1, 3, 5, 5),
        lm_seeds=(1, 3, 3, 3),
        lm_windows=((0.32, 3.2, 32.0), (0.1, 0.32, 1.0, 3.2, 10.0, 32.0),
                    (0.1, 0.32, 1.0, 3.2, 10.0, 32.0), (0.1, 0.32, 1.0, 3.2, 10.0, 32.0)),
        lm_long_steps=(60, 300, 1_000, 2_000),
        lm_dim=(dict(d=32, H=4, dk=8, dv=8, E=4, m=32, T=32, B=32),
                dict(d=32, H=4, dk=8, dv=8, E=4, m=32, T=32, B=64),
                dict(d=128, H=8, dk=16, dv=16, E=8, m=128, T=64, B=256, L=4),
                dict(d=256, H=8, dk=32, dv=32, E=8, m=512, T=256, B=256, L=4)),
        vit_n=(128, 512, 1_347, 2_000),
        vit_seeds=(1, 3, 3, 3),
        big_factor=(1, 2, 4, 8),
    )
    #: shares of the chapter budget (dltheory.budget); "figures" keeps time for the rest
    BUDGET_WEIGHTS = {"cl_orthogonality": 0.03, "cl_counts": 0.08, "cl_counts_big": 0.1,
                      "cl_gradient": 0.01, "cl_early_windows": 0.1, "cl_identity": 0.01,
                      "cl_adam_windows": 0.04, "cl_matched": 0.08, "cl_lm_windows": 0.25,
                      "cl_lm_long": 0.1, "cl_vit": 0.1, "cl_gate_shift": 0.01,
                      "cl_sgd_walk": 0.02, "figures": 0.07}

    # ---- headline knobs: block dimensions (model width d, hidden units m, heads H, head
    # dims dk / dv, experts E, routing top-k)
    d: int = 4
    m: int = 3
    H: int = 2
    dk: int = 2
    dv: int = 2
    E: int = 3
    k: int = 2
    # ---- orthogonality and counting
    T: int = 3                    # sequence length of the attention blocks
    o: int = 2                    # outputs of the FFN / SwiGLU / MoE blocks
    orth_seeds: int = 3           # random (theta, inputs) draws per law
    n_sparse: int = 200           # starting number of inputs for routed MoE (more are drawn)
    big_factor: int = 1           # larger attention counts (widths x this): 2 standard, 4 paper
    rtol_rank: float = 1e-9       # relative singular-value threshold (float64)
    min_gap: float = 1e6          # smallest accepted s[r-1]/s[r] (a rank with a clear gap)
    tol_orth: float = 1e-10       # a law: |cos| at float64 rounding level
    neg_lo: float = 1e-3          # a control or a broken symmetry: clearly above rounding
    # ---- discrete time (teacher regression); blocks are the knobs times disc_factor
    disc_factor: int = 2          # training blocks: the knob widths doubled
    disc_seeds: int = 1           # seeds of the early-window sweeps
    early_tl: float = 0.32        # early window: largest tau * k * lambda_max
    tau_ratios: tuple = (0.125, 0.25, 0.5, 1.0)  # step sizes, relative to the window's largest
    ks: tuple = (10, 20, 40, 80)  # steps at which the drift is fitted
    n_reg: int = 64               # teacher-regression samples (SwiGLU, attention)
    n_reg_moe: int = 256          # MoE samples: enough inputs per routed expert
    sgd_batch: int = 16           # SGD minibatch, a quarter of n_reg: noisy steps
    sgd_walk_draws: int = 1000    # realisations of SGD's frozen-gradient walk (k exponent)
    beta_hb: float = 0.9          # heavy-ball momentum (the usual value)
    adam_lr_scale: float = 0.1    # Adam lr = tau / 10: its sign-like steps are larger
    id_tau: float = 1e-2          # step of the identity and weight-decay runs
    id_steps: int = 200           # GD steps of the identity run
    wd_lambda: float = 5.0        # tau lam = 0.05: linearising the factor moves it by 5%
    wd_steps: int = 20            # (1 - tau lam)^(2k) = 0.129, exp(-2 tau lam k) = 0.135
    adam_tl: float = 0.02         # Adam's window: its O(tau) corrections stay below 1%
    fd_eps: float = 1e-6          # gradient against central differences of the loss
    fd_dirs: int = 16             # random directions of the gradient check
    # matched learning progress: train until the loss falls to match_fraction * L0
    match_fraction: float = 0.5   # matched progress: the loss has halved
    match_tl: tuple = (0.05, 0.1, 0.2, 0.4)      # GD: tau * lambda_max
    match_adam_lr: tuple = (0.000625, 0.00125, 0.0025, 0.005)  # Adam lrs (a factor 8)
    match_seeds: int = 8          # the matched-progress tolerances assume all 8 seeds
    match_max_steps: int = 4000   # step cap of a matched-progress run
    # GD grid placed by the sharpness along the flow path; the claims need this share in reach
    match_min_share: float = 0.75
    # hard tolerances: worst |mean deviation| + 3.4 sd over the 20 valid corners of the block
    # sizes, 3 seeds each (3.4 sd: the Bonferroni share of a 1% family-wise false-FAIL chance;
    # book/records/cl_matched_spread.json, scripts/cl_matched_spread.py). Re-derived after the
    # calibration of 799b43d false-FAILed the gap at a corner the first derivation missed
    # (D_MODEL 8, HIDDEN 1: Adam's slope there is biased up by 0.06); was 0.07 and 0.10.
    tol_match_gd: float = 0.076   # GD lr slope at matched loss: 0.047 + 3.4 x 0.008
    tol_match_gap: float = 0.165  # GD slope - Adam slope: 0.059 + 3.4 x 0.031
    # identities (bands only guard the code): float64 rounding of the exact recursions
    tol_exact: float = 1e-12
    band_alpha: tuple = (1.8, 2.2)  # early-window tau exponent (identity band)
    band_beta: tuple = (0.7, 1.2)   # early-window k exponent (identity band)
    band_alpha_real: tuple = (1.7, 2.3)   # char-LM / ViT (cross-entropy, 1-3 seeds)
    tol_exact_lm: float = 1e-10           # router sum of the 1-4 layer LM (larger sums)
    tol_adam_alpha: float = 0.0085  # Adam's tau exponent, median of per-law fits
    rtol_wd: float = 0.01         # weight-decay factor against (1 - tau lam)^(2k) (derivation)
    tol_grad_fd: float = 1e-6     # gradient / central differences (identity)
    adam_router_lo: float = 1e-3  # Adam moves the router sum: far above rounding
    # ---- char-LM and digits ViT (fixed architectures, not the knobs)
    lm_dim: dict = field(default_factory=lambda: dict(d=32, H=4, dk=8, dv=8, E=4, m=32, T=32,
                                                       B=32))
    lm_ks: tuple = (5, 10, 20, 40)  # LM steps at which the drift is fitted
    lm_seeds: int = 1             # LM seeds
    lm_windows: tuple = (0.32, 3.2, 32.0)  # LM windows: largest tau k lambda_max
    lm_long_tau: float = 0.1      # step of the longer LM runs (figure only)
    lm_long_steps: int = 60       # their length
    tol_late: float = 0.031       # late-window alpha - beta (char-LM; the ViT's too)
    late_tau_lam: float = 0.1     # the late window keeps tau lam_max below this (rules)
    vit_dim: dict = field(default_factory=lambda: dict(d=32, H=4, dk=8, dv=8, m=32, patch=2))
    vit_n: int = 128              # digits images of the ViT
    vit_ks: tuple = (5, 10, 20, 40)  # ViT steps at which the drift is fitted
    vit_seeds: int = 1            # ViT seeds
    device: str = "cpu"            # where the blocks live

    def validate(self) -> None:
        if self.dk % 2:
            raise ValueError(f"HEAD_DIM={self.dk} must be even (RoPE rotates pairs of "
                             f"coordinates); domain {DOMAIN['HEAD_DIM']}")
        if self.dk > self.d or self.dv > self.d:
            raise ValueError(f"HEAD_DIM={self.dk} and VALUE_DIM={self.dv} must be <= "
                             f"D_MODEL={self.d} (full-rank head maps)")
        if self.k > self.E:
            raise ValueError(f"TOPK={self.k} must be <= EXPERTS={self.E}")
        if self.E > self.d + 1:
            raise ValueError(f"EXPERTS={self.E} must be <= D_MODEL + 1 = {self.d + 1} (every "
                             "expert reachable by a bias-free linear router)")

    # ------------------------------------------------------------------ derived sizes
    @property
    def rope_dk(self) -> int:
        """Head dim of the RoPE pairing control: at least 4 (with 2 both pairings coincide)."""
        return max(4, self.dk)

    @property
    def disc(self) -> dict:
        """Block sizes of the discrete-time sections (the knobs times disc_factor)."""
        f = self.disc_factor
        return dict(d=f * self.d, m=f * self.m, H=self.H, dk=f * self.dk, dv=f * self.dv,
                    E=self.E, k=self.k, T=2 * self.T, o=self.d)


DOMAIN = Config.domain()
CI_SETTINGS = Config.CI_SETTINGS
sample_setting = Config.sample_setting
