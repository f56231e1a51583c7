"""The sampler, the closed forms, the GD trial sampler and bad inputs."""

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


def test_sampler_marginals_and_no_duplicates():
    spec = ss.spectrum(2000, 1.0, 0.0)
    e = ss.sample_entries(spec, 500, 0, trials=200)
    key = (e.trial * spec.M + e.col) * e.D + e.row
    assert np.unique(key).size == key.size
    counts = np.bincount(e.col, minlength=spec.M) / (200 * 500)
    for j in range(12):           # activation frequency within 4 sigma
        sd = np.sqrt(spec.p[j] * (1 - spec.p[j]) / (200 * 500))
        assert abs(counts[j] - spec.p[j]) <= 4 * sd + 1e-12
    np.testing.assert_allclose(np.abs(e.val), np.sqrt(spec.s2[e.col]))


def test_expected_floor_and_heaps_against_empirical_means():
    spec = ss.spectrum(20_000, 1.0, 0.0)
    D, R = 300, 300
    e = ss.sample_entries(spec, D, 1, trials=R)
    K = e.observed_counts()
    EK = ss.expected_observed(spec, [D])[0]
    assert abs(K.mean() - EK) < 3 * K.std() / np.sqrt(R)
    T = np.empty(R)
    for t in range(R):
        seen = np.zeros(spec.M, dtype=bool)
        seen[e.col[e.trial == t]] = True
        T[t] = spec.lam[~seen].sum()
    ET = ss.expected_floor(spec, [D])[0]
    assert abs(T.mean() - ET) < 3 * T.std() / np.sqrt(R)


def test_asymptotic_constants():
    spec = ss.spectrum(1_000_000, 1.0, 0.0)
    D = 1e6
    assert abs(ss.expected_floor(spec, [D])[0] * D / ss.floor_constant(1, 0) - 1) < 0.01
    assert abs(ss.expected_observed(spec, [1e4])[0] / 100 / ss.heaps_constant(1) - 1) < 0.01
    lam = ss.spectrum(100_000, 1.0, 0.0).lam
    assert abs(ss.loss_de(lam, [512])[0] * 512**2 / ss.de_constant(2) - 1) < 0.02


def test_de_matches_sampled_infinite_data_loss():
    spec = ss.spectrum(4096, 1.0, 0.0)
    Ns = [32, 64]
    r = []
    for seed in range(3):
        u = ss.gaussian_features(64, 4096, 3 + seed)
        r.append(ss.loss_infinite_data(u, spec.lam, Ns) / ss.loss_de(spec.lam, Ns))
    r = np.mean(r, 0)
    assert np.all((r > 0.9) & (r < 1.1))


def test_envelope_frontier_on_pure_power_laws():
    Cs = np.geomspace(1e6, 1e14, 9)
    N, D, L = ss.envelope_frontier(lambda n: n**-2.0, lambda d: 0.5 / d, Cs, np.geomspace(1, 1e5, 20000))
    sN = np.polyfit(np.log(Cs), np.log(N), 1)[0]
    sD = np.polyfit(np.log(Cs), np.log(D), 1)[0]
    assert abs(sN - 0.25) < 0.01 and abs(sD - 0.5) < 0.01
    ex = ss.frontier_exponents(1.0, 0.0)
    assert ex == ss.two_term_frontier_exponents(2.0, 1.0)


def test_hessian_sampler_equals_explicit_data():
    spec = ss.spectrum(512, 3.0, -3.0)
    u = ss.gaussian_features(8, 512, 4)
    D, R = 200, 5
    fast = ss.hessian_top_eigs(spec, u, D, R, 11)
    # rebuild the same data sets from the same stream
    rng = np.random.default_rng(11)
    rest = ss.SparseSpectrum(np.where(spec.p >= 1, 0.0, spec.p), spec.s2)
    e = ss.sample_entries(rest, D, rng, trials=R)
    ukey, _ = np.unique(e.trial * D + e.row, return_inverse=True)
    xi = rng.integers(0, 2, ukey.size) * 2.0 - 1.0
    for t in range(R):
        X = e.csr(t).toarray()
        x1 = np.ones(D)
        m = ukey // D == t
        x1[ukey[m] % D] = xi[m]
        X[:, 0] = x1
        Phi = X @ u.numpy().T
        assert abs(np.linalg.eigvalsh(Phi.T @ Phi / D).max() - fast[t]) < 1e-9 * fast[t]


def test_gd_diverges_iff_step_exceeds_curvature():
    spec = ss.spectrum(512, 3.0, -3.0)
    u = ss.gaussian_features(8, 512, 5)
    Phi, y, lmax = ss.sample_problem(spec, u, 100, 6)
    assert ss.gd_diverged(ss.run_gd(Phi, y, 2.2 / lmax, 400))
    assert not ss.gd_diverged(ss.run_gd(Phi, y, 1.8 / lmax, 400))


def test_spike_formula_needs_alpha2_below_minus_one():
    spec = ss.spectrum(4096, 3.0, -0.5)
    u = ss.gaussian_features(16, 4096, 7)
    eta = ss.population_step(u, spec.lam, 1.5)
    P = ss.secular_fail_probability(spec, u, eta, [100, 1000])
    assert np.all(P == 0)


@pytest.mark.parametrize("call, name", [
    (lambda: ss.spectrum(0, 1.0, 0.0), "M"),
    (lambda: ss.spectrum(10, -0.5, 0.0), "alpha1"),
    (lambda: ss.spectrum(10, 1.0, -3.0), r"alpha1 \+ alpha2 \+ 1"),
    (lambda: ss.sample_entries(ss.spectrum(10, 1, 0), 0, 0), "D"),
    (lambda: ss.sample_entries(ss.spectrum(10, 1, 0), 5, 0, amplitude="x"), "amplitude"),
    (lambda: ss.kappa(np.ones(5), 7), "N"),
    (lambda: ss.overparam_loss(1.0, 5, 5, 5), r"N > r \+ 1"),
    (lambda: ss.overparam_loss(1.0, 50, 5, 6), "full column rank"),
    (lambda: ss.overparam_loss(1.0, 50, 7, 6), "cannot exceed"),
    (lambda: ss.population_step(torch.ones(2, 3), np.ones(3), 2.5), "c"),
    (lambda: ss.observe(ss.sample_sparse(ss.spectrum(10, 1, 0), 5, 0), ss.spectrum(11, 1, 0)), "M="),
])
def test_bad_inputs_raise(call, name):
    with pytest.raises(ValueError, match=name):
        call()
