"""The declared domain, the presets, and bad inputs that must fail fast with a clear message."""

import numpy as np
import pytest
import torch

import dltheory.sparse_scaling as ss
from dltheory.sparse_scaling import config as C
from dltheory.sparse_scaling import windows as W

NAN = float("nan")


@pytest.mark.parametrize("kw, match", [
    ({"alpha1": 0.1}, r"ALPHA1 = 0.1 is outside its domain \[0.25, 4\]"),
    ({"alpha1": 5.0}, r"ALPHA1 = 5.0 is outside its domain"),
    ({"alpha1": NAN}, r"ALPHA1 = nan is outside its domain"),
    ({"alpha2": 1.5}, r"ALPHA2 = 1.5 is outside its domain"),
    ({"alpha1": 1.0, "alpha2": -1.5}, r"ALPHA2 = -1.5 is outside its domain \[-ALPHA1, 1\]"),
    ({"seed": -1}, r"SEED"),
])
def test_out_of_domain_fails_fast(kw, match):
    with pytest.raises(ValueError, match=match):
        C.Config.for_scale("smoke", **kw)


def test_parameter_cell_names_and_presets():
    cfg = C.Config.for_scale("standard", ALPHA1=2.0, ALPHA2=-1.0, SEED=3)
    assert (cfg.alpha1, cfg.alpha2, cfg.seed, cfg.scale) == (2.0, -1.0, 3, "standard")
    assert C.Config.for_scale("full").n_hi == 4096
    assert C.Config.for_scale("paper").gd_u_seeds > C.Config.for_scale("standard").gd_u_seeds
    with pytest.raises(ValueError, match="unknown .*setting"):
        C.Config.for_scale("smoke", alpha3=1.0)


def test_sampled_and_ci_settings_are_valid_and_off_default():
    rng = np.random.default_rng(0)
    for _ in range(200):
        s = C.sample_setting(rng)
        assert C.Config.is_valid(s) == (True, "")
    assert len(C.CI_SETTINGS) >= 2
    for s in C.CI_SETTINGS:
        assert C.Config.is_valid(s) == (True, "")
        assert abs(s["ALPHA1"] - C.DEFAULTS["ALPHA1"]) >= 0.5
    assert set(C.DOMAIN) == {"SEED", "ALPHA1", "ALPHA2"}


@pytest.mark.parametrize("a1", [0.25, 0.6, 1.0, 2.0, 4.0])
def test_windows_follow_K(a1):
    """Data windows are placed through K(D): the heaps inversion round-trips, and every
    grid stays inside the budget caps."""
    cfg = C.Config.for_scale("smoke", alpha1=a1, alpha2=0.0)
    D = W.heaps_D(a1, [30.0, 300.0])
    np.testing.assert_allclose(W.heaps_K(a1, D), [30.0, 300.0], rtol=0.02)
    assert max(cfg.d_sampled) <= cfg.d_cap and max(cfg.d_dd) <= max(cfg.d_cap_dd, 30)
    assert W.heaps_K(a1, max(cfg.d_sampled)) <= 1.05 * cfg.k_cap
    assert max(cfg.n_dd) <= 4 * W.heaps_K(a1, max(cfg.d_dd)) + 64


spec10 = ss.spectrum(10, 1.0, 0.0)


@pytest.mark.parametrize("call, name", [
    (lambda: ss.spectrum(10, NAN, 0.0), "alpha1"),
    (lambda: ss.spectrum(10, 1.0, NAN), "alpha2"),
    (lambda: ss.spectrum(10, float("inf"), 0.0), "alpha1"),
    (lambda: ss.floor_constant(NAN, 0.0), "alpha1"),
    (lambda: ss.heaps_constant(-1.0), "alpha1"),
    (lambda: ss.frontier_exponents(1.0, NAN), "alpha2"),
    (lambda: ss.de_constant(NAN), "a "),
    (lambda: ss.kappa(np.ones(5), NAN), "N"),
    (lambda: ss.population_step(torch.ones(2, 3), np.ones(3), NAN), r"c must lie in \(0, 2\)"),
    (lambda: ss.run_gd(torch.ones(3, 2), torch.ones(3), NAN, 5), r"eta must lie in \(0, inf\)"),
    (lambda: ss.run_gd(torch.ones(3, 2), torch.ones(3), -0.1, 5), "eta"),
    (lambda: ss.fail_probability(spec10, torch.ones(2, 10), [5], 3, NAN, 0), "eta"),
    (lambda: ss.secular_fail_probability(spec10, torch.ones(2, 10), 0.0, [5]), "eta"),
    (lambda: ss.brute_force_fit(np.ones((3, 2)), np.ones(3), NAN), r"mu must be finite ridge penalties in \[0, inf\)"),
    (lambda: ss.brute_force_fit(np.ones((3, 2)), np.ones(3), -1.0), "mu "),
])
def test_bad_inputs_name_the_argument(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_ridge_penalties_checked_before_work():
    spec = ss.spectrum(64, 1.0, 0.0)
    obs = ss.observe(ss.sample_sparse(spec, 50, 0), spec)
    u = ss.gaussian_features(8, 64, 1)
    S, _ = ss.feature_moments(u, spec.lam)
    for bad in ([0.0, NAN], [-1e-3], [float("inf")]):
        with pytest.raises(ValueError, match="mus_rel"):
            ss.ridge_path(obs, u, S, bad)
        with pytest.raises(ValueError, match="mus_rel"):
            ss.relu.ridge_path(ss.sample_sparse(spec, 20, 1), u, np.ones((64, 2)), bad, [4])
    with pytest.raises(ValueError, match="mu_rel"):
        ss.reduced_fit(obs, u[:, torch.as_tensor(obs.obs)], NAN)


def test_regime_gates_follow_the_inputs():
    """Windows and gates decided from the knobs, before any sampling (issue #20's corners)."""
    steep = C.Config.for_scale("smoke", ALPHA1=4.0, ALPHA2=1.0)        # alpha_N = 6
    # the min-norm cutoff (1e-10 s_max) resolves D-th directions down to D^-(a_N + 3)/2 >= 1e-9
    assert steep.d_dense_peak == (8, 16, 32, 64)                         # 128^-4.5 < 1e-9
    assert C.Config.for_scale("smoke").d_dense_peak == (16, 32, 64, 128)
    assert min(steep.d_dense_peak) >= 8                                  # one N step at D = 4 is 25%
    n = steep.n_dense                                                    # every D and D +- 2 on the grid
    assert all(set(range(D - 2, D + 3)) <= set(n) for D in steep.d_dense_peak)
    assert min(steep.dense_mus[1:]) <= 1e-17                             # the oracle ridge reaches below s_min^2
    assert steep.dense_draws_at(8) >= 12 and steep.dense_draws_at(64) == steep.dense_draws
    assert not C.Config.for_scale("smoke", ALPHA1=0.25, ALPHA2=1.0).valid_frontier
    assert C.Config.for_scale("smoke").valid_frontier
    # T_obs carried by few coordinates (steep lambda) -> more data draws, same slope sd
    d, s = C.Config.for_scale("smoke"), C.Config.for_scale("smoke", ALPHA1=1.0, ALPHA2=1.0)
    assert s.d_seeds_used > d.d_seeds_used
    assert s.d_slope_sd_at(s.d_seeds_used) <= s.d_slope_sd * min(1.0, s.alpha_D) * 1.01
    # a shallow alpha_D gets the draws for a relative band (the power rule is relative): at
    # ALPHA1 4, ALPHA2 -4 (alpha_D 0.2) 5 draws gave a band of 40% of the slope and a WEAK verdict
    sh = C.Config.for_scale("smoke", ALPHA1=4.0, ALPHA2=-4.0)
    band = sh.z_family * sh.d_slope_sd_at(sh.d_seeds_used) + sh.d_slope_sys
    assert sh.d_seeds_used > 5 and band / sh.alpha_D <= 0.20
    # alpha_N tolerance shrinks with the draws and grows with the exponent
    assert d.tol_alpha_n_de_at(16) < d.tol_alpha_n_de_at(4) < steep.tol_alpha_n_de_at(4)
    # the combined law's D-direction noise is the floor's: more draws where it is larger
    assert abs(d.grid_noise - 1.0) < 1e-12 and s.grid_noise > 1.5
    assert s.grid_u_seeds_used > d.grid_u_seeds_used == d.grid_u_seeds


def test_alpha_d_gates_open_and_close():
    """The sampled alpha_D gates are computed from the inputs and open/close where the data
    model says the window can (not) be placed at smoke."""
    d = C.Config.for_scale("smoke")
    assert d.valid_alpha_d_window and d.sampled_is_asymptotic          # default: decided
    mid = C.Config.for_scale("smoke", ALPHA1=1.5, ALPHA2=0.0)
    assert mid.valid_alpha_d_window and mid.sampled_is_asymptotic      # reached by the 1.5-decade window
    sparse = C.Config.for_scale("smoke", ALPHA1=4.0, ALPHA2=1.0)
    assert sparse.valid_alpha_d_window and not sparse.sampled_is_asymptotic   # K(D) < 20 below d_cap
    dense = C.Config.for_scale("smoke", ALPHA1=0.25, ALPHA2=-0.25)
    assert not dense.valid_alpha_d_window                               # K(D) > 0.3 D below k_cap
    from dltheory.sparse_scaling.checks import _alpha_d_reach
    assert "not reachable at this scale" in _alpha_d_reach(sparse)


def test_kinds_declared_and_relabelled():
    from dltheory.sparse_scaling import rules
    assert rules.KINDS["SS.asymmetry.sparse"] == "identity"            # sum of two claims' tolerances
    assert rules.KINDS["SS.relu.floor"] == "identity"                  # a proved bound
    assert set(rules.KINDS.values()) <= {"hard", "soft", "identity", "derivation"}
