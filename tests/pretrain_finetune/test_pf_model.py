"""The diagonal network: closed-form gradient flow, invariants, batched GD."""

import numpy as np
import pytest
import torch

from dltheory.pretrain_finetune import (
    DiagWeights,
    flow_weights,
    flow_weights_from_beta,
    init_scales,
    invariants,
    readout_reinit,
    rebalance,
    train_gd,
    train_gd_loop,
    uniform_init,
)


def _problem(seed=0, d=12, n=8, batch=2):
    rng = np.random.default_rng(seed)
    beta = np.zeros(d)
    beta[:3] = [1.0, -0.8, 0.6]
    X = rng.standard_normal((n, d))
    y = X @ beta
    Xb = torch.as_tensor(np.broadcast_to(X, (batch, n, d)).copy())
    yb = torch.as_tensor(np.broadcast_to(y, (batch, n)).copy())
    return Xb, yb


def test_init_scales_conventions():
    w0, v0 = init_scales(0.3, -0.5)
    assert np.isclose(w0**2 + v0**2, 0.3)
    assert np.isclose((w0**2 - v0**2) / 0.3, -0.5)
    with pytest.raises(ValueError, match="c must"):
        init_scales(0.0, 0.0)
    with pytest.raises(ValueError, match="lam"):
        init_scales(1.0, 1.5)


def test_flow_weights_beta_and_invariants():
    s = np.linspace(-2, 2, 9)
    w0, v0 = init_scales(0.7, 0.3)
    W = flow_weights(s, w0, v0)
    assert np.allclose(W.beta, 0.7 * np.sinh(2 * s))
    ip, im, ic = invariants(W)
    assert np.allclose(ip, 0.7 * 0.3) and np.allclose(im, 0.7 * 0.3) and np.allclose(ic, 0.7)
    W2 = flow_weights_from_beta(W.beta, 0.7, 0.3)
    for k in ("wp", "wm", "vp", "vm"):
        assert np.allclose(getattr(W, k), getattr(W2, k))


def test_gd_converges_to_closed_form_at_rate_tau():
    Xb, yb = _problem()
    cs, lams = np.array([0.2, 0.2]), np.array([-0.5, 0.5])
    errs = []
    for tau in (0.04, 0.02):
        res = train_gd(Xb, yb, uniform_init(cs, lams, (2, 12)), tau, max_steps=100_000, tol=1e-14)
        W = res.weights.numpy()
        assert float(res.loss.max()) < 1e-13
        e = 0.0
        for i in range(2):
            Wc = flow_weights_from_beta(W.beta[i], cs[i], lams[i])
            e = max(e, max(np.abs(getattr(W, k)[i] - getattr(Wc, k)).max() for k in ("wp", "wm", "vp", "vm")))
        errs.append(e)
    assert 1.7 <= errs[0] / errs[1] <= 2.3


def test_rebalance_starts_at_zero_and_readout_reinit_does_not():
    W = flow_weights_from_beta(np.array([0.5, -1.0, 0.0]), 0.1, -0.3)
    Wr = rebalance(W, 0.2)
    assert np.allclose(Wr.beta, 0)
    assert np.allclose(Wr.wp, W.wp + W.wm)
    Wn = readout_reinit(W, 0.2)
    assert np.allclose(Wn.beta, 0.2 * (W.wp - W.wm))
    assert not np.allclose(Wn.beta, 0)


def test_batched_gd_equals_loop():
    Xb, yb = _problem(seed=1)
    W0 = uniform_init(np.array([0.3, 0.6]), np.array([0.0, -0.7]), (2, 12))
    a = train_gd(Xb, yb, W0, 0.05, max_steps=300, tol=0.0)
    b = train_gd_loop(Xb, yb, W0, 0.05, max_steps=300, tol=0.0)
    assert torch.allclose(a.weights.beta, b.weights.beta, atol=1e-12)


def test_gd_bad_inputs():
    Xb, yb = _problem()
    W0 = uniform_init(0.1, 0.0, (2, 12))
    with pytest.raises(ValueError, match="tau"):
        train_gd(Xb, yb, W0, 0.0)
    with pytest.raises(ValueError, match="X must"):
        train_gd(Xb[0], yb, W0, 0.1)


def test_diagweights_numpy_roundtrip():
    W = uniform_init(0.1, 0.2, (1, 3))
    Wn = W.numpy()
    assert isinstance(Wn, DiagWeights) and isinstance(Wn.wp, np.ndarray)
