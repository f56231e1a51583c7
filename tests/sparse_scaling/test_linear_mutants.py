"""Outputs and edges of dltheory.sparse_scaling.linear that the exactness tests leave open
(written against the mutants that survived scripts/mutation_score.py): non-unit tau, rank
cut-offs, the named feature stream, the small helpers no fast test called.

Each test names its independent reference: the loss written out in x-space with numpy
(explicit projector or ridge operator on the D x N design), numpy's pinv with its own
cut-off, hand sums, or a structural property (nesting, linearity, rank one)."""

import numpy as np
import pytest
import scipy.sparse as sp
import torch
from threadpoolctl import threadpool_limits

import dltheory.sparse_scaling as ss
from dltheory import seeds
from dltheory.sparse_scaling import linear

EPS = np.finfo(np.float64).eps   # tolerances below are stated in ulps of float64


@pytest.fixture(autouse=True)
def _one_blas_thread():
    with threadpool_limits(limits=1):
        yield


def _spec(M):
    return ss.spectrum(M, 1.0, 0.5)


def _brute_loss(X, u, lam, tau, mu_rel):
    """E_w sum_j lam_j (beta_j - w_j)^2 with w ~ N(0, diag tau), beta = u^T R X w, R the ridge
    (or min-norm) solution operator on the explicit design Phi = X u^T; mu = mu_rel * mean
    of the squared non-zero singular values of Phi."""
    Phi = X @ u.T
    s = np.linalg.svd(Phi, compute_uv=False)
    s = s[s > 1e-10 * s.max()]
    N = Phi.shape[1]
    if mu_rel == 0:
        R = np.linalg.pinv(Phi, rcond=1e-10)
    else:
        R = np.linalg.solve(Phi.T @ Phi + mu_rel * np.mean(s**2) * np.eye(N), Phi.T)
    E = u.T @ R @ X - np.eye(X.shape[1])
    return float(np.trace(np.diag(lam) @ E @ np.diag(tau) @ E.T))


def _dense_sparse_X(D, M, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((D, M)) * (rng.random((D, M)) < 0.5)
    X[:, -2:] = 0.0                      # two never-seen coordinates
    return X


def test_observe_sums_with_a_non_unit_tau():
    """With target variances tau, the never-seen floor is sum over unobserved j of
    lambda_j tau_j, the total is sum_j lambda_j tau_j, and tau_obs are the observed tau_j
    (hand sums)."""
    M = 8
    spec, X = _spec(M), _dense_sparse_X(5, M, 0)
    tau = np.linspace(0.5, 2.0, M)
    obs = ss.observe(sp.csr_matrix(X), spec, tau=tau)
    seen = np.flatnonzero(np.abs(X).sum(0) > 0)
    unseen = np.setdiff1d(np.arange(M), seen)
    # 32 ulp: torch's and NumPy's sums of the same 8 positive terms, in another order (SIMD
    # width decides it): at most 7 ulp each
    assert obs.total == pytest.approx(float((spec.lam * tau).sum()), rel=32 * EPS)
    assert obs.T_obs == pytest.approx(float((spec.lam * tau)[unseen].sum()), rel=32 * EPS)
    np.testing.assert_array_equal(obs.tau_obs.numpy(), tau[seen])


def test_observe_rank_cut_off_is_relative_on_the_equilibrated_gram():
    """The cut is on the column-equilibrated Gram C^-1 G C^-1: a coordinate of tiny amplitude
    counts (X = diag(100, 1e-5): G spans 1e14, yet rank 2; the old cut on G said 1), and
    two columns at cosine 0.6 give equilibrated eigenvalues 0.4 and 1.6 (ratio 0.25): rank 1
    at rtol just above 0.25, rank 2 just below."""
    spec = ss.SparseSpectrum(np.ones(2), np.ones(2))
    assert ss.observe(sp.csr_matrix(np.diag([100.0, 1e-5])), spec).rank == 2
    X = sp.csr_matrix(np.array([[1.0, 0.6], [0.0, 0.8]]))
    assert ss.observe(X, spec, rtol=0.2501).rank == 1
    assert ss.observe(X, spec, rtol=0.2499).rank == 2


def test_features_are_the_named_stream_and_nested():
    """gaussian_features draws on the documented stream seeds.torch(seed, "features",
    *names): reproducible, and different for another name."""
    u = ss.gaussian_features(5, 7, 3, "a", "b")
    ref = torch.randn(5, 7, generator=seeds.torch(3, "features", "a", "b"), dtype=torch.float64)
    assert torch.equal(u, ref)
    assert torch.equal(ss.gaussian_features(5, 7, 3, "a", "b"), u)
    assert not torch.equal(ss.gaussian_features(5, 7, 3, "a", "c"), u)


def test_feature_moments_tau_is_linear_and_rank_one_per_coordinate():
    """S2 = u diag(lambda^2 tau) u^T: linear in tau (tau = 3 gives 3 S2), and tau = e_j gives
    the rank-one lambda_j^2 u_j u_j^T; lambda given as a Python list is read at float64."""
    u = ss.gaussian_features(4, 6, 0)
    lam = [0.1, 0.7, 0.3, 0.9, 0.11, 0.5]
    S, S2 = ss.feature_moments(u, lam)
    _, S2_3 = ss.feature_moments(u, lam, tau=3 * np.ones(6))
    # a matrix product (MKL's kernel depends on the CPU) whose entries may cancel: 8 ulp of
    # each entry plus 16 ulp of the largest
    np.testing.assert_allclose(S2_3.numpy(), 3 * S2.numpy(), rtol=8 * EPS,
                               atol=16 * EPS * float(abs(S2_3).max()))
    e = np.zeros(6)
    e[2] = 1.0
    _, S2_e = ss.feature_moments(u, lam, tau=e)
    uj = u[:, 2].numpy()
    np.testing.assert_allclose(S2_e.numpy(), 0.3**2 * np.outer(uj, uj), rtol=8 * EPS,
                               atol=1e-16)     # one product each, in another order: 8 ulp
    un = u.numpy()
    # a 6-term matrix product against a Python sum of outer products: 64 ulp of each entry
    # plus 16 ulp of the largest (entries may cancel)
    np.testing.assert_allclose(S.numpy(), sum(lam[j] * np.outer(un[:, j], un[:, j])
                                              for j in range(6)), rtol=64 * EPS,
                               atol=16 * EPS * float(abs(S).max()))


def test_complement_leverage_refuses_N_equal_M():
    """N = M features span all of R^M (every complement leverage 0): outside the domain
    N <= M - 1; N = M - 1 is inside."""
    Bt = torch.randn(4, 4, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    with pytest.raises(ValueError, match="N"):
        ss.complement_leverage(Bt, [4])
    assert ss.complement_leverage(Bt, [3])[0].shape == (4,)


def test_complement_leverage_matches_the_projector_and_a_blind_coordinate():
    """c_j = 1 - P_jj with P the projector on the span of the first n columns of Bt (numpy,
    explicit); a zero row of Bt (a coordinate with lambda_j = 0, which no feature sees) has
    c_j = 1 exactly."""
    rng = np.random.default_rng(7)
    Bt = rng.standard_normal((7, 4)) * np.array([3.0, 1.0, 0.3, 0.1])
    Bt[:, :] *= np.linspace(2.0, 0.2, 7)[:, None]
    Bt[4] = 0.0
    cs = ss.complement_leverage(torch.as_tensor(Bt), [1, 3])
    for n, c in zip((1, 3), cs, strict=True):
        A = Bt[:, :n]
        P = A @ np.linalg.solve(A.T @ A, A.T)
        np.testing.assert_allclose(c.numpy(), 1 - np.diag(P), rtol=1e-10, atol=1e-14)
        assert c[4].item() == 1.0


def test_loss_infinite_data_with_tau_matches_the_projector():
    """At D = infinity the loss is sum_j lambda_j tau_j (1 - P_jj), P the projector on the row
    space of u Lambda^(1/2), here built explicitly with numpy (mild spectrum, no
    cancellation); the normal-equation form total - tr(S^-1 S2) agrees."""
    M = 9
    spec = _spec(M)
    u = ss.gaussian_features(4, M, 1)
    tau = np.linspace(0.3, 3.0, M)
    got = ss.loss_infinite_data(u, spec.lam, [2, 4], tau=tau)
    for k, N in enumerate((2, 4)):
        Bm = u[:N].numpy() * np.sqrt(spec.lam)
        P = Bm.T @ np.linalg.solve(Bm @ Bm.T, Bm)
        assert got[k] == pytest.approx(float((spec.lam * tau * (1 - np.diag(P))).sum()),
                                       rel=1e-10)
    S, S2 = ss.feature_moments(u, spec.lam, tau)
    ne = linear.loss_infinite_data_normal_eq(S, S2, float((spec.lam * tau).sum()), [2, 4])
    np.testing.assert_allclose(ne, got, rtol=1e-8)


def _hand_observed(L, lam_obs, tau_obs):
    K = L.shape[0]
    return linear.Observed(np.arange(K), torch.as_tensor(L, dtype=torch.float64),
                           torch.as_tensor(lam_obs), torch.as_tensor(tau_obs), 0.0,
                           float(np.sum(np.asarray(lam_obs) * tau_obs)), K)


def test_reduced_fit_cut_off_and_unit_ridge_match_numpy():
    """The min-norm map drops singular values of Z = L^T V^T below rtol times the largest,
    as numpy's pinv(Z, rcond=rtol) does (Z = diag(1e3, 1e-9): the second is dropped); at a
    relative ridge of exactly 1 it is the ridge (Z^T Z + mu I)^-1 Z^T L^T with
    mu = mean(s^2), not the pseudo-inverse."""
    obs = _hand_observed(np.eye(2), np.ones(2), np.ones(2))
    V = torch.as_tensor(np.diag([1e3, 1e-9]))
    Z = np.diag([1e3, 1e-9])
    A = linear.reduced_fit(obs, V).numpy()
    np.testing.assert_allclose(A, np.linalg.pinv(Z, rcond=1e-10), rtol=1e-12, atol=1e-18)
    rng = np.random.default_rng(0)
    L, Vn = rng.standard_normal((3, 2)), rng.standard_normal((4, 3))
    obs = _hand_observed(L, np.ones(3), np.ones(3))
    Z = L.T @ Vn.T
    mu = np.mean(np.linalg.svd(Z, compute_uv=False) ** 2)
    ref = np.linalg.solve(Z.T @ Z + mu * np.eye(4), Z.T @ L.T)
    np.testing.assert_allclose(linear.reduced_fit(obs, torch.as_tensor(Vn), 1.0).numpy(), ref,
                               rtol=1e-10)


@pytest.mark.parametrize("mu_rel", [0.0, 0.5])
def test_ridge_path_with_tau_matches_the_x_space_loss(mu_rel):
    """The target-averaged loss with non-unit tau (w_j ~ N(0, tau_j)) equals
    tr(Lambda E T E^T), E = u^T R X - I, computed on the explicit design (numpy); the
    decomposition's three parts add up to it and its floor is the never-seen sum."""
    M, D, N = 10, 5, 4
    spec, X = _spec(M), _dense_sparse_X(D, M, 2)
    tau = np.linspace(0.4, 2.5, M)
    u = ss.gaussian_features(N, M, 5)
    obs = ss.observe(sp.csr_matrix(X), spec, tau=tau)
    S, _ = ss.feature_moments(u, spec.lam)
    got = ss.ridge_path(obs, u, S, [mu_rel])[0]
    ref = _brute_loss(X, u.numpy(), spec.lam, tau, mu_rel)
    assert got == pytest.approx(ref, rel=1e-9)
    parts = ss.ridge_path(obs, u, S, [mu_rel], decompose=True)[0]
    assert parts.sum() == pytest.approx(ref, rel=1e-9)
    assert parts[2] == pytest.approx(float((spec.lam * tau)[-2:].sum()), rel=32 * EPS)  # a torch and a NumPy sum


def test_bayes_readout_limits():
    """The Bayes readout's loss is the floor plus sum_obs lambda_k tau_k c_k: with every
    complement leverage 1 (no features) it is the whole sum_j lambda_j tau_j, with every
    leverage 0 (features span the observed coordinates) the never-seen floor alone."""
    M = 8
    spec, X = _spec(M), _dense_sparse_X(5, M, 1)
    tau = np.linspace(0.5, 2.0, M)
    obs = ss.observe(sp.csr_matrix(X), spec, tau=tau)
    ones = torch.ones(M, dtype=torch.float64)
    # 32 ulp: the same 8 positive terms summed in another grouping
    assert linear.loss_bayes_readout(obs, ones) == pytest.approx(obs.total, rel=32 * EPS)
    assert linear.loss_bayes_readout(obs, 0 * ones) == pytest.approx(obs.T_obs, rel=32 * EPS)
    assert obs.T_obs < obs.total


def test_dense_helpers_read_lambda_lists_at_float64():
    """dense_ridge_path and dense_loss_infinite_width take lambda as given: a Python list of
    decimals (not float32-representable) gives the float64 result of the array; the
    infinite-width loss is sum_j lambda_j (1 - P_jj), P the projector on X's row space
    (numpy)."""
    rng = np.random.default_rng(4)
    X = rng.standard_normal((3, 6))
    lam = [0.1, 0.7, 0.3, 0.9, 0.11, 0.5]
    P = X.T @ np.linalg.solve(X @ X.T, X)
    ref = float(np.sum(np.array(lam) * (1 - np.diag(P))))
    # two linear-algebra routes to the projector (the package's against solve here), 3 x 6
    # and well conditioned: 512 ulp; float32-rounded lambdas would be ~1e-8 off
    assert linear.dense_loss_infinite_width(X, lam) == pytest.approx(ref, rel=512 * EPS)
    u = ss.gaussian_features(4, 6, 0)
    S, _ = ss.feature_moments(u, np.array(lam))
    a = linear.dense_ridge_path(X, u, S, lam, [0.0, 0.3])
    b = linear.dense_ridge_path(X, u, S, np.array(lam), [0.0, 0.3])
    np.testing.assert_allclose(a, b, rtol=1e-14)


def test_peak_location_is_the_argmax_of_the_ratio():
    """The interpolation peak is the N where ridgeless / ridge is largest: for losses
    (1, 4, 2) over (1, 2, 2) the ratios are 1, 2, 1, so N = 20."""
    assert linear.peak_location([10, 20, 30], [1.0, 4.0, 2.0], [1.0, 2.0, 2.0]) == 20
