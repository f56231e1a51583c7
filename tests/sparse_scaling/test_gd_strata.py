"""The stratified GD-failure estimator: conditional sampler, strata, and the secular formula.

The estimator P = P(A) f_in + (1 - P(A)) f_out is exact in expectation for any stratum A;
these tests check the pieces against brute force (rejection sampling, plain Monte Carlo,
explicit eigenvalues) with binomial tolerances of about 4 standard errors.
"""

import numpy as np
import pytest
import torch

from dltheory.sparse_scaling import data, gd
from dltheory.sparse_scaling.linear import gaussian_features


@pytest.fixture(scope="module")
def small():
    spec = data.spectrum(256, 3.0, -3.0)
    mask = np.zeros(256, bool)
    mask[3:40] = True                     # p_j from 2.4e-3 (j = 4) to 4e-6: both count laws
    return spec, mask


def test_hit_probability_is_exact(small):
    spec, mask = small
    D, R = 60, 20_000
    e = data.sample_entries(spec, D, 1, trials=R)
    hit = np.zeros(R, bool)
    hit[e.trial[mask[e.col]]] = True
    pa = gd.hit_probability(spec, mask, D)
    assert abs(hit.mean() - pa) < 4 * np.sqrt(pa * (1 - pa) / R)


def test_conditional_sampler_matches_rejection(small):
    spec, mask = small
    D, R = 60, 20_000
    cand = type(spec)(np.where(mask, spec.p, 0.0), spec.s2)
    cond = gd.sample_entries_hit(cand, D, 2, trials=R)
    # every draw has a hit, and only mask coordinates appear
    assert np.bincount(cond.trial, minlength=R).min() >= 1
    assert mask[cond.col].all()
    # rejection: unconditional draws of the same coordinates, kept if they hit
    ref = data.sample_entries(cand, D, 3, trials=5 * R)
    kept = np.unique(ref.trial)
    # per-coordinate mean count given A, conditional vs rejection
    for j in (3, 4, 6, 10):
        a = np.sum(cond.col == j) / R
        b = np.sum(ref.col == j) / kept.size
        se = np.sqrt(a / R + b / kept.size)
        assert abs(a - b) < 4 * se + 1e-12, (j, a, b)
    # number of active entries per draw: same distribution (mean and P(>= 2))
    na = np.bincount(cond.trial, minlength=R)
    nb = np.bincount(np.searchsorted(kept, ref.trial))
    assert abs(na.mean() - nb.mean()) < 4 * np.sqrt(na.var() / R + nb.var() / kept.size)
    # rows are distinct within (trial, coordinate) and amplitudes are +- s_j
    key = (cond.trial * spec.M + cond.col) * D + cond.row
    assert np.unique(key).size == key.size
    assert np.allclose(cond.val**2, spec.s2[cond.col])


def test_strata_partition_the_data(small):
    spec, mask = small
    u = gaussian_features(8, 256, 4)
    # with hit=('in'|'out', mask) the eigenvalues come from data sets with / without a hit;
    # a mask of every rare coordinate with 'out' leaves only the always-active one
    allm = spec.p < 1
    lmax = gd.hessian_top_eigs(spec, u, 50, 5, 0, hit=("out", allm))
    expect = float(spec.s2[0] * (u[:, 0] ** 2).sum())
    assert np.allclose(lmax, expect)
    with pytest.raises(ValueError, match="hit"):
        gd.hessian_top_eigs(spec, u, 50, 5, 0, hit=("both", allm))


@pytest.mark.parametrize("kappa", [0.1, 0.5])
def test_stratified_estimate_is_unbiased(kappa):
    spec = data.spectrum(1024, 3.0, -3.0)
    u = gaussian_features(16, 1024, 600)
    eta = gd.population_step(u, spec.lam, 1.5)
    D = 300
    brute = gd.fail_probability(spec, u, [D], 40_000, eta, 5)[0][0]
    se_b = np.sqrt(brute * (1 - brute) / 40_000)
    r = gd.stratified_fail_probability(spec, u, D, eta, trials_in=4000, trials_out=4000,
                                       kappa=kappa, seed=6)
    assert abs(r["P"] - brute) < 4 * np.hypot(se_b, r["se"]), (r, brute)
    assert r["se"] > 0 and 0 < r["P_A"] < 1


def test_secular_threshold_matches_eigenvalues():
    torch.manual_seed(0)
    spec = data.spectrum(64, 3.0, -3.0)
    u = gaussian_features(8, 64, 9)
    eta = gd.population_step(u, spec.lam, 1.5)
    B = (u * torch.as_tensor(spec.lam)) @ u.T
    w, V = torch.linalg.eigh(B)
    for j in (5, 20, 40):
        uj = u[:, j]
        g = float(uj @ V @ torch.diag(1 / (2 / eta - w)) @ V.T @ uj)
        for f in (0.9, 1.1):                     # spike just below / above the secular threshold
            s = f / g
            top = float(torch.linalg.eigvalsh(B + s * torch.outer(uj, uj)).max())
            assert (eta * top > 2) == (f > 1)


def test_secular_formula_slope_tends_to_minus_nu():
    spec = data.spectrum(4096, 3.0, -3.0)
    Ds = np.geomspace(1e3, 1e5, 5)
    P = np.mean([gd.secular_fail_probability(spec, u, gd.population_step(u, spec.lam, 1.5), Ds)
                 for u in (gaussian_features(16, 4096, 100 + s) for s in range(256))], axis=0)
    slope = np.polyfit(np.log(Ds), np.log(P), 1)[0]
    # 256 draws: draw-to-draw spread of this slope ~ 0.004
    assert abs(slope + spec.nu) < 0.02


def test_bad_inputs():
    spec = data.spectrum(64, 3.0, -3.0)
    u = gaussian_features(8, 64, 1)
    with pytest.raises(ValueError, match="kappa"):
        gd.stratified_fail_probability(spec, u, 100, 0.1, trials_in=10, trials_out=10, kappa=0.0, seed=0)
    with pytest.raises(ValueError, match="eta"):
        gd.secular_fail_probability(spec, u, float("nan"), [100])
    with pytest.raises(ValueError, match="< 2"):
        gd.secular_fail_probability(spec, u, 100.0, [100])
    with pytest.raises(ValueError, match="1/4"):
        gd.sample_entries_hit(spec, 100, 0)
