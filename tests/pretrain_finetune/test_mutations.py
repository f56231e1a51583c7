"""Planted errors in the theory must make a hard claim FAIL.

Each test patches one theory function with a plausible mistake (an exponent off by 10-20%,
a dropped term, a wrong constant, a wrong sign), runs the experiment and the check function
the chapter calls on smoke-sized inputs (cache off, so the planted error is really run), and
asserts that the named hard claim FAILs. The unpatched run passes the same claims.
"""

import numpy as np
import pytest

from dltheory import claims
from dltheory.pretrain_finetune import bias, checks, experiments, model, replica
from dltheory.pretrain_finetune.config import Config

# small sections 1-2 instance: two (c, lambda) pairs, the tau = 0.01 run only
CFG_SMALL = Config.for_scale("smoke", taus=(0.01,), c_small=(0.5,), lam_small=(-0.8, 0.8))
# section 4 instance: D = 200, 3 seeds, one alpha
CFG_SIM = Config.for_scale("smoke", d_sim=200, n_seeds=3, alphas_sim=(0.3,), alpha_ft=0.3)


def _ledger(tmp_path):
    return claims.Ledger("pretrain_finetune", scale="smoke", results_dir=tmp_path)


def _small_claims(tmp_path):
    led = _ledger(tmp_path)
    df = experiments.small(CFG_SMALL, cache=False)
    checks.bias(led, CFG_SMALL, df)
    g = df.groupby("tau")[["w_err"]].max()
    led.check("PF.flow.closed_form_abs", "closed-form weight error at tau = 0.01",
              float(g.loc[0.01, "w_err"]), hi=CFG_SMALL.bias_atol)  # what checks.flow records
    return led.claims


def _sim_claims(tmp_path):
    led = _ledger(tmp_path)
    checks.replica(led, CFG_SIM, experiments.regimes_vs_sim(CFG_SIM, cache=False), 0.0)
    return led.claims


def _verdict(cl, cid):
    return cl[cid].verdict


def test_unmutated_passes(tmp_path):
    cl = _small_claims(tmp_path)
    for cid in ("PF.bias.pt", "PF.bias.ft", "PF.bias.ft_tilted", "PF.flow.closed_form_abs"):
        assert _verdict(cl, cid) == "PASS", cl[cid]
    assert _verdict(_sim_claims(tmp_path), "PF.replica.vs_sim_ratio") == "PASS"


def test_closed_form_exponent_off(tmp_path, monkeypatch):
    orig = model.flow_weights_from_beta

    def wrong(beta, c, lam):  # s = 0.55 asinh(beta/c) instead of 0.5 asinh(beta/c)
        w0, v0 = model.init_scales(c, lam)
        return model.flow_weights(0.55 * np.arcsinh(np.asarray(beta, dtype=float) / c), w0, v0)

    monkeypatch.setattr(model, "flow_weights_from_beta", wrong)
    assert orig is not wrong
    assert _verdict(_small_claims(tmp_path), "PF.flow.closed_form_abs") == "FAIL"


def test_ft_scale_dropped_gamma_term(tmp_path, monkeypatch):
    def wrong(beta_pt, c_pt, lam_pt, gamma):  # forgets the readout re-init gamma^2
        return (1 + lam_pt) * (c_pt + np.hypot(c_pt, np.asarray(beta_pt, dtype=float)))

    monkeypatch.setattr(experiments, "ft_scales", wrong)
    assert _verdict(_small_claims(tmp_path), "PF.bias.ft") == "FAIL"


def test_ft_scale_wrong_constant(tmp_path, monkeypatch):
    orig = bias.ft_scales

    def wrong(beta_pt, c_pt, lam_pt, gamma):  # (1 + lam)/2 instead of (1 + lam): a factor-2 slip
        return orig(beta_pt, c_pt, lam_pt, gamma) - 0.5 * (1 + lam_pt) * (c_pt + np.hypot(c_pt, beta_pt))

    monkeypatch.setattr(experiments, "ft_scales", wrong)
    assert _verdict(_small_claims(tmp_path), "PF.bias.ft") == "FAIL"


def test_tilt_wrong_sign(tmp_path, monkeypatch):
    orig = bias.tilted_params

    def wrong(wp, wm, gamma):
        r, phi, b0 = orig(wp, wm, gamma)
        return r, -phi, b0

    monkeypatch.setattr(bias, "tilted_params", wrong)
    assert _verdict(_small_claims(tmp_path), "PF.bias.ft_tilted") == "FAIL"


def test_prox_derivative_dropped_square_root(tmp_path, monkeypatch):
    # (An exponent 0.6 instead of 0.5 here is NOT caught: the error depends only weakly on
    # the calibration E eta' = alpha; dropping the square root is.)
    def wrong(b, theta, C):  # theta / (C^2 + b^2) in place of theta / sqrt(C^2 + b^2)
        return 1.0 / (1.0 + theta / (C**2 + b**2))

    monkeypatch.setattr(replica, "prox_deriv", wrong)
    assert _verdict(_sim_claims(tmp_path), "PF.replica.vs_sim_ratio") == "FAIL"


def test_replica_error_dropped_alpha(tmp_path, monkeypatch):
    orig = replica.ScalarChannel.solve

    def wrong(self, alpha, **kw):  # e = sigma^2 instead of alpha sigma^2
        r = orig(self, alpha, **kw)
        return replica.ReplicaResult(r.tau, r.theta, r.tau**2, r.converged, r.iterations, r.verified)

    monkeypatch.setattr(replica.ScalarChannel, "solve", wrong)
    assert _verdict(_sim_claims(tmp_path), "PF.replica.vs_sim_ratio") == "FAIL"


@pytest.mark.parametrize("factor", [0.85, 1.2])
def test_replica_scale_error_is_resolved(tmp_path, monkeypatch, factor):
    """A 15-20% error in every replica prediction fails the ratio claim."""
    orig = replica.ScalarChannel.solve

    def wrong(self, alpha, **kw):
        r = orig(self, alpha, **kw)
        return replica.ReplicaResult(r.tau, r.theta, factor * r.error, r.converged, r.iterations, r.verified)

    monkeypatch.setattr(replica.ScalarChannel, "solve", wrong)
    assert _verdict(_sim_claims(tmp_path), "PF.replica.vs_sim_ratio") == "FAIL"
