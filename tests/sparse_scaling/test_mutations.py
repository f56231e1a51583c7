"""Planted errors in the theory must make a hard claim FAIL (on smoke-sized inputs).

The experiments run once (module fixture, cache off); each test plants one plausible error
in a theory function or formula, re-runs the chapter's check function for that section and
asserts that the named hard claim FAILs, after checking that it PASSes without the error.
"""

import pytest

from dltheory import claims
from dltheory.sparse_scaling import checks, config, data, theory
from dltheory.sparse_scaling import experiments as ssx


@pytest.fixture(scope="module")
def res():
    mp = pytest.MonkeyPatch()
    mp.setenv("DLTHEORY_CACHE", "0")
    cfg = config.Config.for_scale("smoke", heaps_trials=200, n_seeds=2, dd_seeds=1, rank_draws=4,
                                  dd_points=3, n_dd_points=24, grid_n=7, grid_d=7, grid_u_seeds=2)
    out = {"cfg": cfg, "dm": ssx.data_model(cfg), "asym": ssx.asymptotic_prefactors(cfg),
           "an": ssx.alpha_n(cfg), "ad": ssx.alpha_d(cfg), "dd": ssx.double_descent(cfg),
           "grid": ssx.combined_grid(cfg)}
    mp.undo()
    return out


def verdicts(r):
    led = claims.Ledger("sparse_scaling_mutation", scale="smoke")
    cfg = r["cfg"]
    checks.record_data(led, cfg, r["dm"], r["asym"])
    checks.record_alpha_n(led, cfg, r["an"])
    checks.record_alpha_d(led, cfg, r["ad"], r["asym"])
    checks.record_double_descent(led, cfg, r["dd"])
    checks.record_combined_law(led, cfg, r["grid"])
    return {c.id: c.verdict for c in led.claims.values()}


def _overparam_wrong_sign(T_obs, N, r):
    import numpy as np
    N = np.asarray(N, dtype=float)
    return np.asarray(T_obs) * (N - 1) / (N + np.asarray(r) - 1)


MUTATIONS = {
    # name: (target, attribute, replacement factory, claim that must fail)
    "Heaps prefactor 10% high": (checks, "heaps_constant",
                                 lambda f: (lambda a1: 1.1 * f(a1)), "SS.data.heaps.prefactor"),
    "alpha_N exponent +10%": (config.Config, "alpha_N",
                              lambda f: property(lambda s: 1.1 * (s.alpha1 + s.alpha2 + 1)), "SS.alpha_N"),
    "alpha_D exponent +15%": (config.Config, "alpha_D",
                              lambda f: property(lambda s: 1.15 * (s.alpha1 + s.alpha2 + 1) / (s.alpha1 + 1)),
                              "SS.alpha_D.floor"),
    "floor drops the amplitudes (p_j for lambda_j)": (
        checks, "expected_floor",
        lambda f: (lambda spec, Ds: f(type(spec)(spec.p, spec.p * 0 + 1, spec.alpha1, spec.alpha2), Ds)),
        "SS.alpha_D.window"),
    "l_DE drops the factor N": (theory, "loss_de",
                                lambda f: (lambda lam, Ns: f(lam, Ns) / __import__("numpy").asarray(Ns, float)),
                                "SS.alpha_N.vs_DE"),
    "overparam correction with the wrong sign": (theory, "overparam_loss", lambda f: _overparam_wrong_sign,
                                                 "SS.overparam_branch"),
    "frontier N* exponent b/(2a+b) for b/(a+2b)": (
        theory, "two_term_frontier_exponents",
        lambda f: (lambda a, b: {"N": b / (2 * a + b), "D": a / (a + 2 * b), "loss": -a * b / (a + 2 * b)}),
        "SS.frontier.sampled"),
    "floor constant: E T(D) with (1 - p_j)^(2D)": (
        checks, "expected_floor", lambda f: (lambda spec, Ds: f(spec, 2 * __import__("numpy").asarray(Ds, float))),
        "SS.alpha_D.floor.prefactor"),
    "Heaps: E K(D) evaluated at D^((a1+1)/(a1+1.2))": (
        theory, "expected_observed",
        lambda f: (lambda spec, Ds: f(spec, __import__("numpy").asarray(Ds, float) ** ((spec.alpha1 + 1) / (spec.alpha1 + 1.2)))),
        "SS.data.heaps"),
}


def test_baseline_passes(res):
    v = verdicts(res)
    for _, _, _, claim in MUTATIONS.values():
        assert v[claim] == claims.PASS, (claim, v[claim])


@pytest.mark.parametrize("name", list(MUTATIONS))
def test_mutation_is_caught(res, name, monkeypatch):
    target, attr, make, claim = MUTATIONS[name]
    original = target.__dict__[attr] if isinstance(target, type) else getattr(target, attr)
    monkeypatch.setattr(target, attr, make(original))
    assert verdicts(res)[claim] == claims.FAIL, f"{name}: {claim} did not fail"


# ---- section 9: the GD failure exponent (the smoke run itself, without the explicit GD runs)
@pytest.fixture(scope="module")
def gd_res():
    mp = pytest.MonkeyPatch()
    mp.setenv("DLTHEORY_CACHE", "0")
    cfg = config.Config.for_scale("smoke", gd_shown=1)
    out = {"cfg": cfg, "gd": ssx.gd(cfg)}
    mp.undo()
    return out


def _gd_verdict(r):
    led = claims.Ledger("sparse_scaling_mutation_gd", scale="smoke")
    checks.record_gd(led, r["cfg"], r["gd"])
    return led.claims["SS.gd.instability"].verdict


GD_MUTATIONS = {
    "nu with denominator -a2 for -a2 - 1": lambda a1, a2: (a1 + a2 + 1) / (-a2),
    "nu = alpha_D (the data exponent)": lambda a1, a2: (a1 + a2 + 1) / (a1 + 1),
    "nu with the numerator a1 + a2 + 2": lambda a1, a2: (a1 + a2 + 2) / (-a2 - 1),
}


def test_gd_baseline_passes(gd_res):
    assert _gd_verdict(gd_res) == claims.PASS


@pytest.mark.parametrize("name", list(GD_MUTATIONS))
def test_gd_mutation_is_caught(gd_res, name, monkeypatch):
    monkeypatch.setattr(data, "exponent_nu", GD_MUTATIONS[name])
    assert _gd_verdict(gd_res) == claims.FAIL, f"{name}: SS.gd.instability did not fail"
