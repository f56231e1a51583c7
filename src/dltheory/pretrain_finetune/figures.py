"""The chapter's figures, one function per figure: ``(tables, cfg) -> Figure``.

Theory is dashed, simulation markers (mean ± s.e. over seeds); titles name the data and scale.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from .. import plotting
from .regimes import CORNERS, l_order_pd

_TRI = np.array([[1, 0], [2, 0], [2, -1], [1, 0]])


def _cols(df: pd.DataFrame, cols) -> pd.DataFrame:
    """``df``, or an empty table with ``cols`` when a budgeted sweep was skipped (theory only)."""
    return df if len(df) else pd.DataFrame({c: pd.Series(dtype=float) for c in cols})


def _mean(df, keys):
    return df.groupby(list(keys), sort=False).agg(sim=("sim", "mean"), sem=("sim", "sem")).reset_index()


def flow(small: pd.DataFrame, cfg):
    """GD against the closed-form flow, log-log against the step ``tau``: markers are the
    largest ``w_err`` (weights vs closed form) and ``inv_err`` (drift of the conservation
    laws) over the (c, lambda) pairs of ``small``; the predicted slope 1 (O(tau)) is drawn."""
    g = small.groupby("tau", sort=False)[["w_err", "inv_err"]].max().reset_index()
    fig, ax = plt.subplots()
    plotting.sim(ax, g.tau, g.w_err, label="weights vs closed form", color=plotting.color(0))
    plotting.sim(ax, g.tau, g.inv_err, label="invariant drift", color=plotting.color(1), marker="s")
    plotting.loglog(ax, xlabel=r"step size $\tau$", ylabel="max abs error",
                    title=f"GD vs gradient flow ({plotting.scale_tag(cfg.scale, f'D={cfg.d_small}')})")
    plotting.slope_line(ax, 1.0, anchor=(g.tau.iloc[-1], g.w_err.iloc[-1]), offset=0.6, label="slope 1 (O(τ))")
    ax.xaxis.set_minor_formatter(plt.NullFormatter())
    ax.set_xticks(list(g.tau), [f"{t:g}" for t in g.tau])
    ax.legend()
    return fig


def regimes_map(cfg):
    """(ℓ, PD) over (λ_PT, log c_PT) at ``|β_FT| = |β_PT| = 1``, and the trade-off triangle."""
    lam = np.linspace(-1, 1, cfg.grid)
    logc = np.linspace(-5, 2, cfg.grid)
    LL, LC = np.meshgrid(lam, logc)
    ell, pd_ = l_order_pd(1.0, 1.0, 10.0**LC, LL, cfg.gamma)
    fig, axes = plt.subplots(1, 3, figsize=(11, 3.3))
    ext = (-1, 1, logc[0], logc[-1])
    for ax, m, name, cmap in ((axes[0], ell, r"$\ell$-order", "viridis"), (axes[1], pd_, "PD", "magma")):
        im = ax.imshow(m, origin="lower", extent=ext, aspect="auto", cmap=cmap)
        fig.colorbar(im, ax=ax)
        ax.set_xlabel(r"$\lambda_{PT}$")
        ax.set_ylabel(r"$\log_{10} c_{PT}$")
        ax.set_title(name)
        ax.grid(False)
    axes[2].plot(_TRI[:, 0], _TRI[:, 1], color="0.3", lw=1)
    axes[2].scatter(ell.ravel()[::7], pd_.ravel()[::7], s=3, c=LL.ravel()[::7], cmap="coolwarm", alpha=0.6)
    for name, k in CORNERS.items():
        e_, p_ = l_order_pd(k["beta_ft"], k["beta_pt"], k["c_pt"], k["lam_pt"], k["gamma"])
        axes[2].annotate(name, (float(e_), float(p_)), weight="bold")
    axes[2].set_xlabel(r"$\ell$-order")
    axes[2].set_ylabel("PD")
    axes[2].set_title(r"$1 \leq \ell+\mathrm{PD} \leq 2$")
    fig.suptitle(f"Regimes of the FT potential at $|\\beta_{{FT}}|=|\\beta_{{PT}}|=1$, $\\gamma$ = {cfg.gamma:g} "
                 f"({plotting.scale_tag(cfg.scale, 'closed form')})")
    return fig


def replica_vs_sim(curves: pd.DataFrame, sim: pd.DataFrame, cfg):
    """FT error against ``alpha`` (one panel per task, one colour per regime): the replica
    prediction dashed from ``curves`` (``curve == "alpha"``, column ``replica``), the exact
    finite-D minimisers as markers, mean ± s.e. of ``sim.sim`` over seeds."""
    sim = _cols(sim, ["task", "regime", "alpha", "sim"])
    tasks = list(cfg.tasks)
    # 9.5 in wide: the book scales it to its 688 px column, which keeps 10.5 pt ticks and
    # legend at about 10 px (the former 11 in came out near 9 px, plotting.MIN_TEXT_PX)
    fig, axes = plt.subplots(1, len(tasks), figsize=(9.5, 3.4), sharey=True)
    cur = _cols(curves[curves.curve == "alpha"], ["task", "regime", "alpha", "replica"])
    m = _mean(sim, ["task", "regime", "alpha"])
    for ax, t in zip(axes, tasks, strict=True):
        for i, r in enumerate(cfg.regimes):
            col = plotting.color(i)
            c = cur[(cur.task == t) & (cur.regime == r)]
            plotting.theory(ax, c.alpha, c.replica, color=col, label=None)
            s = m[(m.task == t) & (m.regime == r)]
            plotting.sim(ax, s.alpha, s.sim, yerr=s["sem"], color=col, label=f"regime {r}")
        ax.set_title(f"{t} ($\\rho_{{FT}}$={cfg.task_rho[t]:.2g})")
        ax.set_xlabel(r"$\alpha_{FT} = N_{FT}/D$")
    axes[0].set_ylabel(r"FT error $\|\hat\beta-\beta^*\|^2/\|\beta^*\|^2$")
    if axes[0].get_legend_handles_labels()[0]:
        axes[0].legend()
    fig.suptitle(f"Replica (dashed) vs exact minimisers (D={cfg.d_eff}, {cfg.n_seeds} seeds; "
                 f"{plotting.scale_tag(cfg.scale)})")
    return fig


def log1p_lambda_axis(lams):
    """Positions ``log10(1 + lambda)`` for the lambda axis; ``lambda = -1`` (where the log is
    ``-inf``) sits one decade left of the smallest positive ``1 + lambda`` of ``lams``."""
    lams = np.asarray(lams, dtype=float)
    pos = lams[lams > -1]
    floor = np.log10(1 + pos.min()) - 1 if pos.size else -1.0
    return lambda x: np.where(np.asarray(x, dtype=float) > -1,
                              np.log10(np.maximum(1 + np.asarray(x, dtype=float), 1e-300)), floor)


def lambda_sweeps(curves: pd.DataFrame, sim: pd.DataFrame, cfg, title: str | None = None):
    """Replica FT error against lambda_PT, one colour per task: theory dashed from ``curves``
    (``curve == "lambda"``: ``task``, ``lam``, ``replica``), its minimum starred; the exact
    minimisers at regimes I, IV, II as markers, mean ± s.e. of ``sim.sim`` at ``alpha_ft``.
    The axis is ``log10(1 + lambda)`` (ticks labelled in lambda), so that an optimum at
    ``1 + lambda = 1e-3`` is visibly at the edge of the band; lambda = -1 is the left end."""
    lam = curves[curves.curve == "lambda"]
    sim = _cols(sim, ["task", "regime", "alpha", "sim"])
    s = _mean(sim[(sim.alpha == cfg.alpha_ft) & sim.regime.isin(["I", "II", "IV"])], ["task", "regime"])
    lam_of = {r: cfg.regimes[r][1] for r in ("I", "II", "IV")}
    at = log1p_lambda_axis(cfg.lams)
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    for i, (t, g) in enumerate(lam.groupby("task", sort=False)):
        col = plotting.color(i)
        pos = at(g.lam.to_numpy())
        plotting.theory(ax, pos, g.replica, color=col, marker="o", ms=3, label=f"{t} (replica)")
        j = int(np.argmin(g.replica.to_numpy()))
        ax.plot(pos[j], g.replica.iloc[j], marker="*", ms=12, color=col, ls="none", zorder=5)
        ss = s[s.task == t]
        px = at([lam_of[r] for r in ss.regime])
        plotting.sim(ax, px, ss.sim, yerr=ss["sem"], color=col, label=f"{t} (sim)")
    ticks = [x for x in cfg.lams if x <= -0.9 or x in (-0.5, 1.0)]  # 0 and 1 would touch
    ax.set_xticks(list(at(ticks)), [f"{x:g}" for x in ticks], rotation=30)
    ax.set_yscale("log")
    ax.set_xlabel(r"$\lambda_{PT}$, on a $\log(1+\lambda_{PT})$ axis ($-1$ at the left end)")
    ax.set_ylabel("FT error")
    ax.set_title(title or f"Best relative scale per task, α_FT={cfg.alpha_ft:g} (★ = replica best; "
                 f"{plotting.scale_tag(cfg.scale)})")
    ax.legend(loc="center left", bbox_to_anchor=(1.0, 0.5))
    return fig


def headline(curves: pd.DataFrame, sim: pd.DataFrame, cfg):
    """The chapter's first figure: the λ_PT sweep of section 5."""
    return lambda_sweeps(curves, sim, cfg, title=f"The best $\\lambda_{{PT}}$ depends on the task "
                         f"(★ = replica best; {plotting.scale_tag(cfg.scale)})")


def knob_sweeps(curves: pd.DataFrame, sim: pd.DataFrame, cfg):
    """FT error against the readout re-initialisation gamma (left) and the PT scale c_PT
    (right), one colour per task: replica dashed from ``curves`` (``curve`` ``gamma`` / ``c``),
    exact minimisers as markers, mean ± s.e. of ``sim.sim`` per ``knob`` value."""
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.4), sharey=True)
    sim = _cols(sim, ["knob", "task", "gamma", "c", "sim"])
    for ax, knob, lab in ((axes[0], "gamma", r"readout re-init $\gamma_{FT}$"), (axes[1], "c", r"PT scale $c_{PT}$")):
        cur = curves[curves.curve == knob]
        ss = sim[sim.knob == knob].assign(value=lambda d, k=knob: d[k])
        m = _mean(ss, ["task", "value"])
        for i, (t, g) in enumerate(cur.groupby("task", sort=False)):
            col = plotting.color(i)
            plotting.theory(ax, g[knob], g.replica, color=col, label=None)
            s = m[m.task == t]
            plotting.sim(ax, s.value, s.sim, yerr=s["sem"], color=col, label=t)
        ax.set_xscale("log")
        ax.set_xlabel(lab)
        ax.set_title(f"λ_PT={cfg.lam_iv:g}, α_FT={cfg.alpha_ft:g}")
    axes[0].set_ylabel("FT error")
    if axes[0].get_legend_handles_labels()[0]:
        axes[0].legend()
    fig.suptitle(f"Sweeping γ and c_PT: replica (dashed) vs exact minimisers ({plotting.scale_tag(cfg.scale)})")
    return fig


def learned_path(path: pd.DataFrame, cfg):
    """The learned (ell-order, PD) of the exact FT minimiser as lambda_PT runs from -1 to +1
    (markers coloured by ``path.lam``, columns ``ell``, ``pd``), inside the trade-off triangle
    1 <= ell + PD <= 2 (grey lines)."""
    fig, ax = plt.subplots(figsize=(4.6, 3.6))
    path = _cols(path, ["ell", "pd", "lam"])
    ax.plot(_TRI[:, 0], _TRI[:, 1], color="0.3", lw=1)
    ax.plot(path.ell, path.pd, color="0.6", lw=0.8, zorder=1)
    sc = ax.scatter(path.ell, path.pd, c=path.lam, cmap="coolwarm", zorder=3)
    fig.colorbar(sc, ax=ax, label=r"$\lambda_{PT}$")
    ax.set_xlabel(r"$\ell$-order of $\hat\beta_{FT}$")
    ax.set_ylabel("PD")
    ax.set_title(f"Learned path ({plotting.scale_tag(cfg.scale, f'D={cfg.d_eff}')})")
    return fig


def imperfect(th: pd.DataFrame, sim: pd.DataFrame, cfg):
    """Full overlap, FT error against lambda_PT: replica dotted for perfect PT and dashed for
    ``alpha_pt`` (``th.replica`` per ``alpha_ft``, one colour each); the exact minimisers after
    imperfect PT as markers, mean ± s.e. of ``sim.sim`` per ``lam`` at the largest alpha_FT."""
    fig, ax = plt.subplots(figsize=(6.2, 3.6))
    lams = list(cfg.lams_imperfect)
    pos = np.arange(len(lams))
    for _j, (a_pt, ls) in enumerate(((1.0, ":"), (cfg.alpha_pt, "--"))):
        for i, a in enumerate(cfg.alphas_ft_imperfect):
            g = th[(th.alpha_pt == a_pt) & (th.alpha_ft == a)].set_index("lam").replica.reindex(lams)
            name = "perfect" if a_pt == 1.0 else f"α_PT={a_pt:g}"
            plotting.theory(ax, pos, g.to_numpy(), color=plotting.color(i), ls=ls, marker="o", ms=3,
                            label=f"{name}, α_FT={a:g}")
    m = _mean(_cols(sim, ["lam", "sim"]), ["lam"]).set_index("lam").reindex(lams)
    i_max = len(cfg.alphas_ft_imperfect) - 1
    plotting.sim(ax, pos, m.sim, yerr=m["sem"], color=plotting.color(i_max), label=f"sim, α_PT={cfg.alpha_pt:g}")
    ax.set_xticks(pos, [f"{x:g}" for x in lams])
    ax.set_yscale("log")
    ax.set_xlabel(r"$\lambda_{PT}$")
    ax.set_ylabel("FT error")
    ax.set_title(f"Imperfect PT, full overlap ({plotting.scale_tag(cfg.scale, f'D={cfg.d_imp}')})")
    ax.legend(loc="center left", bbox_to_anchor=(1.0, 0.5))
    return fig


def vision(vis: pd.DataFrame, cfg):
    """Digits stand-in: held-out accuracy (``acc``, mean ± s.e. over seeds, markers joined by
    thin lines) against the number of FT examples ``n``, one panel per ``ft_task`` and one
    colour per ``intervention``. No theory line: the diagonal theory gives signs, not curves."""
    from .experiments import VISION_TASKS

    vis = _cols(vis, ["ft_task", "intervention", "n", "acc"])
    tasks = list(VISION_TASKS)
    fig, axes = plt.subplots(1, len(tasks), figsize=(11, 4.0))
    for ax, t in zip(axes, tasks, strict=True):
        g = vis[vis.ft_task == t].groupby(["intervention", "n"], sort=False).acc.agg(["mean", "sem"]).reset_index()
        for i, (name, h) in enumerate(g.groupby("intervention", sort=False)):
            plotting.sim(ax, h.n * (1 + 0.03 * i), h["mean"], yerr=h["sem"], color=plotting.color(i),
                         label=name, ls="-", lw=0.8)
        ax.set_xscale("log")
        ax.xaxis.set_minor_formatter(plt.NullFormatter())
        ax.set_xticks(list(cfg.vision_n), [str(n) for n in cfg.vision_n])
        ax.set_xlabel("FT examples n")
        ax.set_title(t)
    axes[0].set_ylabel("test accuracy")
    if len(vis):
        fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncol=3)
    fig.suptitle(f"Digits stand-in, PT on 0-7 ({plotting.scale_tag(cfg.scale, f'{cfg.vision_seeds} seeds')})")
    return fig


def explore_lambda(rho_pt=0.2, rho_sh=0.25, rho_new=0.05, alpha_ft=0.2, log10_c=-3.0, log10_gamma=-3.0):
    """Replica FT error against λ_PT for the three tasks (theory only, for the explore cell)."""
    from .data import make_tasks

    lams = np.array([-1.0, -0.999, -0.99, -0.9, -0.5, 0.0, 0.5, 1.0])
    fig, ax = plt.subplots(figsize=(6.5, 3.4))
    for i, (name, task) in enumerate(make_tasks(rho_pt, rho_sh, rho_new).items()):
        e = [_replica_or_nan(task, alpha_ft, 10**log10_c, lam, 10**log10_gamma) for lam in lams]
        plotting.theory(ax, np.arange(len(lams)), e, color=plotting.color(i), marker="o", ms=3, label=name)
    ax.set_xticks(np.arange(len(lams)), [f"{x:g}" for x in lams], rotation=30)
    ax.set_yscale("log")
    ax.set_xlabel(r"$\lambda_{PT}$")
    ax.set_ylabel("FT error (replica)")
    ax.set_title(f"ρ_PT={rho_pt:g}, α_FT={alpha_ft:g}, c_PT=1e{log10_c:g}, γ=1e{log10_gamma:g}")
    ax.legend()
    return fig


def _replica_or_nan(task, alpha_ft, c_pt, lam, gamma) -> float:
    """The replica error, NaN where the theory has none (drawn as a gap)."""
    from .replica import ReplicaUndefined, replica_error

    try:
        return replica_error(task, alpha_ft, c_pt, lam, gamma).error
    except ReplicaUndefined:
        return float("nan")
