"""The prologue's sweeps, each ``f(cfg) -> table`` on the engine ``dltheory.experiments``."""

from __future__ import annotations

import numpy as np

from .. import experiments as engine
from .. import seeds
from .config import Config
from .model import Trajectory, gd, gd_drift_batched, gd_to_flow_error, grad, loss_gradient_ratio, q


def drift_task(cfg: Config, task: dict):
    """One block of starts (``cfg.start(s)``: stream ``(seed, "start", s)``): the drift
    after ``k_fixed`` steps for every tau, and the drift curve at ``tau_k`` for
    k = 1..k_max, all runs batched.

    Rows: ``start, sweep ("tau" | "k"), tau, k, drift, q0`` with q0 = ||q(g_0)||.
    """
    import pandas as pd

    p, _ = cfg.problem()
    lo = task["block"] * cfg.seeds_per_task
    ss = np.arange(lo, min(lo + cfg.seeds_per_task, cfg.n_seeds))
    starts = [cfg.start(int(s)) for s in ss]
    U0 = np.stack([u for u, _ in starts])
    V0 = np.stack([v for _, v in starts])
    q0 = np.array([np.linalg.norm(q(*grad(p, u, v))) for u, v in starts])
    taus, T = cfg.taus, cfg.n_tau
    d_tau = gd_drift_batched(p, np.repeat(U0, T, 0), np.repeat(V0, T, 0), np.tile(taus, len(ss)),
                             steps=cfg.k_fixed, dtype=cfg.dtype)[:, -1].reshape(len(ss), T)
    d_k = gd_drift_batched(p, U0, V0, cfg.tau_k, steps=cfg.k_max, dtype=cfg.dtype)[:, 1:]
    ks = np.arange(1, cfg.k_max + 1)
    tau_rows = pd.DataFrame({"start": np.repeat(ss, T), "sweep": "tau", "tau": np.tile(taus, len(ss)),
                             "k": cfg.k_fixed, "drift": d_tau.ravel(), "q0": np.repeat(q0, T)})
    k_rows = pd.DataFrame({"start": np.repeat(ss, cfg.k_max), "sweep": "k", "tau": cfg.tau_k,
                           "k": np.tile(ks, len(ss)), "drift": d_k.ravel(),
                           "q0": np.repeat(q0, cfg.k_max)})
    return pd.concat([tau_rows, k_rows], ignore_index=True)


def drift_sweep(cfg: Config, **sweep_options):
    """The drift table over all starts (``drift_task`` on the engine), one row per
    (start, sweep, tau, k). Each block of starts is one round: under a chapter budget the
    table holds the blocks that fitted (``df.attrs["rounds"]``), at least the first."""
    blocks = -(-cfg.n_seeds // cfg.seeds_per_task)
    return engine.sweep(drift_task, [{"block": b} for b in range(blocks)], config=cfg,
                        name="prologue_drift", rounds="block", **sweep_options)


def flow_error_task(cfg: Config, task: dict) -> dict:
    """``||theta_GD(k = t/tau) - theta_flow(t)||`` at ``t_fixed`` for one tau, from the
    reference start (``cfg.start("reference")``)."""
    p, _ = cfg.problem()
    u0, v0 = cfg.start("reference")
    return {"error": float(gd_to_flow_error(p, u0, v0, t=cfg.t_fixed, taus=[task["tau"]])[0])}


def flow_error_sweep(cfg: Config, **sweep_options):
    """GD-to-flow distance for every tau in ``taus_flow`` (one row per tau)."""
    return engine.sweep(flow_error_task, [{"tau": t} for t in cfg.taus_flow], config=cfg,
                        name="prologue_flow_error", **sweep_options)


def identity_run(cfg: Config) -> dict:
    """One GD run from the reference start (``tau_id``, ``steps_id``) and the
    gradient against central differences of the loss at ``fd_points`` of its points.

    Returns ``{"trajectory": Trajectory, "at": k of the points, "ratio": float}``."""
    p, _ = cfg.problem()
    u0, v0 = cfg.start("reference")
    tr: Trajectory = gd(p, u0, v0, tau=cfg.tau_id, steps=cfg.steps_id)
    at = np.linspace(0, cfg.steps_id, cfg.fd_points).astype(int)
    ratio = loss_gradient_ratio(p, tr.U[at], tr.V[at], n_dirs=cfg.fd_dirs, eps=cfg.fd_eps,
                                seed=seeds.numpy(cfg.seed, "fd_directions"))
    return {"trajectory": tr, "at": at, "ratio": ratio}
