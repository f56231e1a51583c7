"""ℓ-order/PD, the replica solver, the data model and representation metrics."""

import numpy as np
import pytest

from dltheory.pretrain_finetune import (
    CORNERS,
    FULL_OVERLAP,
    NEW_FEATURES,
    ScalarChannel,
    Task,
    corner_values,
    ensd,
    l_order_pd,
    l_order_pd_fd,
    l_order_x,
    participation_ratio,
    prox,
    prox_deriv,
    rel_error,
    replica_error,
    run_exact,
    sample_teachers,
)


def test_l_order_limits_and_series():
    assert np.isclose(l_order_x(1e-6), 2.0)
    assert np.isclose(l_order_x(1e-4 * 1.0001), l_order_x(1e-4 * 0.9999), atol=1e-9)
    assert 1.0 < l_order_x(1e8) < 1.06
    x = np.logspace(-3, 3, 50)
    assert np.all(np.diff(l_order_x(x)) < 0)


def test_l_order_pd_match_finite_differences():
    for args in [(0.7, 1.3, 0.1, 0.3, 0.2), (2.0, 0.5, 1e-3, -0.9, 1e-3), (0.05, 3.0, 1.0, 1.0, 0.5)]:
        ell, pd = l_order_pd(*args)
        ell_fd, pd_fd = l_order_pd_fd(*args)
        assert np.isclose(ell, ell_fd, atol=1e-6) and np.isclose(pd, pd_fd, atol=1e-6)


def test_tradeoff_and_corners():
    rng = np.random.default_rng(0)
    bf, bp = 10 ** rng.uniform(-3, 2, 2000), 10 ** rng.uniform(-3, 2, 2000)
    for lam in (-1.0, -0.9, 0.0, 1.0):
        ell, pd = l_order_pd(bf, bp, 10 ** rng.uniform(-5, 2, 2000), lam, 10 ** rng.uniform(-4, 1, 2000))
        s = ell + pd
        assert s.min() >= 1 - 1e-9 and s.max() <= 2 + 1e-9
    for name, (meas, exp) in corner_values().items():
        assert name in CORNERS
        assert np.abs(np.array(meas) - np.array(exp)).max() <= 0.02


def test_prox_solves_its_equation():
    u = np.linspace(-5, 5, 41)
    for C in (1e-6, 0.1, 10.0):
        b = prox(u, 0.7, C)
        assert np.allclose(b + 0.7 * np.arcsinh(b / C), u, atol=1e-9)
        eps = 1e-6
        fd = (prox(u + eps, 0.7, C) - prox(u - eps, 0.7, C)) / (2 * eps)
        mask = np.abs(u) > 1e-3
        assert np.allclose(fd[mask], prox_deriv(b, 0.7, C)[mask], rtol=1e-5)


def test_replica_l2_limit_and_recovery():
    for a in (0.2, 0.5):
        assert abs(replica_error(FULL_OVERLAP, a, 1e3, 0.0, 1e-3).error - (1 - a)) < 0.01
    # regime I on new features recovers the sparse teacher at alpha = 0.3 (l1-like)
    assert replica_error(NEW_FEATURES, 0.3, 1e-3, -1.0, 1e-3).error < 1e-3
    with pytest.raises(ValueError, match="alpha"):
        ScalarChannel([1.0], [1.0], [1.0]).solve(1.5)


def test_replica_vs_finite_d_minimiser():
    sims = [run_exact(FULL_OVERLAP, 300, 0.15, 10.0, 0.0, 1e-3, seed=s).error for s in range(4)]
    rep = replica_error(FULL_OVERLAP, 0.15, 10.0, 0.0, 1e-3).error
    assert abs(np.mean(sims) - rep) < 0.05


def test_rel_error_removes_teacher_energy_fluctuations():
    # min-l2 limit (c = 1e3) on a sparse new-features teacher (about 12 active coordinates):
    # E[e | beta*] = (1 - alpha) ||beta*||^2 / D, so the raw error inherits the teacher's
    # energy fluctuation, while the relative error concentrates at the replica value 1 - alpha.
    runs = [run_exact(NEW_FEATURES, 300, 0.3, 1e3, 0.0, 1e-3, seed=s) for s in range(4)]
    for r in runs:
        assert np.isclose(r.rel_error, r.error / r.teacher_energy)
        assert abs(r.rel_error - 0.7) < 0.1
    assert np.isclose(rel_error(np.zeros(4), np.array([2.0, 0, 0, 0])), 1.0)
    with pytest.raises(ValueError, match="beta_star"):
        rel_error(np.ones(3), np.zeros(3))


def test_two_stage_ordering():
    # better pretraining (larger alpha_PT) approaches the perfect-PT answer from above
    e_two = replica_error(FULL_OVERLAP, 0.2, 1e-3, 0.0, 1e-3, alpha_pt=0.6).error
    e_perfect = replica_error(FULL_OVERLAP, 0.2, 1e-3, 0.0, 1e-3).error
    assert e_perfect <= replica_error(FULL_OVERLAP, 0.2, 1e-3, 0.0, 1e-3, alpha_pt=0.9).error < e_two


def test_task_and_teachers():
    t = Task(0.2, 0.5, 0.1)
    assert np.isclose(t.rho_ft, 0.2 * 0.5 + 0.8 * 0.1)
    p, _, _ = t.atoms()
    assert np.isclose(p.sum(), 1.0)
    bp, bf = sample_teachers(t, 200_000, seed=0)
    assert abs(np.mean(bp**2) - 1) < 0.03 and abs(np.mean(bf**2) - 1) < 0.03
    with pytest.raises(ValueError, match="rho_sh"):
        Task(0.2, 1.5, 0.0)
    with pytest.raises(ValueError, match="slab"):
        sample_teachers(t, 10, seed=0, slab="laplace")


def test_pr_and_ensd():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4000, 5))
    assert abs(participation_ratio(a) - 5) < 0.1
    assert abs(ensd(a, a) - participation_ratio(a)) < 1e-9
    b = np.zeros((4000, 5))
    b[:, 0] = rng.standard_normal(4000)
    assert abs(participation_ratio(b) - 1) < 1e-9
    with pytest.raises(ValueError, match="rows"):
        ensd(a, a[:10])


def test_ensd_sample_gram_form_against_the_feature_space_definition():
    """ENSD by its definition through eigenvalues/feature covariances, brute force: rotation
    invariance, different widths, PR the same in sample and feature space."""
    rng = np.random.default_rng(1)
    a = rng.standard_normal((50, 6)) @ np.diag([3, 2, 1, 1, 0.5, 0.1])
    r, _ = np.linalg.qr(rng.standard_normal((6, 6)))
    assert ensd(a, a @ r) == pytest.approx(participation_ratio(a), rel=1e-10)
    # different widths: B shares two directions of A and adds three of its own
    b = np.hstack([a[:, :2], rng.standard_normal((50, 3))])
    g1, g2 = a @ a.T, b @ b.T
    c1, c2 = g1 / np.trace(g1), g2 / np.trace(g2)
    pr1, pr2 = 1 / np.trace(c1 @ c1), 1 / np.trace(c2 @ c2)
    assert participation_ratio(a) == pytest.approx(pr1, rel=1e-12)
    # PR in feature space (A^T A) is the same number: shared non-zero eigenvalues
    f = a.T @ a
    assert participation_ratio(a) == pytest.approx(np.trace(f) ** 2 / np.trace(f @ f), rel=1e-12)
    assert ensd(a, b) == pytest.approx(pr1 * pr2 * np.trace(c1 @ c2), rel=1e-12)
    assert 0 < ensd(a, b) <= pr1 * pr2   # tr(C1 C2) <= 1
