"""The prologue's claims, each ``f(ledger, cfg, table)``: the ledger judges and prints."""

from __future__ import annotations

from .. import seeds
from ..fitting import bootstrap_slope, loglog_fit


def grad_vs_loss(ledger, cfg, run: dict) -> None:
    """GF.grad_vs_loss (identity: calculus on the book's code): the gradient GD uses against
    central differences of the loss, on ``experiments.identity_run(cfg)``."""
    at = run["at"]
    ledger.check(
        "GF.grad_vs_loss", "the gradient GD uses is the derivative of the loss (directional "
        "central differences)", measured=run["ratio"], predicted=1.0, tol=cfg.tol_grad_fd,
        kind="identity",
        note=f"{cfg.fd_dirs} directions at k = {list(map(int, at))}; "
             f"$\\varepsilon = {cfg.fd_eps:g}$")


def identity(ledger, cfg, run: dict) -> None:
    """GF.identity: the one-step identity (the prologue's gf-eq-sum) summed along the run of
    ``experiments.identity_run(cfg)``, exact up to rounding."""
    ledger.check(
        "GF.identity", "$h_k - h_0 = \\tau^2 \\sum_{j<k} q(g_j)$ exactly for GD (the one-step "
        "identity, summed)",
        measured=run["trajectory"].identity_error, hi=cfg.tol_identity, kind="identity")


def drift_fits(table, cfg):
    """(fit over tau at ``k_fixed``, fit over k at ``tau_k`` on ``k <= k_early``) of the drift
    table (``experiments.drift_sweep``), bootstrapped over starts."""
    by_tau = table[table.sweep == "tau"].pivot(index="start", columns="tau", values="drift")
    by_k = table[table.sweep == "k"].pivot(index="start", columns="k", values="drift")
    fit_tau = bootstrap_slope(by_tau.columns.to_numpy(), by_tau.to_numpy(), n_boot=cfg.n_boot,
                              seed=seeds.numpy(cfg.seed, "bootstrap", "tau"))
    fit_k = bootstrap_slope(by_k.columns.to_numpy(), by_k.to_numpy(), window=(1, cfg.k_early),
                            n_boot=cfg.n_boot, seed=seeds.numpy(cfg.seed, "bootstrap", "k"))
    return fit_tau, fit_k


def drift(ledger, cfg, table) -> None:
    """GF.tau_exponent and GF.k_exponent (identities: they follow from the one-step
    identity while ``tau k <= regime_tk``) on the drift table."""
    fit_tau, fit_k = drift_fits(table, cfg)
    starts = table.start.nunique()
    ledger.check(
        "GF.tau_exponent", "the drift at fixed $k$ scales as $\\tau^2$ (follows from the "
        "one-step identity while $\\tau k \\le 0.1$)", measured=fit_tau.slope, predicted=2.0,
        tol=cfg.tol_tau_exponent, kind="identity",
        note=f"95% CI [{fit_tau.lo:.3f}, {fit_tau.hi:.3f}], {starts} starts")
    ledger.check(
        "GF.k_exponent", "the drift at fixed $\\tau$ grows linearly in $k$, early window "
        "(follows from the one-step identity while $\\tau k \\le 0.1$)", measured=fit_k.slope,
        predicted=1.0, tol=cfg.tol_k_exponent, kind="identity",
        note=f"window $k \\le {cfg.k_early}$; 95% CI [{fit_k.lo:.3f}, {fit_k.hi:.3f}]")


def flow_order(ledger, cfg, table) -> None:
    """GF.gd_to_flow_order (derivation: Euler's method is first order): the fitted order
    of GD's distance from the flow at fixed time (``experiments.flow_error_sweep``)."""
    fit = loglog_fit(table.tau.to_numpy(), table.error.to_numpy())
    ledger.check(
        "GF.gd_to_flow_order", "GD is $O(\\tau)$ away from the flow at fixed $t = \\tau k$",
        measured=fit.slope, predicted=1.0, tol=cfg.tol_flow_order, allow_nonfinite=True,
        kind="derivation",
        note=f"$t = {cfg.t_fixed}$; flow from scipy DOP853 (rtol 1e-12)")
