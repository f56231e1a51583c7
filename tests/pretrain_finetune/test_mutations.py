"""Planted errors in the theory must make a hard claim FAIL.

The entries are the chapter's part of the registry (``dltheory.pretrain_finetune.mutations``).
Each test runs the experiment and the check function the chapter calls on smoke-sized
inputs (cache off, so the planted error is really run), unmutated (the entry's claims PASS)
and with the entry applied (they FAIL).
"""

import pytest

from dltheory import claims, mutations
from dltheory.pretrain_finetune import checks, experiments, rules
from dltheory.pretrain_finetune.config import Config

ENTRIES = {m.id: m for m in mutations.registry("pretrain_finetune")}
# small sections 1-2 instance: two (c, lambda) pairs, two step sizes
CFG_SMALL = Config.for_scale("smoke", taus=(0.02, 0.01), c_small=(0.5,), lam_small=(-0.8, 0.8))
# section 4 instance: D = 200, 3 seeds, one alpha
CFG_SIM = Config.for_scale("smoke", d_sim=200, n_seeds=3, alphas_sim=(0.3,), alpha_ft=0.3)


def _ledger(tmp_path):
    return claims.Ledger("pretrain_finetune", scale="smoke", results_dir=tmp_path, rules=rules)


def _small_claims(tmp_path):
    led = _ledger(tmp_path)
    df = experiments.small(CFG_SMALL, cache=False)
    checks.flow(led, CFG_SMALL, df)
    checks.bias(led, CFG_SMALL, df)
    return {cid: c.verdict for cid, c in led.claims.items()}


def _regime_claims(tmp_path):
    led = _ledger(tmp_path)
    checks.regimes(led, CFG_SMALL)
    return {cid: c.verdict for cid, c in led.claims.items()}


def _sim_claims(tmp_path):
    led = _ledger(tmp_path)
    checks.replica(led, CFG_SIM, None, experiments.regimes_vs_sim(CFG_SIM, cache=False), 0.0)
    return {cid: c.verdict for cid, c in led.claims.items()}


def _gd_claims(tmp_path):
    led = _ledger(tmp_path)
    checks.gd(led, CFG_GD, experiments.gd_vs_exact(CFG_GD, cache=False))
    return {cid: c.verdict for cid, c in led.claims.items()}


def _vision_claims(tmp_path):
    led = _ledger(tmp_path)
    checks.vision(led, CFG_VIS, experiments.vision(CFG_VIS, cache=False))
    return {cid: c.verdict for cid, c in led.claims.items()}


def _judge_claims(tmp_path):
    """PF.best_lambda.sim_agrees on a table whose replica ordering is the simulated one
    (regime II best by 0.1-0.3, seed noise 0.05)."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(1)
    sim = pd.DataFrame([{"task": t, "regime": r, "alpha": 0.2, "seed": s, "replica": e,
                         "sim": e + 0.05 * rng.standard_normal()}
                        for t in ("full overlap", "subset", "new features")
                        for r, e in (("I", 0.9), ("II", 0.6), ("IV", 0.7)) for s in range(8)])
    cfg = Config.for_scale("smoke")
    curves = pd.DataFrame([{"curve": "lambda", "task": t, "lam": lam, "replica": 1.0 - 0.1 * lam}
                           for t in ("full overlap", "subset", "new features") for lam in cfg.lams])
    led = _ledger(tmp_path)
    checks.best_lambda(led, cfg, curves, sim)
    return {cid: c.verdict for cid, c in led.claims.items()}


def _kappa_claims(tmp_path):
    led = _ledger(tmp_path)
    checks.kappa_lever(led, CFG_SMALL, experiments.kappa_identity_gap(CFG_SMALL), _kappa_theory())
    return {cid: c.verdict for cid, c in led.claims.items()}


def _kappa_theory():
    """A theory table with the diagonal signs: the shrink hurts full overlap, helps the rest."""
    import pandas as pd

    return pd.DataFrame([{"task": t, "lam0": l0, "change": ch} for t, ch in
                         (("full overlap", 0.2), ("subset", -0.02), ("new features", -0.9))
                         for l0 in (0.0, 1.0)])


def _vision_judge_claims(tmp_path):
    """The per-task kappa claims on a synthetic stand-in table whose kappa effects have the
    theory's sign (+0.1 accuracy where it helps, -0.1 where it hurts; seed noise 0.01)."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(2)
    effect = {"new classes (8 vs 9)": 0.1, "subset (3 vs 5)": 0.1, "shift (inverted 0-7)": -0.1}
    rows = [{"ft_task": t, "seed": s, "n": 10, "intervention": i, "shared": 0, "n_test": 100,
             "acc": 0.7 + (e if i.startswith("small first") else 0.0) + 0.01 * rng.standard_normal(),
             "pr_pre": 5.0, "pr_post": 4.0, "ensd": 3.5}
            for t, e in effect.items() for s in range(6) for i in experiments.INTERVENTIONS]
    led = _ledger(tmp_path)
    checks.vision(led, CFG_VIS, pd.DataFrame(rows), _kappa_theory())
    return {cid: c.verdict for cid, c in led.claims.items()}


CFG_GD = Config.for_scale("smoke", d_gd=60)
CFG_VIS = Config.for_scale("smoke", vision_pt_steps=5, vision_seeds=2, vision_n=(10,))
SIM = {"PF.replica.vs_sim_ratio", "PF.reach.gate"}   # claims of the simulation instance
REGIMES = {"PF.regimes.corners", "PF.tradeoff"}   # of the closed form; the rest: small
RUNNERS = {"PF.gd.stable_step": _gd_claims, "PF.split.disjoint": _vision_claims,
           "PF.best_lambda.sim_agrees": _judge_claims, "PF.vision.kappa_is_lambda": _kappa_claims,
           "PF.vision.early_scale.new_classes": _vision_judge_claims}


def test_every_entry_has_claims_here():
    assert len(ENTRIES) >= 6
    assert all(m.catches for m in ENTRIES.values())


@pytest.mark.parametrize("mid", list(ENTRIES))
def test_entry_is_caught(mid, tmp_path, unmutated):
    m = ENTRIES[mid]
    run = (RUNNERS[m.catches[0]] if m.catches[0] in RUNNERS else _sim_claims if set(m.catches) <= SIM
           else _regime_claims if set(m.catches) <= REGIMES else _small_claims)
    clean = unmutated(run.__name__, lambda: run(tmp_path))
    caught = {"soft": claims.NOT_REPRODUCED}   # a contradicted soft claim is NOT REPRODUCED
    assert mutations.flips(m, lambda: run(tmp_path), before=clean) == {
        c: (claims.PASS, caught.get(rules.KINDS[c], claims.FAIL)) for c in m.catches}


def test_undefined_replica_is_a_failed_claim(tmp_path):
    """Without the gamma^2 term, c_d = 0 at lambda_PT = -1: the replica equations have no
    solution there, and the chapter records PF.replica.defined as FAIL instead of crashing."""
    m = ENTRIES["pretrain_finetune:ft_scale_drop_gamma"]
    cfg = Config.for_scale("smoke", d_sim=200, n_seeds=2, alphas_sim=(0.3,), alpha_ft=0.3)

    def run():
        led = _ledger(tmp_path)
        checks.replica(led, cfg, None, experiments.regimes_vs_sim(cfg, cache=False), 0.0)
        return {cid: c.verdict for cid, c in led.claims.items()}

    assert mutations.flips(m, run, ("PF.replica.defined",)) == {"PF.replica.defined": (claims.PASS, claims.FAIL)}
