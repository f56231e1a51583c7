import numpy as np
import pytest

from dltheory import fitting


def test_loglog_fit_recovers_exact_power_law():
    x = np.geomspace(1, 1e3, 20)
    fit = fitting.loglog_fit(x, 3.0 * x**-0.7)
    assert fit.slope == pytest.approx(-0.7, abs=1e-12)
    assert fit.prefactor == pytest.approx(3.0, rel=1e-12)
    assert fit.r2 == pytest.approx(1.0)
    np.testing.assert_allclose(fit(x), 3.0 * x**-0.7, rtol=1e-12)


def test_window_selects_the_regime():
    x = np.geomspace(1, 1e4, 41)
    y = np.where(x < 100, x**-1.0, 1e-2 * (x / 100) ** -0.5)   # a kink at x = 100
    assert fitting.loglog_fit(x, y, window=(1, 100)).slope == pytest.approx(-1.0, abs=1e-9)
    assert fitting.loglog_fit(x, y, window=(100, 1e4)).slope == pytest.approx(-0.5, abs=1e-9)


def test_stderr_matches_noise_level():
    rng = np.random.default_rng(0)
    x = np.geomspace(1, 1e3, 200)
    slopes = [fitting.loglog_fit(x, x**-1.0 * np.exp(0.1 * rng.standard_normal(x.size))).slope
              for _ in range(200)]
    fit = fitting.loglog_fit(x, x**-1.0 * np.exp(0.1 * rng.standard_normal(x.size)))
    assert np.std(slopes) == pytest.approx(fit.stderr, rel=0.25)


def test_nonpositive_points_dropped_and_counted():
    fit = fitting.loglog_fit([1, 2, 4, 8], [1, 0, 0.25, 0.125])
    assert fit.n == 3 and fit.n_dropped == 1
    with pytest.raises(ValueError, match=">= 2 positive"):
        fitting.loglog_fit([1, 2], [0, 0])
    with pytest.raises(ValueError, match="same length"):
        fitting.loglog_fit([1, 2, 3], [1, 2])


def test_local_slopes():
    x = np.geomspace(1, 100, 9)
    xm, s = fitting.local_slopes(x, x**2.5)
    np.testing.assert_allclose(s, 2.5)
    assert xm.shape == (8,) and np.all((xm > x[:-1]) & (xm < x[1:]))


def test_bootstrap_interval_covers_truth():
    rng = np.random.default_rng(1)
    x = np.geomspace(1, 1e3, 12)
    ys = x**-0.5 * np.exp(0.05 * rng.standard_normal((16, x.size)))
    bf = fitting.bootstrap_slope(x, ys, n_boot=400, seed=0)
    assert bf.lo <= -0.5 <= bf.hi
    assert bf.hi - bf.lo < 0.05
    again = fitting.bootstrap_slope(x, ys, n_boot=400, seed=0)
    assert again.lo == bf.lo   # seeded


def test_two_term_fit_recovers_parameters():
    N, D = np.meshgrid(np.geomspace(10, 1e4, 8), np.geomspace(10, 1e5, 9))
    L = 2.0 * N**-0.6 + 5.0 * D**-0.3
    fit = fitting.fit_two_term(N, D, L)
    assert fit.a == pytest.approx(0.6, abs=1e-4)
    assert fit.b == pytest.approx(0.3, abs=1e-4)
    assert fit.A == pytest.approx(2.0, rel=1e-3) and fit.B == pytest.approx(5.0, rel=1e-3)
    floor = fitting.fit_two_term(N, D, L + 0.01, with_floor=True)
    assert floor.E == pytest.approx(0.01, rel=0.05)
    with pytest.raises(ValueError, match="positive"):
        fitting.fit_two_term(N, D, -L)


def test_interval_helpers_live_in_fitting():
    x = np.random.default_rng(0).normal(1.0, 0.5, 40)
    m, lo, hi = fitting.mean_ci(x)
    assert lo < m < hi and m == pytest.approx(x.mean())
    assert hi - lo == pytest.approx(2 * 2.0227 * x.std(ddof=1) / np.sqrt(40), rel=1e-3)
    bm, blo, bhi = fitting.bootstrap_mean_ci(x, seed=1)
    assert bm == m and blo < m < bhi and bhi - blo == pytest.approx(hi - lo, rel=0.25)
    assert fitting.bootstrap_mean_ci(x, seed=1) == (bm, blo, bhi)     # seeded
    with pytest.raises(ValueError):
        fitting.mean_ci([1.0])
    with pytest.raises(ValueError):
        fitting.bootstrap_mean_ci([1.0, np.nan], seed=0)
