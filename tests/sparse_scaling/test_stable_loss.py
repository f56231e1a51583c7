"""The exact model-limited loss stays exact for steep spectra.

Property tests of ``loss_infinite_data`` (and the complement leverages behind it) over
alpha1 in [0.25, 4] and alpha2 in (-alpha1 - 1, 2] against an independent reference: the
normal-equation formula ``tr Sigma - tr(S^-1 S_2)`` evaluated in 80-digit arithmetic
(mpmath), where its cancellation is harmless. Larger N are checked against exact
invariances (rotating the features leaves the loss unchanged) and against the
deterministic equivalent.
"""

import mpmath
import numpy as np
import pytest
import torch
from threadpoolctl import threadpool_limits

import dltheory.sparse_scaling as ss


@pytest.fixture(autouse=True)
def _one_blas_thread():
    with threadpool_limits(limits=1):
        yield


def reference_loss(u: np.ndarray, lam: np.ndarray, N: int, dps: int = 80) -> float:
    """tr Sigma - tr(S_N^-1 S2_N) with every operation in ``dps``-digit arithmetic."""
    with mpmath.workdps(dps):
        U = [[mpmath.mpf(float(x)) for x in row] for row in u[:N]]
        lm = [mpmath.mpf(float(x)) for x in lam]
        S, S2 = mpmath.matrix(N, N), mpmath.matrix(N, N)
        for a in range(N):
            for b in range(a, N):
                prod = [U[a][j] * U[b][j] * lm[j] for j in range(len(lm))]
                S[a, b] = S[b, a] = mpmath.fsum(prod)
                S2[a, b] = S2[b, a] = mpmath.fsum(p * lj for p, lj in zip(prod, lm, strict=True))
        X = mpmath.inverse(S) * S2
        return float(mpmath.fsum(lm) - mpmath.fsum(X[i, i] for i in range(N)))


ALPHAS = [(0.25, -1.2), (0.25, 0.0), (1.0, 0.0), (1.0, 2.0), (2.0, -2.5), (3.0, -3.0),
          (4.0, -4.0), (4.0, 1.0), (4.0, 2.0), (2.5, 1.5)]


@pytest.mark.parametrize("alpha1, alpha2", ALPHAS)
def test_infinite_data_loss_matches_high_precision_reference(alpha1, alpha2):
    M, Ns = 160, [4, 12, 24]
    spec = ss.spectrum(M, alpha1, alpha2)
    u = ss.gaussian_features(max(Ns), M, 7)
    got = ss.loss_infinite_data(u, spec.lam, Ns)
    want = np.array([reference_loss(u.numpy(), spec.lam, n) for n in Ns])
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_normal_equations_do_fail_where_the_stable_form_holds():
    """The reason for the QR form: at alpha_N = 7 the normal equations are far off."""
    M, N = 160, 24
    spec = ss.spectrum(M, 4.0, 2.0)
    u = ss.gaussian_features(N, M, 7)
    S, S2 = ss.feature_moments(u, spec.lam)
    bad = ss.linear.loss_infinite_data_normal_eq(S, S2, spec.lam.sum(), [N])[0]
    want = reference_loss(u.numpy(), spec.lam, N)
    assert abs(ss.loss_infinite_data(u, spec.lam, [N])[0] / want - 1) < 1e-6
    assert not abs(bad / want - 1) < 1e-2


@pytest.mark.parametrize("alpha1, alpha2", [(0.25, 0.5), (1.0, 0.0), (4.0, 1.0), (3.0, 2.0)])
def test_large_N_rotation_invariance_and_de(alpha1, alpha2):
    """N up to 1024: rotating u (theta -> O theta) leaves the loss unchanged to 1e-6, the
    loss decreases with N, and it stays within 15% of the deterministic equivalent."""
    M, Ns = 2048, [64, 256, 1024]
    spec = ss.spectrum(M, alpha1, alpha2)
    u = ss.gaussian_features(max(Ns), M, 3)
    got = ss.loss_infinite_data(u, spec.lam, Ns)
    g = torch.Generator().manual_seed(5)
    for n, val in zip(Ns, got, strict=True):
        O, _ = torch.linalg.qr(torch.randn(n, n, generator=g, dtype=torch.float64))
        rot = ss.loss_infinite_data(O @ u[:n], spec.lam, [n])[0]
        assert abs(rot / val - 1) < 1e-6
    assert np.all(np.diff(got) < 0) and np.all(got > 0)
    ratio = got / ss.loss_de(spec.lam, Ns)
    assert np.all((ratio > 0.85) & (ratio < 1.15))


def test_complement_leverages_sum_to_M_minus_N():
    spec = ss.spectrum(500, 2.0, 1.0)
    u = ss.gaussian_features(64, 500, 1)
    for n, c in zip([8, 64], ss.complement_leverage((u * torch.as_tensor(spec.lam).sqrt()).T, [8, 64]),
                    strict=True):
        assert abs(float(c.sum()) - (500 - n)) < 1e-8
        assert float(c.min()) >= 0 and float(c.max()) <= 1 + 1e-12
