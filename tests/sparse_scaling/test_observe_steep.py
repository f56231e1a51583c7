"""observe on steep spectra: the rank and the ridgeless loss against exact references.

The eigenvalues of G = X_obs^T X_obs span the squared amplitudes, about 1e12 at the domain's
edge (alpha2 = 1, D = 1e4) and far more on a steeper spectrum; a threshold on them dropped
observed coordinates of small amplitude (issue 49, item 5). The references here do not
share that arithmetic: the exact rank of the amplitude-free sign pattern over GF(p), and
the ridgeless loss in 50-digit arithmetic (mpmath)."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
import scipy.sparse as sp

from dltheory import sparse_scaling as ss

P = 2_147_483_647   # a prime: rank over GF(P) of an integer matrix equals its rank over Q
                    # unless P divides every nonzero maximal minor (never for 0/+-1 patterns
                    # of this size in practice; it can only be lower, never higher)


def pattern_rank(Xo) -> int:
    """Exact rank of X_obs: its columns divided by their amplitudes are 0/+-1 (random signs),
    and rescaling columns keeps the rank; Gaussian elimination over GF(P) in integers."""
    A = Xo.toarray()
    A = np.rint(A / np.abs(A).max(0, keepdims=True)).astype(np.int64) % P
    r, (rows, cols) = 0, A.shape
    for c in range(cols):
        piv = np.flatnonzero(A[r:, c])
        if piv.size == 0:
            continue
        i = r + piv[0]
        A[[r, i]] = A[[i, r]]
        A[r] = (A[r] * pow(int(A[r, c]), P - 2, P)) % P
        nz = np.flatnonzero(A[:, c])
        nz = nz[nz != r]
        if nz.size:
            A[nz] = (A[nz] - (A[nz, c:c + 1] * A[r]) % P) % P
        r += 1
        if r == rows:
            break
    return r


@pytest.mark.parametrize("a1, a2, D, seed", [(1.0, 1.0, 10_000, 1), (0.5, 1.0, 3000, 0),
                                             (1.0, 4.0, 3000, 2)])
def test_rank_equals_the_exact_pattern_rank_on_steep_spectra(a1, a2, D, seed):
    """At the domain's edge (alpha2 = 1) and beyond it (alpha2 = 4) the rank of observe
    equals the exact rank, where the eigenvalue spread of G is far beyond 1e12; G = L L^T."""
    spec = ss.spectrum(200_000, a1, a2)
    X = sp.csc_matrix(ss.sample_sparse(spec, D, [5, seed]))
    obs = ss.observe(X, spec)
    Xo = X[:, obs.obs]
    G = (Xo.T @ Xo).toarray()
    g = np.linalg.eigvalsh(G)
    assert g.max() / np.abs(g[g > 0]).min() > 1e12          # the regime the old cut failed in
    assert obs.rank == pattern_rank(Xo)
    LLt = (obs.L @ obs.L.T).numpy()
    scale = np.sqrt(np.outer(np.diag(G), np.diag(G)))
    assert np.max(np.abs(LLt - G) / scale) < 1e-12           # entrywise, relative to C C


def _mp_ridgeless_loss(X, u, lam) -> float:
    """E_w l of the min-norm fit on Phi = X u^T, y = X w, in 50 digits: with
    Phi^+ from the SVD, beta = u^T Phi^+ X w = B w and E_w l = sum_j lam_j |B_j. - e_j|^2."""
    with mpmath.workdps(50):
        Xm, um = mpmath.matrix(X.tolist()), mpmath.matrix(u.tolist())
        Phi = Xm * um.T
        U, s, Vt = mpmath.svd_r(Phi)
        tol = mpmath.mpf(10) ** -35 * max(s)
        Sinv = mpmath.diag([1 / x if x > tol else 0 for x in s])
        B = um.T * (Vt.T * Sinv * U.T) * Xm
        M = len(lam)
        return float(sum(lam[j] * sum((B[j, i] - (1 if i == j else 0)) ** 2 for i in range(M))
                         for j in range(M)))


@pytest.mark.parametrize("excess", [3, 8])
def test_ridgeless_loss_matches_50_digit_reference_on_a_steep_spectrum(excess):
    """Just above the peak (N = r + 1 + excess) on a spectrum whose Gram eigenvalues span
    far more than 1e12, the float64 ridge path at mu = 0 agrees with the 50-digit min-norm
    fit to 1e-6; the rank the old absolute-looking cut gave was lower."""
    spec = ss.spectrum(24, 0.5, 9.0)
    X = sp.csc_matrix(ss.sample_sparse(spec, 40, [3, 1]))
    obs = ss.observe(X, spec)
    G = (X[:, obs.obs].T @ X[:, obs.obs]).toarray()
    g = np.linalg.eigvalsh(G)
    assert int((g > 1e-12 * g.max()).sum()) < obs.rank == pattern_rank(X[:, obs.obs])
    N = obs.rank + 1 + excess
    u = ss.gaussian_features(N, spec.M, 7)
    S, _ = ss.feature_moments(u, spec.lam)
    got = float(ss.ridge_path(obs, u, S, [0.0])[0])
    ref = _mp_ridgeless_loss(X.toarray(), u.numpy(), spec.lam)
    assert got == pytest.approx(ref, rel=1e-6)


def test_infinite_width_projection_uses_the_row_space():
    """With the non-orthogonal factor L, loss_infinite_width still projects on the row space
    of X_obs: against the projector from an SVD of X_obs^T (a moderate spectrum)."""
    spec = ss.spectrum(2000, 0.25, 1.0)
    X = sp.csc_matrix(ss.sample_sparse(spec, 60, [9, 0]))
    obs = ss.observe(X, spec)
    assert obs.rank < obs.K                                   # some coordinates unidentified
    Xo = X[:, obs.obs].toarray()
    sv = np.linalg.svd(Xo, compute_uv=False)
    r = int((sv > 1e-9 * sv.max()).sum())
    U = np.linalg.svd(Xo.T, full_matrices=False)[0][:, :r]
    Pkk = (U * U).sum(1)
    want = obs.T_obs + float((obs.lam_obs.numpy() * (1 - Pkk)).sum())
    assert r == obs.rank
    assert ss.loss_infinite_width(obs) == pytest.approx(want, rel=1e-8, abs=1e-14)
