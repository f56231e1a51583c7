"""Discrete time: the exact tau^2 identity, weight decay, exponents, the router sum."""

import numpy as np
import pytest
import torch

import dltheory.conservation as cl


def g(seed):
    return torch.Generator().manual_seed(seed)


def swiglu_task(seed=0):
    make = lambda: cl.SwiGLU(6, 8, 3, gen=g(seed)).double()
    _, _, loss = cl.teacher_regression(make(), cl.SwiGLU(6, 8, 3, gen=g(seed + 9)).double(),
                                       32, (6,), seed=seed)
    return make, loss


@pytest.mark.parametrize("opt, kw", [("gd", {}), ("sgd", {"n_data": 32, "batch_size": 8}),
                                     ("gd", {"clip": 0.05})])
def test_tau2_identity_is_exact(opt, kw):
    make, loss = swiglu_task()
    m = make()
    tr = cl.train(m, loss, cl.laws_for(m), optimizer=opt, tau=0.05, steps=60, seed=1, **kw)
    assert tr.error().max() > 1e-6          # the laws do move ...
    assert tr.identity_residual() < 1e-13   # ... by exactly tau^2 sum q(g_j)


def test_weight_decay_recurrence():
    make, loss = swiglu_task(1)
    m = make()
    tr = cl.train(m, loss, cl.laws_for(m), optimizer="gd", tau=0.05, steps=40, weight_decay=0.3)
    assert tr.wd_residual() < 1e-13


def test_gd_drift_bounded_by_gradient_history():
    make, loss = swiglu_task(2)
    m = make()
    tr = cl.train(m, loss, cl.laws_for(m), optimizer="gd", tau=0.1, steps=50)
    assert tr.bound_ratio().max() <= 1.0


def test_exponents_gd_vs_adam():
    make, loss = swiglu_task(3)
    gd = cl.early_window(make, loss, cl.laws_for, tl_max=0.32, ks=[5, 10, 20, 40])
    adam = cl.early_window(make, loss, cl.laws_for, tl_max=0.32, ks=[5, 10, 20, 40],
                           optimizer="adam", lam=gd.lam, lr_scale=0.1)
    assert 1.8 < gd.fit.alpha < 2.2 and 0.8 < gd.fit.beta < 1.2
    assert adam.fit.alpha < 1.3


def test_router_sum_exact_for_gd_sgd_momentum_not_adam():
    make = lambda: cl.MoE(4, 4, 3, 2, topk=2, gen=g(0)).double()
    _, _, loss = cl.teacher_regression(make(), cl.MoE(4, 4, 3, 2, gen=g(5)).double(), 64, (4,),
                                       seed=0)
    drift = {}
    for opt, kw in [("gd", {}), ("sgd", {"n_data": 64, "batch_size": 16}), ("heavy_ball", {}),
                    ("adam", {})]:
        m = make()
        tr = cl.train(m, loss, cl.laws_for(m), optimizer=opt, tau=0.02, steps=30, **kw)
        drift[opt] = tr.error(["router_sum"]).max()
    assert max(drift["gd"], drift["sgd"], drift["heavy_ball"]) < 1e-13
    assert drift["adam"] > 1e-3


def test_fit_tau_k_recovers_exponents():
    taus, ks = np.array([1e-3, 2e-3, 4e-3]), np.array([10, 20, 40, 80])
    err = 3.0 * taus[:, None] ** 2 * ks[None, :] ** 0.8
    f = cl.fit_tau_k(taus, ks, err)
    assert abs(f.alpha - 2) < 1e-10 and abs(f.beta - 0.8) < 1e-10
    with pytest.raises(ValueError, match="err"):
        cl.fit_tau_k(taus, ks, err.T)


def test_sharpness_of_a_quadratic():
    """For L = 0.5 * mean((w x - y)^2) the Hessian is X^T X / n: compare with eigvalsh."""
    m = cl.FFN(3, 2, 1, "linear", gen=g(0)).double()
    lin = m.first
    X = torch.randn(20, 3, generator=g(1), dtype=torch.float64)
    y = torch.randn(20, 2, generator=g(2), dtype=torch.float64)
    loss = lambda model, idx=None: 0.5 * ((model.first(X) - y) ** 2).sum(1).mean()
    lam = cl.sharpness(m, loss, iters=200)
    assert lin.weight.shape == (2, 3)
    want = torch.linalg.eigvalsh(X.T @ X / 20).max().item()
    assert abs(lam - want) < 1e-8 * want


def test_train_validates_arguments():
    make, loss = swiglu_task()
    m = make()
    with pytest.raises(ValueError, match="optimizer"):
        cl.train(m, loss, [], optimizer="lion", tau=0.1, steps=2)
    with pytest.raises(ValueError, match="tau"):
        cl.train(m, loss, [], optimizer="gd", tau=0.0, steps=2)
    with pytest.raises(ValueError, match="sgd"):
        cl.train(m, loss, [], optimizer="sgd", tau=0.1, steps=2)


def test_tiny_lm_and_vit_laws_are_conserved_by_gd():
    ids = np.arange(400) % 7
    x, y = cl.lm_batch(ids, 4, 6, seed=0)
    lm = cl.TinyLM(7, 8, 2, 2, 2, 6, 3, 4, topk=2, gen=g(0)).double()
    tr = cl.train(lm, cl.ce_loss(x, y), lm.law_families(), optimizer="gd", tau=0.05, steps=10)
    assert tr.identity_residual() < 1e-13
    assert tr.error(["router_sum"]).max() < 1e-14
    imgs = torch.rand(6, 4, 4, generator=g(1), dtype=torch.float64)
    P = cl.patchify(imgs, 2)
    assert P.shape == (6, 4, 4)
    torch.testing.assert_close(P[0, 1], imgs[0, 0:2, 2:4].reshape(-1))
    vit = cl.TinyViT(4, 4, 8, 2, 2, 2, 4, 3, gen=g(2)).double()
    labels = torch.tensor([0, 1, 2, 0, 1, 2])
    tr = cl.train(vit, cl.ce_loss(P, labels), vit.law_families(), optimizer="gd", tau=0.1,
                  steps=10)
    assert tr.identity_residual() < 1e-13


def test_multilayer_lm_has_laws_per_layer():
    ids = np.arange(300) % 5
    x, y = cl.lm_batch(ids, 3, 5, seed=1)
    lm = cl.TinyLM(5, 8, 2, 2, 2, 5, 3, 4, topk=2, n_layers=2, gen=g(3)).double()
    fams = lm.law_families()
    assert {f.name for f in fams} == {"qk_rope", "vo", "experts", "router_sum", "qk_rope.1",
                                      "vo.1", "experts.1", "router_sum.1"}
    tr = cl.train(lm, cl.ce_loss(x, y), fams, optimizer="gd", tau=0.05, steps=8)
    assert tr.identity_residual() < 1e-13
    with pytest.raises(ValueError, match="n_layers"):
        cl.TinyLM(5, 8, 2, 2, 2, 5, 3, 4, n_layers=0)


def test_batched_gd_matches_the_loop():
    make, loss = swiglu_task(4)
    w1 = cl.early_window(make, loss, cl.laws_for, tl_max=0.32, ks=[5, 10], batched=True)
    w2 = cl.early_window(make, loss, cl.laws_for, tl_max=0.32, ks=[5, 10], lam=w1.lam,
                         batched=False)
    np.testing.assert_allclose(w1.err, w2.err, rtol=1e-9, atol=1e-15)
    assert max(t.identity_residual() for t in w1.trajs) < 1e-13
    with pytest.raises(ValueError, match="batched"):
        cl.early_window(make, loss, cl.laws_for, tl_max=0.32, ks=[5, 10], lam=w1.lam,
                        optimizer="adam", batched=True)


def test_per_sample_gradients_average_to_the_minibatch_gradient():
    from dltheory.conservation import experiments as ex

    make = lambda: cl.SwiGLU(3, 2, 2, gen=g(0)).double()  # noqa: E731
    _, _, loss = cl.teacher_regression(make(), cl.SwiGLU(3, 2, 2, gen=g(1)).double(), 10, (3,),
                                       seed=0)
    m = make()
    G = ex.per_sample_gradients(m, loss, 10)
    idx = torch.tensor([1, 4, 7])
    loss(m, idx).backward()
    want = torch.cat([p.grad.reshape(-1) for p in m.parameters()])
    torch.testing.assert_close(G[idx].mean(0), want)


def test_sgd_walk_is_linear_in_k_without_noise():
    # full batch: every step adds the same q(g), beta = 1 at every draw; minibatches of 4
    # make the walk noisy, and its exponent varies between draws
    from dltheory.conservation import config
    from dltheory.conservation import experiments as ex

    cfg = config.Config.for_scale("smoke", sgd_walk_draws=20)
    full = ex._task_sgd_walk(cfg.replace(sgd_batch=cfg.n_reg), {"block": "swiglu", "seed": 0})
    assert np.allclose([r["beta"] for r in full], 1.0, atol=1e-9)
    noisy = ex._task_sgd_walk(cfg.replace(sgd_batch=4), {"block": "swiglu", "seed": 0})
    assert np.std([r["beta"] for r in noisy]) > 0.01
