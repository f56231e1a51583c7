"""What the pretraining / fine-tuning chapter's ledger may not learn from the data: each
claim's kind, the hard claims each scale decides at its defaults, and the hard claims that
may resolve less than 20 % (with why). Read by ``claims.Ledger(rules=...)``.

Kinds follow the book's rule (``dltheory.claims``): evidence only if it could fail on
correct code were the paper wrong about the networks and data the chapter runs.

* ``PF.flow.invariants`` is an identity: that GD drifts off the flow's conservation laws as
  O(tau) is calculus on the book's own update rule (it holds for any correct GD code).
* ``PF.replica.defined`` is an identity: with ``c_d >= gamma^2 > 0`` on the declared domain
  the replica equations always have a prediction; the count can only be non-zero on
  broken code.
* ``PF.imperfect_pt.sim`` is soft at every draw: it tests the paper's qualitative reading
  (imperfect PT turns the best lambda negative) on the simulation; below D = 1000 the
  finite-D bias near the recovery transition is as large as the effect, so a significant
  contradiction there is a finite-size effect, not a bug.
* ``PF.vision.kappa_is_lambda`` is an identity: shrinking the rebalanced first layer by
  kappa gives the FT scales of a network pretrained at 1 + lambda_eff = kappa^2 (1 + lambda_0)
  is algebra on the closed-form weights. The per-task ``PF.vision.early_scale.*`` are soft:
  the stand-in against the sign the diagonal theory gives through that identity.
* ``PF.learned_path`` is hard at every setting; outside the rich corner (c_PT, gamma
  <= 1e-2) or when the full-overlap task is out of reach it is a hard INCONCLUSIVE with
  that reason.

Tolerances and decision rules (the values are ``Config`` fields, fixed before the
calibration run; the calibration record holds the seed spreads they were set from):

* family-wise rule: at most ``fw_alpha`` = 1 % chance of any false hard FAIL per run, split by
  Bonferroni over ``n_hard`` = 13 draw-dependent hard claims (one more than today's 12: the
  split was set when ``PF.flow.invariants`` was still hard, and is kept, conservatively);
* ``ratio_tol`` / ``ratio_tol_knobs``: median simulated / replica error, worst
  |mean - 1| + 3.36 s.d. of an 8-seed (16-seed) median over the measured settings, rounded up;
* ``spearman_min``: the lazy corner (C_PT = 10), where three regimes tie, set it (worst mean
  - 3.36 s.d.);
* orderings (``PF.best_lambda.sim_agrees``, ``PF.knobs.direction``): a paired difference counts
  beyond ``t_crit`` standard errors, and the rule must also *detect* the ordering the theory
  predicts (``checks.sum_resolved``: at least one comparison resolved at the same threshold),
  else it cannot pass;
* ``gd_rtol``: GD vs exact minimiser, 5 % of the error (the O(tau) bias after Richardson
  extrapolation was below 0.5 %); the GD step is ``gd_eta`` / sharpness (``experiments.gd_step``);
* ``bias_atol``: GD vs minimiser on the small problems, >= 4 s.d. above each measured mean;
* ``ratio_pred`` +- ``ratio_width``: the O(tau) ratio per halving of tau (2, plus the
  measured O(tau^2) offset and 3.36 s.d.);
* ``PF.imperfect_pt.margin`` is decided only at D >= ``margin_d_min`` (1000): below it the
  finite-D bias of e(-0.999) at its recovery transition is as large as the margin.
"""

from __future__ import annotations

HARD = ("PF.flow.closed_form", "PF.flow.closed_form_abs", "PF.bias.pt", "PF.bias.ft", "PF.bias.ft_tilted",
        "PF.replica.vs_sim", "PF.replica.vs_sim_ratio", "PF.replica.vs_gd", "PF.best_lambda.sim_agrees",
        "PF.knobs.vs_sim_ratio", "PF.knobs.direction", "PF.learned_path")
SOFT = ("PF.best_lambda.full_overlap", "PF.best_lambda.subset", "PF.best_lambda.new_features",
        "PF.imperfect_pt.perfect", "PF.imperfect_pt", "PF.imperfect_pt.sim", "PF.imperfect_pt.margin",
        "PF.vision.early_scale", "PF.vision.readout_gamma", "PF.vision.pt_init_scale.new_classes",
        "PF.vision.pt_init_scale.shift", "PF.vision.pt_init_scale.subset", "PF.vision.pr_drop",
        "PF.vision.ensd", "PF.transformer.new_prime", "PF.vision.early_scale.new_classes",
        "PF.vision.early_scale.subset", "PF.vision.early_scale.shift")
IDENTITY = ("PF.flow.invariants", "PF.bias.pt_not_l1_l2", "PF.regimes.corners", "PF.tradeoff",
            "PF.replica.defined", "PF.replica.l2_limit", "PF.learned_path.tradeoff",
            "PF.split.disjoint", "PF.gd.stable_step", "PF.vision.ci_ordered", "PF.reach.gate",
            "PF.vision.kappa_is_lambda")

KINDS: dict[str, str] = {**{k: "hard" for k in HARD}, **{k: "soft" for k in SOFT},
                         **{k: "identity" for k in IDENTITY}}

#: Hard claims decided at the defaults, per scale (the smoke calibration record: every hard
#: claim decided in all 20 default-setting runs). Standard and paper have no record yet.
DECIDES: dict[str, tuple[str, ...]] = {"smoke": HARD}

#: No hard claim needs more than the default 20 % (the smoke record's worst median is 12 %).
MAX_RESOLUTION: dict[str, tuple[float, str]] = {}


def t_crit(cfg, n_seeds: int, m: int = 1) -> float:
    """One-sided paired-t threshold of a hard claim that makes ``m`` comparisons over
    ``n_seeds`` seeds: ``cfg.fw_alpha`` split over the ``cfg.n_hard`` hard claims and the
    ``m`` comparisons (Bonferroni), Student t with ``n_seeds - 1`` degrees of freedom."""
    from scipy.stats import t

    return float(t.ppf(1 - cfg.fw_alpha / (cfg.n_hard * max(1, m)), max(1, n_seeds - 1)))
