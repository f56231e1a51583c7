"""Implicit-bias potentials, the dual-Newton minimiser and its references."""

import numpy as np
import pytest
import torch

from dltheory.pretrain_finetune import (
    DiagWeights,
    ft_scales,
    h,
    min_l1,
    min_l2,
    potential,
    readout_reinit,
    rebalance,
    solve_bias,
    solve_bias_slsqp,
    tilted_params,
    train_gd,
    uniform_init,
)


def _data(seed=0, d=30, n=15, k=4, scale=1.5):
    rng = np.random.default_rng(seed)
    b = np.zeros(d)
    b[:k] = scale * rng.choice([-1.0, 1.0], k)
    X = rng.standard_normal((n, d))
    return X, X @ b


def test_h_stable_and_derivative():
    x = np.array([1e-8, 1e-6, 1e-3, 0.5, 3.0, 1e4])
    naive = x * np.arcsinh(x) - np.sqrt(1 + x**2) + 1
    assert np.allclose(h(x[2:]), naive[2:], rtol=1e-9)
    assert np.allclose(h(x[:2]), x[:2] ** 2 / 2, rtol=1e-6)  # lazy limit kept to full precision
    eps = 1e-6
    xs = np.array([-2.0, -0.1, 0.3, 5.0])
    assert np.allclose((h(xs + eps) - h(xs - eps)) / (2 * eps), np.arcsinh(xs), atol=1e-8)
    assert np.allclose(h(-xs), h(xs))


def test_dual_newton_matches_slsqp_and_limits():
    X, y = _data()
    for c in (0.05, 0.5, 3.0):
        sol = solve_bias(X, y, c)
        assert sol.residual < 1e-8
        ref = solve_bias_slsqp(X, y, c)
        assert np.abs(sol.beta - ref).max() < 1e-5
        assert potential(sol.beta, c) <= potential(ref, c) + 1e-9
    # the l1 limit is approached only logarithmically in c
    gaps = [np.abs(solve_bias(X, y, c).beta - min_l1(X, y)).max() for c in (1e-4, 1e-12)]
    assert gaps[1] < gaps[0] and gaps[1] < 0.05
    assert np.abs(solve_bias(X, y, 1e4).beta - min_l2(X, y)).max() < 1e-6


def test_dual_newton_weighted_and_tilted_kkt():
    X, y = _data(seed=3)
    rng = np.random.default_rng(3)
    c = 10.0 ** rng.uniform(-3, 0.5, X.shape[1])
    phi = rng.normal(0, 0.3, X.shape[1])
    sol = solve_bias(X, y, c, phi)
    # KKT: the potential's gradient asinh(beta/c) - phi lies in the row space of X
    grad = np.arcsinh(sol.beta / c) - phi
    proj = X.T @ np.linalg.lstsq(X.T, grad, rcond=None)[0]
    assert np.abs(grad - proj).max() < 1e-7
    assert np.abs(solve_bias_slsqp(X, y, c, phi) - sol.beta).max() < 1e-4


def test_gd_pt_then_ft_matches_potentials():
    X, y = _data(seed=1, d=20, n=12, k=3)
    Xb, yb = torch.as_tensor(X[None]), torch.as_tensor(y[None])
    c, lam, gamma, tau = 0.3, -0.4, 0.3, 0.02
    pt = train_gd(Xb, yb, uniform_init(c, lam, (1, 20)), tau, max_steps=200_000).weights
    beta_pt = pt.numpy().beta[0]
    assert np.abs(beta_pt - solve_bias(X, y, c).beta).max() < 5e-3
    rng = np.random.default_rng(5)
    bft = np.zeros(20)
    bft[[0, 1, 9]] = rng.choice([-1.0, 1.0], 3)
    Xf = rng.standard_normal((6, 20))
    yf = Xf @ bft
    Xfb, yfb = torch.as_tensor(Xf[None]), torch.as_tensor(yf[None])
    reb = train_gd(Xfb, yfb, rebalance(pt, gamma), tau, max_steps=200_000).weights.numpy().beta[0]
    target = solve_bias(Xf, yf, ft_scales(beta_pt, c, lam, gamma)).beta
    assert np.abs(reb - target).max() < 5e-3
    til = train_gd(Xfb, yfb, readout_reinit(pt, gamma), tau, max_steps=200_000).weights.numpy().beta[0]
    Wn = pt.numpy()
    r, phi, _ = tilted_params(Wn.wp[0], Wn.wm[0], gamma)
    assert np.abs(til - solve_bias(Xf, yf, r, phi).beta).max() < 5e-3
    assert isinstance(pt, DiagWeights)


def test_ft_scales_and_bad_inputs():
    assert np.isclose(ft_scales(0.0, 0.1, -1.0, 0.2), 0.04)
    assert np.isclose(ft_scales(2.0, 1e-9, 1.0, 0.0), 4.0, rtol=1e-6)
    with pytest.raises(ValueError, match="c_pt"):
        ft_scales(1.0, 0.0, 0.0, 0.1)
    with pytest.raises(ValueError, match="lam_pt"):
        ft_scales(1.0, 0.1, 2.0, 0.1)
    X, y = _data()
    with pytest.raises(ValueError, match="c must"):
        solve_bias(X, y, 0.0)
    with pytest.raises(ValueError, match="y must"):
        solve_bias(X, y[:-1], 1.0)
