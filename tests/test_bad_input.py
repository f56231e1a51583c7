"""Bad input to the core modules raises ValueError naming the argument, before any work."""

import math

import numpy as np
import pytest

from dltheory import claims, fitting, runtime


def test_fit_two_term_refuses_underdetermined_fits():
    x = np.array([1.0, 2.0, 4.0])
    with pytest.raises(ValueError, match="need more than 4 points"):
        fitting.fit_two_term(x, x[::-1], 1 / x)
    x5, y5 = np.array([1.0, 2.0, 4.0, 1.0, 2.0]), np.array([1.0, 1.0, 1.0, 2.0, 2.0])
    with pytest.raises(ValueError, match="need more than 5 points"):
        fitting.fit_two_term(x5, y5, np.ones(5), with_floor=True)


@pytest.mark.parametrize(("name", "bad"), [("x", math.nan), ("y", -1.0), ("L", math.inf)])
def test_fit_two_term_names_the_bad_array(name, bad):
    xx, yy = np.meshgrid([1.0, 2.0, 4.0], [1.0, 2.0, 4.0])
    args = {"x": xx.ravel(), "y": yy.ravel(), "L": 1 / xx.ravel() + 1 / yy.ravel()}
    args[name] = args[name].copy()
    args[name][3] = bad
    with pytest.raises(ValueError, match=f"^{name} must be"):
        fitting.fit_two_term(args["x"], args["y"], args["L"])


def test_fit_two_term_needs_two_distinct_sizes_per_axis():
    x = np.full(6, 2.0)
    with pytest.raises(ValueError, match="distinct"):
        fitting.fit_two_term(x, np.arange(1.0, 7.0), np.ones(6))


def test_windows_and_bootstrap_arguments():
    x = np.arange(1.0, 9.0)
    with pytest.raises(ValueError, match="window"):
        fitting.loglog_fit(x, x, window=(math.nan, 4.0))
    with pytest.raises(ValueError, match="n_boot"):
        fitting.bootstrap_slope(x, np.ones((3, 8)), n_boot=0, seed=0)
    with pytest.raises(ValueError, match="level"):
        fitting.bootstrap_slope(x, np.ones((3, 8)), level=math.nan, seed=0)


def test_scale_threads_and_tolerances(tmp_path, monkeypatch):
    monkeypatch.setenv("DLTHEORY_SCALE", "")
    with pytest.raises(ValueError, match="empty"):
        runtime.scale()
    with pytest.raises(ValueError, match="threads"):
        runtime.set_threads(0)
    led = claims.Ledger("demo", scale="smoke", results_dir=tmp_path)
    with pytest.raises(ValueError, match="tol must be finite"):
        led.check("a", "x", 1.0, 1.0, tol=math.nan)


@pytest.mark.parametrize("tau", [math.nan, -0.1, 0.0, math.inf])
def test_gd_step_size_must_be_finite_and_positive(tau):
    from dltheory import gradient_flow as gf

    p = gf.scalar_problem(x=1.0, y=1.0)
    with pytest.raises(ValueError, match="tau"):
        gf.gd(p, np.array([1.0]), np.array([0.5]), tau=tau, steps=3)
