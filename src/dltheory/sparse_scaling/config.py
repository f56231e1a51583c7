"""Every size, seed count and spread of the sparse-scaling chapter (one line of why each).

``Config.for_scale(scale, alpha1=..., alpha2=..., seed=...)`` builds the presets (smoke: CI
on one CPU thread; standard: the rendered book; paper: one GPU machine; full: the former
paper sizes, several CPU hours, not run). The headline knobs are the two exponents of the
data model: ``ALPHA1`` (sparsity, p_j = j^-(a1+1)) and ``ALPHA2`` (active amplitude,
s_j^2 = j^-(a2+1)), jointly ``alpha2 >= -alpha1`` (alpha_N = a1 + a2 + 1 >= 1); the GD
section uses its own fixed setting (alpha2 < -1 is needed for spikes). Float64 throughout
(exact losses down to 1e-12 of the total; the interpolation peak needs it).

The windows that follow the knobs are ``windows.Windows``; the tolerance and draw-count
rules derived from theory are ``rules.DrawRules`` (its docstring says where the spreads
below were measured). The papers' own sizes are not known here (only the abstract).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..chapter_config import ChapterConfig, Knob
from .data import Exponents
from .rules import DrawRules
from .windows import Windows

_STANDARD = dict(
        d_moments_cap=2_000_000, heaps_trials=2000, m_n=16384, n_hi=512, n_points=11,
        n_seeds=16, d_cap=3e5, k_cap=3000,
        d_points=8, d_seeds=4, d_slope_sd=0.015, d_seeds_max=64,
        m_dense=16384, d_dense=(16, 23, 32, 45, 64, 91, 128, 181, 256, 362, 512),
        dense_seeds=4, tol_dense=0.10, m_dd=16384, k_dd=(16.0, 192.0), dd_points=5,
        dd_seeds=3, rank_draws=32, n_dd_points=56, tol_peak_slope=0.06,
        op_tasks=8, ac_sampled=True, grid_n=14, grid_d=14, grid_u_seeds=8, grid_u_seeds_max=16,
        grid_x_seeds=2, tol_law_a=0.10, m_de=200_000,
        d_gd=(1000, 3000, 10_000, 30_000, 100_000),
        gd_u_seeds=32, gd_trials=250, gd_trials_out=60, gd_sd1=0.074, gd_secular_sd1=0.07, relu_m=4096, relu_n_head=20_000,
        relu_n_sweep=(16, 23, 32, 45, 64, 91, 128, 181, 256), relu_d_fixed_cap=3e5,
        relu_n_fixed=1024, relu_d_cap=1e5, relu_d_points=9, relu_seeds=4,
        m_sweep=10_000_000)

# 'full': the former paper sizes (the papers' own are unknown: abstract only)
_FULL = dict(
        d_moments_cap=10_000_000, heaps_trials=10_000, m_n=131072, n_hi=4096, n_points=9,
        n_seeds=32, d_cap=1e7, k_cap=8000,
        d_points=9, d_seeds=8, d_slope_sd=0.01, d_seeds_max=128,
        m_dense=32768, d_dense=(16, 64, 256, 1024, 4096), dense_seeds=8,
        tol_dense=0.05, m_dd=65536, k_dd=(16.0, 1024.0), dd_points=7, dd_seeds=4,
        rank_draws=64, n_dd_points=64, tol_peak_slope=0.04, op_tasks=16, ac_sampled=True,
        grid_n=16, grid_d=16, grid_u_seeds=16, grid_u_seeds_max=32, grid_x_seeds=8, grid_d_cap=1e7,
        grid_n_range=(8, 2048), tol_law_a=0.05, m_de=1_000_000,
        d_gd=(1000, 3000, 10_000, 30_000, 100_000, 300_000),
        gd_u_seeds=128, gd_trials=500, gd_trials_out=100, gd_sd1=0.06, gd_secular_sd1=0.055, relu_m=8192,
        relu_n_head=100_000, relu_n_sweep=(16, 32, 64, 128, 256, 512, 1024),
        relu_d_fixed_cap=3e6, relu_n_fixed=4096, relu_d_cap=1e5, relu_d_points=6,
        relu_seeds=8, m_sweep=20_000_000)



@dataclass(frozen=True)
class Config(Exponents, DrawRules, Windows, ChapterConfig):
    """The chapter's sizes and spreads; knobs ALPHA1 (log-uniform when drawn) and ALPHA2,
    jointly ALPHA2 >= -ALPHA1 (alpha_N = a1 + a2 + 1 >= 1)."""

    KNOBS = {"ALPHA1": Knob("alpha1", 0.25, 4.0, log=True),
             "ALPHA2": Knob("alpha2", -4.0, 1.0)}
    # budget shares by sweep, from the paper cost model (rules.py); "fits": exact sums, fits, figures
    BUDGET_WEIGHTS = {"ss_alpha_n": 0.06, "ss_alpha_d": 0.02, "ss_dense": 0.02, "ss_dd": 0.02,
                      "ss_overparam": 0.01, "ss_grid": 0.12, "ss_gd": 0.55, "ss_relu": 0.10,
                      "fits": 0.10}
    CI_SETTINGS = [
        {"ALPHA1": 0.4, "ALPHA2": 0.6},     # nearly dense: K(D) ~ D^0.71, alpha_N = 2
        {"ALPHA1": 3.0, "ALPHA2": -2.5},    # very sparse, flat amplitudes: alpha_N = 1.5
    ]
    # smoke: the defaults below; paper: standard's per-task sizes with 2-8x the draws (rounds)
    PRESETS = {
        "smoke": {},
        "standard": _STANDARD,
        "paper": {**_STANDARD, "n_seeds": 64, "d_seeds": 8, "d_slope_sd": 0.01, "d_seeds_max": 128,
                  "dense_seeds": 16, "dd_seeds": 16, "op_tasks": 64, "grid_u_seeds": 32, "grid_u_seeds_max": 64,
                  "gd_u_seeds": 1024, "relu_seeds": 32},
        "full": _FULL,
    }

    alpha1: float = 1.0
    alpha2: float = 0.0
    z_family: float = 3.5       # sds per tolerance: 17 hard claims, P(any false FAIL) <= 1%
    rounds_min: int = 3         # seeded sweeps whose tolerance follows the draws: at least 3
    # --- 1. data model
    d_moments_cap: int = 1_000_000  # rows for the second-moment check (sampling is O(D))
    heaps_trials: int = 400     # draws of K(D) against E K(D)
    z_max: float = 4.5          # max |z| over <= 20 coordinates: P(any |z| > 4.5) ~ 1e-4
    k_asym: float = 1e4         # K at which the Heaps/floor prefactors are read off
    prefactor_rtol: float = 0.03  # exact sum vs closed form: drift <= 1.2% at K = 1e4
    # --- 3. model-limited alpha_N
    m_n: int = 8192             # width M of the data: >= 16 n_hi
    n_lo: int = 16              # smallest N of the sweep (the power law starts above ~10)
    n_hi: int = 256             # <= M/16 so the truncation floor M^-alpha_N is negligible
    n_points: int = 9           # log-spaced N values
    n_seeds: int = 8            # feature draws (the tolerance follows 1/sqrt of them)
    an_sd_rel: float = 0.025    # single-draw slope sd / alpha_N, worst measured over the domain
    an_sys: float = 0.025       # draw mean above the l_DE slope (finite-size offset, 0.014-0.020)
    an_asym_rel: float = 0.02   # l_DE window slope below alpha_N by 1.1-1.5% of it (bound)
    an_level_sys: float = 0.08  # l_inf / l_DE above 1 by the DE's finite-N offset, 2.5-7.3%
    # --- 4. data-limited alpha_D
    d_cap: float = 1e5          # largest sampled D (sampling is O(D))
    k_cap: int = 1500           # largest K for the K x K Gram eigendecomposition
    d_points: int = 7           # log-spaced D values
    d_seeds: int = 3            # fewest data draws per D
    k_floor: tuple = (300.0, 3000.0)  # exact-sum window in K: drift <= 0.004 over the domain
    tol_floor_slope: float = 0.01  # exact window slope vs alpha_D (drift above, x 2.5)
    d_slope_sd: float = 0.02    # target sd of the sampled slope (x alpha_D below 1): sets the draws
    d_seeds_max: int = 32       # cap on those draws (cost O(D) each)
    d_slope_sys: float = 0.01   # observed but unidentified coordinates: loss/T_obs - 1 <= 3%
    ad_asym_rel: float = 0.01   # |E T window slope - alpha_D| <= 0.4% of alpha_D where asymptotic
    k_asym_window: float = 20.0  # sampled window counts as asymptotic when K(D_lo) >= this
    # --- 5. dense baseline
    m_dense: int = 8192         # width of the dense Gaussian baseline
    d_dense: tuple = (16, 23, 32, 45, 64, 91, 128, 181, 256)  # D grid of the dense sweep
    dense_seeds: int = 3        # draws of the dense sweep
    tol_dense: float = 0.15     # two independent draws of the same law: spread ~0.05
    # --- 6. double descent
    m_dd: int = 8192            # width of the double-descent sweep
    k_dd: tuple = (16.0, 96.0)   # targets for rank X (peak positions)
    d_cap_dd: float = 1e6       # cap on its D (sampling cost)
    dd_points: int = 4          # D values of the peak sweep
    dd_seeds: int = 2           # full N sweeps per D
    rank_draws: int = 48         # rank draws per D (cheap: no N sweep); SS.peak.slope's noise
    n_dd_points: int = 40       # log-spaced N above 64 (every integer below)
    dense_resolve: float = 1e-9  # 10 rtol_pinv: the min-norm fit resolves the D-th direction
    dense_octaves: tuple = (8, 16, 32, 64, 128)   # D >= 8: one N step at D = 4 is 25%
    dense_draws: int = 3        # data sets per D (at least dense_rows / D: one N step is 1/D)
    dense_rows: int = 96        # the peak of the mean ridgeless / mean ridge over the draws
    dense_mus_decades: tuple = (-18.0, 1.0)  # oracle ridge below the smallest kept s^2 (steep spectra)
    peak_band: tuple = (0.8, 1.25)  # N_peak / rank X accepted (one log-grid step each side)
    rank_lo: float = 0.85        # rank deficiency: two rare coordinates seen only together
    tol_peak_slope: float = 0.1    # dense peak: integer N grid, log(1 +- 1/8) per point over >= 1 decade
    peak_ratio_sd: float = 0.026  # per-draw sd of log(N_peak / rank): 90% upper bound measured
    peak_slope_sys: float = 0.01  # peak slope minus E K slope (rank deficiency drifts with D)
    op_k: float = 8.0           # E K at the over-parameterised check's D (near the peak)
    op_excess: tuple = (6, 8, 12)  # N = r + 1 + m: where an error in (N - r - 1) shows
    op_tasks: int = 4           # tasks of op_draws (data, feature) draws each
    op_draws: int = 40          # draws per task (the se of the mean ratio is measured in the run)
    op_min_draws: int = 40      # fewer completed draws: INCONCLUSIVE
    # --- 7. combined law
    grid_n: int = 10            # N values of the (N, D) grid
    grid_d: int = 10            # D values of the grid
    grid_n_range: tuple = (8, 256)  # N from the model-limited corner to M/32
    grid_d_cap: float = 1e6     # cap on the grid's D (sampling cost)
    grid_u_seeds: int = 8        # 4 before: SS.combined_law.b resolved only 24% (median)
    grid_u_seeds_max: int = 16  # cap on the draws grid_noise^2 asks for
    grid_x_seeds: int = 1       # data draws per feature draw
    grid_rounds_min: int = 4    # fewer completed feature draws (budget): INCONCLUSIVE
    k_grid_min: float = 48.0    # the N-limited corner needs K(D_max) >= this
    tol_law_a: float = 0.15     # a over seeds: 1.90-2.06 (4 u-seeds, default); soft
    law_b_sd1: float = 0.11     # b per feature draw at the default (x grid_noise elsewhere)
    ac_step: float = 1.0        # alpha_C sampled at a1 and a1 + ac_step, a2 fixed
    ac_sampled: bool = False    # soft, resolution 72-78% at smoke: its second surface not run there
    tol_ac_sampled: float = 0.065  # 3 sd of the sampled increase of alpha_C (sd 0.021, 8 seeds)
    # --- 8. closed-form frontier (theory)
    m_de: int = 100_000         # width of the envelope's deterministic equivalent
    frontier_sep: float = 5.0   # closed form needs N* << D*: D(K = N)/N >= this
    tol_frontier: float = 0.02  # envelope vs closed forms: worst drift over the domain 0.0066
    # --- 9. GD instability (fixed setting with spikes)
    gd_alpha1: float = 3.0      # GD setting: sparse enough for rare spikes
    gd_alpha2: float = -3.0     # alpha2 < -1: a lone rare coordinate can reach 2/eta
    control_alpha2: float = -0.5  # control with alpha2 > -1: no spikes, no failures
    m_gd: int = 4096            # width of the GD data
    n_gd: int = 16              # features of the GD readout
    gd_c: float = 1.5           # step eta = gd_c / lambda_max of the population problem (< 2: stable)
    d_gd: tuple = (1000, 3000, 10_000, 30_000)  # D grid of P_fail(D)
    gd_kappa: float = 0.25       # stratum A: a coordinate whose single spike could reach 2/eta
    gd_u_seeds: int = 64        # feature draws: their spread dominates P_fail's
    gd_trials: int = 40          # per feature draw and D, in stratum A
    gd_trials_out: int = 10      # per feature draw and D, outside A
    gd_shown: int = 3           # trajectories shown in the figure
    gd_steps: int = 2000        # full-batch GD steps per run (the figure's trajectories)
    gd_sd1: float = 0.155       # one draw's slope sd: 90% upper bound over 10 master seeds
    gd_secular_sd1: float = 0.32  # one draw's sampled/secular ratio sd: 90% upper bound
    gd_rounds_min: int = 24     # fewer completed feature draws: INCONCLUSIVE
    # --- 10. ReLU features
    relu_m: int = 2048          # width of the ReLU data
    relu_tail_max: float = 0.03  # stratified estimator valid when sum_{j>J0} p_j <= this
    relu_j0_max: int = 256      # largest head the stratified estimator enumerates
    relu_nw: int = 64           # target weight draws w per feature draw
    relu_n_head: int = 8000     # head samples for the head term of the stratified moments
    relu_n_tail: int = 4        # head samples per tail coordinate (each with both signs)
    relu_n_sweep: tuple = (16, 23, 32, 45, 64, 91, 128)  # N grid of the ReLU sweep
    relu_d_fixed_cap: float = 1e5  # cap on D of the N sweep
    relu_n_fixed: int = 512     # N of the D sweep (model not limiting)
    relu_d_cap: float = 3e4     # cap on D of the D sweep
    relu_d_points: int = 7      # D values of the D sweep
    relu_seeds: int = 3         # feature draws
    relu_floor: float = 0.9     # loss / T_obs accepted above this (Monte Carlo slack)
    # --- 11. alpha1 sweep (exact formulas)
    sweep_alpha1: tuple = (0.25, 0.5, 1.0, 2.0, 3.0, 4.0)  # the alpha1 values of the sweep
    m_sweep: int = 4_000_000    # truncation of the exact sums
    mus_rel: tuple = (0.0, 1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0, 10.0)  # ridge grid / mean(s^2)

    def validate(self) -> None:
        if self.alpha2 < -self.alpha1:
            raise ValueError(f"ALPHA2 = {self.alpha2!r} is outside its domain [-ALPHA1, 1] = "
                             f"[{-self.alpha1}, 1] for ALPHA1 = {self.alpha1} "
                             f"(alpha_N = a1 + a2 + 1 >= 1)")


DOMAIN = Config.domain()
DEFAULTS = {"ALPHA1": 1.0, "ALPHA2": 0.0}
CI_SETTINGS = Config.CI_SETTINGS
sample_setting = Config.sample_setting
