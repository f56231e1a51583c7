"""Outputs and domain edges of dltheory.fitting that tests/test_fitting.py leaves open
(written against the mutants that survived scripts/mutation_score.py).

Each test names its independent reference: scipy's OLS (linregress) and Student-t interval,
hand-evaluated closed forms, exact power laws, or a probability computed by hand."""

import math
import warnings

import numpy as np
import pytest
from scipy import stats

from dltheory import fitting

EPS = np.finfo(np.float64).eps   # tolerances below are stated in ulps of float64


def test_loglog_fit_stderr_and_r2_match_scipy_linregress():
    """On noisy data with a small log-x spread (sxx < 1) the slope's standard error and r^2
    are scipy.stats.linregress's (OLS of log y on log x: stderr, rvalue^2)."""
    rng = np.random.default_rng(3)
    x = np.linspace(1.0, 1.6, 9)
    y = 2.0 * x**-0.8 * np.exp(0.05 * rng.standard_normal(x.size))
    lx, ly = np.log(x), np.log(y)
    assert np.sum((lx - lx.mean()) ** 2) < 1.0
    ref = stats.linregress(lx, ly)
    fit = fitting.loglog_fit(x, y)
    assert fit.slope == pytest.approx(ref.slope, rel=1e-10)
    assert fit.stderr == pytest.approx(ref.stderr, rel=1e-10)
    assert fit.r2 == pytest.approx(ref.rvalue**2, rel=1e-10)
    assert 0.0 < fit.r2 < 1.0


def test_two_point_fit_is_exact_with_undefined_stderr():
    """Two points determine a line: the fit passes through both, r^2 = 1, and the slope's
    standard error has no degree of freedom left (nan, without a division warning)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fit = fitting.loglog_fit([2.0, 8.0], [3.0, 0.75])   # y = 6 / x
    assert fit.slope == pytest.approx(-1.0, abs=1e-12)
    assert fit.prefactor == pytest.approx(6.0, rel=1e-12)
    assert math.isnan(fit.stderr) and fit.n == 2


def test_window_is_closed_at_both_ends():
    """loglog_fit's window is closed on x: points exactly at lo and at hi are fitted, and a
    degenerate window [lo, lo] is allowed (it keeps the points at x = lo)."""
    x = np.array([1.0, 10.0, 100.0, 1000.0, 1e4])
    fit = fitting.loglog_fit(x, x**-0.5, window=(10.0, 1000.0))
    assert (fit.n, fit.window) == (3, (10.0, 1000.0))
    fit = fitting.loglog_fit([1.0, 2.0, 2.0, 4.0], [1.0, 3.0, 5.0, 7.0], window=(2.0, 2.0))
    assert (fit.n, fit.window) == (2, (2.0, 2.0))


def test_power_fit_evaluates_in_float64_whatever_the_input_dtype():
    """A fit evaluated at float32 points (exactly representable: 2, 3, 5) gives the float64
    values c x^s (math.pow), not float32-rounded ones."""
    fit = fitting.loglog_fit([1.0, 10.0], [2.0, 2.0 * 10**-0.37])
    x32 = np.array([2.0, 3.0, 5.0], dtype=np.float32)
    ref = [fit.prefactor * math.pow(v, fit.slope) for v in (2.0, 3.0, 5.0)]
    out = fit(x32)
    assert out.dtype == np.float64
    # 64 ulp: NumPy's power (its SIMD kernels differ by CPU) against libm's pow differ by a
    # few ulp; a float32-rounded evaluation would be ~1e-7 off
    np.testing.assert_allclose(out, ref, rtol=64 * EPS)


def test_local_slopes_of_two_points_and_float32_input():
    """Two points give one slope at their geometric midpoint; y = 2^k at x = 10^k has
    d log y / d log x = log10(2) exactly, also when y comes as (exact) float32 values."""
    xm, s = fitting.local_slopes([1.0, 10.0], [1.0, 100.0])
    assert xm == pytest.approx([math.sqrt(10.0)]) and s == pytest.approx([2.0])
    x = 10.0 ** np.arange(4)
    xm, s = fitting.local_slopes(x, np.array([1, 2, 4, 8], dtype=np.float32))
    # 512 ulp: differences of NumPy logs (SIMD kernels differ by CPU) lose ~3 ulp each to
    # cancellation; the float32-rounded slope would be ~1e-7 off
    np.testing.assert_allclose(s, math.log10(2.0), rtol=512 * EPS)


def test_bootstrap_slope_central_value_and_a_single_replicate():
    """Seeds that are exact power laws with one exponent (-0.7) and different prefactors
    average to a power law with that exponent: the central slope is -0.7, and so is every
    replicate; n_boot = 1 (one replicate) is a valid request."""
    x = np.geomspace(1.0, 100.0, 6)
    ys = np.array([c * x**-0.7 for c in (1.0, 2.0, 5.0)])
    b = fitting.bootstrap_slope(x, ys, n_boot=1, seed=0)
    assert b.slope == pytest.approx(-0.7, abs=1e-12)
    assert b.samples.shape == (1,)
    assert b.lo == pytest.approx(-0.7, abs=1e-12) and b.hi == pytest.approx(-0.7, abs=1e-12)


def test_two_term_fit_evaluates_the_closed_form():
    """TwoTermFit(A=2, a=0.5, B=3, b=0.25, E=0.1) at x = 4, y = 16 is 2/2 + 3/2 + 0.1 = 2.6;
    at a float32 y = 3 it is the float64 value 2/2 + 3 * 3^-0.25 + 0.1."""
    f = fitting.TwoTermFit(A=2.0, a=0.5, B=3.0, b=0.25, E=0.1, rmse_log=0.0)
    # 64 ulp: NumPy's power against libm's pow and another order of three sums; a float32
    # evaluation would be ~1e-7 off
    assert f(4.0, 16.0) == pytest.approx(2.6, rel=64 * EPS)
    out = f(np.array([4.0]), np.array([3.0], dtype=np.float32))
    assert out.dtype == np.float64
    np.testing.assert_allclose(out, [1.0 + 3.0 * math.pow(3.0, -0.25) + 0.1], rtol=64 * EPS)


def _grid(nx, ny, A=2.0, a=0.5, B=3.0, b=0.3):
    x, y = np.meshgrid(np.geomspace(10, 1e4, nx), np.geomspace(10, 1e3, ny))
    return x.ravel(), y.ravel(), A * x.ravel() ** -a + B * y.ravel() ** -b


def test_two_term_fit_with_two_y_values_and_no_floor():
    """Two distinct y values identify (B, b): two equations, two unknowns. The exact grid is
    recovered; a fit without floor reports E = 0 and evaluates back to L."""
    x, y, L = _grid(4, 2)
    f = fitting.fit_two_term(x, y, L)
    assert (f.A, f.a, f.B, f.b) == pytest.approx((2.0, 0.5, 3.0, 0.3), rel=1e-6)
    assert f.E == 0.0
    np.testing.assert_allclose(f(x, y), L, rtol=1e-8)


def test_two_term_fit_rmse_is_the_rms_log_residual():
    """rmse_log is the root mean square of log(fit(x, y)) - log(L) over the points: on a grid
    with 5% multiplicative noise, computed here from the returned model."""
    x, y, L = _grid(4, 3)
    L = L * np.exp(0.05 * np.random.default_rng(1).standard_normal(L.size))
    f = fitting.fit_two_term(x, y, L)
    rms = math.sqrt(np.mean((np.log(f(x, y)) - np.log(L)) ** 2))
    assert f.rmse_log == pytest.approx(rms, rel=1e-9)
    assert 0.005 < f.rmse_log < 0.1


@pytest.mark.parametrize("p0, with_floor, ok", [
    ((0.5, 0.0, 0.5, 0.0), False, True),      # a, b may start at 0; A, B > 0 (here < 1)
    ((1.0, -0.2, 1.0, 0.5), False, True),
    ((1.0, 0.5, 0.0, 0.5), False, False),     # B = 0
    ((0.0, 0.5, 1.0, 0.5), False, False),     # A = 0
    ((1.0, 0.5, -1.0, 0.5), False, False),
    ((1.0, 0.5, 1.0, 0.5, 0.01), True, True),
    ((1.0, 0.5, 1.0, 0.5, 0.0), True, False),  # E = 0 with a floor
    ((1.0, 0.5, 1.0, float("nan")), False, False),
])
def test_two_term_fit_start_domain(p0, with_floor, ok):
    """fit_two_term's p0 = (A, a, B, b[, E]) must be finite with A, B (and E) > 0, since they
    are optimised as logs; the exponents a, b may be any finite start, 0 included."""
    x, y, L = _grid(4, 3)
    if ok:
        f = fitting.fit_two_term(x, y, L + (0.05 if with_floor else 0.0), p0=p0,
                                 with_floor=with_floor)
        assert np.isfinite(f.rmse_log)
    else:
        with pytest.raises(ValueError, match="p0"):
            fitting.fit_two_term(x, y, L, p0=p0, with_floor=with_floor)


def test_mean_ci_is_the_student_t_interval():
    """mean_ci is scipy.stats.t.interval with n - 1 degrees of freedom around the mean
    (here n = 3, where 1 vs 2 degrees of freedom differ by a factor 3); level = 1 is refused
    (an infinite interval)."""
    x = np.array([1.0, 2.0, 4.0])
    m, lo, hi = fitting.mean_ci(x, level=0.9)
    ref = stats.t.interval(0.9, df=2, loc=x.mean(), scale=stats.sem(x))
    assert (lo, hi) == pytest.approx(ref, rel=1e-12)
    for bad in (1.0, 0.0):
        with pytest.raises(ValueError, match="level"):
            fitting.mean_ci(x, level=bad)


@pytest.mark.parametrize("kw, ok", [
    ({"n_boot": 10}, True), ({"n_boot": 9}, False),
    ({"level": 0.999}, True), ({"level": 1.0}, False), ({"level": 0.0}, False),
    ({"level": -0.1}, False),
])
def test_bootstrap_mean_ci_domain(kw, ok):
    """bootstrap_mean_ci's domain: at least 10 resamples, a level in (0, 1) open."""
    x = np.arange(6.0)
    if ok:
        m, lo, hi = fitting.bootstrap_mean_ci(x, seed=0, **kw)
        assert lo <= m <= hi
    else:
        with pytest.raises(ValueError):
            fitting.bootstrap_mean_ci(x, seed=0, **kw)


def test_bootstrap_mean_ci_resamples_every_value():
    """A resample of n = 5 values misses the first with probability (4/5)^5 = 0.33, so it
    contains it (mean >= 100/5) two thirds of the time: the upper end of a 95% percentile
    interval for x = (100, 0, 0, 0, 0) is at least 20."""
    m, lo, hi = fitting.bootstrap_mean_ci([100.0, 0, 0, 0, 0], n_boot=400, seed=1)
    assert m == 20.0 and hi >= 20.0 and lo == 0.0
