"""The prologue's figures, each ``f(table, cfg) -> Figure`` (and the explorer's)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from .. import plotting
from .model import balance, flow, gd, scalar_problem


def drift(table, cfg):
    """The headline figure, from the drift table (``experiments.drift_sweep``).

    Left: rows with ``sweep == "tau"``, column ``drift`` against ``tau`` after ``k_fixed``
    steps: simulation markers at the mean over ``start`` with the spread over starts as
    error bars; theory dashed, the frozen-gradient prediction ``tau^2 k ||q(g_0)||`` with
    ``q0`` the mean of column ``q0`` (slope 2, no fitted constant). Right: rows with
    ``sweep == "k"``, mean ``drift`` against ``k`` at ``tau_k`` as small markers; the same
    prediction dashed (slope 1) over the early steps, and the k fit window
    (``k <= k_early``) shaded."""
    by_tau = table[table.sweep == "tau"].pivot(index="start", columns="tau", values="drift")
    by_k = table[table.sweep == "k"].pivot(index="start", columns="k", values="drift")
    taus, ks, q0 = by_tau.columns.to_numpy(), by_k.columns.to_numpy(), table.q0.mean()
    fig, axes = plt.subplots(1, 2, figsize=(9.0, 3.4))
    ax = axes[0]
    plotting.sim(ax, taus, by_tau.mean(axis=0), yerr=by_tau.std(axis=0),
                 label=f"GD, k={cfg.k_fixed}")
    plotting.theory(ax, taus, taus**2 * cfg.k_fixed * q0, label=r"$\tau^2 k\,\|q(g_0)\|$")
    plotting.loglog(ax, xlabel=r"step size $\tau$", ylabel=r"drift $\|h_k-h_0\|$",
                    title=f"drift at fixed k ({plotting.scale_tag(cfg.scale, 'Gaussian data')})")
    ax.legend()
    ax = axes[1]
    plotting.sim(ax, ks, by_k.mean(axis=0), label=rf"GD, $\tau={cfg.tau_k}$", ms=2, marker=".")
    k_lin = ks[: 10 * cfg.k_early]
    plotting.theory(ax, k_lin, cfg.tau_k**2 * k_lin * q0,
                    label=r"$\tau^2 k\,\|q(g_0)\|$ (slope 1)")
    ax.axvspan(1, cfg.k_early, color="0.9", zorder=0, label="fit window")
    plotting.loglog(ax, xlabel="steps $k$", ylabel=r"drift $\|h_k-h_0\|$",
                    title="drift vs steps: linear, then saturating")
    ax.legend(loc="lower right")
    return fig


def scalar_paths(table=None, cfg=None, *, taus=(0.1, 0.4), t_max: float = 6.0):
    """The two-parameter model ``L = (uv - 1)^2 / 2`` from ``(u, v) = (2, 0.1)``, computed
    here (no table: the runs take milliseconds; the signature is the role's).

    Left, the ``(u, v)`` plane: the hyperbola ``u^2 - v^2 = h_0`` through the start (thick
    grey) and the minima ``uv = 1`` (thin grey); the gradient flow up to ``t_max`` dashed
    (theory); GD for each step in ``taus`` as markers joined by a thin line (simulation,
    first 12 steps). Right: the law ``h = u^2 - v^2`` along each GD run against the time
    ``t = tau k`` (markers), and the flow's constant ``h_0`` dashed."""
    scalar = scalar_problem(x=1.0, y=1.0)
    u0s, v0s = np.array([2.0]), np.array([0.1])
    U_flow, V_flow = flow(scalar, u0s, v0s, np.linspace(0.0, t_max, 400))
    runs = {tau: gd(scalar, u0s, v0s, tau=tau, steps=int(t_max / tau)) for tau in taus}
    fig, axes = plt.subplots(1, 2, figsize=(9.0, 3.5))
    ax = axes[0]
    h0 = balance(u0s, v0s)[0]
    uu = np.linspace(np.sqrt(h0), 2.4, 300)
    ax.plot(uu, np.sqrt(uu**2 - h0), color="0.75", lw=3, label=r"$u^2-v^2=h_0$")
    uu = np.linspace(1.5, 2.4, 300)
    ax.plot(uu, 1 / uu, color="0.85", lw=1, ls="-", label=r"minima $uv=1$")
    plotting.theory(ax, U_flow[:, 0], V_flow[:, 0], label="gradient flow")
    for i, (tau, tr) in enumerate(runs.items()):
        plotting.sim(ax, tr.U[:12, 0], tr.V[:12, 0], color=plotting.color(i + 1),
                     label=rf"GD, $\tau={tau}$ (first 12 steps)", ms=4, ls="-", lw=0.6)
    ax.set(xlim=(1.5, 2.3), ylim=(0, 0.85), xlabel="$u$", ylabel="$v$",
           title=r"$f(x)=uvx$, $(x,y)=(1,1)$: flow vs GD")
    ax.legend(loc="lower left")
    ax = axes[1]
    for i, (tau, tr) in enumerate(runs.items()):
        k = np.arange(tr.h.shape[0])
        plotting.sim(ax, tau * k, tr.h[:, 0], color=plotting.color(i + 1), ms=3,
                     label=rf"GD, $\tau={tau}$")
    ax.axhline(h0, **plotting.THEORY, label="flow: $h(t)=h_0$")
    ax.set(xlabel=r"time $t=\tau k$", ylabel=r"$h = u^2 - v^2$",
           title=r"the law $h$ along the runs")
    ax.legend()
    return fig


def gd_to_flow(table, cfg):
    """GD's distance from the flow at a fixed time, from the flow-error table
    (``experiments.flow_error_sweep``): column ``error`` against column ``tau`` on log-log
    axes as simulation markers, and the predicted slope 1 (Euler's method is first order)
    drawn as a guide line just below the last (smallest) step's marker."""
    taus_flow, err = table.tau.to_numpy(), table.error.to_numpy()
    fig, ax = plt.subplots()
    plotting.sim(ax, taus_flow, err,
                 label=rf"$\|\theta_{{k}}^{{GD}} - \theta(t)\|$, $t={cfg.t_fixed}$")
    plotting.slope_line(ax, 1.0, x=taus_flow, anchor=(taus_flow[-1], err[-1]), offset=0.6,
                        label=r"slope 1 ($\tau$)")
    plotting.loglog(ax, xlabel=r"step size $\tau$", ylabel="distance to the flow",
                    title=f"GD vs gradient flow at fixed time ({plotting.scale_tag(cfg.scale)})")
    ax.set_xticks(taus_flow, labels=[f"{t:g}" for t in taus_flow], minor=False)
    ax.xaxis.set_minor_formatter(plt.NullFormatter())
    ax.legend()
    return fig


def scalar_explorer(tau: float = 0.4, u0: float = 2.0, v0: float = 0.1, t_max: float = 12.0):
    """The Explore panel: the two-parameter model ``L = (uv - 1)^2 / 2`` from ``(u0, v0)``,
    computed here (no table). Left: the hyperbola ``u^2 - v^2 = h_0`` (thick grey), the
    minima ``uv = 1`` (thin grey), the flow's minimum as a star (theory, closed form: where
    the hyperbola meets ``uv = 1``) and the GD path with step ``tau`` up to time ``t_max`` as
    markers (simulation; cut where it diverges). Right: the law ``h_k`` along the GD path
    against ``t = tau k`` (markers) and the flow's constant ``h_0`` dashed. Instant (a
    scalar recursion of at most a few thousand steps); for sliders."""
    h0 = u0 * u0 - v0 * v0
    steps = int(np.ceil(t_max / tau))
    u_star = np.sqrt((h0 + np.sqrt(h0 * h0 + 4.0)) / 2.0)     # u^2 - 1/u^2 = h0
    with np.errstate(all="ignore"):        # a too-large step diverges: show where it leaves
        tr = gd(scalar_problem(), np.array([u0]), np.array([v0]), tau=tau, steps=steps)
    ok = np.isfinite(tr.U[:, 0]) & np.isfinite(tr.V[:, 0]) & (np.abs(tr.U[:, 0]) < 5) \
        & (np.abs(tr.V[:, 0]) < 5)
    n = int(np.argmin(ok)) if not ok.all() else steps + 1
    gd_label = rf"GD, $\tau={tau:g}$" + ("" if ok.all() else " (diverges)")
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(9.0, 3.4))
    top = 1.3 * max(u0, u_star, float(tr.U[:n, 0].max()))
    v_lo, v_hi = min(0.0, float(tr.V[:n, 0].min())), 1.3 * max(1.0, float(tr.V[:n, 0].max()))
    uu = np.linspace(np.sqrt(max(h0, 0.0)) + 1e-9, top, 300)
    ax.plot(uu, np.sqrt(np.maximum(uu**2 - h0, 0.0)), color="0.75", lw=3, label=r"$u^2-v^2=h_0$")
    uu = np.linspace(1.0 / 3.0, top, 300)
    ax.plot(uu, 1 / uu, color="0.85", lw=1, label=r"minima $uv=1$")
    plotting.theory(ax, [u_star], [1 / u_star], marker="*", ms=12, ls="", label="flow's minimum")
    plotting.sim(ax, tr.U[:n, 0], tr.V[:n, 0], ms=3, ls="-", lw=0.6, label=gd_label)
    ax.set(xlim=(0, top), ylim=(v_lo, v_hi), xlabel="$u$", ylabel="$v$", title="where GD lands")
    ax.legend(loc="best")
    plotting.sim(bx, tau * np.arange(n), tr.h[:n, 0], ms=2, label=r"GD: $h_k$")
    bx.axhline(h0, **plotting.THEORY, label="flow: $h_0$")
    bx.set(xlabel=r"time $t = \tau k$", ylabel=r"$h = u^2 - v^2$", title=r"$h_{k+1} = (1-\tau^2 r_k^2)\,h_k$")
    bx.legend()
    return fig
