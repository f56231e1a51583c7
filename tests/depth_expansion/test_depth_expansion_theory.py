"""Theory checks: function preservation, first-order slope, per-sample gradients, the
permutation null, the fallback rule, the exact route identities, RMSNorm's Jacobian bound."""

import math

import numpy as np
import pytest
import torch

from dltheory.depth_expansion import (
    Risks,
    RMSNorm,
    ZeroInitBlock,
    activation_grads,
    activation_grads_loop,
    eps_naive_bound,
    fallback_select,
    first_order_signal,
    first_order_signal_autograd,
    hoeffding_failure,
    hoeffding_K,
    insert_block,
    jumpboard,
    norm_bound_proxy,
    permutation_null,
    postnorm_convnet,
    postnorm_mlp,
    risk,
    rmsnorm_jacobian_bound,
    route_a,
    route_b,
    slope_fd,
)

D64 = torch.float64


def _mlp_data(n=200, seed=0):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(n, 12, generator=g, dtype=D64)
    y = torch.randint(0, 5, (n,), generator=g)
    model = postnorm_mlp(12, 5, width=16, depth=3, seed=seed).to(D64)
    return model, X, y


@pytest.mark.parametrize("kind", ["mlp", "rezero"])
def test_insertion_is_function_preserving_mlp(kind):
    model, X, y = _mlp_data()
    for l in range(model.depth + 1):
        new = insert_block(model, l, ZeroInitBlock(16, kind=kind, seed=3).to(D64))
        assert new.depth == model.depth + 1
        assert torch.equal(new(X), model(X))


def test_insertion_is_function_preserving_conv():
    torch_g = torch.Generator().manual_seed(0)
    X = torch.rand(20, 1, 8, 8, generator=torch_g, dtype=D64)
    net = postnorm_convnet(1, 10, channels=8, depth=2, seed=0).to(D64)
    new = insert_block(net, 1, ZeroInitBlock(8, kind="conv", seed=1).to(D64))
    assert torch.equal(new(X), net(X))


def test_postnorm_insertion_is_not_exact():
    """The pitfall: a full post-norm block N(z + 0) is not the identity."""
    from dltheory.depth_expansion import PostNormBlock

    model, X, _ = _mlp_data()
    blk = PostNormBlock(16).to(D64)
    with torch.no_grad():
        blk.V.weight.zero_()
        blk.V.bias.zero_()
        blk.norm.gain.mul_(1.5)
    new = insert_block(model, 1, blk)
    assert (new(X) - model(X)).abs().max() > 1e-3


def test_batched_activation_grads_match_loop():
    model, X, y = _mlp_data(n=30)
    _, g = activation_grads(model, 2, X, y)
    assert torch.allclose(g, activation_grads_loop(model, 2, X, y), atol=1e-12)


@pytest.mark.parametrize("kind", ["mlp", "rezero"])
def test_signal_matches_autograd(kind):
    model, X, y = _mlp_data()
    blk = ZeroInitBlock(16, kind=kind, seed=2).to(D64)
    sig = first_order_signal(model, 1, blk, X, y)
    C = first_order_signal_autograd(insert_block(model, 1, blk), blk, X, y)
    assert torch.allclose(sig.C, C, atol=1e-12, rtol=1e-10)


def test_signal_matches_autograd_conv():
    g = torch.Generator().manual_seed(1)
    X = torch.rand(40, 1, 8, 8, generator=g, dtype=D64)
    y = torch.randint(0, 10, (40,), generator=g)
    net = postnorm_convnet(1, 10, channels=8, depth=2, seed=0).to(D64)
    blk = ZeroInitBlock(8, kind="conv", seed=1).to(D64)
    sig = first_order_signal(net, 1, blk, X, y)
    C = first_order_signal_autograd(insert_block(net, 1, blk), blk, X, y)
    assert torch.allclose(sig.C, C, atol=1e-12, rtol=1e-10)


def test_finite_difference_slope_equals_minus_gamma():
    model, X, y = _mlp_data()
    blk = ZeroInitBlock(16, seed=2).to(D64)
    sig = first_order_signal(model, 2, blk, X, y)
    s = slope_fd(model, 2, blk, X, y, sig.v, eta=1e-5)
    assert abs(s + sig.gamma) <= 1e-2 * sig.gamma
    # and any direction u: slope = -<C, u>
    u = torch.randn(sig.C.shape, generator=torch.Generator().manual_seed(5), dtype=D64)
    assert abs(slope_fd(model, 2, blk, X, y, u, eta=1e-5) + float((sig.C * u).sum())) < 1e-6


def test_jumpboard_decreases_risk_and_materialises():
    model, X, y = _mlp_data()
    blk = ZeroInitBlock(16, seed=2).to(D64)
    sig = first_order_signal(model, 2, blk, X, y)
    jb = jumpboard(model, 2, blk, X, y, sig.v, np.geomspace(1e-3, 3, 30))
    assert jb.gain > 0 and jb.eta > 0
    m = insert_block(model, 2, jb.block(blk))
    assert math.isclose(risk(model, X, y) - risk(m, X, y), jb.gain, rel_tol=1e-9)


def test_permutation_null_is_below_paired_signal_when_signal_is_strong():
    model, X, y = _mlp_data(n=400)
    sig = first_order_signal(model, 2, ZeroInitBlock(16, seed=2).to(D64), X, y)
    null = permutation_null(sig, n_perm=50, seed=0)
    assert null.shape == (50,) and np.all(null >= 0)
    assert sig.gamma > null.mean()


def test_zero_factor_required():
    model, X, y = _mlp_data()
    blk = ZeroInitBlock(16, seed=2).to(D64)
    with torch.no_grad():
        blk.V.weight.fill_(0.1)
    with pytest.raises(ValueError, match="zero factor"):
        first_order_signal(model, 2, blk, X, y)


def test_fallback_gives_nonnegative_delta_erm():
    rng = np.random.default_rng(0)
    for _ in range(50):
        cands = {k: Risks(*rng.uniform(0, 2, 3)) for k in ("trained", "pop", "S")}
        chosen = fallback_select(cands)
        for jb in ("pop", "S"):
            assert cands[jb].train - cands[chosen].train >= 0


def test_route_identities_are_exact():
    rng = np.random.default_rng(1)
    for _ in range(50):
        old, fp, fs, new = (Risks(*rng.uniform(0, 3, 3)) for _ in range(4))
        a = route_a(old, fp, new, K=1000, B=5.0)
        b = route_b(old, fs, new)
        assert abs(a.identity_sum - (new.test - old.test)) < 1e-12
        assert abs(b.identity_sum - (new.test - old.test)) < 1e-12
        assert a.lhs == b.lhs


def test_hoeffding_formulas():
    # the brief's example: B = 5, Delta_R = 0.03, delta = 0.05 gives K ~ 8.2e5
    assert math.isclose(hoeffding_K(0.03, 5.0, 0.05), 8 * 25 * math.log(40) / 0.03**2)
    assert 8.1e5 < hoeffding_K(0.03, 5.0, 0.05) < 8.3e5
    K = hoeffding_K(0.1, 5.0, 0.05)
    assert math.isclose(hoeffding_failure(math.ceil(K), 0.1, 5.0), 0.05, rel_tol=1e-3)
    assert hoeffding_failure(100, -0.1, 5.0) == 1.0
    with pytest.raises(ValueError, match="B"):
        hoeffding_K(0.1, -1.0)


def test_norm_bound_proxy_decays_as_inverse_sqrt_n():
    eps = norm_bound_proxy(np.array([100.0, 400.0]), a=2.0, b=1.0, B_z=8.0)
    assert math.isclose(eps[0] / eps[1], 2.0, rel_tol=1e-12)


def test_rmsnorm_jacobian_bound():
    torch.manual_seed(0)
    d, eps = 7, 1e-5
    norm = RMSNorm(d, eps).to(D64)
    with torch.no_grad():
        norm.gain.copy_(torch.linspace(0.5, 2.0, d, dtype=D64))
    for scale in (1e-3, 0.1, 1.0, 10.0):
        z = scale * torch.randn(d, dtype=D64)
        J = torch.autograd.functional.jacobian(norm, z)
        r = float(z.pow(2).mean().sqrt())
        assert torch.linalg.matrix_norm(J, ord=2) <= rmsnorm_jacobian_bound(norm.gain, r, eps) + 1e-9
    assert math.isclose(eps_naive_bound(norm.gain, eps), 2.0 / math.sqrt(eps))


@pytest.mark.parametrize("bad", [dict(kind="attn"), dict(d=0)])
def test_bad_block_arguments(bad):
    kw = dict(d=4, kind="mlp") | bad
    with pytest.raises(ValueError, match="kind|d must"):
        ZeroInitBlock(kw.pop("d"), **kw)


def test_bad_split_layer():
    model, X, _ = _mlp_data()
    with pytest.raises(ValueError, match="split layer l"):
        model.bottom(X, 9)
