"""Planted errors for chapter 1 (conservation laws); see ``dltheory.mutations``."""

from __future__ import annotations

from ..mutations import Mutation

L = "dltheory.conservation.laws"
T = "dltheory.conservation.theory"
TR = "dltheory.conservation.train"
EX = "dltheory.conservation.experiments"
RU = "dltheory.conservation.rules"


def _tri(n):
    return n * (n + 1) // 2


def _count_for(cls_name, wrong):
    """theory_count replaced by ``wrong(model)`` for blocks of class ``cls_name`` only."""
    def factory(theory_count):
        from . import models

        cls = getattr(models, cls_name)
        return lambda model: wrong(model) if isinstance(model, cls) else theory_count(model)
    return factory


def _const(value):
    return lambda original: (lambda *a, **k: value)


def _matched(wrong):
    return lambda original: (lambda opt: wrong[opt])


def _gradients_x2(gradients):
    # twice the derivative of the loss: every optimiser, q(g) and (1.3) use the same g
    return lambda model, loss: {n: 2.0 * g for n, g in gradients(model, loss).items()}


def _shift_invariant_if(rule):
    def factory(shift_invariant):
        def mutant(gate):
            shift_invariant(gate)                  # same argument check
            return rule(gate)
        return mutant
    return factory


def _sgd_full_batch(opt_kw):
    # "SGD" whose minibatch is the whole data set: full-batch GD under another name
    def mutant(cfg, opt, n):
        kw = opt_kw(cfg, opt, n)
        return {**kw, "batch_size": n} if opt == "sgd" else kw
    return mutant


def _gradients_without_noise(per_sample_gradients):
    # every per-sample gradient replaced by their mean: the walk loses its noise
    def mutant(model, loss, n):
        G = per_sample_gradients(model, loss, n)
        return G.mean(0, keepdim=True).expand_as(G).clone()
    return mutant


def _inverted(gate):
    return lambda *a, **k: not gate(*a, **k)


def _widest_window(late_window):
    def mutant(cfg):
        late_window(cfg)                           # same argument checks
        return max(cfg.lm_windows)
    return mutant


def _swapped_fit(fit_tau_k):
    # the judge's fit with the tau and k exponents read in the wrong order
    import dataclasses

    return lambda taus, ks, err: (lambda f: dataclasses.replace(f, alpha=f.beta, beta=f.alpha))(
        fit_tau_k(taus, ks, err))


SIGMOID_NOT_INVARIANT = ("sigmoid", "sigmoid_norm", "sigmoid_topk_norm", "sigmoid_bias")


def _wd_linearised(wd_decay):
    # (1 - tau lam)^(2k) replaced by its small-tau lam form exp(-2 tau lam k)
    import numpy as np

    def mutant(tau, lam, k):
        wd_decay(tau, lam, k)                      # same argument checks
        return np.exp(-2.0 * tau * lam * np.asarray(k, dtype=float))
    return mutant


def _mha_without_vo(laws_for):
    # the attention law list without its V/O family: the Q/K laws alone
    def mutant(model, prefix=""):
        from .models import MHA

        fams = laws_for(model, prefix)
        return fams[:1] if isinstance(model, MHA) else fams
    return mutant


def _expert_zero_unreached(expert_inputs):
    # the count inputs of renormalised top-1 routing miss expert 0: no input reaches it,
    # its 3 m d weights get no gradient (what the old counter took for laws: 100 for 44)
    def mutant(model, n_per, gen):
        X = expert_inputs(model, n_per, gen)
        E = model.router.weight.shape[0]
        return X.reshape(n_per, E, -1)[:, 1:].reshape(n_per * (E - 1), -1)
    return mutant


ENTRIES = [
    Mutation("conservation_laws:mha_drop_vo", f"{L}:theory_count",
             "attention count without the V/O laws: H d_k(d_k+1)/2", "H d_v(d_v+1)/2 laws missing",
             "dropped term", _count_for("MHA", lambda m: m.H * _tri(m.dk)), ("CL.count.mha",)),
    Mutation("conservation_laws:mha_antisym", f"{L}:theory_count",
             "Q/K laws counted as the antisymmetric part, d_k(d_k-1)/2 per head",
             "d_k laws per head missing", "off-by-one",
             _count_for("MHA", lambda m: m.H * (_tri(m.dk - 1) + _tri(m.dv))), ("CL.count.mha",)),
    Mutation("conservation_laws:rope_as_plain", f"{L}:theory_count",
             "RoPE attention counted like plain attention", "one law per rotation pair",
             "dropped term", _count_for("MHA", lambda m: m.H * (_tri(m.dk) + _tri(m.dv))),
             ("CL.count.mha_rope",)),
    Mutation("conservation_laws:moe_drop_router", f"{L}:theory_count",
             "MoE count without the router sum: E m instead of E m + d", "d laws missing",
             "dropped term",
             _count_for("MoE", lambda m: m.w_up.shape[0] * m.w_up.shape[1]), ("CL.count.moe_dense",)),
    Mutation("conservation_laws:renorm_top1_as_dense", f"{L}:renorm_top1_count",
             "renormalised top-1 routing counted like dense routing (E m + d)", "d extra laws",
             "constant",
             lambda f: (lambda m: m.w_up.shape[0] * m.w_up.shape[1] + m.w_up.shape[2]),
             ("CL.count.moe_top1_renorm",)),
    Mutation("conservation_laws:gd_matched_slope_15pct", f"{T}:matched_slope",
             "GD drift slope at matched progress 1.15 instead of 1", "+15% exponent", "exponent",
             _matched({"gd": 1.15, "sgd": 1.15, "adam": 0.0}), ("CL.matched.gd_slope",)),
    Mutation("conservation_laws:adam_half_first_order", f"{T}:matched_slope",
             "Adam's matched-progress slope 0.5 (half first order) instead of 0",
             "+0.5 in a zero exponent", "exponent",
             _matched({"gd": 1.0, "sgd": 1.0, "adam": 0.5}), ("CL.matched.adam_gap",)),
    Mutation("conservation_laws:wd_decay_sign", f"{T}:wd_decay",
             "weight-decay factor (1 + tau lam)^(2k): the sign of the decay flipped",
             "sign of tau lam", "sign", lambda f: (lambda tau, lam, k: (1 + tau * lam) ** (2 * k)),
             ("CL.wd.decay",)),
    Mutation("conservation_laws:wd_decay_half_exponent", f"{T}:wd_decay",
             "weight-decay factor (1 - tau lam)^k: the factor 2 of |h| = |u|^2 - |v|^2 dropped",
             "factor 2 in the exponent", "rescaling",
             lambda f: (lambda tau, lam, k: (1 - tau * lam) ** k), ("CL.wd.decay",)),
    Mutation("conservation_laws:wd_decay_linearised", f"{T}:wd_decay",
             "weight-decay factor exp(-2 tau lam k): (1 - tau lam)^(2k) linearised in tau lam",
             "5% at tau lam = 0.05, k = 20", "dropped term", _wd_linearised, ("CL.wd.decay",)),
    Mutation("conservation_laws:gradient_x2", f"{TR}:gradients",
             "the training gradient twice the derivative of the loss", "factor 2", "rescaling",
             _gradients_x2, ("CL.grad_vs_loss",)),
    Mutation("conservation_laws:adam_second_order", f"{T}:adam_tau_exponent",
             "Adam's drift second order in tau, like GD's", "exponent 2 for 1", "exponent",
             _const(2.0), ("CL.adam.tau_exponent",)),
    Mutation("conservation_laws:adam_exponent_20pct", f"{T}:adam_tau_exponent",
             "Adam's tau exponent 1.25 instead of 1", "+25% exponent", "exponent",
             _const(1.25), ("CL.adam.tau_exponent",)),
    Mutation("conservation_laws:sigmoid_like_softmax", f"{L}:shift_invariant",
             "every sigmoid gate taken as shift-invariant (the summary's 'identical to "
             "softmax'): E m + d predicted for all", "d laws too many", "constant",
             _shift_invariant_if(lambda gate: True),
             tuple(f"CL.count.sigmoid.{g}" for g in SIGMOID_NOT_INVARIANT)
             + tuple(f"CL.gate_shift.{g}" for g in SIGMOID_NOT_INVARIANT)),
    Mutation("conservation_laws:only_softmax_invariant", f"{L}:shift_invariant",
             "only softmax taken as shift-invariant: the centred sigmoid's router sum missed",
             "d laws missing", "dropped term", _shift_invariant_if(lambda gate: gate == "softmax"),
             ("CL.count.sigmoid.sigmoid_centred", "CL.gate_shift.sigmoid_centred")),
    Mutation("conservation_laws:list_without_vo", f"{L}:laws_for",
             "the attention law list without V_i^T V_i - O_i^T O_i (the list incomplete)",
             "H d_v(d_v+1)/2 laws missing from the list", "dropped term", _mha_without_vo,
             ("CL.complete.mha", "CL.complete.mha_sin", "CL.complete.mha_rope")),
    # experiment side and judging code
    # Caught as INCONCLUSIVE, not FAIL: the counter refuses a count with an unreached
    # expert (UnderdeterminedCount) instead of returning one (tests/conservation/
    # test_bracket_levels.py runs it).
    Mutation("conservation_laws:top1_expert_unreached", f"{EX}:_expert_inputs",
             "renormalised top-1 count inputs that never reach expert 0 (an expert no input "
             "reaches)", "3 m d weights without gradient", "dropped term",
             _expert_zero_unreached, ("CL.count.moe_top1_renorm",)),
    Mutation("conservation_laws:sgd_full_batch", f"{EX}:_opt_kw",
             "'SGD' whose minibatch is the whole data set (full-batch GD)",
             "batch n for 16", "regime boundary", _sgd_full_batch, ("CL.sgd.stochastic",)),
    Mutation("conservation_laws:walk_without_noise", f"{EX}:per_sample_gradients",
             "SGD's random-walk model built from the mean gradient only (no minibatch noise)",
             "noise dropped", "dropped term", _gradients_without_noise, ("CL.sgd.k_exponent",)),
    Mutation("conservation_laws:matched_gate_inverted", f"{RU}:matched_in_reach",
             "the matched-progress reach gate inverted (closed when the pairs are in reach)",
             "comparison inverted", "regime boundary", _inverted, ("CL.matched.reach_count",)),
    Mutation("conservation_laws:exponents_swapped", "dltheory.conservation.checks:fit_tau_k",
             "the judge's fit reads the tau exponent as the k exponent and back",
             "alpha and beta swapped", "exponent", _swapped_fit,
             tuple(f"CL.gd.{e}_exponent.{b}" for b in ("swiglu", "mha_rope", "moe_topk")
                   for e in ("tau", "k")) + ("CL.sgd.tau_exponent",)),
    # Expected to be caught by CL.lm.late_is_late (char-LM runs; not in the unit tests).
    Mutation("conservation_laws:late_window_widest", f"{RU}:late_window",
             "the late window taken as the widest, where GD has left the flow",
             "tau lambda_max 0.8 for 0.08", "regime boundary", _widest_window,
             ("CL.lm.late_is_late",)),
    # Expected to be caught by CL.lm.late_window (char-LM runs; not in the unit tests).
    Mutation("conservation_laws:late_gap_second_order", f"{T}:late_window_gap",
             "flow-regime alpha - beta = 2 (the identity's tau^2 k) instead of 1",
             "exponent 2 for 1", "exponent", _const(2.0), ("CL.lm.late_window",)),
]
