"""Exactness of the reduced solver and of the closed-form population losses."""

import numpy as np
import pytest
import torch
from threadpoolctl import threadpool_limits

import dltheory.sparse_scaling as ss


@pytest.fixture(autouse=True)
def _one_blas_thread():
    """Small dense algebra: one BLAS thread (the shared CI cores thrash otherwise)."""
    with threadpool_limits(limits=1):
        yield


@pytest.fixture(scope="module")
def small():
    spec = ss.spectrum(256, 1.0, 0.0)
    X = ss.sample_sparse(spec, 300, [0, 1])
    obs = ss.observe(X, spec)
    u = ss.gaussian_features(120, 256, 2)
    S, _ = ss.feature_moments(u, spec.lam)
    return spec, X, obs, u, S


def _idx(obs):
    return torch.as_tensor(obs.obs)


@pytest.mark.parametrize("N", [8, 20, 120])
@pytest.mark.parametrize("mu_rel", [0.0, 1e-3])
def test_reduced_fit_equals_brute_force(small, N, mu_rel):
    spec, X, obs, u, _ = small
    rng = np.random.default_rng(3)
    W = rng.standard_normal((spec.M, 5))
    A = ss.reduced_fit(obs, u[:N][:, _idx(obs)], mu_rel).numpy()
    Phi = X @ u[:N].numpy().T
    if mu_rel == 0:
        ref = ss.brute_force_fit(Phi, X @ W)
    else:  # same absolute ridge: mu = mu_rel * mean(s^2) of Z, whose singular values are Phi's
        s = np.linalg.svd(Phi, compute_uv=False)
        s = s[s > 1e-10 * s.max()]
        ref = ss.brute_force_fit(Phi, X @ W, mu_rel * np.mean(s**2))
    got = A @ W[obs.obs]
    assert np.linalg.norm(got - ref) / np.linalg.norm(ref) < 1e-8


def test_target_average_matches_monte_carlo(small):
    spec, X, obs, u, S = small
    rng = np.random.default_rng(4)
    for N in (10, 60):
        A = ss.reduced_fit(obs, u[:N][:, _idx(obs)]).numpy()
        W = rng.standard_normal((spec.M, 4000))
        beta = u[:N].numpy().T @ (A @ W[obs.obs])
        losses = (spec.lam[:, None] * (beta - W) ** 2).sum(0)
        exact = ss.ridge_path(obs, u[:N], S[:N, :N], [0.0])[0]
        se = losses.std() / np.sqrt(losses.size)
        assert abs(losses.mean() - exact) < 3 * se


def test_decomposition_sums_to_total(small):
    spec, X, obs, u, S = small
    parts = ss.ridge_path(obs, u[:40], S[:40, :40], [0.0, 1e-2], decompose=True)
    total = ss.ridge_path(obs, u[:40], S[:40, :40], [0.0, 1e-2])
    np.testing.assert_allclose(parts.sum(1), total, rtol=1e-10)
    assert np.all(parts > -1e-14)
    np.testing.assert_allclose(parts[:, 2], obs.T_obs)


def test_exact_loss_equals_monte_carlo_test_loss():
    """Population loss of one fitted readout, fixed w, vs a Monte Carlo test set."""
    spec = ss.spectrum(24, 1.0, 0.0)
    X = ss.sample_sparse(spec, 40, [5, 0])
    obs = ss.observe(X, spec)
    u = ss.gaussian_features(6, 24, 6)
    w = np.random.default_rng(7).standard_normal(24)
    A = ss.reduced_fit(obs, u[:, _idx(obs)], 1e-3).numpy()
    beta = u.numpy().T @ (A @ w[obs.obs])
    exact = float(np.sum(spec.lam * (beta - w) ** 2))
    Xt = ss.sample_sparse(spec, 400_000, [5, 1])
    err = (Xt @ (beta - w)) ** 2
    assert abs(err.mean() - exact) < 3 * err.std() / np.sqrt(err.size)


def test_infinite_width_limit_against_large_N():
    spec = ss.spectrum(48, 1.0, 0.0)
    obs = ss.observe(ss.sample_sparse(spec, 200, [8, 0]), spec)
    u = ss.gaussian_features(2000, 48, 9)
    S, _ = ss.feature_moments(u, spec.lam)
    big = ss.ridge_path(obs, u, S, [0.0])[0]
    lim = ss.loss_infinite_width(obs)
    assert abs(big / lim - 1) < 0.02


def test_dense_ridge_path_against_explicit_matrix():
    spec = ss.spectrum(30, 1.0, 0.0)
    X = ss.sample_dense(spec, 12, 10)
    u = ss.gaussian_features(20, 30, 11)
    S, _ = ss.feature_moments(u, spec.lam)
    Phi = X @ u.numpy().T
    for N, mu in ((8, 0.0), (20, 0.0), (20, 1e-2)):
        got = ss.dense_ridge_path(X, u[:N], S[:N, :N], spec.lam, [mu])[0]
        P = Phi[:, :N]
        s = np.linalg.svd(P, compute_uv=False)
        A = (np.linalg.pinv(P, rcond=1e-10) if mu == 0
             else np.linalg.solve(P.T @ P + mu * np.mean(s**2) * np.eye(N), P.T))
        B = u[:N].numpy().T @ A @ X
        R = np.eye(30) - B
        want = np.trace(np.diag(spec.lam) @ R @ R.T)
        assert abs(got / want - 1) < 1e-8


def test_dense_infinite_width_is_projection():
    spec = ss.spectrum(40, 1.0, 0.0)
    X = ss.sample_dense(spec, 10, 12)
    P = np.linalg.pinv(X) @ X
    want = np.trace(np.diag(spec.lam) @ (np.eye(40) - P))
    assert abs(ss.dense_loss_infinite_width(X, spec.lam) / want - 1) < 1e-10


def test_infinite_data_loss_is_optimal_readout():
    spec = ss.spectrum(50, 1.0, 0.0)
    u = ss.gaussian_features(7, 50, 13)
    got = ss.loss_infinite_data(u, spec.lam, [7])[0]
    Un, L = u.numpy(), np.diag(spec.lam)
    want = np.trace(L) - np.trace(np.linalg.solve(Un @ L @ Un.T, Un @ L @ L @ Un.T))
    assert abs(got / want - 1) < 1e-10


def test_overparam_branch_formula():
    spec = ss.spectrum(4096, 1.0, 0.0)
    # the formula needs rank X = K (overparam_loss refuses r < K): the first full-rank draw
    obs = next(o for k in range(50)
               if (o := ss.observe(ss.sample_sparse(spec, 1000, [14, k]), spec)).rank == o.K)
    ratios = []
    for seed in range(4):
        u = ss.gaussian_features(400, 4096, 20 + seed)
        S, _ = ss.feature_moments(u, spec.lam)
        ratios.append(ss.ridge_path(obs, u, S, [0.0])[0]
                      / ss.overparam_loss(obs.T_obs, 400, obs.rank, obs.K))
    assert 0.93 < np.mean(ratios) < 1.07
