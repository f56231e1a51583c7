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
* ``PF.learned_path`` is hard at every setting; outside the rich corner (c_PT, gamma
  <= 1e-2) or when the full-overlap task is out of reach it is a hard INCONCLUSIVE with
  that reason.
"""

from __future__ import annotations

HARD = ("PF.flow.closed_form", "PF.flow.closed_form_abs", "PF.bias.pt", "PF.bias.ft", "PF.bias.ft_tilted",
        "PF.replica.vs_sim", "PF.replica.vs_sim_ratio", "PF.replica.vs_gd", "PF.best_lambda.sim_agrees",
        "PF.knobs.vs_sim_ratio", "PF.knobs.direction", "PF.learned_path")
SOFT = ("PF.best_lambda.full_overlap", "PF.best_lambda.subset", "PF.best_lambda.new_features",
        "PF.imperfect_pt.perfect", "PF.imperfect_pt", "PF.imperfect_pt.sim", "PF.imperfect_pt.margin",
        "PF.vision.early_scale", "PF.vision.readout_gamma", "PF.vision.pt_init_scale.new_classes",
        "PF.vision.pt_init_scale.shift", "PF.vision.pt_init_scale.subset", "PF.vision.pr_drop",
        "PF.vision.ensd", "PF.transformer.new_prime")
IDENTITY = ("PF.flow.invariants", "PF.bias.pt_not_l1_l2", "PF.regimes.corners", "PF.tradeoff",
            "PF.replica.defined", "PF.replica.l2_limit", "PF.learned_path.tradeoff",
            "PF.split.disjoint", "PF.gd.stable_step")

KINDS: dict[str, str] = {**{k: "hard" for k in HARD}, **{k: "soft" for k in SOFT},
                         **{k: "identity" for k in IDENTITY}}

#: Hard claims decided at the defaults, per scale (the smoke calibration record: every hard
#: claim decided in all 20 default-setting runs). Standard and paper have no record yet.
DECIDES: dict[str, tuple[str, ...]] = {"smoke": HARD}

#: No hard claim needs more than the default 20 % (the smoke record's worst median is 12 %).
MAX_RESOLUTION: dict[str, tuple[float, str]] = {}
