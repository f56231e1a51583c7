"""Teacher–student data for PT then FT (brief §2.7; the slab law is a reconstruction).

Supports ``θ_PT,d ~ Bern(ρ_PT)``; ``θ_FT,d | θ_PT,d = 1 ~ Bern(ρ_sh)``,
``θ_FT,d | θ_PT,d = 0 ~ Bern(ρ_new)``; ``ρ_FT = ρ_PT ρ_sh + (1 − ρ_PT) ρ_new``. Teachers::

    β*_PT,d = σ_d θ_PT,d / √ρ_PT,     β*_FT,d = σ'_d θ_FT,d / √ρ_FT      (E β*² = 1)

with independent Rademacher signs σ, σ' (default) or standard-normal slabs
(``slab="gauss"``). Inputs ``x ~ N(0, I_D)``, labels noiseless, ``N = round(α D)``.
The generalisation error is ``‖β̂ − β*‖² / D`` (normalised by ``E β*² = 1``); at finite D
:func:`rel_error` divides by the teacher's own energy ``‖β*‖² / D`` instead, which removes
the fluctuation of the number of active coordinates (the replica limit is the same).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..runtime import as_generator


@dataclass(frozen=True)
class Task:
    """Sparsity/overlap statistics of the PT and FT teachers."""

    rho_pt: float
    rho_sh: float
    rho_new: float

    def __post_init__(self):
        for name in ("rho_pt", "rho_sh", "rho_new"):
            v = getattr(self, name)
            if not 0 <= v <= 1:
                raise ValueError(f"{name} must lie in [0, 1], got {v}")
        if self.rho_pt == 0 or self.rho_ft == 0:
            raise ValueError("rho_pt and the FT density rho_ft must be > 0")

    @property
    def rho_ft(self) -> float:
        return self.rho_pt * self.rho_sh + (1 - self.rho_pt) * self.rho_new

    def atoms(self):
        """The four (PT on/off × FT on/off) categories: probabilities and |β*| values,
        ``(p, b_pt, b_ft)`` arrays of shape (4,)."""
        rp, rs, rn, rf = self.rho_pt, self.rho_sh, self.rho_new, self.rho_ft
        p = np.array([rp * rs, rp * (1 - rs), (1 - rp) * rn, (1 - rp) * (1 - rn)])
        b_pt = np.array([1, 1, 0, 0]) / np.sqrt(rp)
        b_ft = np.array([1, 0, 1, 0]) / np.sqrt(rf)
        return p, b_pt, b_ft


FULL_OVERLAP = Task(0.2, 1.0, 0.0)
SUBSET = Task(0.2, 0.5, 0.0)
NEW_FEATURES = Task(0.2, 0.0, 0.05)


def sample_teachers(task: Task, d: int, seed, slab: str = "rademacher"):
    """``(β*_PT, β*_FT)``, each of shape (d,)."""
    rng = as_generator(seed)
    if slab not in ("rademacher", "gauss"):
        raise ValueError(f"slab must be 'rademacher' or 'gauss', got {slab!r}")
    th_pt = rng.random(d) < task.rho_pt
    u = rng.random(d)
    th_ft = np.where(th_pt, u < task.rho_sh, u < task.rho_new)
    draw = (lambda: rng.choice([-1.0, 1.0], d)) if slab == "rademacher" else (
        lambda: rng.standard_normal(d))
    return draw() * th_pt / np.sqrt(task.rho_pt), draw() * th_ft / np.sqrt(task.rho_ft)


def sample_design(n: int, d: int, seed):
    """Gaussian design ``X`` of shape (n, d), entries N(0, 1)."""
    if n < 1 or d < 1:
        raise ValueError(f"n and d must be >= 1, got n={n}, d={d}")
    return as_generator(seed).standard_normal((n, d))


def gen_error(beta_hat, beta_star):
    """``‖β̂ − β*‖² / D`` along the last axis."""
    diff = np.asarray(beta_hat) - np.asarray(beta_star)
    return np.mean(diff**2, axis=-1)


def rel_error(beta_hat, beta_star):
    """``‖β̂ − β*‖² / ‖β*‖²`` along the last axis: :func:`gen_error` divided by the
    teacher's energy ``‖β*‖²/D``. Both have the same replica limit, since ``E β*² = 1``.
    Raises ValueError when ``beta_star`` is zero."""
    star = np.asarray(beta_star)
    energy = np.mean(star**2, axis=-1)
    if np.any(energy == 0):
        raise ValueError("beta_star must be non-zero (its energy is the normaliser)")
    return gen_error(beta_hat, star) / energy
