"""Planted errors for chapter 4 (depth expansion); see ``dltheory.mutations``."""

from __future__ import annotations

import math

import numpy as np

from ..mutations import Mutation

D = "dltheory.depth_expansion"


def _grads_of_mean_loss(activation_grads):
    from . import signal

    def wrong(model, l, X, y, B=signal.B_DEFAULT):
        z, g = activation_grads(model, l, X, y, B)
        return z, g / len(y)
    return wrong


def _flipped_direction(first_order_signal):
    from . import signal

    def wrong(*a, **k):
        s = first_order_signal(*a, **k)
        return signal.Signal(s.C, s.gamma, -s.v, s.z, s.g, s.phi)
    return wrong


def _diagonal_only(null_mean_square):
    def wrong(g, phi):
        n = g.shape[0]
        return float(g.double().pow(2).sum(1).mean() * phi.double().pow(2).sum()) / n**2
    return wrong


def _t_wrong_power(directional_t):
    def wrong(g, phi, v):
        s = ((g @ v) * phi).sum(1).double()
        mean = float(s.mean())
        return mean, mean / (float(s.std()) * np.sqrt(len(s)))
    return wrong


def _route_b_sign(route_b):
    from . import bounds

    def wrong(old, f_S, new):
        rb = route_b(old, f_S, new)
        return bounds.RouteB(rb.delta_test, rb.delta_erm, -rb.bracket, rb.lhs, rb.eps_M,
                             rb.eps_K)
    return wrong


def _hoeffding_log_1_over_delta(hoeffding_K):
    def wrong(delta_R, B, delta=0.05):
        k = hoeffding_K(delta_R, B, delta)
        return k * math.log(1.0 / delta) / math.log(2.0 / delta)
    return wrong


def _route_b_half_deviation(rhs):
    return property(lambda self: -self.delta_test - self.delta_erm + (self.eps_M + self.eps_K))


def _route_a_single_eps(rhs):
    return property(lambda self: -self.delta_R / 2 - self.delta_erm + self.eps_M)


def _hoeffding_exponent_2(hoeffding_exponent):
    def wrong(K, delta_R, B):
        return K * delta_R**2 / (2.0 * B**2)
    return wrong


def _rmsnorm_eps_over_d(rmsnorm_jacobian_bound):
    def wrong(gain, r, eps):
        return rmsnorm_jacobian_bound(gain, r, eps / gain.numel())
    return wrong


def _lowrank_r(lowrank_offdiag):
    def wrong(d, r):
        return (d - 1) / (d - 1 + r)
    return wrong


def _loss_lipschitz_no_sqrt2(loss_lipschitz):
    def wrong(B):
        return loss_lipschitz(B) / math.sqrt(2.0)
    return wrong


def _hoeffding_half_K(simulate_hoeffding):
    def wrong(K, delta_R, B, *, draws, seed):
        return simulate_hoeffding(max(1, K // 2), delta_R, B, draws=draws, seed=seed)
    return wrong


def _certificate_no_term(heldout_term):
    def wrong(sd, K, B, delta):
        return 0.0
    return wrong


def _certificate_sign(heldout_certificate):
    def wrong(mean, sd, K, B, delta):
        return heldout_certificate(-mean, sd, K, B, delta)
    return wrong


def _overlapping_halves(population_halves):
    def wrong(n):
        a, _ = population_halves(n)
        return a, a
    return wrong


def _power_gate_inverted(_powered):
    from . import checks, rules

    def wrong(ledger, cfg, id, statement, rows, t_col, value, t_all, what):
        pw = rows[rows[t_col] < rules.POWER_T]          # for >=: the unpowered seeds decide
        if len(pw):
            return checks._check(ledger, id, statement, float(value(pw).min()), lo=1e-12,
                                 note=f"min over {len(pw)} seeds")
        return checks._inconclusive(ledger, id, statement, float(value(rows).min()),
                                    note=f"no seed has {what} t >= {rules.POWER_T:g}")
    return wrong


ENTRIES = [
    Mutation("depth_expansion:signal_constant_low_15pct", f"{D}.signal:signal_matrix",
             "first-order signal matrix 15% low", "-15%", "constant",
             lambda f: (lambda g, phi: 0.85 * f(g, phi)), ("DE.first_order",)),
    Mutation("depth_expansion:grads_of_mean_loss", f"{D}.signal:activation_grads",
             "per-sample activation gradients taken from the mean loss (a stray 1/n)",
             "factor 1/n", "rescaling", _grads_of_mean_loss, ("DE.first_order",)),
    Mutation("depth_expansion:descent_direction_sign", f"{D}.signal:first_order_signal",
             "descent direction v with the wrong sign", "sign of v", "sign",
             _flipped_direction, ("DE.first_order", "DE.condition1")),
    Mutation("depth_expansion:null_mean_diagonal_only", f"{D}.signal:null_mean_square",
             "null mean square without the i != j pairs (the rank-one mean part)",
             "off-diagonal pairs dropped", "dropped term", _diagonal_only, ("DE.null_mean",)),
    Mutation("depth_expansion:condition1_se_power_of_n", f"{D}.signal:directional_t",
             "condition-1 t statistic with std * sqrt(n) for std / sqrt(n)", "factor n",
             "rescaling", _t_wrong_power, ("DE.condition1",)),
    Mutation("depth_expansion:rmsnorm_l2_gain", f"{D}.diagnostics:rmsnorm_jacobian_bound",
             "RMSNorm Jacobian bound with ||g||_2 for ||g||_inf sqrt(d)", "norm of the gain",
             "bound constant",
             lambda f: (lambda gain, r, eps: float(gain.detach().norm())
                        / np.sqrt(np.asarray(r, float) ** 2 + eps)),
             ("DE.norm_lipschitz",)),
    Mutation("depth_expansion:rmsnorm_drop_sqrt_d", f"{D}.diagnostics:rmsnorm_jacobian_bound",
             "RMSNorm Jacobian bound without the sqrt(d)", "factor sqrt(d)", "bound constant",
             lambda f: (lambda gain, r, eps: f(gain, r, eps) / np.sqrt(gain.numel())),
             ("DE.norm_lipschitz",)),
    Mutation("depth_expansion:route_b_bracket_sign", f"{D}.bounds:route_b",
             "Route B bracket with the wrong sign", "sign of one term", "sign", _route_b_sign,
             ("DE.routeB.identity",)),
    Mutation("depth_expansion:hoeffding_log_1_over_delta", f"{D}.bounds:hoeffding_K",
             "Hoeffding test-set size with log(1/delta) for log(2/delta)",
             "constant of the bound (x0.81 at delta = 0.05)", "bound constant",
             _hoeffding_log_1_over_delta, ("DE.hoeffding.K",)),
    # Four plausible errors that no verdict noticed before the theorems were
    # checked as predictions:
    Mutation("depth_expansion:route_b_half_deviation", f"{D}.bounds:RouteB.rhs",
             "Route B's deviation term 2 (eps_M + eps_K) halved", "factor 1/2",
             "bound constant", _route_b_half_deviation, ("DE.routeB.tightness",)),
    Mutation("depth_expansion:hoeffding_constant_2", f"{D}.bounds:hoeffding_exponent",
             "Hoeffding transfer exponent K Delta^2 / (2 B^2) for K Delta^2 / (8 B^2) (and the "
             "test-set size it implies divided by 4)", "factor 4 in the exponent",
             "bound constant", _hoeffding_exponent_2,
             ("DE.hoeffding.coverage", "DE.hoeffding.tightness", "DE.hoeffding.K")),
    Mutation("depth_expansion:rmsnorm_eps_over_d", f"{D}.diagnostics:rmsnorm_jacobian_bound",
             "RMSNorm Jacobian bound with eps / d for eps", "eps / d", "bound constant",
             _rmsnorm_eps_over_d, ("DE.norm_lipschitz.small_rms", "DE.eps_naive")),
    Mutation("depth_expansion:lowrank_null_r", f"{D}.diagnostics:lowrank_offdiag",
             "low-rank null's off-diagonal share with r for r + 2", "r + 2 -> r",
             "off-by-one", _lowrank_r, ("DE.lowrank_null",)),
    # Two more of this chapter's own:
    Mutation("depth_expansion:route_a_single_eps", f"{D}.bounds:RouteA.rhs",
             "Route A's deviation term eps_M for 2 eps_M (one model's gap, not the bracket's)",
             "factor 1/2", "bound constant", _route_a_single_eps,
             ("DE.routeA.coverage", "DE.routeA.tightness")),
    # On the experiment side: the worst-case Hoeffding simulation draws test sets of the
    # wrong size (K / 2), as a sweep that halves its sample would.
    Mutation("depth_expansion:hoeffding_sim_half_K", f"{D}.transfer:simulate_hoeffding",
             "worst-case Hoeffding simulation with test sets of K / 2 for K",
             "test-set size halved", "rescaling", _hoeffding_half_K,
             ("DE.hoeffding.tightness",)),
    # The held-out certificate: its deviation term dropped (the point estimate reported as
    # a bound), and the loss difference taken the wrong way round (old - new).
    Mutation("depth_expansion:certificate_no_term", f"{D}.bounds:heldout_term",
             "held-out certificate without its deviation term (the point estimate as bound)",
             "dropped term", "dropped term", _certificate_no_term,
             ("DE.certificate.coverage",)),
    Mutation("depth_expansion:certificate_sign", f"{D}.bounds:heldout_certificate",
             "held-out certificate of L(f_old) - L(f_new) for L(f_new) - L(f_old)",
             "sign of the difference", "sign", _certificate_sign, ("DE.certificate",)),
    Mutation("depth_expansion:population_halves_overlap", f"{D}.experiments:population_halves",
             "the held-out population half B is half A itself (selection = evaluation)",
             "degenerate split", "regime boundary", _overlapping_halves,
             ("DE.split.halves_disjoint",)),
    Mutation("depth_expansion:loss_lipschitz_no_sqrt2", f"{D}.lipschitz:loss_lipschitz",
             "cross-entropy's Lipschitz constant in the logits without the sqrt(2) (the "
             "sup-norm constant used as if Euclidean)", "factor 1/sqrt(2)", "bound constant",
             _loss_lipschitz_no_sqrt2, ("DE.lipschitz.loss",)),
    # In the judging code: the power gate of the margin checks inverted (the seeds whose
    # held-out t is *below* POWER_T decide; where every seed is powered, nothing is decided).
    Mutation("depth_expansion:power_gate_inverted", f"{D}.checks:_powered",
             "the margin checks' power gate inverted (t < POWER_T for t >= POWER_T)",
             "comparison inverted", "regime boundary", _power_gate_inverted,
             ("DE.jumpboard.gate",)),
]
