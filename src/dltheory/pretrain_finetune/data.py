"""Teacher–student data for PT then FT (the slab law is a reconstruction).

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

from .. import validation as V
from ..runtime import as_generator


@dataclass(frozen=True)
class Task:
    """Sparsity/overlap statistics of the PT and FT teachers."""

    rho_pt: float
    rho_sh: float
    rho_new: float

    def __post_init__(self):
        V.real("rho_pt", self.rho_pt, 0.0, 1.0, lo_open=True)
        V.real("rho_sh", self.rho_sh, 0.0, 1.0)
        V.real("rho_new", self.rho_new, 0.0, 1.0)
        if self.rho_ft <= 0:
            raise ValueError("the FT density rho_ft = rho_pt*rho_sh + (1-rho_pt)*rho_new must be > 0; "
                             f"got rho_sh={self.rho_sh}, rho_new={self.rho_new}")

    @property
    def rho_ft(self) -> float:
        return self.rho_pt * self.rho_sh + (1 - self.rho_pt) * self.rho_new

    def atoms(self):
        """The four (PT on/off × FT on/off) categories: probabilities and ``|β*|`` values,
        ``(p, b_pt, b_ft)`` arrays of shape (4,)."""
        rp, rs, rn, rf = self.rho_pt, self.rho_sh, self.rho_new, self.rho_ft
        p = np.array([rp * rs, rp * (1 - rs), (1 - rp) * rn, (1 - rp) * (1 - rn)])
        b_pt = np.array([1, 1, 0, 0]) / np.sqrt(rp)
        b_ft = np.array([1, 0, 1, 0]) / np.sqrt(rf)
        return p, b_pt, b_ft


def make_tasks(rho_pt: float = 0.2, rho_sh: float = 0.5, rho_new: float = 0.05) -> dict[str, Task]:
    """The chapter's three FT tasks at PT density ``rho_pt``: full overlap ``(1, 0)``, a
    subset of the PT features ``(rho_sh, 0)`` and new features ``(0, rho_new)``."""
    return {"full overlap": Task(rho_pt, 1.0, 0.0), "subset": Task(rho_pt, rho_sh, 0.0),
            "new features": Task(rho_pt, 0.0, rho_new)}


#: The tasks at the default PT density 0.2 (the chapter builds its own from its parameters).
FULL_OVERLAP, SUBSET, NEW_FEATURES = make_tasks().values()


def sample_teachers(task: Task, d: int, seed, slab: str = "rademacher"):
    """``(β*_PT, β*_FT)``, each of shape (d,)."""
    if not isinstance(task, Task):
        raise ValueError(f"task must be a Task, got {type(task).__name__}")
    d = V.integer("d", d, 1)
    V.choice("slab", slab, ("rademacher", "gauss"))
    rng = as_generator(seed)
    th_pt = rng.random(d) < task.rho_pt
    u = rng.random(d)
    th_ft = np.where(th_pt, u < task.rho_sh, u < task.rho_new)
    draw = (lambda: rng.choice([-1.0, 1.0], d)) if slab == "rademacher" else (
        lambda: rng.standard_normal(d))
    return draw() * th_pt / np.sqrt(task.rho_pt), draw() * th_ft / np.sqrt(task.rho_ft)


def sample_design(n: int, d: int, seed):
    """Gaussian design ``X`` of shape (n, d), entries N(0, 1)."""
    n, d = V.integer("n", n, 1), V.integer("d", d, 1)
    return as_generator(seed).standard_normal((n, d))


def gen_error(beta_hat, beta_star):
    """``‖β̂ − β*‖² / D`` along the last axis."""
    a, b = np.asarray(beta_hat, dtype=float), np.asarray(beta_star, dtype=float)
    if a.shape[-1:] != b.shape[-1:]:
        raise ValueError(f"beta_hat and beta_star must have the same last dimension, got {a.shape}, {b.shape}")
    diff = a - b
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
