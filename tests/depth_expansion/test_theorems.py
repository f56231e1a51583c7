"""The theorems as predictions: worst-case risks that reach the routes' bounds, the
simulations behind the coverage and tightness claims, the Lipschitz constants, and the
Transformer insertion."""

import math

import numpy as np
import pytest
import torch

from dltheory import depth_expansion as de
from dltheory.depth_expansion import bounds, lipschitz, transfer
from dltheory.depth_expansion import signal as sg
from dltheory.depth_expansion import transformer as tf


def test_route_b_bracket_reaches_its_deviation_term():
    """Adversarial risks: f_new and f_S with deviations of opposite signs at their largest
    size make the bracket equal 2 (eps_M + eps_K); a halved term would be violated."""
    eM, eK = 0.03, 0.02
    old = bounds.Risks(train=0.50, pop=0.52, test=0.53)
    f_S = bounds.Risks(train=0.40 + eM, pop=0.40, test=0.40 - eK)       # G = -eM, T = -eK
    new = bounds.Risks(train=0.39 - eM, pop=0.39, test=0.39 + eK)       # G = +eM, T = +eK
    rb = bounds.route_b(old, f_S, new)
    assert rb.eps_M == pytest.approx(eM) and rb.eps_K == pytest.approx(eK)
    assert rb.bracket == pytest.approx(2 * (eM + eK))
    assert rb.lhs == pytest.approx(rb.rhs)                              # attained
    assert rb.lhs > -rb.delta_test - rb.delta_erm + (eM + eK)           # halved: violated


def test_route_a_gap_bracket_reaches_two_eps():
    eM = 0.04
    old = bounds.Risks(train=0.50, pop=0.52, test=0.52)
    f_pop = bounds.Risks(train=0.45 + eM, pop=0.45, test=0.45)
    new = bounds.Risks(train=0.44 - eM, pop=0.44, test=0.44)
    ra = bounds.route_a(old, f_pop, new, K=1000, B=5.0)
    assert ra.gap_bracket == pytest.approx(2 * eM) == pytest.approx(2 * ra.eps_M)


def test_complementary_pair_cancels_exactly():
    rng = np.random.default_rng(0)
    L = transfer.complementary(np.minimum(rng.exponential(1.0, 500), 5.0), 5.0)
    d = transfer.draw(L, n=200, K=100, draws=50, seed=1)
    np.testing.assert_allclose(d.G[:, 0], -d.G[:, 1], atol=1e-12)
    np.testing.assert_allclose(d.T[:, 0], -d.T[:, 1], atol=1e-12)


def test_route_simulation_matches_its_clt_prediction():
    rng = np.random.default_rng(0)
    base = np.minimum(rng.exponential(0.8, 3000), 5.0)
    L = np.stack([base, base * 0.97, base * 0.96, base * 0.95], 1)
    L = np.concatenate([L, transfer.complementary(L[:, 3], 5.0)], 1)
    sims = transfer.simulate_routes(L, n=2000, K=1000, delta=0.05, draws=2000, seed=3)
    for k in ("A_worst", "B_worst"):
        s = sims[k]
        assert s.coverage_fail <= s.allowed
        assert s.tightness == pytest.approx(s.predicted, rel=0.12)
    assert sims["B"].tightness < 0.2 and sims["A"].coverage_fail <= 0.05


def test_hoeffding_tail_simulation_and_exact():
    K, B = 500, 5.0
    deltas = [2 * B * x / math.sqrt(K) for x in (1.0, 2.0)]
    f = transfer.simulate_hoeffding(K, deltas, B, draws=200_000, seed=0)
    exact = [transfer.rademacher_tail(K, d / 2, B) for d in deltas]
    np.testing.assert_allclose(f, exact, rtol=0.05)
    assert all(fi <= bounds.hoeffding_failure(K, d, B) for fi, d in zip(f, deltas, strict=True))
    # the exponent is shared by the failure probability and the test-set size it implies
    k = bounds.hoeffding_K(0.05, B, 0.05)
    assert bounds.hoeffding_failure(math.ceil(k), 0.05, B) == pytest.approx(0.05, rel=1e-3)


def test_hoeffding_ties_are_not_failures():
    """At K = 10 000 (the paper preset's test size) and Delta_R = 2 B x / sqrt(K) the
    failure threshold K/2 + x sqrt(K)/2 is an integer: a test set with exactly that many +B
    values has mean Delta_R / 2 and does not fail. The exact tail and the simulation must
    both exclude the tie (binomial tail from scipy.stats on the integer count); counting it
    overstated the frequency by 3-5.5 % here (and the exact tail was off at K = 48 400)."""
    from scipy import stats

    B = 5.0
    for K, xs in ((10_000, (1.0, 1.5, 2.0, 2.5)), (48_400, (0.4, 1.2, 1.9, 2.6))):
        m = math.isqrt(K)
        for x in xs:
            d = 2 * B * x / m
            k = K // 2 + round(x * m / 2)          # the tie: mean exactly d / 2
            exact = stats.binom.sf(k, K, 0.5)      # P(count > k)
            assert transfer.rademacher_tail(K, d / 2, B) == pytest.approx(exact, rel=1e-12)
            assert transfer.failure_count(K, d / 2, B) == k
    # the simulation compares integer counts: a large draw at K = 10 000 against the tail
    # without the tie, with its Monte Carlo error (the tie alone is 3-5.5 % of the tail)
    K = 10_000
    deltas = [2 * B * x / 100 for x in (1.0, 2.0)]
    f = transfer.simulate_hoeffding(K, deltas, B, draws=2_000_000, seed=1)
    for fi, d in zip(f, deltas, strict=True):
        exact = transfer.rademacher_tail(K, d / 2, B)
        se = math.sqrt(exact * (1 - exact) / 2_000_000)
        assert abs(fi - exact) < 4 * se
        tie = stats.binom.pmf(transfer.failure_count(K, d / 2, B), K, 0.5)
        assert tie > 8 * se      # the test would see the tie counted as a failure


def test_lowrank_closed_form_against_simulation():
    for d, r in ((8, 1), (16, 9), (64, 3)):
        m, se = de.diagnostics.simulate_offdiag(d, r, draws=400, seed=0)
        assert m == pytest.approx(de.lowrank_offdiag(d, r), rel=0.03)
        assert se < 0.01


def test_rmsnorm_bound_where_eps_dominates():
    norm = de.RMSNorm(16).double()
    with torch.no_grad():
        norm.gain.copy_(torch.linspace(0.5, 1.5, 16, dtype=torch.float64))
    u = torch.randn(20, 16, dtype=torch.float64)
    u = u / u.pow(2).mean(1, keepdim=True).sqrt() * 1e-3 * math.sqrt(norm.eps)
    J = de.rmsnorm_jacobian_norms(norm, u)
    np.testing.assert_allclose(J / de.rmsnorm_jacobian_bound(norm.gain, de.rms(u), norm.eps),
                               1.0, atol=1e-4)
    J0 = de.rmsnorm_jacobian_norms(norm, torch.zeros(1, 16, dtype=torch.float64))
    assert J0[0] == pytest.approx(de.eps_naive_bound(norm.gain, norm.eps), rel=1e-9)


def test_loss_lipschitz_constant_is_approached_not_exceeded():
    B = 5.0
    p_y = math.exp(-B) * 1.01                      # just under the clip
    logits = torch.tensor([[math.log(p_y), math.log(1 - p_y)]], dtype=torch.float64)
    g = lipschitz.loss_grad_norms(logits, torch.tensor([0]), B)[0]
    assert g == pytest.approx(lipschitz.loss_lipschitz(B), rel=1e-3)
    assert g <= lipschitz.loss_lipschitz(B)
    logits = torch.randn(1000, 10, dtype=torch.float64) * 5
    y = torch.randint(0, 10, (1000,))
    assert lipschitz.loss_grad_norms(logits, y, B).max() <= lipschitz.loss_lipschitz(B)


def test_top_lipschitz_bound_covers_the_exact_jacobian():
    net = de.postnorm_mlp(40, 10, width=16, depth=3, seed=0).double()
    z = net.bottom(torch.randn(30, 40, dtype=torch.float64), 1)
    J = lipschitz.top_jacobian_norms(net, 1, z)
    assert (J <= lipschitz.top_lipschitz_bounds(net, 1, z)).all()


def test_transformer_insertion_preserves_and_signal_matches_autograd():
    pool = tf.sequence_pool(64, 8, 8, seed=0)
    net = tf.prenorm_transformer(5, 12, 5, d=8, depth=2, seed=0).double()
    blk = de.ZeroInitBlock(8, seed=1).double()
    X, y = pool.X_train, pool.y_train
    exp = de.insert_block(net, 1, blk)
    with torch.no_grad():
        assert float((exp(X) - net(X)).abs().max()) == 0.0
    s = sg.first_order_signal(net, 1, blk, X, y)
    C = sg.first_order_signal_autograd(exp, blk, X, y)
    torch.testing.assert_close(s.C, C, rtol=1e-10, atol=1e-12)
    mean, _ = sg.directional_t(s.g, s.phi, s.v)
    assert mean == pytest.approx(s.gamma, rel=1e-10)


def test_majority_task_labels():
    X, y = tf.majority_task(200, length=7, n_classes=3, noise=0.0, seed=0)
    counts = np.stack([(X == c).sum(1) for c in range(3)], 1)
    assert (y == counts.argmax(1)).all()


def test_margin_t_of_a_line_search_that_stays_at_zero():
    from dltheory.depth_expansion.checks import _t

    assert _t(0.0, 0.0) == 0.0                  # step 0: the jumpboard is the old model
    assert _t(0.02, 0.005) == pytest.approx(4.0)
    assert _t(-1e-3, 0.0) == -math.inf
