"""Bad input: every public function names the argument and its valid range (ValueError),
before any work and without leaking a scipy/numpy message."""

import numpy as np
import pytest

from dltheory.fitting import mean_ci
from dltheory.pretrain_finetune import (
    FULL_OVERLAP,
    Config,
    ScalarChannel,
    Task,
    finetune_mlp,
    ft_scales,
    gauss_hermite,
    gen_error,
    make_tasks,
    min_l1,
    min_l2,
    pretrain_mlp,
    prox,
    replica_error,
    replica_pt_error,
    run_exact,
    sample_design,
    sample_teachers,
    solve_bias,
    solve_bias_slsqp,
    tilted_params,
    train_gd,
    uniform_init,
)
from dltheory.pretrain_finetune.config import DOMAIN

X = np.random.default_rng(0).standard_normal((4, 8))
Y = X @ np.ones(8)


@pytest.mark.parametrize("call, match", [
    (lambda: Task(0.0, 1.0, 0.0), r"rho_pt must lie in \(0, 1\]"),
    (lambda: Task(0.2, float("nan"), 0.0), r"rho_sh must lie in \[0, 1\]"),
    (lambda: Task(0.2, 0.0, 0.0), "rho_ft"),
    (lambda: make_tasks(rho_pt=1.5), "rho_pt"),
    (lambda: sample_teachers(FULL_OVERLAP, 0, seed=0), r"d must be an integer in \[1"),
    (lambda: sample_teachers(FULL_OVERLAP, 10.5, seed=0), "d must be an integer"),
    (lambda: sample_design(-1, 3, seed=0), "n must be an integer"),
    (lambda: gen_error(np.ones(3), np.ones(4)), "same last dimension"),
    (lambda: ft_scales(1.0, 0.0, 0.0, 0.1), r"c_pt must lie in \(0, inf\)"),
    (lambda: ft_scales(1.0, 1.0, 1.5, 0.1), r"lam_pt must lie in \[-1, 1\]"),
    (lambda: ft_scales(1.0, 1.0, 0.0, float("nan")), "gamma must lie in"),
    (lambda: ft_scales(np.array([1.0, np.inf]), 1.0, 0.0, 0.1), "beta_pt"),
    (lambda: tilted_params([1.0], [1.0], -0.1), "gamma must lie in"),
    (lambda: solve_bias(X, Y[:3], 1.0), r"y must have shape \(4,\)"),
    (lambda: solve_bias(X, Y, -1.0), r"c must lie in \(0, inf\)"),
    (lambda: solve_bias(X, Y, np.ones(3)), r"c must be a scalar or have shape \(8,\)"),
    (lambda: solve_bias(X, Y, 1.0, tol=0.0), "tol must lie in"),
    (lambda: solve_bias(np.ones(3), Y, 1.0), "X must be a non-empty 2-D array"),
    (lambda: min_l1(X, np.full(4, np.nan)), "y must lie in"),
    (lambda: min_l2(X, Y[:2]), "y must have shape"),
    (lambda: solve_bias_slsqp(X, Y, 0.0), "c must lie in"),
    (lambda: prox(1.0, 0.0, 1.0), "theta must be > 0"),
    (lambda: prox(1.0, 1.0, 0.0), "C must be > 0"),
    (lambda: gauss_hermite(1), r"n must be an integer in \[2"),
    (lambda: ScalarChannel([1.0], [1.0], [0.0]), r"C must lie in \(0, inf\)"),
    (lambda: ScalarChannel([1.0], [1.0], [1.0], n_nodes=1), "n_nodes must be an integer"),
    (lambda: ScalarChannel([1.0], [1.0], [1.0]).solve(1.0), r"alpha must lie in \(0, 1\)"),
    (lambda: replica_error(FULL_OVERLAP, 0.0, 1e-3, 0.0, 1e-3), "alpha_ft must lie in"),
    (lambda: replica_error(FULL_OVERLAP, 0.2, 1e-3, -1.2, 1e-3), "lam_pt must lie in"),
    (lambda: replica_error(FULL_OVERLAP, 0.2, 0.0, 0.0, 1e-3), "c_pt must lie in"),
    (lambda: replica_error(FULL_OVERLAP, 0.2, 1e-3, 0.0, -1.0), "gamma must lie in"),
    (lambda: replica_error(FULL_OVERLAP, 0.2, 1e-3, 0.0, 1e-3, alpha_pt=-0.5), "alpha_pt must lie in"),
    (lambda: replica_error("full overlap", 0.2, 1e-3, 0.0, 1e-3), "task must be a Task"),
    (lambda: replica_pt_error(FULL_OVERLAP, float("nan"), 1e-3), "alpha_pt must lie in"),
    (lambda: run_exact(FULL_OVERLAP, 50, 1.2, 1e-3, 0.0, 1e-3, seed=0), "alpha_ft must lie in"),
    (lambda: run_exact(FULL_OVERLAP, 50, 0.2, 1e-3, 2.0, 1e-3, seed=0), "lam_pt must lie in"),
    (lambda: uniform_init(np.nan, 0.0, (1, 3)), r"c must lie in \(0, inf\)"),
    (lambda: train_gd(np.ones((1, 2, 3)), np.ones((1, 2)), uniform_init(1.0, 0.0, (1, 3)), float("nan")),
     "tau must be finite and > 0"),
    (lambda: train_gd(np.ones((1, 2, 3)), np.ones((1, 2)), uniform_init(1.0, 0.0, (1, 3)), 0.1, max_steps=0),
     "max_steps must be an integer"),
    (lambda: mean_ci([1.0, 2.0], level=1.5), r"level must lie in \(0, 1\)"),
    (lambda: mean_ci([1.0, np.nan]), "x must be finite"),
])
def test_bad_input_names_the_argument(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_mlp_bad_input():
    Xd = np.random.default_rng(0).random((20, 6))
    yd = np.arange(20) % 2
    with pytest.raises(ValueError, match="init_scale must lie in"):
        pretrain_mlp(Xd, yd, [0, 1], hidden=4, steps=1, init_scale=0.0)
    pt = pretrain_mlp(Xd, yd, [0, 1], hidden=4, steps=1)
    with pytest.raises(ValueError, match="kappa must lie in"):
        finetune_mlp(pt, Xd, yd, Xd, yd, kappa=-1.0, gamma=1.0)
    with pytest.raises(ValueError, match="matching lengths"):
        finetune_mlp(pt, Xd, yd[:3], Xd, yd, kappa=1.0, gamma=1.0)


@pytest.mark.parametrize("field, knob", [("rho_pt", "RHO_PT"), ("alpha_pt", "ALPHA_PT"), ("c_pt", "C_PT"),
                                         ("gamma", "GAMMA"), ("lam_iv", "LAM_IV"), ("alpha_ft", "ALPHA_FT")])
def test_config_rejects_out_of_domain(field, knob):
    lo, hi = DOMAIN[knob]
    for bad in (lo - abs(lo) * 0.5 - 1e-9, hi + abs(hi) + 1.0, float("nan")):
        with pytest.raises(ValueError, match=knob):
            Config.for_scale("smoke", **{field: bad})
    with pytest.raises(ValueError, match="SEED"):
        Config.for_scale("smoke", seed=-1)


def test_config_every_corner_runs_and_reach_is_decided_from_inputs():
    from dltheory.pretrain_finetune.config import CI_SETTINGS, sample_setting

    # every corner of the declared box builds at every scale (no joint constraint left)
    for scale in ("smoke", "standard", "paper"):
        assert len(Config.corners(scale)) == 2 ** len(Config.KNOBS)
    sparse = Config.for_scale("smoke", rho_pt=0.02, rho_sh=0.1)
    assert sparse.reachable == {"full overlap": True, "subset": False, "new features": True}
    assert "subset" in sparse.unreachable_note() and "450" in sparse.unreachable_note()
    assert not any(Config.for_scale("smoke", rho_pt=0.01, rho_new=0.01).reachable.values())
    rng = np.random.default_rng(0)
    for _ in range(20):
        cfg = Config.for_scale("smoke", **sample_setting(rng))
        for t, ok in cfg.reachable.items():   # a task within reach has its active coordinates
            assert not ok or cfg.task_rho[t] * cfg.d_eff >= cfg.min_active - 1e-9
        assert cfg.d_eff <= cfg.d_sim_max
    for s in CI_SETTINGS:
        Config.for_scale("smoke", **s)
