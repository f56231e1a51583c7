"""The corners of the declared domain (issue #32): the GD step that follows the loss's
sharpness (the lazy end C_PT = 10) and the ledger's design guards and detection rules."""

import numpy as np
import pandas as pd
import pytest
import torch

from dltheory import claims
from dltheory.pretrain_finetune import checks, experiments, rules
from dltheory.pretrain_finetune.config import Config
from dltheory.pretrain_finetune.model import sharpness


def _loss_hessian_top(X, y, a, g, s):
    """Largest eigenvalue of the autograd Hessian of L = |X beta - y|^2 / 2N in the four
    weight vectors at the flow point of dual time s from the rebalanced init (a, g)."""
    Xt, yt = torch.as_tensor(X), torch.as_tensor(y)
    d = X.shape[1]
    wp, wm = a * np.cosh(s) + g * np.sinh(s), a * np.cosh(s) - g * np.sinh(s)
    vp, vm = g * np.cosh(s) + a * np.sinh(s), g * np.cosh(s) - a * np.sinh(s)
    theta = torch.as_tensor(np.concatenate([wp, wm, vp, vm]))

    def loss(t):
        beta = t[:d] * t[2 * d:3 * d] - t[d:2 * d] * t[3 * d:]
        return 0.5 * ((Xt @ beta - yt) ** 2).mean()

    H = torch.autograd.functional.hessian(loss, theta).numpy()
    return float(np.linalg.eigvalsh(H)[-1])


def test_sharpness_is_the_loss_hessian_at_a_zero_residual_point():
    rng = np.random.default_rng(0)
    d, n = 7, 4
    X = rng.standard_normal((n, d))
    a, g = rng.uniform(0.1, 2.0, d), rng.uniform(0.05, 1.0, d)
    s = rng.uniform(-1.0, 1.0, d)
    c_d = a**2 + g**2
    beta = c_d * np.sinh(2 * s)
    assert np.isclose(_loss_hessian_top(X, X @ beta, a, g, s), sharpness(X, c_d, beta), rtol=1e-10)
    # at the FT initialisation (s = 0, beta = 0) with zero residual
    assert np.isclose(_loss_hessian_top(X, 0 * X[:, 0], a, g, 0 * s), sharpness(X, c_d), rtol=1e-10)


def test_gd_converges_at_the_lazy_corner():
    """C_PT = 10: the old fixed step 0.04 was 13x past the stability limit of regime II;
    the step from the sharpness converges and matches the exact minimiser."""
    cfg = Config.for_scale("smoke", c_pt=10.0)
    r = experiments.gd_task(cfg, {"regime": "II"})
    assert 0.04 * r["sharpness"] > 2  # the old step diverges here
    assert r["tau0"] * r["sharpness"] < 2 and r["loss"] <= 1e-10
    assert abs(r["gd_flow"] - r["exact"]) / (r["exact"] + cfg.gd_atol) <= cfg.gd_rtol


def test_gd_step_validates_eta():
    cfg = Config.for_scale("smoke")
    run = experiments.run_exact(cfg.tasks["full overlap"], 40, 0.3, 10.0, 1.0, 1e-3, seed=0)
    with pytest.raises(ValueError, match="eta"):
        experiments.gd_step(run, 2.0)
    assert experiments.gd_step(run, 1.0) * sharpness(run.X, run.c_d, run.beta_ft) <= 1.0 + 1e-12


def _ledger(tmp_path):
    return claims.Ledger("pretrain_finetune", scale="smoke", results_dir=tmp_path, rules=rules)


def _gd_table(loss=1e-11, tau0=0.01, sharp=100.0, capped=False):
    return pd.DataFrame({"steps": [400] * 2, "loss": [1e-12, loss], "exact": [0.5, 0.1], "gd": [0.5, 0.1],
                         "gd_half": [0.5, 0.1], "tau0": [tau0] * 2, "tau_used": [tau0] * 2,
                         "gd_flow": [0.5, 0.1], "sharpness": [sharp] * 2, "capped": [False, capped]})


@pytest.mark.parametrize("kw, ok", [({}, True), ({"loss": 1e-3}, False), ({"tau0": 0.04}, False),
                                    ({"loss": 6e-9, "capped": True}, True),
                                    ({"loss": float("nan"), "capped": True}, False),
                                    ({"loss": 6e-9, "capped": True, "tau0": 0.04}, False)])
def test_gd_guard_opens_and_closes(tmp_path, kw, ok):
    led = _ledger(tmp_path)
    checks.gd(led, Config.for_scale("smoke"), _gd_table(**kw))
    assert led.claims["PF.gd.stable_step"].verdict == (claims.PASS if ok else claims.FAIL)
    # the comparison with the minimiser is made only when every run converged
    converged = not (kw.get("loss", 0) > 1e-9) and kw.get("loss", 0) == kw.get("loss", 0)
    vs = led.claims["PF.replica.vs_gd"].verdict
    assert (vs != claims.INCONCLUSIVE) if converged else (vs == claims.INCONCLUSIVE)
    assert not led.undeclared()  # every claim's kind is fixed in rules.KINDS



def _regime_sim(scale_se=1.0, n=8):
    """A fake regime table: the replica's best regime really is better, by 0.3 with s.d. 0.05
    (``scale_se`` multiplies the seed noise)."""
    rng = np.random.default_rng(1)
    rows = []
    for task in ("full overlap", "subset", "new features"):
        for reg, rep in (("I", 0.9), ("II", 0.6), ("IV", 0.7)):
            for s in range(n):
                rows.append({"task": task, "regime": reg, "alpha": 0.2, "seed": s, "replica": rep,
                             "sim": rep + scale_se * 0.05 * rng.standard_normal()})
    return pd.DataFrame(rows)


def test_sim_agrees_needs_the_expected_ordering_detected(tmp_path):
    cfg = Config.for_scale("smoke")
    curves = pd.DataFrame([{"curve": "lambda", "task": t, "lam": lam, "replica": 1.0 - 0.1 * lam}
                           for t in ("full overlap", "subset", "new features") for lam in cfg.lams])
    led = _ledger(tmp_path)
    checks.best_lambda(led, cfg, curves, _regime_sim())
    assert led.claims["PF.best_lambda.sim_agrees"].verdict == claims.PASS
    led = _ledger(tmp_path / "b")
    checks.best_lambda(led, cfg, curves, _regime_sim(scale_se=20.0))  # a loss of power
    c = led.claims["PF.best_lambda.sim_agrees"]
    assert c.verdict == claims.INCONCLUSIVE and "not detected" in c.note
    assert not led.undeclared()


def test_split_guard_catches_a_test_set_that_is_the_training_sample(tmp_path):
    cfg = Config.for_scale("smoke")
    vis = pd.DataFrame([{"ft_task": "new classes (8 vs 9)", "seed": s, "n": 30, "intervention": i, "acc": 0.9,
                         "pr_pre": 5.0, "pr_post": 4.0, "ensd": 3.9, "shared": shared, "n_test": 90}
                        for s in range(2) for i in experiments.INTERVENTIONS for shared in [0]])
    led = _ledger(tmp_path)
    checks.vision(led, cfg, vis)
    assert led.claims["PF.split.disjoint"].verdict == claims.PASS
    led = _ledger(tmp_path / "b")
    checks.vision(led, cfg, vis.assign(shared=30))
    assert led.claims["PF.split.disjoint"].verdict == claims.FAIL
    assert not led.undeclared()


def test_rules_are_consistent():
    assert set(rules.DECIDES["smoke"]) <= set(rules.HARD)
    assert not set(rules.HARD) & set(rules.SOFT) and not set(rules.HARD) & set(rules.IDENTITY)
    assert {"PF.replica.defined", "PF.flow.invariants"} <= set(rules.IDENTITY)
    assert rules.KINDS["PF.imperfect_pt.sim"] == "soft"


def test_vision_task_draws_its_ft_sample_off_the_test_set():
    cfg = Config.for_scale("smoke", vision_pt_steps=5, vision_n=(20,))
    rows = experiments.vision_task(cfg, {"ft_task": "subset (3 vs 5)", "seed": 0})
    assert all(r["shared"] == 0 for r in rows)


def test_reachability_gate_opens_and_closes():
    cfg = Config.for_scale("smoke")
    assert all(cfg.reachable.values()) and cfg.unreachable_note() == ""
    sparse = Config.for_scale("smoke", rho_pt=0.01, rho_sh=0.05)  # subset: 5e-4 * 450 < 6 active
    assert not sparse.reachable["subset"] and sparse.reachable["new features"]
    assert "subset" in sparse.unreachable_note()


@pytest.mark.parametrize("kw, decided", [({}, True), ({"c_pt": 0.1}, False), ({"gamma": 0.1}, False)])
def test_learned_path_gate_opens_and_closes(tmp_path, kw, decided):
    cfg = Config.for_scale("smoke", **kw)
    path = pd.DataFrame({"ell": np.linspace(1.1, 1.9, len(cfg.lams)), "pd": np.linspace(-0.05, -0.9, len(cfg.lams))})
    led = _ledger(tmp_path)
    checks.learned_path(led, cfg, path)
    c = led.claims["PF.learned_path"]
    assert c.kind == "hard" and (c.verdict == claims.PASS) == decided
    assert decided or (c.verdict == claims.INCONCLUSIVE and "not the theory's limits" in c.note)


def test_reach_guard_holds_where_the_gate_closes_and_fails_on_a_wrong_gate(tmp_path, monkeypatch):
    """PF.reach.gate recounts the expected active coordinates at the simulated D: it holds at
    the defaults (all within reach), at a setting where a task is out of reach and where none
    is, and fails when the gate disagrees with the count."""
    import pandas as pd

    from dltheory import claims
    from dltheory.pretrain_finetune import checks, rules

    def run(cfg):
        led = claims.Ledger("pretrain_finetune", scale="smoke", results_dir=tmp_path, rules=rules)
        checks.reach_guard(led, cfg, pd.DataFrame({"task": list(cfg.task_rho)}))
        return led.claims["PF.reach.gate"].verdict

    for cfg in (Config.for_scale("smoke"), Config.for_scale("smoke", rho_pt=0.01, rho_sh=0.05),
                Config.for_scale("smoke", rho_pt=0.01, rho_new=0.01)):
        assert run(cfg) == claims.PASS
    monkeypatch.setattr(Config, "reachable", property(lambda self: {t: True for t in self.task_rho}))
    assert run(Config.for_scale("smoke", rho_pt=0.01, rho_sh=0.05)) == claims.FAIL
