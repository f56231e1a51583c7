"""Planted errors for the prologue (``dltheory.gradient_flow``); see ``dltheory.mutations``."""

from __future__ import annotations

import numpy as np

from .mutations import Mutation

GF = "dltheory.gradient_flow"


def _flow_double_gradient(flow):
    # theta' = -2 grad L: the same path at twice the speed, i.e. the true flow at time 2t
    def mutant(p, u0, v0, t, **kw):
        return flow(p, u0, v0, 2.0 * np.asarray(t, dtype=float), **kw)
    return mutant


def _q_plus(q):
    return lambda g_u, g_v: g_u * g_u + g_v * g_v


def _residual_sum(residual_grad):
    # the gradient of the summed loss (n times the mean loss's) used with the mean loss
    return lambda p, u, v: p.n * residual_grad(p, u, v)


def _one_step_more(gd_to_flow_error):
    # GD compared with the flow after k + 1 steps instead of k = t / tau
    from .gradient_flow import flow, gd

    def mutant(p, u0, v0, *, t, taus):
        uf, vf = flow(p, u0, v0, t)
        out = []
        for tau in taus:
            tr = gd(p, u0, v0, tau=tau, steps=int(round(t / tau)) + 1)
            out.append(np.sqrt(np.sum((tr.u - uf) ** 2) + np.sum((tr.v - vf) ** 2)))
        return np.array(out)
    return mutant


ENTRIES = [
    Mutation("gradient_flow:flow_gradient_x2", f"{GF}:flow",
             "the reference flow integrates twice the gradient of the loss", "factor 2",
             "rescaling", _flow_double_gradient, ("GF.gd_to_flow_order",)),
    Mutation("gradient_flow:q_sign", f"{GF}:q",
             "q(g) = g_u^2 + g_v^2 (the minus sign of the law's quadratic form lost)",
             "sign of one term", "sign", _q_plus, ("GF.identity",)),
    Mutation("gradient_flow:residual_without_1_over_n", f"{GF}:residual_grad",
             "r = X^T (X beta - y) without the 1/n of the mean loss", "factor n = 20",
             "rescaling", _residual_sum, ("GF.gd_to_flow_order",)),
    # No current claim catches this one: one extra Euler step moves GD by O(tau), so the
    # fitted order stays 1.
    Mutation("gradient_flow:flow_error_one_step_more", f"{GF}:gd_to_flow_error",
             "GD after k + 1 steps compared with the flow at t = tau k", "off by one step",
             "off-by-one", _one_step_more, ()),
]
