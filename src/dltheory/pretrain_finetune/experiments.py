"""Finite-D experiments: PT then FT, by exact minimisers (dual Newton) or by GD on the network.

One run draws teachers from a :class:`~.data.Task`, a PT design (unless PT is perfect) and an
FT design, and returns the FT generalisation error ``‖β̂_FT − β*_FT‖²/D`` plus what the
chapter needs to compute (ℓ, PD) of the learned solution.

The chapter's experiments (one function per section, ``(cfg) -> tidy DataFrame``) are at the
end; they run their tasks through :func:`dltheory.experiments.sweep` (cached, resumable).
Each row holds the simulated value *and* the theory value it is compared with.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
import torch

from .. import seeds
from .. import validation as V
from ..runtime import as_generator
from .bias import ft_scales, solve_bias
from .data import Task, gen_error, rel_error, sample_design, sample_teachers
from .model import DiagWeights, flow_weights_from_beta, network_ft_scales, rebalance, train_gd
from .regimes import l_order_pd

#: The four regime settings of the chapter: (c_PT, λ_PT), with γ_FT = 1e-3.
REGIMES = {"I": (1e-3, -1.0), "II": (1e-3, 1.0), "III": (10.0, 0.0), "IV": (1e-3, -0.9)}


@dataclass
class FTRun:
    error: float
    beta_ft: np.ndarray  # learned β̂_FT (D,)
    beta_pt: np.ndarray  # β̂_PT used for c_d (D,)
    star_ft: np.ndarray
    star_pt: np.ndarray
    X: np.ndarray  # FT design (N, D)
    c_d: np.ndarray

    @property
    def teacher_energy(self) -> float:
        """``‖β*_FT‖²/D`` (1 in expectation; fluctuates with the number of active coordinates)."""
        return float(np.mean(self.star_ft**2))

    @property
    def rel_error(self) -> float:
        """``‖β̂_FT − β*_FT‖² / ‖β*_FT‖²`` = ``error / teacher_energy``."""
        return float(rel_error(self.beta_ft, self.star_ft))


def run_exact(task: Task, d: int, alpha_ft: float, c_pt: float, lam_pt: float, gamma: float,
              seed: int, *, alpha_pt: float | None = None) -> FTRun:
    """PT (perfect when ``alpha_pt`` is None or ≥ 1, else the exact PT minimiser with
    ``C ≡ c_PT``) followed by the exact rebalanced-FT minimiser. Its scales ``c_d`` are read
    off the FT network's own initial weights (:func:`~.model.network_ft_scales`), not from
    the formula ``bias.ft_scales`` that the replica theory uses."""
    _check_run_args(d, alpha_ft, c_pt, lam_pt, gamma, alpha_pt)
    rng = as_generator(seed)
    s_pt, s_ft = _teachers(task, d, rng)
    if alpha_pt is None or alpha_pt >= 1:
        b_pt = s_pt
    else:
        Xp = sample_design(max(1, round(alpha_pt * d)), d, rng)
        b_pt = solve_bias(Xp, Xp @ s_pt, c_pt).beta
    X = sample_design(max(1, round(alpha_ft * d)), d, rng)
    cd = network_ft_scales(b_pt, c_pt, lam_pt, gamma)
    b_ft = solve_bias(X, X @ s_ft, cd).beta
    return FTRun(float(gen_error(b_ft, s_ft)), b_ft, b_pt, s_ft, s_pt, X, cd)


def _teachers(task, d, rng):
    """Teachers conditioned on a non-zero FT teacher (redrawn from the same stream; matters
    only when rho_FT * D is a few coordinates)."""
    s_pt, s_ft = sample_teachers(task, d, rng)
    for _ in range(100):
        if np.any(s_ft) and np.any(s_pt):
            break
        s_pt, s_ft = sample_teachers(task, d, rng)
    return s_pt, s_ft


def _check_run_args(d, alpha_ft, c_pt, lam_pt, gamma, alpha_pt):
    V.integer("d", d, 2)
    V.real("alpha_ft", alpha_ft, 0.0, 1.0, lo_open=True, hi_open=True)
    V.real("c_pt", c_pt, 0.0, np.inf, lo_open=True)
    V.real("lam_pt", lam_pt, -1.0, 1.0)
    V.real("gamma", gamma, 0.0, np.inf)
    if alpha_pt is not None:
        V.real("alpha_pt", alpha_pt, 0.0, np.inf, lo_open=True)


def run_gd_ft(run: FTRun, c_pt: float, lam_pt: float, gamma: float, tau: float, *,
              max_steps: int = 200_000, tol: float = 1e-12, device=None):
    """Train the network itself on the FT data of ``run``: end-of-PT weights from the
    closed form at ``β̂_PT`` (exact for gradient flow), rebalance with readout ``γ``, then
    full-batch GD with step ``tau``. Returns ``(error, β_GD, steps, final loss)``."""
    W = flow_weights_from_beta(run.beta_pt, c_pt, lam_pt)
    W0 = rebalance(W, gamma)
    to_t = lambda a: torch.as_tensor(np.asarray(a, dtype=float)[None], device=device)
    Wt = DiagWeights(to_t(W0.wp), to_t(W0.wm), to_t(W0.vp), to_t(W0.vm))
    y = run.X @ run.star_ft
    res = train_gd(to_t(run.X), to_t(y), Wt, tau, max_steps=max_steps, tol=tol)
    beta = res.weights.numpy().beta[0]
    return float(gen_error(beta, run.star_ft)), beta, res.steps, float(res.loss[0])


def learned_l_pd(run: FTRun, c_pt: float, lam_pt: float, gamma: float):
    """Mean (ℓ, PD) of the learned β̂_FT over the shared active coordinates (PT and FT on)."""
    on = (run.star_pt != 0) & (run.star_ft != 0)
    ell, pd = l_order_pd(run.beta_ft[on], run.beta_pt[on], c_pt, lam_pt, gamma)
    return float(np.mean(ell)), float(np.mean(pd))


# =========================================================================== chapter sweeps
def _engine():
    from .. import experiments as engine

    return engine


def _exact_cost(cfg, d: int, alpha: float) -> float:
    """Estimated seconds of one task of a simulation sweep (``cfg.seeds_per_task`` exact FT
    minimisers at dimension ``d``, ``N = alpha d``): on the CPU one minimiser timed at D = 300,
    scaled by ``D^3`` (the dual Newton's N^2 D Hessian at fixed alpha; the probe's fixed costs
    make this an over-estimate at large D); on a GPU one batch at the real size, timed. Only
    called under a budget."""
    import time

    from .data import FULL_OVERLAP

    if cfg.device != "cpu":  # one task's batch itself on the device (what regime_task runs there)
        from .bias import solve_bias_batched

        rng = seeds.numpy(0, "cost_probe")
        n = max(1, round(alpha * d))
        X = rng.standard_normal((cfg.seeds_per_task, n, d))
        star = rng.standard_normal((cfg.seeds_per_task, d)) * (rng.random((cfg.seeds_per_task, d)) < 0.1)
        t0 = time.perf_counter()
        solve_bias_batched(X, np.einsum("bnd,bd->bn", X, star), np.full(star.shape, 1e-2), device=cfg.device)
        return time.perf_counter() - t0
    t0 = time.perf_counter()
    run_exact(FULL_OVERLAP, 300, alpha, 1e-3, -0.9, 1e-3, seed=seeds.numpy(0, "cost_probe"))
    probe = time.perf_counter() - t0
    return cfg.seeds_per_task * probe * (d / 300.0) ** 3


def _budgeted(fn, tasks, cfg, name: str, cost, *, rounds: str, **kw):
    """``experiments.sweep(fn, tasks, rounds=rounds)`` under the chapter budget, except that a
    sweep whose *first* round would not fit its allotment (``cost``: estimated seconds per
    task, a number or a callable evaluated only under a budget) is not started at all: it
    returns an empty table with ``attrs["rounds"] = (0, planned)`` and the reason in
    ``attrs["skipped"]``, and its claims are INCONCLUSIVE. Without a budget: ``sweep``."""
    import pandas as pd

    from .. import budget

    eng = _engine()
    allot = budget.allot(name)
    if allot is not None and tasks:
        key = rounds if callable(rounds) else (lambda t: t[rounds])
        planned = len({key(t) for t in tasks})
        first = [t for t in tasks if key(t) == min(key(u) for u in tasks)]
        need = (cost() if callable(cost) else cost) * len(first)
        if need > allot:
            budget.note_rounds(name, 0, planned)
            df = pd.DataFrame()
            df.attrs["rounds"] = (0, planned)
            df.attrs["skipped"] = (f"{name}: its first round needs about {need:.0f} s, the budget leaves it "
                                   f"{allot:.0f} s (skipped before the run)")
            return df
    return eng.sweep(fn, tasks, config=cfg, name=name, rounds=rounds, **kw)


def _replica(cfg, task, alpha, c, lam, gamma, alpha_pt=None) -> float:
    """The replica error, or NaN where the theory gives no prediction (``ReplicaUndefined``;
    never in the declared domain with the chapter's formula, recorded by ``PF.replica.defined``)."""
    from .replica import ReplicaUndefined, replica_error

    try:
        return replica_error(task, alpha, c, lam, gamma, alpha_pt=alpha_pt, n_nodes=cfg.n_nodes).error
    except ReplicaUndefined:
        return float("nan")


def replica_l2_limit(alphas=(0.15, 0.3, 0.5)) -> float:
    """Largest ``|e - (1 - alpha)|`` of the replica equations at a lazy setting (full
    overlap, ``c_PT = 1e3``, ``lambda = 0``, ``gamma = 1e-3``) over ``alphas``: the
    equations against their own closed-form l2 limit (``PF.replica.l2_limit``)."""
    from .data import FULL_OVERLAP
    from .replica import replica_error

    return max(abs(replica_error(FULL_OVERLAP, a, 1e3, 0.0, 1e-3).error - (1 - a)) for a in alphas)


def kappa_identity_gap(cfg, kappas=(0.25, 0.5, 1.0), lam0s=(-0.5, 0.0, 1.0)) -> float:
    """Largest relative difference between the FT scales of a network pretrained at ``lam0``
    whose first layer is shrunk by ``kappa`` and those of the unshrunk network pretrained at
    ``kappa_lambda_eff(kappa, lam0)`` (both from the weights, ``model.network_ft_scales``),
    over ``kappas``, ``lam0s`` and ``c_PT`` in (``cfg.c_pt``, 1), on 50 pretrained
    coefficients drawn from a standard normal (``PF.vision.kappa_is_lambda``)."""
    from .model import kappa_lambda_eff, network_ft_scales

    beta = seeds.numpy(cfg.seed, "kappa_identity").standard_normal(50)
    gap = 0.0
    for c in (cfg.c_pt, 1.0):
        for k in kappas:
            for lam0 in lam0s:
                shrunk = network_ft_scales(beta, c, lam0, cfg.gamma, kappa=k)
                lam_eff = float(kappa_lambda_eff(k, lam0))
                if not -1.0 <= lam_eff <= 1.0:
                    raise ValueError(f"kappa = {k:g} at lam0 = {lam0:g} leaves [-1, 1]: {lam_eff:g}")
                plain = network_ft_scales(beta, c, lam_eff, cfg.gamma)
                gap = max(gap, float(np.max(np.abs(shrunk - plain) / plain)))
    return gap


#: The diagonal task each stand-in task is read as (section 9): new classes need features PT
#: never learned, the subset reuses part of PT's, the shift keeps PT's classes.
VISION_AS_DIAGONAL = {"new classes (8 vs 9)": "new features", "subset (3 vs 5)": "subset",
                      "shift (inverted 0-7)": "full overlap"}


def kappa_theory(cfg, kappa: float = 0.25, lam0s=(0.0, 1.0)):
    """What the diagonal theory predicts for the first-layer shrink ``kappa``: per diagonal
    task and starting relative scale ``lam0``, the replica FT error at ``lam0`` and at the
    equivalent ``lam_eff`` (``model.kappa_lambda_eff``), at the chapter's ``c_PT``, ``gamma``
    and ``alpha_FT``; ``change`` = after - before (negative: the shrink helps)."""
    import pandas as pd

    from .model import kappa_lambda_eff

    rows = []
    for t, task in cfg.tasks.items():
        for lam0 in lam0s:
            lam_eff = float(kappa_lambda_eff(kappa, lam0))
            before = _replica(cfg, task, cfg.alpha_ft, cfg.c_pt, lam0, cfg.gamma)
            after = _replica(cfg, task, cfg.alpha_ft, cfg.c_pt, lam_eff, cfg.gamma)
            rows.append({"task": t, "lam0": lam0, "lam_eff": lam_eff, "before": before,
                         "after": after, "change": after - before})
    return pd.DataFrame(rows)


def small_problem(cfg):
    """The small PT/FT instance of sections 1-2: 5 active PT coordinates of size 1.5; the FT
    teacher reuses 3 of them and adds one new coordinate."""
    rng = np.random.default_rng(cfg.seed)
    d = cfg.d_small
    b_pt = np.zeros(d)
    b_pt[:5] = 1.5 * rng.choice([-1.0, 1.0], 5)
    X_pt = rng.standard_normal((cfg.n_pt_small, d))
    b_ft = np.zeros(d)
    b_ft[[0, 1, 2, 7]] = rng.choice([-1.0, 1.0], 4)
    X_ft = rng.standard_normal((cfg.n_ft_small, d))
    return X_pt, X_pt @ b_pt, X_ft, X_ft @ b_ft


def small_task(cfg, task: dict) -> list[dict]:
    """GD on the small instance at step ``task["tau"]`` for every (c, λ) at once: PT weights
    against the closed form and the invariants; at τ = 0.01 also the implicit biases of PT,
    rebalanced FT and non-rebalanced FT against their exact minimisers."""
    from .bias import min_l1, min_l2, tilted_params
    from .model import flow_weights_from_beta, invariants, readout_reinit, uniform_init

    tau = task["tau"]
    X_pt, y_pt, X_ft, y_ft = small_problem(cfg)
    configs = [(c, lam) for c in cfg.c_small for lam in cfg.lam_small]
    cs, ls = np.array([c for c, _ in configs]), np.array([lam for _, lam in configs])
    B, d = len(configs), cfg.d_small
    stack = lambda a: torch.as_tensor(np.broadcast_to(a, (B, *a.shape)).copy())
    res = train_gd(stack(X_pt), stack(y_pt), uniform_init(cs, ls, (B, d)), tau, max_steps=cfg.gd_max_steps)
    W = res.weights.numpy()
    rows = []
    for i, (c, lam) in enumerate(configs):
        Wi = DiagWeights(W.wp[i], W.wm[i], W.vp[i], W.vm[i])
        Wc = flow_weights_from_beta(Wi.beta, c, lam)
        Ip, Im, Ic = invariants(Wi)
        rows.append({"c": c, "lam": lam, "steps": res.steps, "loss": float(res.loss[i]),
                     "w_err": max(float(np.abs(getattr(Wi, k) - getattr(Wc, k)).max()) for k in ("wp", "wm", "vp", "vm")),
                     "inv_err": float(max(np.abs(Ip - c * lam).max(), np.abs(Im - c * lam).max(), np.abs(Ic - c).max()))})
    if tau != 0.01:
        return rows
    b_l1, b_l2 = min_l1(X_pt, y_pt), min_l2(X_pt, y_pt)
    Wt = DiagWeights(*(torch.as_tensor(getattr(W, k)) for k in ("wp", "wm", "vp", "vm")))
    g = cfg.gamma_small
    ft_reb = train_gd(stack(X_ft), stack(y_ft), rebalance(Wt, g), tau, max_steps=cfg.gd_max_steps).weights.numpy().beta
    ft_til = train_gd(stack(X_ft), stack(y_ft), readout_reinit(Wt, g), tau, max_steps=cfg.gd_max_steps).weights.numpy().beta
    for i, (c, lam) in enumerate(configs):
        bq = solve_bias(X_pt, y_pt, c).beta
        b_reb = solve_bias(X_ft, y_ft, ft_scales(W.beta[i], c, lam, g)).beta
        r, phi, _ = tilted_params(W.wp[i], W.wm[i], g)
        b_til = solve_bias(X_ft, y_ft, r, phi).beta
        rows[i].update({"pt_gap": float(np.abs(W.beta[i] - bq).max()),
                        "pt_sep": float(min(np.linalg.norm(bq - b_l1), np.linalg.norm(bq - b_l2))),
                        "ft_gap": float(np.abs(ft_reb[i] - b_reb).max()),
                        "til_gap": float(np.abs(ft_til[i] - b_til).max()),
                        "til_vs_reb": float(np.abs(b_til - b_reb).max())})
    return rows


def small(cfg, **kw):
    """Sections 1-2: one row per (τ, c, λ)."""
    return _engine().sweep(small_task, [{"tau": t} for t in cfg.taus], config=cfg, name="pf_small", **kw)


def regime_task(cfg, task: dict) -> list[dict]:
    """Exact minimisers at (task, regime, α) over the seeds of block ``task["block"]`` (a
    round of the chapter budget), with the replica value."""
    t = cfg.tasks[task["task"]]
    c, lam = cfg.regimes[task["regime"]] if "regime" in task else (task["c"], task["lam"])
    gamma = task.get("gamma", cfg.gamma)
    rep = _replica(cfg, t, task["alpha"], c, lam, gamma)
    seeds = cfg.seed_block(task["block"], task.get("n_seeds"))
    if cfg.device != "cpu":  # all seeds of the block in one batched dual Newton on the device
        return _regime_batched(cfg, t, task["alpha"], c, lam, gamma, rep, seeds)
    rows = []
    for s in seeds:
        run = run_exact(t, cfg.d_eff, task["alpha"], c, lam, gamma, seed=s)
        rows.append({"seed": s, "sim": run.rel_error, "raw": run.error, "energy": run.teacher_energy,
                     "replica": rep})
    return rows


def _regime_batched(cfg, t, alpha, c, lam, gamma, rep, seeds) -> list[dict]:
    """The same draws as :func:`run_exact` (perfect PT), solved together by
    :func:`~.bias.solve_bias_batched` on ``cfg.device``."""
    from .bias import solve_bias_batched

    stars, Xs, cds = [], [], []
    for s in seeds:
        rng = as_generator(s)
        s_pt, s_ft = _teachers(t, cfg.d_eff, rng)
        Xs.append(sample_design(max(1, round(alpha * cfg.d_eff)), cfg.d_eff, rng))
        stars.append(s_ft)
        cds.append(network_ft_scales(s_pt, c, lam, gamma))
    X, star = np.stack(Xs), np.stack(stars)
    beta, _ = solve_bias_batched(X, np.einsum("bnd,bd->bn", X, star), np.stack(cds), device=cfg.device)
    err, rel = gen_error(beta, star), rel_error(beta, star)
    return [{"seed": s, "sim": float(rel[i]), "raw": float(err[i]), "energy": float(np.mean(star[i] ** 2)),
             "replica": rep} for i, s in enumerate(seeds)]


def regimes_vs_sim(cfg, **kw):
    """Section 4: every task x regime x α (one row per seed)."""
    tasks = [{"task": t, "regime": r, "alpha": a, "block": b} for b in range(cfg.n_blocks)
             for t in cfg.tasks for r in cfg.regimes for a in cfg.alphas]
    return _budgeted(regime_task, tasks, cfg, "pf_regimes", lambda: _exact_cost(cfg, cfg.d_eff, max(cfg.alphas)),
                     rounds="block", **kw)


def curve_task(cfg, task: dict) -> dict:
    t = cfg.tasks[task["task"]]
    return {"replica": _replica(cfg, t, task["alpha"], task["c"], task["lam"], task["gamma"])}


def replica_curves(cfg, **kw):
    """Replica curves: e(α) per task x regime; e(λ), e(γ), e(c) per task at ``alpha_ft``."""
    tasks = [{"curve": "alpha", "task": t, "regime": r, "alpha": float(a), "c": c, "lam": lam, "gamma": cfg.gamma}
             for t in cfg.tasks for r, (c, lam) in cfg.regimes.items() for a in cfg.alpha_curve]
    tasks += [{"curve": "lambda", "task": t, "alpha": cfg.alpha_ft, "c": cfg.c_pt, "lam": lam, "gamma": cfg.gamma}
              for t in cfg.tasks for lam in cfg.lams]
    tasks += [{"curve": "gamma", "task": t, "alpha": cfg.alpha_ft, "c": cfg.c_pt, "lam": cfg.lam_iv, "gamma": float(g)}
              for t in cfg.tasks for g in np.geomspace(1e-4, 1.0, cfg.n_knob_theory)]
    tasks += [{"curve": "c", "task": t, "alpha": cfg.alpha_ft, "c": float(c), "lam": cfg.lam_iv, "gamma": cfg.gamma}
              for t in cfg.tasks for c in np.geomspace(1e-4, 10.0, cfg.n_knob_theory)]
    # rounds: the lambda curves (the claims read them), then the gamma and c curves with every
    # 4th alpha point, then the other alpha points
    idx = {float(a): i for i, a in enumerate(cfg.alpha_curve)}
    rounds = functools.partial(_curve_round, idx)
    return _engine().sweep(curve_task, tasks, config=cfg, name="pf_curves", rounds=rounds, **kw)


def _curve_round(idx: dict, t: dict) -> int:
    return 1 + idx[t["alpha"]] % 4 if t["curve"] == "alpha" else 0 if t["curve"] == "lambda" else 1


def knob_sweeps_vs_sim(cfg, **kw):
    """Section 6: simulated γ and c_PT sweeps at λ = λ_IV, α = α_FT, per task."""
    tasks, n = [], cfg.n_seeds_knobs
    for b in range(math.ceil(n / cfg.seeds_per_task)):
        tasks += [{"knob": "gamma", "task": t, "alpha": cfg.alpha_ft, "c": cfg.c_pt, "lam": cfg.lam_iv,
                   "gamma": g, "block": b, "n_seeds": n} for t in cfg.tasks for g in cfg.gammas_sim]
        tasks += [{"knob": "c", "task": t, "alpha": cfg.alpha_ft, "c": c, "lam": cfg.lam_iv, "gamma": cfg.gamma,
                   "block": b, "n_seeds": n} for t in cfg.tasks for c in cfg.cs_sim]
    return _budgeted(regime_task, tasks, cfg, "pf_knobs", lambda: _exact_cost(cfg, cfg.d_eff, cfg.alpha_ft),
                     rounds="block", **kw)


def gd_step(run: FTRun, eta: float) -> float:
    """GD step ``τ = η / S`` for the FT network of ``run``: ``S`` the larger of the loss's
    sharpness at the FT initialisation and at the network's own minimiser
    (:func:`~.model.sharpness`; GD near either is stable only for ``τ < 2/S``). The
    sharpness grows with the FT scales ``c_d``, so the step follows ``c_PT`` and ``γ``: a
    fixed step that suits ``c_PT = 10⁻³`` is 13 times past the stability limit of regime II
    at ``c_PT = 10``."""
    from .model import sharpness

    V.real("eta", eta, 0.0, 2.0, lo_open=True, hi_open=True)
    return eta / max(sharpness(run.X, run.c_d), sharpness(run.X, run.c_d, run.beta_ft))


def gd_task(cfg, task: dict) -> dict:
    """The FT network trained by GD against the exact minimiser of the potential with the
    formula's scales ``bias.ft_scales`` (the implicit-bias claim itself)."""
    c, lam = cfg.regimes[task["regime"]]
    gamma = task.get("gamma", cfg.gamma)
    t = cfg.tasks["full overlap"]
    run = run_exact(t, cfg.d_gd, cfg.alpha_gd, c, lam, gamma, seed=seeds.numpy(cfg.seed, "gd"))
    b_formula = solve_bias(run.X, run.X @ run.star_ft, ft_scales(run.beta_pt, c, lam, gamma)).beta
    exact = float(gen_error(b_formula, run.star_ft))
    # GD differs from gradient flow by O(tau) (section 1): Richardson-extrapolate two steps to
    # tau -> 0; if they differ by more than 5% (not yet in the O(tau) regime), halve again
    tau = gd_step(run, cfg.gd_eta)
    tau0, n_steps, worst = tau, 0, 0.0
    e_gd, _, steps, loss = run_gd_ft(run, c, lam, gamma, tau, max_steps=200_000, tol=1e-10)
    n_steps, worst, capped = steps, loss, steps >= 200_000 and loss > 1e-10
    for _ in range(3):
        e_half, _, steps, loss = run_gd_ft(run, c, lam, gamma, tau / 2, max_steps=800_000, tol=1e-10)
        n_steps, worst = n_steps + steps, max(worst, loss)
        capped = capped or (steps >= 800_000 and loss > 1e-10)
        if abs(e_gd - e_half) <= 0.05 * (e_half + cfg.gd_atol):
            break
        tau, e_gd = tau / 2, e_half
    from .model import sharpness

    sharp = max(sharpness(run.X, run.c_d), sharpness(run.X, run.c_d, run.beta_ft))
    return {"steps": n_steps, "loss": worst, "exact": exact, "gd": e_gd, "gd_half": e_half,
            "tau0": tau0, "tau_used": tau, "gd_flow": 2 * e_half - e_gd, "sharpness": sharp,
            "capped": bool(capped)}


def gd_vs_exact(cfg, **kw):
    """Networks trained by GD (closed-form PT weights, rebalanced, GD on the FT data); the
    step of each follows its sharpness (:func:`gd_step`)."""
    tasks = [{"regime": "II"}, {"regime": "III"}, {"regime": "IV"}, {"regime": "IV", "gamma": cfg.gamma_gd}]
    return _budgeted(gd_task, tasks, cfg, "pf_gd", lambda: _gd_cost(cfg), rounds=_one_round, **kw)


def _one_round(t: dict) -> int:
    return 0


def _gd_cost(cfg) -> float:
    """Estimated seconds of one GD task: 200 steps timed at (N, D) = (alpha_gd D_gd, D_gd)
    on this machine, times 4e5 steps (the step count of the smoke runs, about 1e5 per run
    at tau and its halvings, with a margin)."""
    import time

    from .model import uniform_init

    d = cfg.d_gd
    n = max(1, round(cfg.alpha_gd * d))
    X = torch.randn(1, n, d, dtype=torch.float64, device=cfg.device if cfg.device != "cpu" else None)
    W = uniform_init(1e-3, -0.9, (1, d), device=X.device)
    t0 = time.perf_counter()
    train_gd(X, X.sum(dim=-1), W, 0.01, max_steps=200, tol=0.0)
    return 4e5 / 200 * (time.perf_counter() - t0)


def path_task(cfg, task: dict) -> dict:
    run = run_exact(cfg.tasks["full overlap"], cfg.d_eff, 0.3, cfg.c_pt, task["lam"], cfg.gamma,
                    seed=seeds.numpy(cfg.seed, "learned_path"))  # one draw at every λ
    ell, pd = learned_l_pd(run, cfg.c_pt, task["lam"], cfg.gamma)
    return {"ell": ell, "pd": pd}


def learned_path(cfg, **kw):
    return _budgeted(path_task, [{"lam": lam} for lam in cfg.lams], cfg, "pf_path",
                     lambda: _exact_cost(cfg, cfg.d_eff, 0.3) / cfg.seeds_per_task, rounds=_one_round, **kw)


def imperfect_theory_task(cfg, task: dict) -> dict:
    t = cfg.tasks["full overlap"]
    a_pt = task["alpha_pt"]
    return {"replica": _replica(cfg, t, task["alpha_ft"], cfg.c_pt, task["lam"], cfg.gamma,
                                alpha_pt=None if a_pt >= 1 else a_pt)}


def imperfect_sim_task(cfg, task: dict) -> list[dict]:
    """Imperfect PT by exact minimisers: PT on N_PT = α_PT D, then FT at every λ."""
    t = cfg.tasks["full overlap"]
    d, a_ft = cfg.d_imp, task["alpha_ft"]
    rows = []
    for rng in [seeds.numpy(cfg.seed, "imperfect", task["seed"])]:
        s_pt, s_ft = _teachers(t, d, rng)
        Xp = sample_design(max(1, round(cfg.alpha_pt * d)), d, rng)
        b_pt = solve_bias(Xp, Xp @ s_pt, cfg.c_pt).beta
        X = sample_design(max(1, round(a_ft * d)), d, rng)
        for lam in cfg.lams_imperfect:
            b = solve_bias(X, X @ s_ft, network_ft_scales(b_pt, cfg.c_pt, lam, cfg.gamma)).beta
            rows.append({"lam": lam, "sim": float(rel_error(b, s_ft))})
    return rows


def _imp_round(a_max: float, t: dict) -> int:
    return 0 if t["alpha_ft"] == a_max else 1


def imperfect(cfg, **kw):
    """Section 8: replica (perfect and α_PT) over λ and α_FT; simulation at the largest α_FT."""
    eng = _engine()
    a_ft = max(cfg.alphas_ft_imperfect)
    th = eng.sweep(imperfect_theory_task, [{"alpha_pt": a_pt, "alpha_ft": a, "lam": lam}
                                           for a_pt in (1.0, cfg.alpha_pt) for a in cfg.alphas_ft_imperfect
                                           for lam in cfg.lams_imperfect], config=cfg, name="pf_imp_theory",
                   rounds=functools.partial(_imp_round, a_ft), **kw)
    cost = lambda: (len(cfg.lams_imperfect) + 1) * _exact_cost(cfg, cfg.d_imp, max(a_ft, cfg.alpha_pt)) / cfg.seeds_per_task  # noqa: E731
    sim = _budgeted(imperfect_sim_task, [{"alpha_ft": a_ft, "seed": s} for s in range(cfg.n_seeds_imperfect)],
                    cfg, "pf_imp_sim", cost, rounds="seed", **kw)
    return th, sim


# ------------------------------------------------------------------------- nonlinear stand-in
#: FT tasks of the digits stand-in (PT on digits 0-7).
VISION_TASKS = {"new classes (8 vs 9)": ("binary", (8, 9)), "subset (3 vs 5)": ("binary", (3, 5)),
                "shift (inverted 0-7)": ("shift", tuple(range(8)))}
#: Interventions: (kappa, gamma, PT init scale).
INTERVENTIONS = {"default": (1.0, 1.0, 1.0), "small first layer (kappa=0.25)": (0.25, 1.0, 1.0),
                 "small readout (gamma=0.1)": (1.0, 0.1, 1.0), "PT init x0.5": (1.0, 1.0, 0.5),
                 "PT init x2": (1.0, 1.0, 2.0)}


@functools.lru_cache(maxsize=8)
def _pretrained(steps: int, seed: int, init_scale: float):
    from .. import datasets
    from .vision import pretrain_mlp

    split = datasets.digits(seed=seed)
    return pretrain_mlp(split.X_train, split.y_train, list(range(8)), steps=steps, seed=seed, init_scale=init_scale)


def vision_task(cfg, task: dict) -> list[dict]:
    """One vision seed on one FT task: every n and intervention (paired on the same FT sample)."""
    from .. import datasets
    from .vision import binary_task, finetune_mlp, shift_task

    split = datasets.digits(seed=cfg.seed)
    kind, classes = VISION_TASKS[task["ft_task"]]
    X_pool, y_pool, X_te, y_te = (binary_task(split, classes) if kind == "binary" else shift_task(split, classes))
    pts = {s: _pretrained(cfg.vision_pt_steps, cfg.seed, s) for s in {v[2] for v in INTERVENTIONS.values()}}
    rng = seeds.numpy(cfg.seed, "vision_subsample", task["seed"])
    rows = []
    test_rows = {r.tobytes() for r in np.ascontiguousarray(X_te)}
    for n in cfg.vision_n:
        idx = rng.choice(len(X_pool), min(n, len(X_pool)), replace=False)
        shared = sum(r.tobytes() in test_rows for r in np.ascontiguousarray(X_pool[idx]))  # the split guard
        for name, (kappa, gamma, s) in INTERVENTIONS.items():
            o = finetune_mlp(pts[s], X_pool[idx], y_pool[idx], X_te, y_te, kappa=kappa, gamma=gamma, seed=task["seed"])
            rows.append({"n": n, "intervention": name, "acc": o.test_acc, "pr_pre": o.pr_pre,
                         "pr_post": o.pr_post, "ensd": o.ensd, "shared": int(shared), "n_test": len(X_te)})
    return rows


def vision(cfg, **kw):
    tasks = [{"ft_task": t, "seed": s} for t in VISION_TASKS for s in range(cfg.vision_seeds)]
    # estimated cost per task from the smoke timing (about 0.6 s of PT per 200 steps, 0.3 s per FT run)
    cost = 0.6 * cfg.vision_pt_steps / 200 * len(INTERVENTIONS) / 3 + 0.3 * len(cfg.vision_n) * len(INTERVENTIONS)
    return _budgeted(vision_task, tasks, cfg, "pf_vision", cost, rounds="seed", **kw)


def modadd_task(cfg, task: dict) -> list[dict]:
    from .modarith import pt_then_ft

    return [{"modulus": r.modulus, "kappa_emb": r.kappa, "acc": r.test_acc}
            for r in pt_then_ft(30, 6, [3, 5, 10], [0.25, 1.0], frac=0.3, pt_steps=cfg.modadd_steps[0],
                                ft_steps=cfg.modadd_steps[1], seed=cfg.seed + task["seed"])]


def modadd(cfg, **kw):
    # a rough cost per seed for the budget's first-round test: 10 ms per AdamW step on a CPU core
    cost = 0.01 * (cfg.modadd_steps[0] + 6 * cfg.modadd_steps[1])
    return _budgeted(modadd_task, [{"seed": s} for s in range(cfg.modadd_seeds)], cfg, "pf_modadd", cost,
                     rounds="seed", **kw)
