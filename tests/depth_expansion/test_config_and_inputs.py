"""The declared domain of the chapter's knobs, and bad inputs that must fail fast with a
ValueError naming the argument and its range."""

import math

import numpy as np
import pytest
import torch

from dltheory import depth_expansion as de


def test_presets_and_defaults():
    for s in ("smoke", "standard", "paper"):
        cfg = de.Config.for_scale(s)
        assert (cfg.width, cfg.depth, cfg.l_star) == (64, 4, 2)
    assert de.Config.for_scale("smoke", width=16).budget_epochs(15) == 15
    big = de.Config.for_scale("smoke", width=256, depth=12, l_star=6)
    assert big.min_epochs <= big.budget_epochs(15) < 15
    assert de.Config.for_scale("paper", width=256, depth=12, l_star=6).budget_epochs(15) == 15


@pytest.mark.parametrize("kw, word", [
    ({"width": 8}, "WIDTH"), ({"width": 257}, "WIDTH"), ({"depth": 1, "l_star": 1}, "DEPTH"),
    ({"depth": 13}, "DEPTH"), ({"l_star": 4}, "L_STAR"), ({"l_star": 0}, "L_STAR"),
    ({"seed": -1}, "SEED"), ({"width": 64.5}, "(?i)width"), ({"width": float("nan")}, "(?i)width"),
])
def test_out_of_domain_knobs_fail_fast(kw, word):
    with pytest.raises(ValueError, match=word):
        de.Config.for_scale("smoke", **kw)


def test_domain_names_the_range():
    with pytest.raises(ValueError, match=r"\[16, 256\]"):
        de.Config.for_scale("smoke", width=300)
    with pytest.raises(ValueError, match="DEPTH - 1"):
        de.Config.for_scale("smoke", depth=3, l_star=3)


@pytest.mark.parametrize("kw", [{"lr": float("nan")}, {"B": 0.0}, {"fd_eta": math.inf},
                                {"n_perm": 1}, {"eta_min": 5.0}, {"ci_level": 1.5}])
def test_bad_numeric_fields(kw):
    with pytest.raises(ValueError):
        de.Config.for_scale("smoke", **kw)


def test_sample_setting_is_in_domain_and_varied():
    rng = np.random.default_rng(0)
    draws = [de.sample_setting(rng) for _ in range(200)]
    for d in draws:
        de.Config.for_scale("smoke", seed=d["SEED"], width=d["WIDTH"], depth=d["DEPTH"],
                            l_star=d["L_STAR"])
    widths = [d["WIDTH"] for d in draws]
    assert min(widths) < 24 and max(widths) > 180
    assert {d["DEPTH"] for d in draws} == set(range(2, 13))


def test_ci_settings_are_off_default_and_valid():
    assert len(de.CI_SETTINGS) >= 2
    for s in de.CI_SETTINGS:
        cfg = de.Config.for_scale("smoke", seed=s["SEED"], width=s["WIDTH"], depth=s["DEPTH"],
                                  l_star=s["L_STAR"])
        assert (cfg.width, cfg.depth) != (64, 4)


NAN = float("nan")


@pytest.mark.parametrize("call, word", [
    (lambda: de.hoeffding_failure(2000, NAN, 5.0), "delta_R"),
    (lambda: de.hoeffding_failure(2000, 0.03, NAN), "B"),
    (lambda: de.hoeffding_failure(0, 0.03, 5.0), "K"),
    (lambda: de.hoeffding_failure(2000, 7.0, 5.0), "delta_R"),
    (lambda: de.hoeffding_K(NAN, 5.0), "delta_R"),
    (lambda: de.hoeffding_K(0.03, 5.0, NAN), "delta"),
    (lambda: de.hoeffding_K(0.03, 5.0, 1.0), "delta"),
    (lambda: de.hoeffding_K(0.03, -1.0), "B"),
    (lambda: de.norm_bound_proxy([100, NAN], a=1, b=1, B_z=1), "n"),
    (lambda: de.norm_bound_proxy(100, a=NAN, b=1, B_z=1), "a"),
    (lambda: de.norm_bound_proxy(100, a=1, b=1, B_z=1, delta=0.0), "delta"),
    (lambda: de.rmsnorm_jacobian_bound(torch.ones(4), NAN, 1e-5), "r"),
    (lambda: de.rmsnorm_jacobian_bound(torch.ones(4), 1.0, 0.0), "eps"),
    (lambda: de.clipped_ce(torch.zeros(2, 3), torch.zeros(2, dtype=torch.long), NAN), "B"),
    (lambda: de.bootstrap_mean_ci([1.0, NAN, 2.0], seed=0), "x"),
    (lambda: de.bootstrap_mean_ci([1.0, 2.0, 3.0], seed=0, level=1.0), "level"),
    (lambda: de.lowrank_offdiag(0, 9), "d"),
])
def test_bad_inputs_name_the_argument(call, word):
    with pytest.raises(ValueError, match=word):
        call()


def test_training_and_line_search_inputs():
    model = de.postnorm_mlp(5, 3, width=8, depth=2, seed=0)
    X, y = torch.randn(16, 5), torch.randint(0, 3, (16,))
    with pytest.raises(ValueError, match="lr"):
        de.train(model, X, y, epochs=1, lr=NAN)
    with pytest.raises(ValueError, match="wd"):
        de.train(model, X, y, epochs=1, wd=-1.0)
    blk = de.ZeroInitBlock(8, seed=0)
    s = de.first_order_signal(model, 1, blk, X, y)
    with pytest.raises(ValueError, match="etas"):
        de.jumpboard(model, 1, blk, X, y, s.v, [0.1, NAN])
    with pytest.raises(ValueError, match="eta"):
        de.slope_fd(model, 1, blk, X, y, s.v, eta=NAN)
    with pytest.raises(ValueError, match="n_perm"):
        de.permutation_null(s, n_perm=1, seed=0)


def test_null_mean_square_matches_enumeration():
    """Exact mean over all 4! permutations of a tiny problem."""
    import itertools

    g = torch.randn(4, 3, dtype=torch.float64)
    phi = torch.randn(4, 2, dtype=torch.float64)
    vals = [float((g[list(p)].T @ phi / 4).pow(2).sum()) for p in itertools.permutations(range(4))]
    assert de.null_mean_square(g, phi) == pytest.approx(np.mean(vals), rel=1e-12)


def test_directional_t_is_zero_mean_under_no_signal():
    gen = torch.Generator().manual_seed(0)
    ts = []
    for _ in range(200):
        g = torch.randn(400, 4, generator=gen, dtype=torch.float64)
        phi = torch.rand(400, 3, generator=gen, dtype=torch.float64)
        ts.append(de.directional_t(g, phi, torch.ones(4, 3, dtype=torch.float64) / math.sqrt(12))[1])
    assert abs(np.mean(ts)) < 0.3 and 0.8 < np.std(ts) < 1.2


def test_rmsnorm_jacobian_bound_is_attained():
    norm = de.RMSNorm(16).double()
    with torch.no_grad():
        norm.gain.copy_(torch.linspace(0.5, 2.0, 16, dtype=torch.float64))
    u = torch.randn(64, 16, dtype=torch.float64)
    measured = de.rmsnorm_jacobian_norms(norm, u)
    bound = de.rmsnorm_jacobian_bound(norm.gain, de.rms(u), norm.eps)
    assert np.all(measured <= bound * (1 + 1e-12))
    assert (measured / bound).max() > 0.98
