"""Bayes-optimal readout, ReLU ridge path and the stratified ReLU population loss."""

import numpy as np
import pytest
import torch
from threadpoolctl import threadpool_limits

import dltheory.sparse_scaling as ss


@pytest.fixture(autouse=True)
def _one_blas_thread():
    with threadpool_limits(limits=1):
        yield


def test_bayes_readout_loss_against_explicit_matrix():
    spec = ss.spectrum(40, 1.0, 0.0)
    obs = ss.observe(ss.sample_sparse(spec, 60, [1, 0]), spec)
    u = ss.gaussian_features(12, 40, 2)
    S, _ = ss.feature_moments(u, spec.lam)
    comp = ss.complement_leverage((u * torch.as_tensor(spec.lam).sqrt()).T, [12])[0]
    got = ss.loss_bayes_readout(obs, comp)
    Un, lam = u.numpy(), spec.lam
    A = np.linalg.solve(Un @ np.diag(lam) @ Un.T, Un[:, obs.obs] * lam[obs.obs])   # theta = A w_obs
    B = np.zeros((40, 40))
    B[:, obs.obs] = Un.T @ A
    want = np.trace(np.diag(lam) @ (np.eye(40) - B) @ (np.eye(40) - B).T)
    assert abs(got / want - 1) < 1e-10
    # it cannot be beaten by the least-squares readouts that only see the data
    path = ss.ridge_path(obs, u, S, [0.0, 1e-6, 1e-3, 1e-1])
    assert got <= path.min() * (1 + 1e-10)
    assert got >= obs.T_obs


def test_relu_ridge_path_matches_numpy():
    spec = ss.spectrum(50, 1.0, 0.0)
    X = ss.sample_sparse(spec, 80, [3, 0])
    u = ss.gaussian_features(16, 50, 4)
    W = np.random.default_rng(5).standard_normal((50, 3))
    thetas = ss.relu.ridge_path(X, u, W, [1e-3], [8, 16], chunk=30)
    Phi = np.maximum(X @ u.numpy().T, 0)
    for N, th in zip([8, 16], thetas, strict=True):
        G = Phi[:, :N].T @ Phi[:, :N]
        mu = 1e-3 * np.linalg.eigvalsh(G).clip(min=0).mean()
        want = np.linalg.solve(G + mu * np.eye(N), Phi[:, :N].T @ (X @ W))
        np.testing.assert_allclose(th[0].numpy(), want, rtol=1e-8, atol=1e-10)


def test_stratified_loss_matches_monte_carlo():
    spec = ss.spectrum(64, 1.0, 0.0)
    u = ss.gaussian_features(10, 64, 6)
    W = np.random.default_rng(7).standard_normal((64, 2))
    theta = torch.as_tensor(np.random.default_rng(8).standard_normal((10, 2)) * 0.1)
    mom = ss.relu.stratified_moments(spec, u, W, J0=16, n_head=40_000, n_tail=64, seed=9)
    strat = ss.relu.population_loss(theta, mom)
    Xt = ss.sample_sparse(spec, 400_000, 10)
    f = np.maximum(Xt @ u.numpy().T, 0) @ theta.numpy()
    err = (f - Xt @ W) ** 2
    mc, se = err.mean(0), err.std(0) / np.sqrt(err.shape[0])
    # first-order stratification: relative bias O((sum_{j>J0} p_j)^2) ~ 0.4 %
    assert np.all(np.abs(strat - mc) < 4 * se + 0.02 * mc)


def test_stratified_moments_bad_J0():
    spec = ss.spectrum(20, 1.0, 0.0)
    u = ss.gaussian_features(4, 20, 0)
    with pytest.raises(ValueError, match="J0"):
        ss.relu.stratified_moments(spec, u, np.ones((20, 1)), J0=20, n_head=10, n_tail=2, seed=0)
