"""Outputs and domain edges of dltheory.gradient_flow.model that tests/test_gradient_flow.py
leaves open (written against the mutants that survived scripts/mutation_score.py).

Each test names its independent reference: the scalar problem's closed-form loss and flow,
the GD recursion written out by hand on it, or a distributional fact about the draw."""

import math

import numpy as np
import pytest

from dltheory import gradient_flow as gf


def test_default_scalar_problem_is_x_equals_y_equals_one():
    """The default scalar problem is f = u v x with x = y = 1: L = (u v - 1)^2 / 2, zero on
    the hyperbola u v = 1 and 1/2 at the origin."""
    p = gf.scalar_problem()
    assert gf.loss(p, np.array([2.0]), np.array([0.5])) == 0.0
    assert gf.loss(p, np.zeros(1), np.zeros(1)) == 0.5


def test_sparse_teacher_has_k_distinct_signed_entries():
    """A k-sparse teacher with +-1 entries: exactly k non-zeros, each +-1, and independent
    signs (with k = 200 both signs occur; all equal has probability 2^-199). k = 1 is in the
    domain 1 <= k <= d, k = 0 is not."""
    _, beta = gf.sparse_regression(5, 300, 200, seed=0)
    assert np.count_nonzero(beta) == 200
    assert set(np.unique(beta[beta != 0])) == {-1.0, 1.0}
    _, beta = gf.sparse_regression(5, 3, 1, seed=0)
    assert np.count_nonzero(beta) == 1
    with pytest.raises(ValueError):
        gf.sparse_regression(5, 3, 0, seed=0)


def test_sparse_regression_noise_has_the_stated_scale():
    """y = X beta* + noise eps with eps ~ N(0, 1): the residual y - X beta* has standard
    deviation `noise` (0.5 here; n = 4000 puts the sample value within 0.45..0.55 with
    overwhelming probability) and Gaussian tails (no residual beyond 6 noise)."""
    p, beta = gf.sparse_regression(4000, 5, 2, noise=0.5, seed=1)
    r = p.y - p.X @ beta
    assert 0.45 < r.std() < 0.55
    assert np.abs(r).max() < 3.0


def test_loss_gradient_ratio_with_one_direction():
    """A single random direction (n_dirs = 1) is a valid probe: the central difference of
    the loss agrees with the analytic directional derivative, ratio 1."""
    p, _ = gf.sparse_regression(10, 4, 2, seed=2)
    r = gf.loss_gradient_ratio(p, np.full(4, 0.3), np.full(4, 0.7), n_dirs=1)
    assert r == pytest.approx(1.0, abs=1e-6)
    with pytest.raises(ValueError):
        gf.loss_gradient_ratio(p, np.full(4, 0.3), np.full(4, 0.7), n_dirs=0)


def test_gd_loss_record_is_the_loss_of_each_iterate():
    """On the scalar problem L = (u v - 1)^2 / 2 (by hand) at every recorded iterate: one
    entry per iterate, steps + 1 in all; steps = 0 is the start alone."""
    p = gf.scalar_problem()
    tr = gf.gd(p, np.array([0.3]), np.array([1.2]), tau=0.1, steps=5)
    assert tr.loss.shape == (6,)
    # 64 ulp: the recorded loss goes through a matrix product, the reference is scalar
    # arithmetic; both square the same residual, a few ulp apart on any CPU
    np.testing.assert_allclose(tr.loss, (tr.U[:, 0] * tr.V[:, 0] - 1) ** 2 / 2,
                               rtol=64 * np.finfo(np.float64).eps)
    tr0 = gf.gd(p, np.array([0.3]), np.array([1.2]), tau=0.1, steps=0)
    assert tr0.U.shape == (1, 1) and tr0.loss == pytest.approx([(0.36 - 1) ** 2 / 2])


@pytest.mark.parametrize("t", [-1.0, [-0.5, 0.5], [1.0, 0.5]])
def test_flow_refuses_negative_or_decreasing_times(t):
    """flow integrates forward from t = 0: a negative time alone, or decreasing times alone,
    is refused."""
    p = gf.scalar_problem()
    with pytest.raises(ValueError):
        gf.flow(p, np.ones(1), np.ones(1), t)


def test_gd_to_flow_error_on_the_diagonal_of_the_scalar_problem():
    """On L = (u v - 1)^2 / 2 with u0 = v0 = s0, GD and the flow stay on the diagonal u = v.
    The flow has w = s^2 with w' = -2 w (w - 1), so w(t) = 1 / (1 + (1/w0 - 1) e^{-2t});
    GD is s <- s - tau s (s^2 - 1). The error is sqrt(2) |s_GD - s_flow|, both by hand."""
    p, s0, t = gf.scalar_problem(), 0.4, 1.0
    w = 1 / (1 + (1 / s0**2 - 1) * math.exp(-2 * t))
    taus = [0.1, 0.05]
    err = gf.gd_to_flow_error(p, np.array([s0]), np.array([s0]), t=t, taus=taus)
    for e, tau in zip(err, taus, strict=True):
        s = s0
        for _ in range(round(t / tau)):
            s = s - tau * s * (s * s - 1)
        assert e == pytest.approx(math.sqrt(2) * abs(s - math.sqrt(w)), rel=1e-7)


def test_gd_to_flow_error_needs_an_integer_number_of_steps():
    """t / tau must be an integer to a relative 1e-9: tau = 0.1 (1 + 1e-7) for t = 1 is 10
    steps ending at t (1 + 1e-7), a time other than t; refused."""
    p = gf.scalar_problem()
    with pytest.raises(ValueError, match="integer"):
        gf.gd_to_flow_error(p, np.ones(1), np.ones(1), t=1.0, taus=[0.1 * (1 + 1e-7)])


def test_batched_drift_refuses_a_bad_V0_or_negative_steps():
    """gd_drift_batched needs V0 of shape (B, d) like U0 and steps >= 0: each bad input is
    refused on its own."""
    p, _ = gf.sparse_regression(6, 3, 1, seed=0)
    U0 = np.ones((2, 3))
    with pytest.raises(ValueError, match="shape"):
        gf.gd_drift_batched(p, U0, np.ones((2, 2)), 0.1, steps=2, device="cpu")
    with pytest.raises(ValueError, match="steps"):
        gf.gd_drift_batched(p, U0, np.ones((2, 3)), 0.1, steps=-1, device="cpu")


def test_sparse_regression_is_noiseless_by_default():
    """The docstring's y = X beta* + noise * eps with noise 0 by default: the teacher
    interpolates the data exactly."""
    p, beta = gf.sparse_regression(12, 20, 3, seed=4)
    np.testing.assert_array_equal(p.y, p.X @ beta)
