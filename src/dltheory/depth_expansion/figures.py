"""The chapter's figures, one function per figure: (tidy table(s), cfg) -> Figure.

Theory dashed, simulation as markers; titles name the data and the scale.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import matplotlib.ticker as mticker
import numpy as np
import pandas as pd

from .. import plotting
from . import bounds, diagnostics

DATA = "MNIST-1D"


def _tag(cfg, data: str = DATA) -> str:
    return plotting.scale_tag(cfg.scale, data)


def _unless_skipped(fn):
    """A figure of a sweep that was not run under the budget: one line saying why."""
    import functools

    @functools.wraps(fn)
    def wrapper(df, *args, **kwargs):
        why = getattr(df, "attrs", {}).get("skipped")
        if not why:
            return fn(df, *args, **kwargs)
        fig, ax = plt.subplots(figsize=(6, 1.2))
        ax.axis("off")
        ax.text(0.0, 0.5, why, wrap=True, va="center")
        return fig
    return wrapper


def _first(ex: pd.DataFrame, cfg) -> pd.Series:
    return ex.loc[("old", cfg.seed)]


@_unless_skipped
def certified(ex: pd.DataFrame, cfg):
    """The headline figure: what is certified. Per old model (seed, x axis): the measured
    change L_test(f_new) - L_test(f_old) (column ``lhs``) as a marker with its paired 2 s.e.
    (``lhs_se``); the held-out certificate of the fixed pair (``bounds.heldout_certificate``
    from ``lhs_direct``, ``lhs_se``, K = cfg.n_test, at route_delta / seeds) as a vertical bar
    from its lower to its upper end; and the two theorems' right-hand sides with the
    smallest deviations any valid uniform eps_M, eps_K allow on this draw (``rhsA``,
    ``rhsB``: the plug-in max ``|G|``, max ``|T|``) as triangles. Below the dashed zero line is an
    improvement; a bar entirely below it certifies one."""
    old = ex.xs("old", level="model")
    x = np.arange(len(old))
    d = cfg.route_delta / max(len(old), 1)
    certs = [bounds.heldout_certificate(float(r.lhs_direct), float(r.lhs_se)
                                        * np.sqrt(cfg.n_test), cfg.n_test, cfg.B, d)
             for _, r in old.iterrows()]
    fig, ax = plt.subplots(figsize=(8.6, 3.8))
    ax.axhline(0, color="0.4", lw=1.0, ls="--")
    ax.errorbar(x, old.lhs, yerr=2 * old.lhs_se, fmt="o", ms=7, color=plotting.color(1),
                capsize=3, label=r"measured $L_{\rm test}(f_{\rm new}) - L_{\rm test}(f_{\rm old})$")
    ax.vlines(x + 0.15, [c.lower for c in certs], [c.upper for c in certs], lw=5,
              color=plotting.color(2), label="held-out certificate of the population change")
    ax.plot(x - 0.18, old.rhsA, "v", color=plotting.color(3), ms=7,
            label=r"Theorem 1's right-hand side, smallest valid $\varepsilon_M$")
    ax.plot(x + 0.36, old.rhsB, "^", color=plotting.color(4), ms=7,
            label=r"Theorem 2's right-hand side, smallest valid $\varepsilon_M, \varepsilon_K$")
    ax.set_xticks(x, [f"seed {s}" for s in old.index])
    ax.set_xlim(-0.6, len(old) - 0.3)
    ax.set_ylabel("change in test cross-entropy")
    ax.set_title(f"Inserting a block: what is certified ({_tag(cfg)}, "
                 f"$\\delta = {cfg.route_delta:g}$)")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2, frameon=False)
    return fig


@_unless_skipped
def bounds_vs_realised(ex: pd.DataFrame, sims: dict, cfg):
    """Per old model (seed): the realised change in test risk L_test(f_new) - L_test(f_old)
    (``lhs``, marker, paired 2 s.e. ``lhs_se``) against the two routes' right-hand sides
    with *pointwise* deviations (triangles): eps_M, eps_K are quantiles, over redrawn
    samples, of the deviations of the two fixed, already-trained models of each bracket
    (``A_eps_M``, ``B_eps_M``, ``B_eps_K`` of ``sims["routes"]``), not the uniform
    deviations over the class the theorems need; the dash is the training-set jumpboard's
    gain alone (``delta_test``)."""
    old = ex.xs("old", level="model")
    rt = sims["routes"]
    seeds = [s for s in old.index if s in rt.index]
    o, r = old.loc[seeds], rt.loc[seeds]
    x = np.arange(len(seeds))
    bA = -o.delta_R / 2 - o.delta_erm_pop + 2 * r.A_eps_M
    bB = -o.delta_test - o.delta_erm_S + 2 * (r.B_eps_M + r.B_eps_K)
    fig, ax = plt.subplots(figsize=(8.6, 3.8))
    ax.axhline(0, color="0.6", lw=0.8)
    se = o.lhs_se if "lhs_se" in o else None
    ax.errorbar(x, o.lhs, yerr=None if se is None else 2 * se, fmt="o", ms=7,
                color=plotting.color(1), capsize=3,
                label=r"realised $L_{\rm test}(f_{\rm new}) - L_{\rm test}(f_{\rm old})$")
    ax.plot(x - 0.18, bA, "v", color=plotting.color(3), ms=7,
            label=r"Route A, pointwise $\varepsilon_M$ (fixed models)")
    ax.plot(x + 0.18, bB, "^", color=plotting.color(4), ms=7,
            label=r"Route B, pointwise $\varepsilon_M + \varepsilon_K$ (fixed models)")
    ax.plot(x, -o.delta_test, "_", color="0.3", ms=16, mew=2,
            label=r"training-set jumpboard alone, $-\Delta^R_{\rm test}$")
    ax.set_xticks(x, [f"seed {s}" for s in seeds])
    ax.set_xlim(-0.6, len(seeds) - 0.4)
    ax.set_ylabel("change in test cross-entropy")
    ax.set_title(f"Routes with pointwise deviations vs the realised change ({_tag(cfg)}, "
                 f"$\\delta = {cfg.route_delta:g}$)")
    # below the axes, in the style's font size: beside them it had to shrink to 8 pt, under
    # the book's legibility floor (plotting.MIN_TEXT_PX) at the column width
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2, frameon=False)
    return fig


@_unless_skipped
def condition1_null(ex: pd.DataFrame, cfg):
    """Condition 1 against the permutation null, first seed: histogram of ||C_pi||_F over
    shuffles of g (column ``null``); dashed, the null's exact r.m.s. (``null_sq_pred``);
    dotted, its mean part (``mean_part``); solid, the paired signal (``gamma_pop``)."""
    e0 = _first(ex, cfg)
    fig, ax = plt.subplots()
    ax.hist(e0.null, bins=25, color=plotting.color(5), alpha=0.8, label="permutation null")
    ax.axvline(np.sqrt(e0.null_sq_pred), color="0.2", lw=1.2, ls="--",
               label=r"exact null r.m.s. $\sqrt{E\Vert C_\pi\Vert^2}$")
    ax.axvline(e0.mean_part, color="0.5", lw=1.0, ls=":",
               label=r"mean part $\Vert\bar g\Vert\,\Vert\bar\phi\Vert$")
    ax.axvline(e0.gamma_pop, color=plotting.color(1), lw=2, label=r"$\hat\gamma$ (paired)")
    ax.set_xlabel(r"$\Vert \hat C\Vert_F$ on population half A")
    ax.set_ylabel("count")
    ax.set_title(f"Condition 1: signal vs permutation null ({_tag(cfg)})")
    ax.legend()
    return fig


@_unless_skipped
def line_search(ex: pd.DataFrame, cfg):
    """The population jumpboard's line search, first seed: R(eta) - R(0) along -v_pop on
    half A, half B, S and the test set (``curves``, markers and lines); the tangent
    -gamma eta dashed (theory); the chosen step eta* dotted (``eta_pop``)."""
    e0 = _first(ex, cfg)
    c = e0.curves
    fig, ax = plt.subplots(figsize=(5.6, 3.6))
    keep = (c["eta"] > 0) & (c["eta"] <= 4 * max(e0.eta_pop, cfg.eta_min))
    names = {"pop_A": r"population half A (chose $v$, $\eta^*$)", "pop": "population half B",
             "train": "train $S$", "test": "test"}
    for i, key in enumerate(names):
        plotting.sim(ax, c["eta"][keep], (c[key] - c[key][0])[keep], color=plotting.color(i + 2),
                     label=names[key], ls="-", marker="o", ms=3)
    eta_t = c["eta"][keep & (c["eta"] <= 2 * max(e0.eta_pop, cfg.eta_min))]
    plotting.theory(ax, eta_t, -e0.gamma_pop * eta_t, label=r"tangent $-\gamma\,\eta$")
    ax.axvline(e0.eta_pop, color="0.5", lw=0.8, ls=":", label=r"$\eta^*$ (half A)")
    ax.set_xscale("log")
    ax.set_xlabel(r"step $\eta$ along $-v_{\rm pop}$")
    ax.set_ylabel(r"$R(\eta) - R(0)$")
    ax.set_title(f"Jumpboard line search, seed {cfg.seed} ({_tag(cfg)})")
    ax.legend()
    return fig


def _bars(ax, labels, values, roles, total, title):
    acc = 0.0
    for i, (v, role) in enumerate(zip(values, roles, strict=True)):
        ax.bar(i, v, bottom=acc, color=plotting.color(2 if role == "gain" else 1), width=0.6)
        acc += v
    ax.bar(len(values), total, color=plotting.color(0), width=0.6)
    ax.axhline(0, color="0.3", lw=0.8)
    ax.set_xticks(range(len(values) + 1), [*labels, r"measured $\Delta L_{test}$"],
                  rotation=30, ha="right", rotation_mode="anchor")
    ax.set_title(title)
    cum = np.cumsum(values)
    return min(0.0, *cum, total), max(0.0, *cum, total)


@_unless_skipped
def waterfall(ex: pd.DataFrame, cfg):
    """Both routes' exact decompositions, first seed, as waterfalls: gains in green
    (-Delta_R, -Delta_ERM columns ``delta_R``, ``delta_erm_pop`` / ``delta_test``,
    ``delta_erm_S``), generalisation brackets in orange (``gap_bracket``, ``test_bracket`` /
    ``tg_bracket``), the measured change in blue (``lhs``)."""
    e = _first(ex, cfg)
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.8), sharey=True)
    lo1, hi1 = _bars(axes[0], [r"$-\Delta_R$", r"$-\Delta^{pop}_{ERM}$", "G bracket",
                               "T bracket"],
                     [-e.delta_R, -e.delta_erm_pop, e.gap_bracket, e.test_bracket],
                     ["gain", "gain", "gen", "gen"], e.lhs, "Route A")
    lo2, hi2 = _bars(axes[1], [r"$-\Delta^R_{test}$", r"$-\Delta^{S}_{ERM}$", "(T+G) bracket"],
                     [-e.delta_test, -e.delta_erm_S, e.tg_bracket], ["gain", "gain", "gen"],
                     e.lhs, "Route B")
    low, high = min(lo1, lo2), max(hi1, hi2)
    pad = 0.1 * (high - low)
    axes[0].set_ylim(low - pad, high + pad)
    axes[0].set_ylabel("change in test risk")
    fig.suptitle(f"Test-risk decomposition, seed {cfg.seed} ({_tag(cfg)})")
    return fig


@_unless_skipped
def norm_bound(ex: pd.DataFrame, cfg):
    """The norm-based eps_M(n) proxy (``bounds.norm_bound_proxy`` with the first seed's
    ``U_norm``, ``z_max``) dashed (theory) with its n^-1/2 slope drawn, against the loss
    range B and the largest measured ``|G(f_new)|`` (``pop_new - train_new``)."""
    e = _first(ex, cfg)
    ns = np.geomspace(1e3, 1e7, 20)
    eps_n = bounds.norm_bound_proxy(ns, a=e.U_norm, b=1.0, B_z=e.z_max, B=cfg.B)
    fig, ax = plt.subplots()
    plotting.theory(ax, ns, eps_n, label=r"norm-based $\varepsilon_M(n)$ proxy")
    ax.axhline(cfg.B, color=plotting.color(1), lw=1, label="loss range B")
    g_meas = float((ex.pop_new - ex.train_new).abs().max())
    ax.axhline(g_meas, color=plotting.color(2), lw=1, ls="-.",
               label=r"largest measured $|G(f_{new})|$")
    plotting.loglog(ax, xlabel="training-set size n", ylabel=r"$\varepsilon_M$",
                    title=f"Uniform-deviation proxy, width {cfg.width} ({_tag(cfg)})")
    plotting.slope_line(ax, -0.5, anchor=(ns[10], eps_n[10]), offset=0.5)
    ax.legend()
    return fig


@_unless_skipped
def rms_hist(ex: pd.DataFrame, cfg):
    """Histogram of the RMS of every block's pre-normalisation sums, first seed
    (``rms_pre``), against sqrt(eps) (dashed, ``norm_eps``) and the 1st percentile r
    (dotted, ``rms_r1``)."""
    e = _first(ex, cfg)
    pre = np.asarray(e.rms_pre, float)
    fig, ax = plt.subplots()
    bins = np.geomspace(min(pre.min(), np.sqrt(e.norm_eps)) * 0.8, pre.max() * 1.2, 60)
    ax.hist(pre, bins=bins, alpha=0.7, color=plotting.color(0), label="pre-norm sums (all blocks)")
    ax.axvline(np.sqrt(e.norm_eps), color=plotting.color(1), ls="--", label=r"$\sqrt{\epsilon}$")
    ax.axvline(e.rms_r1, color="0.2", ls=":", label="1st percentile r")
    ax.set_xscale("log")
    ax.set_xlabel("RMS")
    ax.set_ylabel("count")
    ax.set_title(f"Block-input RMS ({_tag(cfg)})")
    ax.legend()
    return fig


@_unless_skipped
def alignment(df: pd.DataFrame, cfg):
    """cos(C_S, C_pop) against the training-set size n at a fixed number of steps: seeds as
    markers (``cos``), the seed mean as a line."""
    m = df.groupby("n").cos.mean()
    fig, ax = plt.subplots()
    ax.plot(df.n, df.cos, "o", color=plotting.color(0), alpha=0.5, label="seeds")
    plotting.sim(ax, m.index, m.to_numpy(), color=plotting.color(1), ls="-", label="mean")
    ax.set_xscale("log")
    ax.set_xlabel("training-set size n (same number of steps)")
    ax.set_ylabel(r"cos$(\hat C_S, \hat C_{pop})$")
    ax.set_title(f"Data aligns the first-order direction ({_tag(cfg)})")
    ax.legend()
    return fig


@_unless_skipped
def grid(gdf: pd.DataFrame, cfg):
    """The depth x width grid (cells that reached the matched loss): left, test (solid,
    ``test``) and training (dashed, ``train``) risk against depth per width; right, the
    signal ``gamma_pop`` at the middle layer; seed mean +- s.e. as markers."""
    ok = gdf[gdf["reached"]] if "reached" in gdf else gdf
    g = ok.groupby(["width", "depth"])[["train", "test", "gamma_pop"]]
    cell, se = g.mean().reset_index(), g.sem().reset_index()
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4))
    for i, w in enumerate(cfg.grid_widths):
        sub, e = cell[cell.width == w], se[se.width == w]
        axes[0].errorbar(sub.depth, sub.test, yerr=e.test, fmt="o-", capsize=2,
                         color=plotting.color(i), label=f"width {w}")
        axes[0].plot(sub.depth, sub.train, "s--", color=plotting.color(i), alpha=0.5)
        axes[1].errorbar(sub.depth, sub.gamma_pop, yerr=e.gamma_pop, fmt="o-", capsize=2,
                         color=plotting.color(i), label=f"width {w}")
    for ax in axes:
        ax.set_xscale("log", base=2)
        ax.set_xlabel("depth L")
    axes[0].set_ylabel("clipped CE")
    axes[0].set_title("test (solid), train (dashed)")
    axes[0].legend()
    axes[1].set_yscale("log")
    axes[1].set_ylabel(r"$\gamma_{pop}$ at the middle layer")
    axes[1].set_title("first-order signal vs depth")
    axes[1].legend()
    fig.suptitle(f"{cfg.grid_arch.upper()} grid, " + _tag(cfg, _grid_data(cfg))
                 + f": seed mean ± s.e., {len(ok)} of {len(gdf)} cells at the matched train CE")
    return fig


def _grid_data(cfg) -> str:
    if cfg.grid_arch == "mlp":
        return DATA
    return cfg.conv_data or (f"digits {cfg.grid_res}x{cfg.grid_res}" if cfg.grid_res != 8
                             else "digits")


@_unless_skipped
def observability(odf: pd.DataFrame, cfg):
    """Observability against width at matched training loss: cos(C_S, C_pop) (``cos``, the
    pre-registered measure), gamma_S / null mean (``ratio``) and the z-score (``z``); seeds
    as markers, the mean as a line."""
    fig, axes = plt.subplots(1, 3, figsize=(10, 3.4))
    m = odf.groupby("width")[["cos", "ratio", "z"]].mean()
    labels = {"cos": r"cos$(\hat C_S, \hat C_{pop})$ (the measure)",
              "ratio": r"$\hat\gamma_S$ / null mean", "z": r"$z_S$ vs null"}
    for ax, key in zip(axes, labels, strict=True):
        ax.plot(odf.width, odf[key], "o", color=plotting.color(0), alpha=0.4, label="seeds")
        plotting.sim(ax, m.index, m[key], color=plotting.color(1), ls="-", label="mean")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("width")
        ax.set_title(labels[key])
    axes[0].legend()
    fig.suptitle(f"Observability at matched train CE {cfg.obs_target_ce} ({_tag(cfg)})")
    return fig


@_unless_skipped
def covariance(gdf: pd.DataFrame, cfg):
    """Heat maps of the channel correlation of the activation gradients (``sigma`` of the
    grid rows that kept it: the deepest depth, first seed), one panel per width; each title
    gives the off-diagonal energy (``off_energy``) and its rotation null
    (``rotation_null``, the same spectrum in a random basis; the rank-9 ``offdiag_null``
    for tables without it)."""
    rows = gdf[gdf.sigma.notna()] if "sigma" in gdf else gdf.iloc[:0]
    n = max(1, len(rows))
    ncol, nrow = min(3, n), -(-n // 3)
    fig, axes = plt.subplots(nrow, ncol, figsize=(3.2 * ncol + 0.8, 3.3 * nrow), squeeze=False)
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    im = None
    for ax, (_, r) in zip(axes.flat, rows.iterrows(), strict=False):
        im = ax.imshow(diagnostics.correlation(np.asarray(r.sigma, float)), cmap="RdBu_r",
                       vmin=-1, vmax=1)
        null = r.rotation_null if "rotation_null" in r else r.offdiag_null
        ax.set_title(f"width {r.width}\noff-diag. {r.off_energy:.2f} (null {null:.2f})")
        ax.set_xticks([])
        ax.set_yticks([])
        ax.grid(False)
    if im is not None:
        fig.colorbar(im, ax=axes.ravel().tolist(), shrink=0.8)
    what = "channel corr(g)" if cfg.grid_arch == "conv" else "corr(g)"
    fig.suptitle(f"{what} at the middle layer, depth {max(cfg.grid_depths)} "
                 f"({_tag(cfg, _grid_data(cfg))})")
    return fig


@_unless_skipped
def progressive(prog: pd.DataFrame, cfg):
    """Progressive deepening: left, test / population / training risk per round (``test``,
    ``pop``, ``train``; markers and lines); right, log-log, the signal of each round's block
    (``gamma_pop``, ``gamma_S``) with the slope -1 of assumption G (a = 1) drawn, and
    gamma's two factors rescaled to round 1 (``g_norm``, ``coherence``) where recorded."""
    fig, axes = plt.subplots(1, 2, figsize=(9, 4.4))
    for key, i, ls in (("test", 0, "-"), ("pop", 2, "-"), ("train", 1, "--")):
        plotting.sim(axes[0], prog["round"], prog[key], color=plotting.color(i), ls=ls,
                     label=key)
    axes[0].set_xlabel("round k (blocks inserted)")
    axes[0].set_ylabel("clipped CE")
    axes[0].set_title("Progressive deepening")
    axes[0].legend()
    pk = prog[prog["round"] > 0]
    plotting.sim(axes[1], pk["round"], pk.gamma_pop, color=plotting.color(2),
                 label=r"$\gamma_{pop}$")
    plotting.sim(axes[1], pk["round"], pk.gamma_S, color=plotting.color(1), marker="s",
                 label=r"$\gamma_S$")
    plotting.loglog(axes[1], xlabel="round k", ylabel="signal of the new block",
                    title="Signal of each inserted block")
    axes[1].xaxis.set_major_locator(mticker.FixedLocator(pk["round"].to_numpy()))
    axes[1].xaxis.set_major_formatter(mticker.FormatStrFormatter("%d"))
    axes[1].xaxis.set_minor_locator(mticker.NullLocator())
    plotting.slope_line(axes[1], -1.0, anchor=(1, pk.gamma_pop.iloc[0]),
                        label="slope -1 (a = 1, assumption G)")
    if {"g_norm", "coherence"} <= set(pk.columns):   # gamma = coherence x E||g|| x E||phi||
        g0, c0 = pk.g_norm.iloc[0], pk.coherence.iloc[0]
        plotting.sim(axes[1], pk["round"], pk.gamma_pop.iloc[0] * pk.g_norm / g0,
                     color=plotting.color(4), marker="^", ls=":",
                     label=r"$\propto E\Vert g\Vert$ (population)")
        plotting.sim(axes[1], pk["round"], pk.gamma_pop.iloc[0] * pk.coherence / c0,
                     color=plotting.color(5), marker="v", ls=":",
                     label=r"$\propto$ coherence $\kappa_k$")
    # below the panel, in the style's size (inside it, five entries had to shrink to 8 pt:
    # under the book's legibility floor, plotting.MIN_TEXT_PX, at the column width)
    axes[1].legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2, frameon=False)
    fig.suptitle(_tag(cfg))
    return fig


# the Explore sliders besides width: (low, high, step, default)
EXPLORE = {"a": (0.55, 2.0, 0.05, 1.0), "b": (0.0, 2.0, 0.1, 0.5),
           "delta_R": (0.005, 0.2, 0.005, 0.03)}


def explore(width: int = 64, a: float = 1.0, b: float = 0.5, delta_R: float = 0.03,
            B: float = 5.0):
    """Theory only: the norm-based eps_M(n) proxy at this width (Kaiming U: ||U||_F ~
    sqrt(2 width); post-norm z: ||z|| <= sqrt(width)); the Hoeffding test-set size Route A
    needs at margin delta_R; and the reconstructed Appendix M law: gains ~ k^-2a until the
    per-block cost ~ k^b n^-1/2 exceeds them, so L(k) - L_inf ~ k^-(2a-1) up to k_max(n)."""
    fig, axes = plt.subplots(1, 3, figsize=(10.5, 3.6))
    ns = np.geomspace(1e3, 1e8, 40)
    eps = bounds.norm_bound_proxy(ns, a=np.sqrt(2 * width), b=1.0, B_z=np.sqrt(width), B=B)
    plotting.theory(axes[0], ns, eps, label=rf"$\varepsilon_M(n)$, width {width}")
    axes[0].axhline(B, color=plotting.color(1), lw=1, label="loss range B")
    plotting.loglog(axes[0], xlabel="n", ylabel=r"$\varepsilon_M$", title="Uniform deviation")
    axes[0].legend()
    dr = np.geomspace(1e-3, 0.5, 50)
    plotting.theory(axes[1], dr, [bounds.hoeffding_K(d, B, 0.05) for d in dr], label="K needed")
    axes[1].axvline(delta_R, color=plotting.color(2), lw=1, label=rf"$\Delta_R$ = {delta_R:g}")
    plotting.loglog(axes[1], xlabel=r"$\Delta_R$", ylabel="test samples K",
                    title="Route A: Hoeffding, failure 5%")
    axes[1].legend()
    k = np.arange(1, 201)
    for i, n in enumerate((1e4, 1e5, 1e6)):
        # gains c k^-2a stop where they fall below the per-block cost ~ k^b / sqrt(n):
        # k_max ~ (c' sqrt(n))^(1 / (2a + b)); c' is set so that k_max = 50 at n = 1e6
        # for a = 1, b = 1/2 (only the shape is the theory's)
        kmax = (17.7 * np.sqrt(n)) ** (1 / (2 * a + b))
        gains = np.where(k <= kmax, k ** (-2.0 * a), 0.0)
        loss = 1.0 - np.cumsum(gains) / np.sum(np.arange(1, 10_001) ** (-2.0 * a))
        plotting.theory(axes[2], k, np.maximum(loss, 1e-4), color=plotting.color(i),
                        label=f"n = {n:.0e}")
    plotting.slope_line(axes[2], -(2 * a - 1), x=[1.0, 200.0], anchor=(1.0, 1.0), offset=0.6,
                        label=rf"slope $-(2a-1)$ = {-(2 * a - 1):.2g}")
    plotting.loglog(axes[2], xlabel="blocks inserted k", ylabel=r"$L(k) - L_\infty$ (rel.)",
                    title=f"Appendix M law, a = {a:g}, b = {b:g}")
    axes[2].legend(loc="lower left")
    return fig
