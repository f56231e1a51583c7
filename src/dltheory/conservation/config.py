"""Every size, seed count, step size, window and tolerance of the conservation-law chapter.

``Config.for_scale(scale, **overrides)`` holds the smoke / standard / paper presets; the
headline knobs are the block dimensions (``DOMAIN``, keyed by the chapter's parameter names)
and every block of the chapter, the orthogonality and counting blocks as well as the
training blocks of the discrete-time sections, is built from them.

Tolerances come from seed spreads measured before the calibration run (float64; each comment
gives the numbers). Round 3 re-measured the stochastic hard claims (Adam's exponent, the
weight-decay factor, the matched-progress slopes, the gradient check) over 15-48 settings
drawn across the declared domain, each with its own seed, and set each tolerance to at least
the worst mean deviation plus 3.4 standard deviations: the Bonferroni share of a 1% chance of
any false hard FAIL over the chapter's 14 hard claims whose measurement varies with the seed
(those four, the char-LM late window, Adam's router drift and the seven negative controls;
the law counts and orthogonality checks are exact). These tolerances are tighter than
before (0.1, 0.2, 0.2); none was widened.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..chapter_config import ChapterConfig, Knob, per_scale


@dataclass(frozen=True)
class Config(ChapterConfig):
    """Sizes, steps, windows and tolerances; the knobs are the block dimensions.

    Cost model (float64 throughout: the identities are checked to 1e-12 and the exponent
    fits need it; on CUDA too, so a T4, at 1/32 of its float32 rate, is several times slower
    than the estimates below). Measured on one thread of a 2-core CPU: smoke is about 40 s
    of compute. At ``paper`` the synthetic sections (orthogonality, counts, the early and
    Adam windows, matched progress: tasks of 0.05-0.5 s each, a few hundred in all) stay
    within a few CPU minutes apart from the widened attention counts (``big_factor`` 4,
    D = 1,024 at the default knobs, 2D Jacobian rows and D brackets); the char-LM
    (d=128, 4 layers, T=64, B=256; 1.9 M parameters) costs 9.0 s per recorded GD step,
    with 3 seeds x 1,050 steps of windows and 3 x 1,000 long steps, about 16 CPU hours.
    On one H100 (float64 matmuls at tens of TFLOP/s, about 2e11 FLOP per LM step plus the
    per-step law records) an LM step is estimated at about 20 ms, so ``paper`` is sized
    for about 8 minutes in all; no GPU was at hand to measure it. ``full`` takes the
    reconstruction of the paper's unstated run sizes (LM d=256, m=512, E=8, T=256,
    4 layers, 13.6 M parameters; 2,000 long steps; counts at D of about 4,000), estimated
    at 1-2 hours on one H100 and not run in CI. Under ``DLTHEORY_BUDGET`` the seed sweeps
    run in rounds (one seed each) and the widened counts, the LM and the ViT sweeps start
    only when a cost probe (one timed step, or 8 Jacobian rows) says their first round
    fits their share (``BUDGET_WEIGHTS``); otherwise their claims are INCONCLUSIVE with
    that reason.

    Joint constraints: HEAD_DIM even (RoPE rotates pairs), HEAD_DIM and VALUE_DIM <= D_MODEL
    (a head map wider than the model is rank-deficient and the stated counts assume full
    rank), TOPK <= EXPERTS, EXPERTS <= D_MODEL + 1 (a bias-free linear router reaches every
    expert only when its rows are in general position, i.e. all vertices of their convex
    hull). Upper ends keep the largest Jacobian (D ~ 500 for attention) inside the smoke
    budget.
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
                      "cl_lm_long": 0.1, "cl_vit": 0.1, "figures": 0.1}

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
    min_gap: float = 1e6          # smallest accepted s[r-1]/s[r]; observed gaps 1e8-1e14
    tol_orth: float = 1e-10       # a law: |cos| at rounding level (observed <= 3e-16)
    neg_lo: float = 1e-3          # a control: |cos| clearly non-zero (observed 0.07-0.7)
    # ---- discrete time (teacher regression); blocks are the knobs times disc_factor
    disc_factor: int = 2
    disc_seeds: int = 1
    early_tl: float = 0.32        # early window: largest tau * k * lambda_max
    tau_ratios: tuple = (0.125, 0.25, 0.5, 1.0)
    ks: tuple = (10, 20, 40, 80)
    n_reg: int = 64
    n_reg_moe: int = 256
    sgd_batch: int = 16
    beta_hb: float = 0.9
    adam_lr_scale: float = 0.1
    id_tau: float = 1e-2
    id_steps: int = 200
    wd_lambda: float = 5.0        # tau lam = 0.05: linearising the factor moves it by 5%
    wd_steps: int = 20            # (1 - tau lam)^(2k) = 0.129 at k = 20; exp(-2 tau lam k) = 0.135
    adam_tl: float = 0.02         # Adam's tau exponent on a shorter window (see tol_adam_alpha)
    fd_eps: float = 1e-6          # gradient against central differences of the loss
    fd_dirs: int = 16
    # matched learning progress: train until the loss falls to match_fraction * L0
    match_fraction: float = 0.5
    match_tl: tuple = (0.05, 0.1, 0.2, 0.4)      # GD: tau * lambda_max
    match_adam_lr: tuple = (0.000625, 0.00125, 0.0025, 0.005)
    match_seeds: int = 8          # the matched-progress tolerances assume all 8 seeds
    match_max_steps: int = 4000
    # GD's step grid is placed by the sharpness along the flow path (``lam_ref``, the larger of
    # its values at the start and at the crossing of a probe run): a (block, seed) whose grid
    # would need more than match_max_steps is out of reach; the claims need this share in reach
    match_min_share: float = 0.75
    # GD slope of drift vs lr at matched loss (crossing interpolated, 8 seeds x 2 blocks): over
    # 15 random settings of the domain 1.037 +- 0.005 (1.032-1.047; the O(tau) bias of GD
    # against the flow at tau lam <= 0.4): tolerance 0.07 >= 0.047 + 3.4 x 0.005.
    # The calibration's corner d=2, m=1, E=2 (SEED 1000) FAILed with 1.144: one SwiGLU teacher
    # sharpened 27-fold before the loss halved, so steps placed by the initial sharpness ran at
    # the edge of stability (slope 2.4). Fixed at its cause, not by a wider band: the grid is
    # now placed by the sharpness along the path (see match_min_share); at that corner SEED
    # 1000 / 2000 / 3000 then give 1.062 / 1.021 / 1.020, the defaults (SEED 0) 1.035.
    # Tolerance unchanged.
    tol_match_gd: float = 0.07
    # GD slope minus Adam slope at matched loss (Adam lrs 6.25e-4..5e-3, 8 seeds x 2 blocks):
    # 1.005 +- 0.024 over the same 15 settings (0.977-1.066); tolerance 0.1 >= 0.005 + 3.4 x
    # 0.024 (0.2 before, with 2 seeds and 4x larger Adam lrs: bias -0.04, sd 0.04).
    tol_match_gap: float = 0.10
    # identities (by construction; bands only guard the code): float64 rounding of the exact
    # recursions is ~1e-15; early-window exponents 1.94-1.98 (alpha), 0.94-0.97 (beta)
    tol_exact: float = 1e-12
    band_alpha: tuple = (1.8, 2.2)
    band_beta: tuple = (0.7, 1.2)
    band_alpha_real: tuple = (1.7, 2.3)   # char-LM / ViT (cross-entropy, 1-3 seeds)
    tol_exact_lm: float = 1e-10           # router sum of the 1-4 layer LM (larger sums)
    # Adam's tau exponent, mean over the three blocks, one seed: on the window tau k lam <=
    # 0.02 0.999 +- 0.006 at 24 seeds of the defaults (0.988-1.013) and 0.997 +- 0.008 at 24
    # random settings (0.976-1.011); on the old window 0.32: 0.95-0.96 +- 0.02-0.035, which
    # the old tolerance 0.2 had to absorb. Tolerance 0.04 >= 0.003 + 3.4 x 0.008.
    tol_adam_alpha: float = 0.04
    # weight-decay factor at tau lam = 0.05, k = 20: relative deviation -2e-5 +- 5e-5 over 15
    # random settings (max |dev| 1.7e-4, the tau^2 q terms); the linearised factor is 5% off.
    rtol_wd: float = 0.01
    # gradient / central differences of the loss (eps 1e-6, 16 directions, SwiGLU and RoPE
    # attention): |ratio - 1| 1.7e-10 +- 0.7e-10 over 15 random settings (max 3e-10).
    tol_grad_fd: float = 1e-6
    adam_router_lo: float = 1e-3  # Adam moves the router sum: observed 0.06-0.3
    # ---- char-LM and digits ViT (fixed architectures, not the knobs)
    lm_dim: dict = field(default_factory=lambda: dict(d=32, H=4, dk=8, dv=8, E=4, m=32, T=32,
                                                       B=32))
    lm_ks: tuple = (5, 10, 20, 40)
    lm_seeds: int = 1
    lm_windows: tuple = (0.32, 3.2, 32.0)
    lm_long_tau: float = 0.1
    lm_long_steps: int = 60
    # late window: alpha - beta = 1 (flow regime), checked on the widest window whose largest
    # step still tracks the flow, tau lam_max <= late_tau_lam (see ``late_tl``). The widest
    # window (32, tau lam up to 0.8) gave alpha - beta = 1.21 at SEED = 2 in the calibration
    # (a false FAIL: GD no longer tracks the flow there); on the window 3.2 (tau lam <= 0.08)
    # SEED = 0, 1, 2 give 1.000, 1.002, 1.010. Tolerance 0.15 (unchanged).
    tol_late: float = 0.15
    late_tau_lam: float = 0.1
    vit_dim: dict = field(default_factory=lambda: dict(d=32, H=4, dk=8, dv=8, m=32, patch=2))
    vit_n: int = 128
    vit_ks: tuple = (5, 10, 20, 40)
    vit_seeds: int = 1
    device: str = "cpu"

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

    @property
    def late_tl(self) -> float:
        """The late window of the real-data claims: the widest of ``lm_windows`` whose
        largest step has ``tau lam_max = tl / max(k) <= late_tau_lam`` (decided from the
        inputs: beyond it GD no longer tracks the flow and alpha - beta = 1 need not hold)."""
        kmax = max(max(self.lm_ks), max(self.vit_ks))
        ok = [w for w in self.lm_windows if w / kmax <= self.late_tau_lam]
        if not ok:
            raise ValueError(f"no window in lm_windows={self.lm_windows} has tau lam <= "
                             f"{self.late_tau_lam} at k <= {kmax}")
        return max(ok)

    @property
    def plain_chain_undetermined(self) -> str:
        """Why the law count of the plain (residual-free) MHA -> SwiGLU chain cannot be
        determined at these knobs ("" when it can), decided from the knobs alone: with one
        head of value dim 1 the chain passes one scalar per token to the SwiGLU, whose m >= 2
        units are then functions of that scalar with nearly collinear Jacobian columns; the
        spectrum has no gap in float64 and the counter refuses (measured: no count at 10 of
        15 draws with H dv = 1, m = 2-8, d = 2-8; every draw with H dv >= 2 or m = 1 counted)."""
        if self.H * self.dv == 1 and self.m >= 2:
            return (f"not counted: with H d_v = 1 and m = {self.m} the plain chain feeds one "
                    "scalar per token to the SwiGLU, its rank has no gap in float64")
        return ""

    @property
    def sparse_k(self) -> int:
        """k of the top-k sigmoid definition: TOPK, but at least 2 (k = 1 gives g = 1)."""
        return min(self.E, max(2, self.k))


DOMAIN = Config.domain()
CI_SETTINGS = Config.CI_SETTINGS
sample_setting = Config.sample_setting
