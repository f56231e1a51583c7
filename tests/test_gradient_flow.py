"""The prologue's theory: the law u^2 - v^2, the exact one-step identity, the tau^2 k
drift and first-order convergence of GD to the flow."""

import numpy as np
import pytest

from dltheory import fitting
from dltheory import gradient_flow as gf


@pytest.fixture(scope="module")
def problem():
    p, _ = gf.sparse_regression(15, 30, 3, seed=0)
    rng = np.random.default_rng(1)
    return p, 0.5 + 0.1 * rng.standard_normal(30), np.full(30, 0.3)


def test_gradient_matches_finite_differences(problem):
    p, u, v = problem
    gu, gv = gf.grad(p, u, v)
    eps = 1e-6
    for i in (0, 7, 29):
        e = np.zeros_like(u)
        e[i] = eps
        fd_u = (gf.loss(p, u + e, v) - gf.loss(p, u - e, v)) / (2 * eps)
        fd_v = (gf.loss(p, u, v + e) - gf.loss(p, u, v - e)) / (2 * eps)
        assert fd_u == pytest.approx(gu[i], abs=1e-8)
        assert fd_v == pytest.approx(gv[i], abs=1e-8)


def test_law_is_orthogonal_to_the_gradient(problem):
    p, u, v = problem
    gu, gv = gf.grad(p, u, v)
    # grad of h_i = u_i^2 - v_i^2 is (2u_i e_i, -2v_i e_i): <grad h_i, g> = 2(u_i gu_i - v_i gv_i)
    np.testing.assert_allclose(u * gu - v * gv, 0.0, atol=1e-15)


def test_flow_conserves_the_law(problem):
    p, u, v = problem
    U, V = gf.flow(p, u, v, np.linspace(0, 3, 7))
    np.testing.assert_allclose(gf.balance(U, V) - gf.balance(u, v)[None, :], 0.0, atol=1e-10)


def test_flow_at_time_zero_is_the_start(problem):
    """t = 0 is inside the domain (times >= 0): the flow there is the initial point, as a
    time or as an array of zeros; repeated times give repeated points. Before, times all 0
    crashed inside solve_ivp's empty span (AttributeError) and a repeated time in solve_ivp's
    t_eval (ValueError)."""
    p, u, v = problem
    u0, v0 = gf.flow(p, u, v, 0.0)
    np.testing.assert_array_equal(u0, u)
    np.testing.assert_array_equal(v0, v)
    U, V = gf.flow(p, u, v, [0.0, 0.0])
    assert U.shape == (2, 30) and np.array_equal(U[1], u) and np.array_equal(V[0], v)
    U, V = gf.flow(p, u, v, [0.0, 0.0, 1.0])
    U1, V1 = gf.flow(p, u, v, 1.0)
    np.testing.assert_array_equal(U[0], u)
    np.testing.assert_allclose(U[2], U1, rtol=1e-10)
    U, V = gf.flow(p, u, v, [0.5, 1.0, 1.0])
    np.testing.assert_array_equal(U[1], U[2])
    np.testing.assert_allclose(U[1], U1, rtol=1e-10)


def test_one_step_identity_is_exact(problem):
    p, u, v = problem
    tr = gf.gd(p, u, v, tau=0.05, steps=100)
    assert tr.identity_error < 1e-13
    assert np.abs(tr.h[-1] - tr.h[0]).max() > 1e-4   # the law itself did move
    # on this model q(g) = -r^2 h, i.e. h_{k+1} = (1 - tau^2 r_k^2) h_k
    r = gf.residual_grad(p, u, v)
    h1 = gf.gd(p, u, v, tau=0.05, steps=1).h[1]
    np.testing.assert_allclose(h1, (1 - 0.05**2 * r**2) * gf.balance(u, v), rtol=1e-12)


def test_drift_exponents(problem):
    p, u, v = problem
    taus = np.geomspace(1e-3, 1e-2, 5)
    drift = [gf.gd(p, u, v, tau=t, steps=10).drift[-1] for t in taus]
    assert fitting.loglog_fit(taus, drift).slope == pytest.approx(2.0, abs=0.1)
    tr = gf.gd(p, u, v, tau=5e-3, steps=20)
    assert fitting.loglog_fit(np.arange(1, 21), tr.drift[1:]).slope == pytest.approx(1.0, abs=0.1)


def test_gd_converges_to_flow_at_first_order(problem):
    p, u, v = problem
    taus = [0.02, 0.01, 0.005]
    err = gf.gd_to_flow_error(p, u, v, t=1.0, taus=taus)
    assert err[0] / err[1] == pytest.approx(2.0, rel=0.1)
    assert err[1] / err[2] == pytest.approx(2.0, rel=0.1)


def test_bad_inputs():
    p = gf.scalar_problem()
    with pytest.raises(ValueError, match="tau"):
        gf.gd(p, np.ones(1), np.ones(1), tau=0.0, steps=3)
    with pytest.raises(ValueError, match="shape"):
        gf.gd(p, np.ones(2), np.ones(1), tau=0.1, steps=3)
    with pytest.raises(ValueError, match="integer"):
        gf.gd_to_flow_error(p, np.ones(1), np.ones(1), t=1.0, taus=[0.3])
    with pytest.raises(ValueError, match="k <= d"):
        gf.sparse_regression(5, 3, 4, seed=0)


def test_batched_gd_matches_the_loop(problem):
    p, u, v = problem
    rng = np.random.default_rng(3)
    U0 = u[None] + 0.05 * rng.standard_normal((4, p.d))
    V0 = np.repeat(v[None], 4, 0)
    taus = np.array([1e-3, 5e-3, 1e-2, 5e-2])
    batched = gf.gd_drift_batched(p, U0, V0, taus, steps=30)
    looped = np.stack([gf.gd(p, U0[b], V0[b], tau=taus[b], steps=30).drift for b in range(4)])
    np.testing.assert_allclose(batched, looped, rtol=1e-10, atol=1e-15)
    with pytest.raises(ValueError, match="shape"):
        gf.gd_drift_batched(p, U0[:, :3], V0, taus, steps=3)


def test_config_presets_and_overrides():
    smoke, paper = gf.Config.for_scale("smoke"), gf.Config.for_scale("paper", seed=5)
    assert (smoke.scale, smoke.n_seeds, smoke.k_max) == ("smoke", 2, 400)
    assert (paper.n_seeds, paper.seed, len(paper.taus_flow)) == (32, 5, 8)
    assert len(smoke.taus) == smoke.n_tau and smoke.taus[0] == smoke.tau_range[0]
    with pytest.raises(ValueError, match="valid scales"):
        gf.Config.for_scale("huge")


def test_drift_sweep_is_one_tidy_table(tmp_path, monkeypatch):
    monkeypatch.setenv("DLTHEORY_CACHE_DIR", str(tmp_path / "cache"))
    cfg = gf.Config.for_scale("smoke", n_seeds=3, seeds_per_task=2, k_max=30, n_tau=3)
    df = gf.drift_sweep(cfg)
    assert list(df.columns) == ["block", "start", "sweep", "tau", "k", "drift", "q0"]
    assert len(df) == 3 * (3 + 30)
    assert sorted(df.start.unique()) == [0, 1, 2]
    # the rows equal single numpy runs from the same starts
    p, _ = cfg.problem()
    u, v = cfg.start(2)
    ref = gf.gd(p, u, v, tau=cfg.tau_k, steps=cfg.k_max).drift[1:]
    np.testing.assert_allclose(df[(df.sweep == "k") & (df.start == 2)].drift, ref, rtol=1e-10)


def test_the_prologue_labels_its_equations_and_refers_to_each_label():
    """Numbered equations are MyST labels (``$$ ... $$ (gf-eq-...)``), never a hand-typed
    \\tag (Sphinx wraps multi-line $$ math in `split`, where MathJax rejects \\tag); every
    label is referred to with {eq} and every reference has its label."""
    import re
    from pathlib import Path

    src = (Path(__file__).resolve().parents[1] / "book" / "00_gradient_flow.py").read_text()
    assert "\\tag" not in src
    labels = re.findall(r"^# \$\$ \((gf-eq-[\w-]+)\)$", src, flags=re.M)
    refs = set(re.findall(r"\{eq\}`(gf-eq-[\w-]+)`", src))
    assert len(labels) >= 5 and len(set(labels)) == len(labels)
    assert refs == set(labels), (sorted(refs ^ set(labels)))


# --------------------------------------------------------------------------- planted errors
def test_loss_gradient_ratio_is_one_and_sees_a_rescaled_gradient(problem, monkeypatch):
    p, u, v = problem
    U, V = np.stack([u, 0.9 * u]), np.stack([v, 1.1 * v])
    assert gf.loss_gradient_ratio(p, U, V, seed=2) == pytest.approx(1.0, abs=1e-9)
    grad = gf.grad
    monkeypatch.setattr(gf.model, "grad", lambda p, u, v: tuple(2 * g for g in grad(p, u, v)))
    assert gf.loss_gradient_ratio(p, U, V, seed=2) == pytest.approx(2.0, abs=1e-9)
    with pytest.raises(ValueError, match="shape"):
        gf.loss_gradient_ratio(p, U[:, :3], V)
    with pytest.raises(ValueError, match="eps"):
        gf.loss_gradient_ratio(p, U, V, eps=0.0)


def _prologue_verdicts(cfg, tmp_path):
    """The prologue's evidence and its identity, through its role files as the book runs."""
    from dltheory import claims

    led = claims.Ledger("mutation", scale="smoke", results_dir=tmp_path)
    run = gf.identity_run(cfg)
    gf.checks.grad_vs_loss(led, cfg, run)
    gf.checks.identity(led, cfg, run)
    gf.checks.flow_order(led, cfg, gf.flow_error_sweep(cfg, cache=False))
    return {cid: c.verdict for cid, c in led.claims.items()}


def test_every_planted_error_is_caught(tmp_path):
    from dltheory import claims, mutations

    entries = mutations.registry("gradient_flow")
    assert len(entries) >= 3 and all(m.catches for m in entries)
    cfg = gf.Config.for_scale("smoke")
    for m in entries:
        assert mutations.flips(m, lambda: _prologue_verdicts(cfg, tmp_path)) == {
            c: (claims.PASS, claims.FAIL) for c in m.catches}, m.id
