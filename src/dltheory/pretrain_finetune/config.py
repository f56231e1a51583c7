"""Sizes, seeds, grids and knobs of the pretraining / fine-tuning chapter.

``Config.for_scale(scale, **knobs)`` holds the smoke / standard / paper / full presets; the
parameters cell's knobs (``SEED``, ``RHO_PT``, ``RHO_SH``, ``RHO_NEW``, ``ALPHA_PT``,
``ALPHA_FT``, ``C_PT``, ``LAM_IV``, ``GAMMA``) map to the fields of the same lower-case name.

Declared domain (``KNOBS``): every value runs at every scale. The simulations raise D so that
the sparsest FT teacher has ``min_active`` expected active coordinates, up to ``d_sim_max``;
a task whose teacher would need more is *out of reach* (``Config.reachable``, decided from
the knobs before the run): it is simulated and drawn, but enters no evidence claim.

The simulations build their FT potential from the network's own initial FT weights
(``model.network_ft_scales``), not from the formula ``bias.ft_scales`` the replica theory
uses, so a wrong formula moves one side only.

Budgets (``DLTHEORY_BUDGET``): the simulation sweeps run in rounds of ``seeds_per_task``
seeds, shares in ``BUDGET_WEIGHTS``; a sweep whose first round would not fit is not started
and its claims are INCONCLUSIVE with that reason. Everything is float64.

Tolerances and decision rules, and why each has its value, are in :mod:`.rules`
(the calibration record holds the measurements they were set from).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .. import validation
from ..chapter_config import ChapterConfig, Knob


@dataclass(frozen=True)
class Config(ChapterConfig):
    """Sizes, grids, tolerances; knobs and domain in ``KNOBS`` (C_PT, GAMMA log-uniform)."""

    # Order: corners vary the last knob fastest: a short calibration spans both ends of C_PT.
    KNOBS = {
        "ALPHA_PT": Knob("alpha_pt", 0.2, 0.95),
        "LAM_IV": Knob("lam_iv", -0.999, -0.5),
        "ALPHA_FT": Knob("alpha_ft", 0.1, 0.6),
        "GAMMA": Knob("gamma", 1e-4, 1.0, log=True),
        "RHO_NEW": Knob("rho_new", 0.01, 0.2),
        "RHO_SH": Knob("rho_sh", 0.05, 0.5),
        "RHO_PT": Knob("rho_pt", 0.01, 0.5),
        "C_PT": Knob("c_pt", 1e-4, 10.0, log=True),
    }
    CI_SETTINGS = [  # off-default settings run in CI: sparse / dense PT, lazy / rich
        {"SEED": 3, "RHO_PT": 0.05, "RHO_SH": 0.3, "RHO_NEW": 0.15, "ALPHA_PT": 0.8,
         "ALPHA_FT": 0.45, "C_PT": 0.3, "LAM_IV": -0.6, "GAMMA": 0.1},
        {"SEED": 11, "RHO_PT": 0.45, "RHO_SH": 0.45, "RHO_NEW": 0.04, "ALPHA_PT": 0.25,
         "ALPHA_FT": 0.12, "C_PT": 2e-4, "LAM_IV": -0.99, "GAMMA": 2e-4},
    ]
    #: Shares of the chapter budget (``DLTHEORY_BUDGET``) per sweep; "figures" is a reserve.
    BUDGET_WEIGHTS = {"pf_curves": 0.10, "pf_regimes": 0.30, "pf_gd": 0.10, "pf_knobs": 0.15, "pf_path": 0.03,
                      "pf_imp_theory": 0.07, "pf_imp_sim": 0.05, "pf_vision": 0.08, "pf_modadd": 0.07, "figures": 0.05}
    PRESETS = {  # smoke: the field defaults below
        "smoke": {},
        "standard": dict(taus=(0.04, 0.02, 0.01, 0.005), grid=200, d_sim=600, d_sim_max=1500, n_seeds=8,
                         n_seeds_knobs=8, ratio_width=0.3, seeds_per_task=2, alphas_sim=(0.15, 0.3, 0.5),
                         n_alpha_theory=16, n_knob_theory=8, d_gd=300, alphas_ft_imperfect=(0.2, 0.35, 0.5),
                         lams_imperfect=(-0.999, -0.9, -0.5, 0.0, 1.0), d_imperfect=1000, n_seeds_imperfect=6,
                         vision_pt_steps=300, vision_seeds=5, vision_n=(10, 30, 100), modadd_seeds=3),
        "paper": dict(taus=(0.04, 0.02, 0.01, 0.005), grid=200, d_sim=2000, d_sim_max=6000, n_seeds=10,
                      n_seeds_knobs=10, ratio_width=0.3, seeds_per_task=2, min_seeds=4,
                      alphas_sim=(0.1, 0.2, 0.3, 0.5), n_alpha_theory=40, n_knob_theory=12, d_gd=1000,
                      alphas_ft_imperfect=(0.2, 0.35, 0.5), lams_imperfect=(-0.999, -0.99, -0.9, -0.5, 0.0, 1.0),
                      d_imperfect=2000, n_seeds_imperfect=10, vision_pt_steps=1000, vision_seeds=10,
                      vision_n=(10, 20, 50, 100, 200), modadd_seeds=5, modadd_steps=(2000, 500)),
    }
    PRESETS["full"] = {**PRESETS["paper"], "d_sim": 4000, "d_sim_max": 8000, "n_seeds": 20, "n_seeds_knobs": 20,
                       "min_seeds": 8, "d_imperfect": 4000, "n_seeds_imperfect": 20, "d_gd": 2000}

    rho_pt: float = 0.2        # PT density
    rho_sh: float = 0.25       # subset task: fraction of PT features the FT teacher reuses
    rho_new: float = 0.05      # new-features task: FT density on coordinates PT did not use
    alpha_pt: float = 0.45     # imperfect PT: N_PT / D
    alpha_ft: float = 0.2      # N_FT / D of the lambda, gamma and c sweeps
    c_pt: float = 1e-3         # PT scale of regimes I, II, IV and of the sweeps
    lam_iv: float = -0.9       # relative scale of regime IV
    gamma: float = 1e-3        # readout re-initialisation before FT
    c_lazy: float = 10.0       # regime III (kernel): c_PT of the lazy setting
    # ---- sections 1-2: a small PT/FT instance trained by GD -----------------------------
    d_small: int = 40
    n_pt_small: int = 25
    n_ft_small: int = 12
    taus: tuple = (0.02, 0.01)
    c_small: tuple = (0.05, 0.5)
    lam_small: tuple = (-0.8, 0.0, 0.8)
    gamma_small: float = 0.3
    gd_max_steps: int = 400_000
    # ---- section 3: closed-form grids ---------------------------------------------------
    grid: int = 60
    # ---- sections 4-8: teacher-student simulations (exact minimisers) -------------------
    d_sim: int = 300                    # D of the simulations, raised for sparse tasks (below)
    min_active: float = 6.0             # expected active FT coordinates of the sparsest task
    d_sim_max: int = 450                # cap on that raise; beyond it the setting is out of domain
    n_seeds: int = 8
    n_seeds_knobs: int = 16             # seeds of the gamma / c_PT sweep (its seed spread is larger)
    seeds_per_task: int = 8             # seeds per simulation task: one round of the budget
    min_seeds: int = 8                  # seeds the ratio / ordering claims need (tolerances set at 8)
    alphas_sim: tuple = (0.15, 0.3)     # plus alpha_ft
    n_alpha_theory: int = 6             # points on each replica curve
    n_knob_theory: int = 5              # points on each gamma / c replica curve
    lams: tuple = (-1.0, -0.999, -0.99, -0.9, -0.5, 0.0, 0.5, 1.0)
    gammas_sim: tuple = (1e-4, 1e-2, 1.0)   # readout re-init values simulated (lambda = lam_iv)
    cs_sim: tuple = (1e-4, 1e-2, 10.0)       # PT scales simulated (lambda = lam_iv)
    d_imperfect: int = 300              # D of the imperfect-PT simulation (finite-D bias near
    n_seeds_imperfect: int = 4          # the recovery transition: 0.04 at D=600, 0.015 at 1000)
    alphas_ft_imperfect: tuple = (0.35, 0.5)
    lams_imperfect: tuple = (-0.999, -0.9, 0.0, 1.0)
    d_gd: int = 200
    alpha_gd: float = 0.3
    gamma_gd: float = 1.0               # one GD run at a large readout, where gamma^2 shapes c_d
    gd_eta: float = 1.0                 # GD step x sharpness (stable below 2; model.sharpness)
    n_nodes: int = 6                    # Gauss-Legendre nodes per quadrature panel
    # ---- section 9: nonlinear stand-ins ------------------------------------------------
    vision_pt_steps: int = 200
    vision_seeds: int = 3
    vision_n: tuple = (30,)
    vision_init_scales: tuple = (0.5, 2.0)   # PT initialisation scale (the c_PT analogue)
    modadd_seeds: int = 0
    modadd_steps: tuple = (600, 150)
    # ---- tolerances and decision rules (fixed before the run; why: rules.py) ------------
    ratio_tol: float = 0.06       # regime sweep, 8 seeds
    ratio_tol_knobs: float = 0.11  # gamma / c_PT sweep, 16 seeds at smoke
    ratio_floor: float = 0.3
    spearman_min: float = 0.9
    order_k: float = 3.0         # soft claims only (imperfect PT)
    fw_alpha: float = 0.01       # chance of any false hard FAIL per chapter run (family-wise)
    n_hard: int = 13             # hard claims of the chapter (the Bonferroni split)
    margin_d_min: int = 1000     # imperfect-PT margin: decided only at D_imp >= this
    gd_rtol: float = 0.05
    gd_atol: float = 2e-3
    bias_atol: float = 5e-3
    ratio_pred: float = 2.0      # GD error ratio per halving of tau (O(tau)); tolerance below
    ratio_width: float = 0.08    # smoke: worst O(tau^2) offset + 3.36 s.d. (rules)
    device: str = "cpu"

    def validate(self) -> None:
        for name in ("d_small", "n_pt_small", "n_ft_small", "grid", "d_sim", "n_seeds", "n_seeds_knobs", "d_imperfect",
                     "seeds_per_task", "min_seeds", "n_seeds_imperfect", "n_alpha_theory", "n_knob_theory", "d_gd",
                     "vision_pt_steps", "vision_seeds", "gd_max_steps"):
            validation.integer(name, getattr(self, name), 1)
        if self.vision_seeds * len(self.vision_n) < 2:
            raise ValueError("vision_seeds * len(vision_n) must be >= 2 (paired intervals)")
        if self.n_seeds < 2 or self.n_seeds_imperfect < 2:
            raise ValueError(f"n_seeds and n_seeds_imperfect must be >= 2, got {self.n_seeds}, {self.n_seeds_imperfect}")
        if not 2 <= self.n_nodes <= 64:
            raise ValueError(f"n_nodes must lie in [2, 64], got {self.n_nodes}")
        if not (self.n_ft_small < self.d_small and self.n_pt_small < self.d_small):
            raise ValueError("n_pt_small and n_ft_small must be < d_small (interpolation)")
        if 1.0 not in self.lams_imperfect or -1.0 not in self.lams or 1.0 not in self.lams:
            raise ValueError("lams must contain -1 and +1, lams_imperfect must contain +1")
        if sorted(self.taus, reverse=True) != list(self.taus) or 0.01 not in self.taus:
            raise ValueError(f"taus must be decreasing and contain 0.01, got {self.taus}")

    @property
    def tasks(self):
        from .data import make_tasks

        return make_tasks(self.rho_pt, self.rho_sh, self.rho_new)

    @property
    def regimes(self) -> dict[str, tuple[float, float]]:
        """(c_PT, lambda_PT) of the four regime settings; gamma = ``self.gamma``."""
        return {"I": (self.c_pt, -1.0), "II": (self.c_pt, 1.0), "III": (self.c_lazy, 0.0),
                "IV": (self.c_pt, self.lam_iv)}

    @property
    def task_rho(self) -> dict[str, float]:
        """FT teacher density of each task (the PT teacher, density RHO_PT, is never sparser)."""
        return {"full overlap": self.rho_pt, "subset": self.rho_pt * self.rho_sh,
                "new features": (1 - self.rho_pt) * self.rho_new}

    @property
    def reachable(self) -> dict[str, bool]:
        """Per task, whether ``d_sim_max`` gives its FT teacher at least ``min_active``
        expected active coordinates. Decided from the knobs before the run: an unreachable
        task is still simulated at ``d_eff`` (for the figures) but enters no evidence claim,
        and a claim whose tasks are all unreachable is INCONCLUSIVE with this reason."""
        return {t: r * self.d_sim_max >= self.min_active for t, r in self.task_rho.items()}

    def unreachable_note(self, tasks=None) -> str:
        tasks = list(self.task_rho) if tasks is None else tasks
        out = [f"{t} (rho_FT = {self.task_rho[t]:.3g}: needs D >= {math.ceil(self.min_active / self.task_rho[t])})"
               for t in tasks if not self.reachable[t]]
        return (f"out of reach at {self.scale} (D <= {self.d_sim_max}, >= {self.min_active:g} active "
                f"coordinates needed): " + ", ".join(out)) if out else ""

    @property
    def rho_min(self) -> float:
        """Density of the sparsest teacher the simulations draw that is within reach."""
        return min(r for t, r in self.task_rho.items() if self.reachable[t]) if any(
            self.reachable.values()) else self.rho_pt

    @property
    def d_eff(self) -> int:
        """D of the teacher-student simulations: ``d_sim``, raised so that the sparsest task
        within reach has ``min_active`` expected active coordinates (at most ``d_sim_max``)."""
        return int(min(self.d_sim_max, max(self.d_sim, math.ceil(self.min_active / self.rho_min))))

    @property
    def d_imp(self) -> int:
        return int(max(self.d_imperfect, min(self.d_sim_max, math.ceil(self.min_active / self.rho_pt))))

    @property
    def alphas(self) -> tuple:
        return tuple(sorted(set(self.alphas_sim) | {self.alpha_ft}))

    @property
    def alpha_curve(self) -> np.ndarray:
        return np.linspace(0.05, max(0.6, max(self.alphas)), self.n_alpha_theory)

    @property
    def seeds(self) -> tuple:
        return tuple(range(1000 * self.seed, 1000 * self.seed + self.n_seeds))

    @property
    def n_blocks(self) -> int:
        """Rounds of the simulation sweeps (blocks of ``seeds_per_task`` seeds)."""
        return math.ceil(self.n_seeds / self.seeds_per_task)

    def seed_block(self, b: int, n_seeds: int | None = None) -> tuple:
        """Seeds of round ``b`` of a sweep over ``n_seeds`` seeds (default ``n_seeds``); every
        sweep's seeds start with the same ``1000 * seed, 1000 * seed + 1, ...``."""
        n = self.n_seeds if n_seeds is None else n_seeds
        start = 1000 * self.seed + b * self.seeds_per_task
        return tuple(range(start, min(start + self.seeds_per_task, 1000 * self.seed + n)))

    @property
    def blocks_needed(self) -> int:
        return math.ceil(min(self.min_seeds, self.n_seeds) / self.seeds_per_task)


DOMAIN = Config.domain()
CI_SETTINGS = Config.CI_SETTINGS
sample_setting = Config.sample_setting
