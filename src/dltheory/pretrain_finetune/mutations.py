"""Planted errors for chapter 2 (pretraining and fine-tuning); see ``dltheory.mutations``."""

from __future__ import annotations

import numpy as np

from ..mutations import Mutation

P = "dltheory.pretrain_finetune"


def _closed_form_exponent(flow_weights_from_beta):
    from . import model

    def wrong(beta, c, lam):  # s = 0.55 asinh(beta/c) instead of 0.5 asinh(beta/c)
        w0, v0 = model.init_scales(c, lam)
        return model.flow_weights(0.55 * np.arcsinh(np.asarray(beta, dtype=float) / c), w0, v0)
    return wrong


def _ft_drop_gamma(ft_scales):
    return lambda beta_pt, c_pt, lam_pt, gamma: (
        (1 + lam_pt) * (c_pt + np.hypot(c_pt, np.asarray(beta_pt, dtype=float))))


def _ft_half_constant(ft_scales):
    def wrong(beta_pt, c_pt, lam_pt, gamma):  # (1 + lam)/2 instead of (1 + lam)
        return ft_scales(beta_pt, c_pt, lam_pt, gamma) - 0.5 * (1 + lam_pt) * (
            c_pt + np.hypot(c_pt, beta_pt))
    return wrong


def _tilt_sign(tilted_params):
    def wrong(wp, wm, gamma):
        r, phi, b0 = tilted_params(wp, wm, gamma)
        return r, -phi, b0
    return wrong


def _solve_error(change):
    """ScalarChannel.solve with its error replaced by ``change(result)``."""
    def factory(solve):
        from . import replica

        def wrong(self, alpha, **kw):
            r = solve(self, alpha, **kw)
            return replica.ReplicaResult(r.tau, r.theta, change(r), r.converged, r.iterations,
                                         r.verified)
        return wrong
    return factory


def _eps_drop_factor(l_order_pd):
    from .bias import ft_scales
    from .regimes import l_order_x

    def wrong(beta_ft, beta_pt, c_pt, lam_pt, gamma):  # eps without its factor (1 + lambda)
        bft, bpt = np.abs(np.asarray(beta_ft, dtype=float)), np.abs(np.asarray(beta_pt, dtype=float))
        cd = ft_scales(bpt, c_pt, lam_pt, gamma)
        ell = l_order_x(bft / cd)
        return ell, (1 - ell) * bpt**2 / (np.hypot(c_pt, bpt) * cd)
    return wrong


def _swap_layers(init_scales):
    def wrong(c, lam):  # first layer and readout swapped: w0^2 - v0^2 = -c lambda
        w0, v0 = init_scales(c, lam)
        return v0, w0
    return wrong


def _fixed_step(gd_step):
    return lambda run, eta: 0.04  # the former fixed GD step, whatever the sharpness


def _test_is_training(binary_task):
    def wrong(split, classes=(8, 9)):  # the "held-out" set is the FT pool itself
        X_pool, y_pool, _, _ = binary_task(split, classes)
        return X_pool, y_pool, X_pool, y_pool
    return wrong


def _kappa_not_squared(kappa_lambda_eff):
    return lambda kappa, lam0: np.asarray(kappa, dtype=float) * (1 + np.asarray(lam0, dtype=float)) - 1


def _kappa_sign_inverted(kappa_sign):
    return lambda theory, diag_task: -kappa_sign(theory, diag_task)


def _reach_inverted(_prop):
    def reachable(self):
        return {t: r * self.d_sim_max < self.min_active for t, r in self.task_rho.items()}
    return property(reachable)


ENTRIES = [
    Mutation("pretrain_finetune:closed_form_exponent", f"{P}.model:flow_weights_from_beta",
             "closed-form flow weights with s = 0.55 asinh(beta/c) instead of 0.5 asinh(beta/c)",
             "+10% exponent", "exponent", _closed_form_exponent, ("PF.flow.closed_form_abs",)),
    Mutation("pretrain_finetune:ft_scale_drop_gamma", f"{P}.bias:ft_scales",
             "FT scale without the readout re-initialisation gamma^2", "gamma^2 term dropped",
             "dropped term", _ft_drop_gamma, ("PF.bias.ft",)),
    Mutation("pretrain_finetune:ft_scale_half", f"{P}.bias:ft_scales",
             "FT scale with (1 + lambda)/2 in place of (1 + lambda)", "factor 2 in one term",
             "constant", _ft_half_constant, ("PF.bias.ft",)),
    Mutation("pretrain_finetune:init_layers_swapped", f"{P}.model:init_scales",
             "initial scales of the first layer and the readout swapped (lambda -> -lambda)",
             "regime boundary lambda = -1 <-> +1", "regime boundary", _swap_layers, ("PF.flow.invariants",)),
    Mutation("pretrain_finetune:pd_drop_factor", f"{P}.regimes:l_order_pd",
             "pretraining dependence with eps = b_PT^2/(sqrt(c^2 + b_PT^2) c_d), the factor (1 + lambda) dropped",
             "factor (1 + lambda)", "dropped term", _eps_drop_factor, ("PF.regimes.corners",)),
    Mutation("pretrain_finetune:tilt_sign", f"{P}.bias:tilted_params",
             "tilted FT potential with the tilt phi of the wrong sign", "sign of phi", "sign",
             _tilt_sign, ("PF.bias.ft_tilted",)),
    Mutation("pretrain_finetune:prox_drop_sqrt", f"{P}.replica:prox_deriv",
             "prox derivative 1/(1 + theta/(C^2 + b^2)): the square root dropped",
             "exponent 1 for 1/2", "exponent",
             lambda f: (lambda b, theta, C: 1.0 / (1.0 + theta / (C**2 + b**2))),
             ("PF.replica.vs_sim_ratio",)),
    Mutation("pretrain_finetune:replica_drop_alpha", f"{P}.replica:ScalarChannel.solve",
             "replica error sigma^2 instead of alpha sigma^2", "factor 1/alpha", "dropped term",
             _solve_error(lambda r: r.tau**2), ("PF.replica.vs_sim_ratio",)),
    Mutation("pretrain_finetune:replica_error_low_15pct", f"{P}.replica:ScalarChannel.solve",
             "every replica error prediction 15% low", "-15%", "rescaling",
             _solve_error(lambda r: 0.85 * r.error), ("PF.replica.vs_sim_ratio",)),
    Mutation("pretrain_finetune:replica_error_high_20pct", f"{P}.replica:ScalarChannel.solve",
             "every replica error prediction 20% high", "+20%", "rescaling",
             _solve_error(lambda r: 1.2 * r.error), ("PF.replica.vs_sim_ratio",)),
    # experiment side and judging code
    Mutation("pretrain_finetune:gd_fixed_step", f"{P}.experiments:gd_step",
             "GD step fixed at 0.04 instead of following the loss's sharpness", "step x 13 past 2/S (regime III)",
             "constant", _fixed_step, ("PF.gd.stable_step",)),
    Mutation("pretrain_finetune:test_is_training", f"{P}.vision:binary_task",
             "digits stand-in: the test set of the binary FT tasks is the FT pool itself",
             "held-out = training", "dropped term", _test_is_training, ("PF.split.disjoint",)),
    Mutation("pretrain_finetune:reach_gate_inverted", f"{P}.config:Config.reachable",
             "the reach gate inverted: the tasks too sparse for the simulated D enter evidence, "
             "the others are left out", "comparison inverted", "regime boundary",
             _reach_inverted, ("PF.reach.gate",)),
    Mutation("pretrain_finetune:kappa_not_squared", f"{P}.model:kappa_lambda_eff",
             "first-layer shrink read as 1 + lambda_eff = kappa (1 + lambda_0), kappa not squared",
             "exponent 1 for 2", "exponent", _kappa_not_squared, ("PF.vision.kappa_is_lambda",)),
    Mutation("pretrain_finetune:kappa_sign_inverted", f"{P}.checks:kappa_sign",
             "the stand-in judged against the opposite of the diagonal theory's sign for kappa",
             "sign of the prediction", "sign", _kappa_sign_inverted,
             ("PF.vision.early_scale.new_classes", "PF.vision.early_scale.subset",
              "PF.vision.early_scale.shift")),
    Mutation("pretrain_finetune:judge_worst_as_best", f"{P}.checks:replica_best",
             "PF.best_lambda.sim_agrees compares against the replica's worst setting, not its best",
             "argmax for argmin", "sign", lambda f: (lambda rep: rep.idxmax()), ("PF.best_lambda.sim_agrees",)),
]
