"""The chapter's figures: one function per figure, from the tidy tables of ``experiments``.

Theory is dashed, simulation markers; titles name the data and the scale.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from .. import plotting
from . import laws as L
from . import rules, theory
from .config import Config
from .models import FFN, MHA, MoE, NormSwiGLU, SwiGLU

NAMES = {"gd": "GD", "sgd": "SGD", "heavy_ball": "heavy ball", "adam": "Adam"}


def _tag(cfg: Config, data: str, *tables) -> str:
    """Title tag: the data, the scale, and the seed rounds the tables' sweeps completed
    (``df.attrs["rounds"]``; budgeted runs may stop early)."""
    rounds = [t.attrs["rounds"] for t in tables
              if t is not None and isinstance(t.attrs.get("rounds"), (tuple, list))]
    done = "" if not rounds else \
        f", {min(r[0] for r in rounds)} of {max(r[1] for r in rounds)} seed rounds"
    return f"{data}, {cfg.scale}{done}"


def spectra(counts: pd.DataFrame, cfg: Config, names=("gelu", "swiglu", "mha_rope", "moe_topk")):
    """One panel per block of ``names``: the singular values of the Jacobian rows alone
    (``spectrum_W``, circles) and with the brackets (``spectrum``, dots), each divided by
    the largest, from the count table (``experiments.counts``); the dashed vertical line is
    the rank the theory predicts, ``D - theory``, the dotted horizontal one the rank
    threshold ``rtol_rank``. A block whose count was not determined is left blank."""
    cols = min(2, len(names))     # at most two panels per row: legible at the column width
    rows = -(-len(names) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(9.0, 3.0 * rows), sharey=True, squeeze=False)
    for ax in axes.flat[len(names):]:
        ax.set_visible(False)
    axes = axes.flat
    for ax, name in zip(axes, names, strict=False):
        r = counts[counts.model == name].iloc[0]
        if pd.isna(r.laws):
            ax.set(title=f"{name}: not determined")
            continue
        ax.semilogy(np.arange(1, len(r.spectrum_W) + 1), r.spectrum_W, "o", ms=3,
                    color=plotting.color(0), label="$W$ only")
        ax.semilogy(np.arange(1, len(r.spectrum) + 1), r.spectrum, ".", ms=3,
                    color=plotting.color(1), label="$W$ + brackets")
        ax.axvline(r.D - r.theory + 0.5, **plotting.THEORY, label=r"$D - N_{theory}$")
        ax.axhline(cfg.rtol_rank, color="0.6", lw=0.8, ls=":")
        ax.set(title=f"{name} (D={r.D})", xlabel="index", ylim=(1e-19, 3))
    for i in range(0, len(names), cols):
        axes[i].set_ylabel(r"singular value / $s_1$")
    axes[0].legend(loc="lower left")
    fig.suptitle(f"Spectra of Jacobian rows and brackets ({_tag(cfg, 'random inputs')})")
    return fig


def gd_collapse(win: pd.DataFrame, fits: pd.DataFrame, cfg: Config):
    """One panel per block of the early windows (``experiments.early_windows``, GD, seed 0):
    the largest drift divided by the squared step, ``err / tau**2`` against the step ``k``,
    as markers, one colour per step size; dashed, slope 1 through the first step's mean
    (the identity's ``tau^2 k``); the titles give the fitted exponents of ``fits``."""
    blocks = list(dict.fromkeys(win.block))
    fig, axes = plt.subplots(1, len(blocks), figsize=(10.0, 3.4))
    for ax, block in zip(axes, blocks, strict=True):
        w = win[(win.block == block) & (win.opt == "gd") & (win.seed == 0)]
        for i, (tau, g) in enumerate(w.groupby("tau")):
            g = g[g.k % 3 == 1]
            plotting.sim(ax, g.k, g.err / tau**2, color=plotting.color(i), ms=3,
                         label=rf"$\tau\lambda_{{max}}={tau * g.lam.iloc[0]:.1e}$")
        f = fits[(fits.block == block) & (fits.opt == "gd")]
        first = w[w.k == 1]
        kk = np.arange(1, w.k.max() + 1)
        plotting.theory(ax, kk, kk * (first.err / first.tau**2).mean(), label="slope 1")
        plotting.loglog(ax, xlabel="step $k$", title=rf"{block}: $\alpha={f.alpha.mean():.2f}$, "
                        rf"$\beta={f.beta.mean():.2f}$")
    axes[0].set_ylabel(r"$\max|h_k - h_0|\;/\;\tau^2$")
    axes[0].legend()
    fig.suptitle(f"GD: drift divided by $\\tau^2$ collapses "
                 f"({_tag(cfg, 'teacher regression', win)})")
    return fig


def optimisers(win: pd.DataFrame, fits: pd.DataFrame, ident: pd.DataFrame, cfg: Config):
    """Left: RoPE attention's drift ``err`` at the last step against the step size
    ``tau * lam``, markers joined per optimiser (``win``, seed 0), legend with the fitted
    ``alpha`` of ``fits``. Right: the SwiGLU laws' total size ``abs_h`` under weight decay
    (``ident`` rows with ``wd > 0``) as markers, and dashed the predicted factor
    ``(1 - tau lambda)^(2k)`` (``theory.wd_decay``)."""
    fig, axes = plt.subplots(1, 2, figsize=(9.5, 4.2))
    ax = axes[0]
    kmax = max(cfg.ks)
    for i, opt in enumerate(NAMES):
        w = win[(win.block == "mha_rope") & (win.opt == opt) & (win.seed == 0) & (win.k == kmax)]
        a = fits[(fits.block == "mha_rope") & (fits.opt == opt)].alpha.mean()
        plotting.sim(ax, w.tau * w.lam, w.err, color=plotting.color(i), ls="-", lw=0.8,
                     label=rf"{NAMES[opt]} ($\alpha$={a:.2f})")
    plotting.loglog(ax, xlabel=r"step size $\tau\lambda_{max}$ (Adam: lr = $\tau/10$)",
                    ylabel=rf"$\max|h_k-h_0|$ at $k={kmax}$", title="RoPE attention")
    # ticks at the four step sizes only (log minor labels overlap), the legend below the
    # axes (inside it covers a line whatever the corner)
    x = np.sort(win[(win.block == "mha_rope") & (win.opt == "gd")].eval("tau * lam").unique())
    ax.xaxis.set_minor_formatter(plt.NullFormatter())
    ax.set_xticks(x, [f"{v:.1e}" for v in x])
    ax.tick_params(axis="x", labelrotation=20)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.32), ncol=2, frameon=False)
    ax = axes[1]
    wd = ident[ident.wd > 0]
    ax.plot(wd.k, wd.abs_h / wd.abs_h.iloc[0], "o", ms=2, color=plotting.color(0),
            label="SwiGLU laws, GD + weight decay")
    plotting.theory(ax, wd.k, theory.wd_decay(cfg.id_tau, cfg.wd_lambda, wd.k.to_numpy()),
                    label=r"$(1-\tau\lambda)^{2k}$")
    ax.set(xlabel="step $k$", ylabel=r"$\sum_i |h_i(\theta_k)|$ / initial",
           title=rf"weight decay $\lambda={cfg.wd_lambda}$, $\tau={cfg.id_tau}$")
    ax.legend()
    fig.suptitle(f"Optimisers and the laws ({_tag(cfg, 'teacher regression', win)})")
    return fig


def matched(mp: pd.DataFrame, cfg: Config):
    """Drift where the loss has halved (``drift``) against the learning rate (``lr``), GD
    left and Adam right (``experiments.matched_progress``): markers joined per (block, seed),
    one colour per block; dashed, the predicted slope (``theory.matched_slope``: 1 for GD,
    0 for Adam) through each seed's first point."""
    fig, axes = plt.subplots(1, 2, figsize=(9.5, 3.3), sharey=False)
    for ax, opt in zip(axes, ("gd", "adam"), strict=True):
        blocks = list(dict.fromkeys(mp.block))
        first = True
        for (block, seed), g in mp[mp.opt == opt].groupby(["block", "seed"]):
            # one colour per block, every seed a thin line, one legend entry per block
            plotting.sim(ax, g.lr, g.drift, color=plotting.color(blocks.index(block)), ls="-",
                         lw=0.8, ms=3, label=block if seed == mp.seed.min() else None)
            g0 = g.dropna()
            if len(g0):
                s = theory.matched_slope(opt)
                x = g0.lr.to_numpy()
                plotting.theory(ax, x, g0.drift.iloc[0] * (x / x[0]) ** s,
                                label=f"slope {s:g}" if first else None)
                first = False
        plotting.loglog(ax, xlabel="learning rate" + (r" $\tau$" if opt == "gd" else ""),
                        title=f"{NAMES[opt]}: drift when the loss has halved"
                        + ("" if opt == "gd" else " (dashed: slope 0)"))
        ax.xaxis.set_minor_formatter(plt.NullFormatter())
        ax.yaxis.set_minor_formatter(plt.NullFormatter())
    axes[0].legend()    # the same blocks and colours in both panels
    axes[0].set_ylabel(r"$\max|h_{k^*}-h_0|$")
    fig.suptitle(f"Drift at matched learning progress ({_tag(cfg, 'teacher regression', mp)})")
    return fig


def lm(lm_fits: pd.DataFrame, long: pd.DataFrame, cfg: Config, data: str):
    """Left: the char-LM's fitted exponents per window (``lm_fits``: ``alpha`` circles,
    ``beta`` squares, ``alpha - beta`` triangles) against the window ``tau k lambda_max``,
    with the flow prediction ``alpha - beta = 1`` dashed and the early window shaded.
    Right: each law family's drift ``err`` along longer runs (``long``) for GD (solid),
    SGD (dotted) and Adam (dashed); ``data`` names the text in the title."""
    fig, axes = plt.subplots(1, 2, figsize=(9.5, 3.4))
    ax = axes[0]
    m = lm_fits.groupby("window")[["alpha", "beta"]].mean()
    plotting.sim(ax, m.index, m.alpha, color=plotting.color(0), ls="-", lw=0.8,
                 label=r"$\alpha$ ($\tau$ exponent)")
    plotting.sim(ax, m.index, m.beta, color=plotting.color(1), ls="-", lw=0.8, marker="s",
                 label=r"$\beta$ ($k$ exponent)")
    plotting.sim(ax, m.index, m.alpha - m.beta, color=plotting.color(2), ls="none", marker="^",
                 label=r"$\alpha - \beta$")
    ax.axhline(theory.late_window_gap(), **plotting.THEORY, label=r"$\alpha-\beta=1$ (flow)")
    ax.axhline(2, color="0.6", lw=0.8, ls=":")
    ax.axvspan(min(m.index) / 1.5, cfg.early_tl * 1.2, color="0.9", zorder=0,
               label="early window")
    ax.set(xscale="log", xlabel=r"window $\max \tau k \lambda_{max}$", ylabel="fitted exponent",
           title="char-LM, GD: exponents vs window", ylim=(0, 3))
    ax.legend()
    ax = axes[1]
    styles = {"gd": "-", "sgd": ":", "adam": "--"}
    for opt, g in long.groupby("opt", sort=False):
        for i, (fam, h) in enumerate(g.groupby("family", sort=False)):
            ax.plot(h.k, np.maximum(h.err, 1e-17), color=plotting.color(i), ls=styles[opt],
                    lw=1.2, label=fam if opt == "gd" else None)
        ax.plot([], [], color="0.3", ls=styles[opt], label=f"{NAMES[opt]} (lr {g.lr.iloc[0]:g})")
    ax.set(xscale="log", yscale="log", xlabel="step $k$", ylabel=r"$\max|h_k - h_0|$ per family",
           title="char-LM: laws along training")
    ax.legend(ncol=2)
    fig.suptitle(f"Char-LM ({_tag(cfg, data)})")
    return fig


def real_data_tau(lm: pd.DataFrame, vit: pd.DataFrame, cfg: Config):
    """Drift per step ``err / k`` against ``tau * lam`` for the char-LM (left) and the
    digits ViT (right), seed 0: circles the early window, squares the late one
    (``rules.late_window``), one colour per ``k``; dashed, slope 2 through the first point
    of each window (the identity's ``tau^2``)."""
    fig, axes = plt.subplots(1, 2, figsize=(9.0, 3.3), sharey=True)
    wide = rules.late_window(cfg)
    for ax, (title, df) in zip(axes, [("char-LM", lm), ("digits ViT", vit)], strict=True):
        for j, tl in enumerate((cfg.early_tl, wide)):
            w = df[(df.window == tl) & (df.seed == 0)]
            for i, (kk, g) in enumerate(w.groupby("k")):
                plotting.sim(ax, g.tau * g.lam, g.err / kk, color=plotting.color(i),
                             marker="os"[j], label=f"k={kk}" if j == 0 else None)
            g = w[w.k == w.k.min()]
            x = (g.tau * g.lam).to_numpy()
            plotting.theory(ax, x, (g.err / g.k).iloc[0] * (x / x[0]) ** 2,
                            label="slope 2" if j == 0 else None)
        plotting.loglog(ax, xlabel=r"$\tau\lambda_{max}$",
                        title=f"{title}: early (circles), late (squares)")
    axes[0].set_ylabel(r"$\max|h_k-h_0|\,/\,k$")
    axes[0].legend()
    fig.suptitle(f"Drift per step on real data ({_tag(cfg, 'text / digits', lm, vit)})")
    return fig


def explore_counts(D_MODEL=4, HIDDEN=3, HEADS=2, HEAD_DIM=2, VALUE_DIM=2, EXPERTS=3):
    """Theory only: the predicted law count of each block at the given dimensions (from
    ``laws.theory_count``; the blocks are built, nothing is computed on them)."""
    d, m, H, dk, dv, E = D_MODEL, HIDDEN, HEADS, HEAD_DIM, VALUE_DIM, EXPERTS
    dk = max(2, dk - dk % 2)
    blocks = {"linear": FFN(d, min(m, d), d, "linear"), "ReLU": FFN(d, m, 2, "relu"),
              "GELU/SiLU": FFN(d, m, 2, "gelu"), "SwiGLU": SwiGLU(d, m, 2),
              "MHA (+sin)": MHA(d, H, dk, dv, 3), "MHA+RoPE": MHA(d, H, dk, dv, 3, pe="rope"),
              "MHA+QK-norm": MHA(d, H, dk, dv, 3, qk_norm=True), "MoE softmax": MoE(d, m, E, 2),
              "RMSNorm+SwiGLU": NormSwiGLU(d, m, 2, "rms")}
    counts = {name: L.theory_count(b) for name, b in blocks.items()}
    counts["MoE top-1 renorm."] = L.renorm_top1_count(MoE(d, m, E, 2, topk=1, renorm=True))
    fig, ax = plt.subplots(figsize=(8.0, 3.2))
    ax.bar(range(len(counts)), list(counts.values()), color=plotting.color(0))
    ax.set_xticks(range(len(counts)), list(counts), rotation=30, ha="right")
    ax.set(ylabel="independent laws", title=f"Predicted law counts (d={d}, m={m}, H={H}, "
           f"dk={dk}, dv={dv}, E={E})")
    return fig


HEADLINE = {"gelu": "GELU FFN", "silu": "SiLU FFN", "relu": "ReLU FFN", "linear": "linear",
            "swiglu": "SwiGLU", "mha": "MHA", "mha_sin": "MHA + sin. PE",
            "mha_rope": "MHA + RoPE", "moe_dense": "MoE softmax", "moe_topk": "MoE top-k",
            "moe_switch": "MoE Switch top-1", "moe_top1_renorm": "MoE top-1 renorm.",
            "sigmoid_norm": r"MoE $\sigma(z)/\sum\sigma$", "sigmoid_centred": r"MoE $\sigma(z - \bar z)$"}


def headline(counts: pd.DataFrame, cfg: Config):
    """The chapter's main result: bars, the number of independent laws counted numerically
    (``laws``: ``D - dim Lie(W)``, Jacobian rows and brackets level by level), and ticks,
    the count derived from each block's symmetries (``theory``), from the count table
    (``experiments.counts``); each bar is annotated with ``laws`` of ``D``. A block whose
    count was not determined is left out."""
    rows = [(label, counts[counts.model == n].iloc[0]) for n, label in HEADLINE.items()
            if (counts.model == n).any() and not pd.isna(counts[counts.model == n].iloc[0].laws)]
    y = np.arange(len(rows))[::-1]
    fig, ax = plt.subplots(figsize=(7.0, 4.6))
    ax.barh(y, [int(r.laws) for _, r in rows], height=0.6, color=plotting.color(0),
            label=r"counted: $D - \dim\,\mathrm{Lie}(W)$")
    ax.plot([r.theory for _, r in rows], y, "|", ms=18, mew=2.2, color="0.15",
            label="derived from the symmetries")
    for yy, (_, r) in zip(y, rows, strict=True):
        ax.annotate(f"{int(r.laws)} of D = {int(r.D)}", (max(int(r.laws), r.theory), yy),
                    xytext=(6, 0), textcoords="offset points", va="center")
    ax.set_yticks(y, [label for label, _ in rows])
    ax.set_xlim(0, 1.5 * max(max(int(r.laws), r.theory) for _, r in rows))
    ax.set(xlabel="independent conservation laws",
           title=f"Laws per block (d={cfg.d}, m={cfg.m}, H={cfg.H}, E={cfg.E}, k={cfg.k})")
    ax.legend(loc="upper right")
    return fig


def table(t: pd.DataFrame):
    """A count table (``checks.count_table``) styled to fit the book's text column: the
    headers wrap, a block name may break after an underscore, numbers are integers and
    the font is a little smaller (seven columns stay inside the column, none clipped). The
    data are unchanged; a script prints them as they are."""
    num = [c for c in t.columns if c != "block"]
    sty = t.style.hide(axis="index").format(
        {"block": lambda s: str(s).replace("_", "_<wbr>"),
         **{c: (lambda v: "—" if pd.isna(v) else (f"{int(v)}" if isinstance(v, (int, float,
                np.integer, np.floating)) else str(v))) for c in num}})
    sty = sty.set_table_styles([
        {"selector": "", "props": "max-width: 100%; font-size: 0.85em; "
                                  "border-collapse: collapse; table-layout: auto;"},
        {"selector": "td, th", "props": "padding: 2px 6px; vertical-align: top; "
                                        "white-space: normal; overflow-wrap: anywhere;"},
        {"selector": "td", "props": "text-align: right;"},
        {"selector": "th", "props": "text-align: right; max-width: 6em;"},
    ])
    return sty.set_properties(subset=["block"], **{"text-align": "left"})
