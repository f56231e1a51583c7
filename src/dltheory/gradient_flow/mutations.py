"""Planted errors for the prologue (``dltheory.gradient_flow``); see ``dltheory.mutations``."""

from __future__ import annotations

import numpy as np

from ..mutations import Mutation

GF = "dltheory.gradient_flow.model"


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


def _grad_x2(grad):
    # twice the gradient of the loss: GD, the flow and the one-step identity all use it, so only the loss sees it
    def mutant(p, u, v):
        g_u, g_v = grad(p, u, v)
        return 2.0 * g_u, 2.0 * g_v
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
             "rescaling", _residual_sum, ("GF.grad_vs_loss", "GF.gd_to_flow_order")),
    Mutation("gradient_flow:grad_x2", f"{GF}:grad",
             "the gradient (g_u, g_v) twice the derivative of the loss", "factor 2",
             "rescaling", _grad_x2, ("GF.grad_vs_loss",)),
    # Removed: "GD after k + 1 steps compared with the flow at t = tau k" (off by one). One
    # extra Euler step moves GD by tau |g| = O(tau), the same order as Euler's own error, so
    # the fitted order stays 1 at every scale; only a prediction of the error's constant
    # could see it, and the prologue makes none.
]
