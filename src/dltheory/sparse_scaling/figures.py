"""One function per figure of the sparse-scaling chapter: results -> matplotlib Figure.

Theory is dashed, simulation is markers; log-log axes carry the predicted slope; titles name
the data and the scale.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import matplotlib.ticker as mticker
import numpy as np

from .. import plotting
from .config import Config
from .data import spectrum
from .theory import expected_floor, expected_observed, heaps_constant, loss_de


def _tag(cfg: Config, data: str | None = "synthetic", *sources) -> str:
    """The title tag from the run: its scale, and the rounds of the sweep behind the figure
    (the first DataFrame among ``sources``, or inside a dict of them, with
    ``attrs["rounds"] = (done, planned)``)."""
    tag = plotting.scale_tag(cfg.scale, data)
    for src in sources:
        for v in (src.values() if isinstance(src, dict) else (src,)):
            r = getattr(v, "attrs", {}).get("rounds") if hasattr(v, "attrs") else None
            if r:
                return f"{tag}, {r[0]} of {r[1]} rounds"
    return tag


def _ticks(ax):
    ax.xaxis.set_major_locator(mticker.LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.xaxis.set_major_formatter(mticker.ScalarFormatter())
    ax.xaxis.set_minor_formatter(mticker.NullFormatter())


def data_model(res: dict, cfg: Config):
    """Left: the 0/1 activation pattern of 60 samples (``res["pattern"]``). Middle: the
    empirical second moments ``res["m2"]`` (markers) against lambda_j (theory, dashed).
    Right: one draw's K(D) (``res["K_curve"]``, markers), the exact sum E K(D) (dashed) and
    the Heaps asymptote with its predicted slope 1/(alpha1 + 1)."""
    fig, axs = plt.subplots(1, 3, figsize=(11, 3.6))
    axs[0].imshow(res["pattern"], aspect="auto", cmap="Greys", interpolation="nearest")
    axs[0].set(xlabel="coordinate j", ylabel="sample", title="sparsity pattern (60 samples)")
    axs[0].grid(False)
    j = np.arange(1, res["m2"].size + 1)
    seen = res["m2"] > 0
    plotting.sim(axs[1], j[seen], res["m2"][seen], label=f"empirical, D = {cfg.d_moments:.0e}", ms=3)
    plotting.theory(axs[1], j, res["spec"].lam[: j.size], label=r"$j^{-(\alpha_1+\alpha_2+2)}$")
    plotting.loglog(axs[1], xlabel="j", ylabel=r"$\mathbb{E}\,x_j^2$", title="second moments")
    axs[1].legend()
    Dc = np.geomspace(res["D_curve"][0], res["D_curve"][-1], 50)
    plotting.sim(axs[2], res["D_curve"], res["K_curve"], label=r"$K(D)$, one draw")
    plotting.theory(axs[2], Dc, expected_observed(res["spec"], Dc), label=r"$\mathbb{E}K(D)$ (exact sum)")
    plotting.slope_line(axs[2], 1 / (cfg.alpha1 + 1), x=Dc,
                        anchor=(Dc[0], heaps_constant(cfg.alpha1) * Dc[0] ** (1 / (cfg.alpha1 + 1))),
                        label=r"$\Gamma(\frac{\alpha_1}{\alpha_1+1}) D^{1/(\alpha_1+1)}$")
    plotting.loglog(axs[2], xlabel="D", ylabel="observed coordinates",
                    title="Heaps curve, " + _tag(cfg))
    axs[2].legend()
    return fig


def decomposition(df, cfg: Config):
    """The oracle-ridge loss at N = 64 split into observed error, leakage and never-seen
    floor (columns ``observed``, ``leakage``, ``never seen`` of ``df`` by ``D``): left as
    shares (stacked bars, legend below the axes), right as values (markers) with their
    total."""
    fig, axs = plt.subplots(1, 2, figsize=(10, 3.3))
    parts = ["observed", "leakage", "never seen"]
    share = df[parts].values / df[parts].values.sum(1, keepdims=True)
    bottom = np.zeros(len(df))
    for k, name in enumerate(parts):
        axs[0].bar([str(d) for d in df.D], share[:, k], bottom=bottom, color=plotting.color(k), label=name)
        bottom += share[:, k]
        plotting.sim(axs[1], df.D, df[name], color=plotting.color(k), label=name)
    axs[0].set(xlabel="D", ylabel="share of the loss", title="loss decomposition, N = 64, oracle ridge")
    # below the axes: inside, the legend covers the bars (they fill the panel to 1)
    axs[0].legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=3)
    plotting.sim(axs[1], df.D, df[parts].sum(1), color="k", marker="x", label="total")
    plotting.loglog(axs[1], xlabel="D", ylabel=r"$\mathbb{E}_w\ell$", title=_tag(cfg))
    axs[1].legend()
    return fig


def alpha_n(df, out: dict, cfg: Config):
    """Left: the sampled model-limited loss l_inf(N) (mean over draws of ``df.loss``,
    markers), the deterministic equivalent l_DE(N) (``out["de"]``, dashed) and the predicted
    slope -alpha_N. Right: local slopes of both against the predicted alpha_N."""
    sim = df[df.seed >= 0].groupby("N").loss.mean()
    Ns = sim.index.values
    fig, axs = plt.subplots(1, 2, figsize=(10, 3.4))
    plotting.sim(axs[0], Ns, sim.values, label=r"$\ell_\infty(N)$, sampled u")
    plotting.theory(axs[0], Ns, out["de"], label=r"$\ell_{DE}(N)$")
    plotting.slope_line(axs[0], -cfg.alpha_N, x=Ns, anchor=(Ns[0], out["de"][0]), offset=1.5,
                        label=rf"slope $-\alpha_N = -{cfg.alpha_N:.3g}$")
    plotting.loglog(axs[0], xlabel="N", ylabel="loss", title="model-limited loss, " + _tag(cfg, "synthetic", df))
    axs[0].legend()
    plotting.local_slope_panel(axs[1], Ns, sim.values, Ns, out["de"], cfg.alpha_N, var="N",
                               theory_label=r"$\ell_{DE}$", predicted_label=r"$\alpha_N$")
    for ax in axs:
        _ticks(ax)
    return fig


def alpha_d(res: dict, out: dict, cfg: Config):
    """Left: the sampled N = infinity loss (mean of ``res["sampled"].loss`` per D, markers),
    the exact floor E T(D) at the same M (``res["ET_window"]``, dashed) and at large M
    (``res["ET"]``, dashed) with the predicted slope -alpha_D. Right: local slopes."""
    sim = res["sampled"].groupby("D").loss.mean()
    fig, axs = plt.subplots(1, 2, figsize=(10, 3.4))
    plotting.sim(axs[0], sim.index, sim.values, label=r"$\mathbb{E}_w\ell$ at $N=\infty$, sampled X")
    plotting.theory(axs[0], sim.index, res["ET_window"], label=r"$\mathbb{E}T(D)$, same M", color=plotting.color(1))
    plotting.theory(axs[0], res["D_exact"], res["ET"], label=r"$\mathbb{E}T(D)$, large M")
    plotting.slope_line(axs[0], -cfg.alpha_D, x=res["D_exact"], anchor=(res["D_exact"][0], res["ET"][0]),
                        offset=0.5, label=rf"slope $-\alpha_D=-{cfg.alpha_D:.3g}$ (shifted down)")
    plotting.loglog(axs[0], xlabel="D", ylabel="loss", title="data-limited loss, " + _tag(cfg, "synthetic", res))
    axs[0].legend()
    plotting.local_slope_panel(axs[1], sim.index.values, sim.values, res["D_exact"], res["ET"], cfg.alpha_D,
                               var="D", theory_label=r"$\mathbb{E}T$", predicted_label=r"$\alpha_D$")
    return fig


def asymmetry(an_df, ad_res: dict, dense_df, cfg: Config):
    """The three sampled curves (markers): l_inf against N, the sparse and the dense N =
    infinity losses against D (mean ``loss`` of each table)."""
    fig, ax = plt.subplots(figsize=(5.5, 3.5))
    for i, (df, lab, mk) in enumerate(((an_df[an_df.seed >= 0], r"vs N: $\ell_\infty(N)$ (sparse = dense)", "o"),
                                       (ad_res["sampled"], "vs D: sparse, N = inf", "s"),
                                       (dense_df, "vs D: dense, N = inf", "^"))):
        col = "N" if i == 0 else "D"
        m = df.groupby(col).loss.mean()
        plotting.sim(ax, m.index, m.values, label=lab, color=plotting.color(i), marker=mk)
    plotting.loglog(ax, xlabel="N or D", ylabel="loss", title="sparse vs dense, " + _tag(cfg, "synthetic", an_df))
    ax.legend()
    return fig


def headline(an_df, ad_res: dict, dense_df, cfg: Config):
    """The chapter's main result on one panel: loss against N (sparse = dense) and against D
    for sparse and dense data, with the predicted slopes through the first points."""
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    n = an_df[an_df.seed >= 0].groupby("N").loss.mean()
    d_sp = ad_res["sampled"].groupby("D").loss.mean()
    d_de = dense_df.groupby("D").loss.mean()
    plotting.sim(ax, n.index, n.values, label=r"vs model size $N$ (sparse or dense)", color=plotting.color(0))
    plotting.sim(ax, d_de.index, d_de.values, label=r"vs data size $D$, dense", color=plotting.color(2),
                 marker="^", ms=8, mfc="none")
    plotting.sim(ax, d_sp.index, d_sp.values, label=r"vs data size $D$, sparse", color=plotting.color(1), marker="s")
    x = n.index.values.astype(float)
    plotting.slope_line(ax, -cfg.alpha_N, x=x, anchor=(x[0], n.values[0]), color="0.3", ls="--", lw=1.2,
                        label=rf"slope $-\alpha_N = {-cfg.alpha_N:.2f}$")
    x = d_sp.index.values.astype(float)
    plotting.slope_line(ax, -cfg.alpha_D, x=x, anchor=(x[0], d_sp.values[0]), color="0.3", ls=":", lw=1.5,
                        label=rf"slope $-\alpha_D = {-cfg.alpha_D:.2f}$")
    plotting.loglog(ax, xlabel=r"$N$ or $D$", ylabel="population loss",
                    title=rf"$\alpha_1 = {cfg.alpha1:g}$, $\alpha_2 = {cfg.alpha2:g}$, " + _tag(cfg, "synthetic", an_df))
    ax.legend(loc="upper right")
    return fig


def double_descent(res: dict, cfg: Config):
    """Left, sparse data: ridgeless (``ridgeless``, markers and line) and oracle-ridge
    (``ridge``, dashed) losses against N for each D of the first draw, rank X dotted and
    E K(D) thin. Right, dense data: the same mean curves, the threshold N = D dotted."""
    fig, axs = plt.subplots(1, 2, figsize=(11, 3.6))
    c = res["curves"]
    first = c[c.seed == c.seed.min()]
    for i, (D, g) in enumerate(first.groupby("D")):
        col = plotting.color(i)
        axs[0].plot(g.N, g.ridgeless, "o-", ms=2, color=col, label=f"D = {D}, ridgeless")
        axs[0].plot(g.N, g.ridge, "--", color=col, lw=1)
        axs[0].axvline(g["rank"].iloc[0], color=col, ls=":", lw=1)
        axs[0].axvline(res["EK"][i], color=col, ls="-", lw=0.6, alpha=0.5)
    plotting.loglog(axs[0], xlabel="N", ylabel=r"$\mathbb{E}_w\ell$", title=r"sparse: peak at rank $X$ (dotted) $\approx\mathbb{E}K(D)$ (thin)")
    axs[0].legend()
    for i, (D, r) in enumerate(res["dense_curves"].items()):
        col = plotting.color(i)
        axs[1].plot(res["n_dense"], r["ridgeless"], "o-", ms=2, color=col, label=f"D = {D}")
        axs[1].plot(res["n_dense"], r["ridge"], "--", color=col, lw=1)
        axs[1].axvline(D, color=col, ls=":", lw=1)
    plotting.loglog(axs[1], xlabel="N", ylabel=r"$\mathbb{E}_w\ell$",
                    title="dense: peak at $N = D$, " + _tag(cfg, "synthetic", res))
    axs[1].legend()
    return fig


def combined_law(out: dict, cfg: Config):
    """Left: the oracle-ridge grid (``g.ridge``, markers) against D at a few N, the fitted
    two-term law (``out["law"]``, dashed) and the Bayes-readout losses (``g.bayes``, thin).
    Right: the finite-D interaction ``(ridge - linf - E T(D)) / ridge`` of every fitted grid
    point against N / E K(D) (``out["interaction"]``), markers; the crossover N = E K(D)
    dotted."""
    g, law = out["g"], out["law"]
    Ng, Dg = np.unique(g.N), np.unique(g.D)
    R = g.pivot(index="N", columns="D", values="ridge").values
    B = g.pivot(index="N", columns="D", values="bayes").values
    fig, axs = plt.subplots(1, 2, figsize=(10, 3.4))
    for i, k in enumerate(range(0, len(Ng), max(1, len(Ng) // 5))):
        col = plotting.color(i)
        plotting.sim(axs[0], Dg, R[k], color=col, label=f"N = {Ng[k]}", ms=4)
        plotting.theory(axs[0], Dg, law(Ng[k], Dg), color=col, label=None)
        axs[0].plot(Dg, B[k], color=col, lw=0.8, alpha=0.6)
    plotting.loglog(axs[0], xlabel="D", ylabel="loss (thin: Bayes readout)",
                    title=f"combined law, {_tag(cfg)}, {out['done']} of {cfg.grid_u_seeds_used} draws")
    axs[0].legend()
    it = out.get("interaction")
    if it is None:
        axs[1].set_axis_off()
        return fig
    k = it["keep"]
    plotting.sim(axs[1], it["x"][k], it["share"][k], ms=4, label="fitted grid points")
    axs[1].axhline(0, color="0.5", lw=0.8)
    axs[1].axvline(1, color="0.3", ls=":", lw=1, label=r"$N = \mathbb{E}K(D)$")
    axs[1].set(xscale="log", xlabel=r"$N/\mathbb{E}K(D)$",
               ylabel=r"$(\ell - \ell_\infty(N) - \mathbb{E}T(D))/\ell$",
               title="finite-$D$ interaction")
    axs[1].legend()
    return fig


def frontier(env: dict, out: dict, cfg: Config):
    """Left: log10 of the envelope l_DE(N) + E T(D) over (D, N), iso-compute curves dotted,
    the frontier (``env["N"]``, ``env["D"]``) red and E K(D) dashed. Right: N*, D* and l*
    against C on the window (markers) with the closed-form slopes (``out["pred"]``)."""
    fig, axs = plt.subplots(1, 2, figsize=(10, 3.6))
    Nh, Dh = np.geomspace(2, 2048, 120), np.geomspace(10, 1e7, 120)
    NH, DH = np.meshgrid(Nh, Dh, indexing="ij")
    im = axs[0].pcolormesh(DH, NH, np.log10(env["loss_N"](NH) + env["loss_D"](DH)), shading="auto", cmap="viridis")
    fig.colorbar(im, ax=axs[0], label="log10 loss")
    for C in (1e6, 1e8, 1e10):
        axs[0].plot(Dh, np.sqrt(C / Dh), color="w", lw=0.8, ls=":")
    axs[0].plot(env["D"], env["N"], color="r", lw=2, label="frontier")
    axs[0].plot(Dh, expected_observed(env["spec"], Dh), color="orange", ls="--", lw=1, label=r"$\mathbb{E}K(D)$")
    axs[0].set(xscale="log", yscale="log", xlabel="D", ylabel="N", xlim=(10, 1e7), ylim=(2, 2048),
               title="envelope loss; dotted: iso-compute")
    axs[0].legend(loc="lower right")
    axs[0].grid(False)
    w = env["win"]
    i0 = np.flatnonzero(w)[0]
    for k, (key, lab, mk) in enumerate((("N", "N*", "o"), ("D", "D*", "s"), ("L", r"$\ell^*\times10^6$", "^"))):
        v = env[key] * (1e6 if key == "L" else 1)
        plotting.sim(axs[1], env["C"][w], v[w], label=lab, color=plotting.color(k), marker=mk)
        sl = out["pred"][{"N": "N", "D": "D", "L": "loss"}[key]]
        plotting.slope_line(axs[1], sl, x=out["cw"], anchor=(env["C"][i0], v[i0]), label=None)
    plotting.loglog(axs[1], xlabel=r"$C = ND\min(N, D)$", ylabel="value", title="frontier, " + _tag(cfg, "exact sums"))
    axs[1].legend()
    return fig


def gd(res: dict, out: dict, cfg: Config):
    """Left: the draw-averaged P_fail(D) (``out["P"]`` with ``out["se"]``, markers), the
    secular formula (``out["P_secular"]``, dashed) and the predicted slope -nu. Right:
    training losses of explicit GD runs (``res["shown"]``), diverging and stable."""
    fig, axs = plt.subplots(1, 2, figsize=(10, 3.4))
    D, P = out["D"], out["P"]
    plotting.sim(axs[0], D, P, yerr=out["se"], label=rf"$\eta\lambda_{{max}}>2$, sampled ({out['n_u']} feature draws)")
    plotting.theory(axs[0], D, out["P_secular"], label="single-spike (secular) formula")
    plotting.slope_line(axs[0], -out["nu"], x=D, anchor=(D[0], P[0]), offset=1.4, label=rf"$D^{{-\nu}}$, $\nu={out['nu']:g}$")
    plotting.loglog(axs[0], xlabel="D", ylabel=r"$P_{fail}$",
                    title=rf"GD failure, $\alpha_1={cfg.gd_alpha1:g}, \alpha_2={cfg.gd_alpha2:g}$, " + _tag(cfg, None, res))
    axs[0].legend()
    for pf, runs in res["shown"].items():
        for el, tr in runs:
            axs[1].plot(np.abs(tr), color=plotting.color(1 if pf else 0), lw=1,
                        label=("diverging" if pf else "stable") + r", $\eta\lambda_{max}$=" + f"{el:.2f}")
    axs[1].set(yscale="log", xlabel="GD step", ylabel="training loss", title="explicit GD runs, D = 300",
               ylim=(1e-12, 1e12), xlim=(0, 300))
    axs[1].legend()
    return fig


def relu(df, out: dict, cfg: Config):
    """Left: the ReLU oracle-ridge loss against N (``df`` rows of the N sweep, markers), the
    paired linear-feature loss on the same draws (``linear``, open squares) and the linear
    model's slope -alpha_N. Right: the same against D, with the never-seen floor T_obs(D)
    of the same data (``T_obs``, dashed)."""
    fig, axs = plt.subplots(1, 2, figsize=(10, 3.4))
    n = df[df.sweep == "N"].groupby("N").loss.mean()
    d = df[df.sweep == "D"].groupby("D")[[c for c in ("loss", "T_obs", "linear") if c in df]].mean()
    if n.empty:
        axs[0].text(0.5, 0.5, "N sweep not run: not model-limited\nat this $\\alpha_1$ and scale",
                    ha="center", va="center", transform=axs[0].transAxes)
        axs[0].set_axis_off()
        return _relu_d(cfg, axs, d, fig)
    plotting.sim(axs[0], n.index, n.values, label=f"ReLU, D = {cfg.relu_d_fixed:.0e}")
    if "linear" in df.columns:     # the paired baseline: linear features, same u and data
        lin = df[df.sweep == "N"].groupby("N").linear.mean()
        plotting.sim(axs[0], lin.index, lin.values, marker="s", mfc="none", color=plotting.color(2),
                     label="linear features, same draws")
    plotting.slope_line(axs[0], -cfg.alpha_N, x=n.index, anchor=(n.index[0], n.values[0]), offset=0.7,
                        ls="-.", label=rf"linear model: $-{cfg.alpha_N:.3g}$")
    plotting.loglog(axs[0], xlabel="N", ylabel="oracle-ridge loss", title="ReLU features vs N")
    axs[0].legend()
    _ticks(axs[0])
    return _relu_d(cfg, axs, d, fig)


def _relu_d(cfg, axs, d, fig):
    plotting.sim(axs[1], d.index, d.loss, label=f"ReLU, N = {cfg.relu_n_fixed}")
    if "linear" in d.columns:
        plotting.sim(axs[1], d.index, d.linear, marker="s", mfc="none", color=plotting.color(2),
                     label="linear features, same draws")
    plotting.theory(axs[1], d.index, d.T_obs, label=r"never-seen floor $T_{obs}(D)$")
    plotting.loglog(axs[1], xlabel="D", ylabel="oracle-ridge loss",
                    title="ReLU features vs D, " + _tag(cfg, "synthetic", d))
    axs[1].legend()
    return fig


def theory_curves(alpha1: float = 1.0, alpha2: float = 0.0):
    """Explore: l_DE(N), E T(D) and E K(D) for any (alpha1, alpha2), exact sums only."""
    alpha2 = max(alpha2, -alpha1 + 1e-3)
    spec = spectrum(200_000, alpha1, alpha2)
    aN, aD = alpha1 + alpha2 + 1, (alpha1 + alpha2 + 1) / (alpha1 + 1)
    Ns, Ds = np.geomspace(4, 2048, 25), np.geomspace(10, 1e7, 40)
    fig, axs = plt.subplots(1, 2, figsize=(10, 3.4))
    plotting.theory(axs[0], Ns, loss_de(spec.lam, Ns), label=rf"$\ell_{{DE}}(N)$, slope $-{aN:.2f}$")
    plotting.theory(axs[0], Ds, expected_floor(spec, Ds), color=plotting.color(1),
                    label=rf"$\mathbb{{E}}T(D)$, slope $-{aD:.2f}$")
    plotting.loglog(axs[0], xlabel="N or D", ylabel="loss", title=rf"$\alpha_1={alpha1:.2f}$, $\alpha_2={alpha2:.2f}$")
    axs[0].legend()
    plotting.theory(axs[1], Ds, expected_observed(spec, Ds), label=r"$\mathbb{E}K(D)$: interpolation peak and frontier N*")
    plotting.loglog(axs[1], xlabel="D", ylabel="observed coordinates", title="theory only (exact sums)")
    axs[1].legend()
    return fig
