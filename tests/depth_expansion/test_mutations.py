"""Planted errors in the theory must make a hard claim FAIL (on a small, quickly trained
network): each test patches one theory function the way a plausible slip would change it,
recomputes the expansion measurements with the patched function, runs the chapter's check
function, and asserts the verdict of the claim that should catch it."""

import numpy as np
import pandas as pd
import pytest
import torch

from dltheory import claims
from dltheory import depth_expansion as de
from dltheory.depth_expansion import bounds, diagnostics
from dltheory.depth_expansion import experiments as dx
from dltheory.depth_expansion import signal as sg


@pytest.fixture(scope="module")
def small():
    with torch.random.fork_rng(devices=[]):
        cfg = de.Config.for_scale("smoke", width=24, depth=3, l_star=1, seed=3, n_train=1000,
                                  n_test=800, n_pop=2400, prog_n=1000,
                                  align_ns=(250, 500, 1000), n_perm=40, n_lip=128,
                                  block_epochs=2)
        pool = de.pool_for(cfg)
        old, hist = dx.train_old(pool, n=cfg.n_train, width=cfg.width, depth=cfg.depth,
                                 epochs=6, seed=cfg.seed, lr=cfg.lr, wd=cfg.wd,
                                 batch_size=cfg.batch)
    return cfg, pool, old, hist


def verdicts(small, *check_fns):
    cfg, pool, old, hist = small
    row = dx.measure_expansion(cfg, pool, old, hist, cfg.seed)
    ex = pd.DataFrame([{"model": "old", "seed": cfg.seed, **row}]).set_index(["model", "seed"])
    led = claims.Ledger("depth_expansion", scale="smoke")
    for fn in check_fns:
        fn(led, cfg, ex)
    return {c.id: c.verdict for c in led.claims.values()}


SIGNAL = (de.checks.signal, de.checks.jumpboards, de.checks.regularity, de.checks.routes)


def test_unmutated_theory_passes(small):
    v = verdicts(small, *SIGNAL)
    for cid in ("DE.first_order", "DE.null_mean", "DE.condition1", "DE.norm_lipschitz",
                "DE.routeA.identity", "DE.routeB.identity"):
        assert v[cid] == "PASS", (cid, v[cid])


def test_signal_constant_off_by_15_percent(small, monkeypatch):
    orig = sg.signal_matrix
    monkeypatch.setattr(sg, "signal_matrix", lambda g, phi: 0.85 * orig(g, phi))
    assert verdicts(small, de.checks.signal)["DE.first_order"] == "FAIL"


def test_activation_gradient_of_the_mean_loss(small, monkeypatch):
    """Per-sample gradients taken from the *mean* loss carry a stray 1/n."""
    orig = sg.activation_grads

    def mean_loss(model, l, X, y, B=sg.B_DEFAULT):
        z, g = orig(model, l, X, y, B)
        return z, g / len(y)

    monkeypatch.setattr(sg, "activation_grads", mean_loss)
    assert verdicts(small, de.checks.signal)["DE.first_order"] == "FAIL"


def test_descent_direction_with_the_wrong_sign(small, monkeypatch):
    orig = sg.first_order_signal

    def flipped(*a, **k):
        s = orig(*a, **k)
        return sg.Signal(s.C, s.gamma, -s.v, s.z, s.g, s.phi)

    monkeypatch.setattr(sg, "first_order_signal", flipped)
    v = verdicts(small, de.checks.signal)
    assert v["DE.first_order"] == "FAIL" and v["DE.condition1"] == "FAIL"


def test_null_mean_without_the_mean_part(small, monkeypatch):
    """Dropped term: the i != j pairs (the rank-one mean part the shuffle keeps)."""
    def diagonal_only(g, phi):
        n = g.shape[0]
        return float(g.double().pow(2).sum(1).mean() * phi.double().pow(2).sum()) / n**2

    monkeypatch.setattr(sg, "null_mean_square", diagonal_only)
    assert verdicts(small, de.checks.signal)["DE.null_mean"] == "FAIL"


def test_condition1_standard_error_with_the_wrong_power_of_n(small, monkeypatch):
    def wrong(g, phi, v):
        s = ((g @ v) * phi).sum(1).double()
        mean = float(s.mean())
        return mean, mean / (float(s.std()) * np.sqrt(len(s)))

    monkeypatch.setattr(sg, "directional_t", wrong)
    assert verdicts(small, de.checks.signal)["DE.condition1"] == "FAIL"


def test_rmsnorm_bound_with_the_euclidean_norm_of_the_gain(small, monkeypatch):
    def l2_gain(gain, r, eps):
        return float(gain.detach().norm()) / np.sqrt(np.asarray(r, float) ** 2 + eps)

    monkeypatch.setattr(diagnostics, "rmsnorm_jacobian_bound", l2_gain)
    assert verdicts(small, de.checks.regularity)["DE.norm_lipschitz"] == "FAIL"


def test_rmsnorm_bound_without_the_sqrt_d(small, monkeypatch):
    """||J|| <= ||g||_inf sqrt(d) / s with s^2 = ||u||^2 + d eps; dropping sqrt(d)."""
    orig = diagnostics.rmsnorm_jacobian_bound

    def no_sqrt_d(gain, r, eps):
        return orig(gain, r, eps) / np.sqrt(gain.numel())

    monkeypatch.setattr(diagnostics, "rmsnorm_jacobian_bound", no_sqrt_d)
    assert verdicts(small, de.checks.regularity)["DE.norm_lipschitz"] == "FAIL"


def test_route_b_bracket_with_the_wrong_sign_breaks_the_identity(small, monkeypatch):
    orig = bounds.route_b

    def wrong(old, f_S, new):
        rb = orig(old, f_S, new)
        return bounds.RouteB(rb.delta_test, rb.delta_erm, -rb.bracket, rb.lhs, rb.eps_M,
                             rb.eps_K)

    monkeypatch.setattr(bounds, "route_b", wrong)
    assert verdicts(small, de.checks.routes)["DE.routeB.identity"] == "FAIL"
