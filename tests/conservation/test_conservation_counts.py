"""Law counts D - dim(W + [W, W]) against the theorem counts, and the Lie machinery."""

import pytest
import torch
from torch.func import jacrev

import dltheory.conservation as cl
from dltheory import seeds


def g(seed):
    return torch.Generator().manual_seed(seed)


CASES = [
    ("linear", lambda: cl.FFN(4, 3, 4, "linear", gen=g(0)), (4,), None, 6),
    ("relu", lambda: cl.FFN(4, 3, 2, "relu", gen=g(0)), (4,), None, 3),
    ("gelu", lambda: cl.FFN(4, 3, 2, "gelu", gen=g(0)), (4,), None, 0),
    ("silu", lambda: cl.FFN(4, 3, 2, "silu", gen=g(0)), (4,), None, 0),
    ("swiglu", lambda: cl.SwiGLU(4, 3, 2, gen=g(0)), (4,), None, 3),
    ("mha", lambda: cl.MHA(4, 2, 2, 2, 3, gen=g(0)), (3, 4), None, 12),
    ("mha_sin", lambda: cl.MHA(4, 2, 2, 2, 3, pe="sin", gen=g(0)), (3, 4), None, 12),
    ("mha_rope", lambda: cl.MHA(4, 2, 2, 2, 3, pe="rope", gen=g(0)), (3, 4), None, 8),
    ("mha_rope_dk4", lambda: cl.MHA(8, 2, 4, 3, 5, pe="rope", gen=g(0)), (5, 8), None, 16),
    ("moe_dense", lambda: cl.MoE(3, 2, 3, 2, gen=g(0)), (3,), 400, 9),
    ("moe_top2", lambda: cl.MoE(3, 2, 3, 2, topk=2, gen=g(0)), (3,), 400, 9),
]


@pytest.mark.parametrize("name, make, shape, n, expected", CASES, ids=[c[0] for c in CASES])
def test_count_matches_theory(name, make, shape, n, expected):
    model = make().double()
    assert cl.theory_count(model) == expected
    X = (cl.sample_inputs(model, shape, seed=1) if n is None
         else torch.randn(n, *shape, generator=g(1), dtype=torch.float64))
    c = cl.count_laws(model, X, theory=expected, seed=2)
    assert c.laws == expected
    assert c.gap > 1e6  # an unambiguous rank


def test_smooth_ffn_jacobian_has_full_rank():
    for act in ("gelu", "silu"):
        m = cl.FFN(4, 3, 2, act, gen=g(0)).double()
        r, _ = cl.numrank(cl.jacobian_rows(m, cl.sample_inputs(m, (4,), seed=0)))
        assert r == sum(p.numel() for p in m.parameters())


def test_brackets_are_needed_for_attention():
    """W alone leaves the rotation directions: rank W < rank(W + [W,W]) = D - N."""
    m = cl.MHA(4, 2, 2, 2, 3, gen=g(0)).double()
    c = cl.count_laws(m, cl.sample_inputs(m, (3, 4), seed=0), theory=12, seed=0)
    assert c.rank_W == 48 and c.rank_WB == 52


def test_residual_union_and_plain_extra_laws():
    d = 4
    res = cl.Chain(cl.MHA(d, 2, 2, 2, 3, pe="rope", gen=g(0)), cl.SwiGLU(d, 3, d, gen=g(1)))
    plain = cl.Chain(cl.MHA(d, 2, 2, 2, 3, pe="rope", gen=g(0)), cl.SwiGLU(d, 3, d, gen=g(1)),
                     residual=False)
    res, plain = res.double(), plain.double()
    n_res = cl.count_laws(res, cl.sample_inputs(res, (3, d), seed=0), seed=0).laws
    n_plain = cl.count_laws(plain, cl.sample_inputs(plain, (3, d), seed=0), seed=0).laws
    assert n_res == cl.theory_count(res) == 11
    assert n_plain == 11 + d * (d + 1) // 2


def test_bracket_matches_finite_differences():
    """[u, v](theta) = Dv u - Du v, checked against central differences of the fields."""
    m = cl.SwiGLU(3, 2, 2, gen=g(0)).double()
    theta, f = cl.flat_fn(m)
    X = torch.randn(4, 3, generator=g(1), dtype=torch.float64)
    B = cl.brackets(m, X, 1, seed=seeds.torch(5, "bracket_fields"))[0]
    gen = seeds.torch(5, "bracket_fields")  # the same stream: the same x, y, e1, e2
    i = torch.randint(4, (1,), generator=gen)
    j = torch.randint(4, (1,), generator=gen)
    e1 = torch.randn(1, 2, generator=gen, dtype=torch.float64)[0]
    e2 = torch.randn(1, 2, generator=gen, dtype=torch.float64)[0]
    u = lambda t: jacrev(lambda s: (f(s, X[i[0]]) * e1).sum())(t)
    v = lambda t: jacrev(lambda s: (f(s, X[j[0]]) * e2).sum())(t)
    eps = 1e-6
    dv_u = (v(theta + eps * u(theta)) - v(theta - eps * u(theta))) / (2 * eps)
    du_v = (u(theta + eps * v(theta)) - u(theta - eps * v(theta))) / (2 * eps)
    torch.testing.assert_close(B, dv_u - du_v, atol=1e-7, rtol=1e-6)


def test_vmap_rows_match_autograd_loop():
    m = cl.MoE(3, 2, 3, 2, topk=2, gen=g(0)).double()
    X = torch.randn(5, 3, generator=g(1), dtype=torch.float64)
    torch.testing.assert_close(cl.jacobian_rows(m, X), cl.jacobian_rows_loop(m, X))


def test_theory_count_refuses_unstated_cases():
    with pytest.raises(ValueError):
        cl.theory_count(cl.MoE(3, 2, 3, topk=1, renorm=True))
    with pytest.raises(ValueError, match="freezes the router"):
        cl.theory_count(cl.MoE(3, 2, 3, gate="sigmoid_topk_norm", topk=1))
    with pytest.raises(TypeError):
        cl.moe_count(cl.SwiGLU(3, 2))
    with pytest.raises(ValueError, match="gate"):
        cl.shift_invariant("relu")


def test_moe_count_follows_the_shift_symmetry():
    # E m expert laws for every gate; + d router-sum laws only for shift-invariant gates
    for gate, extra in [("softmax", 4), ("sigmoid_centred", 4), ("sigmoid", 0),
                        ("sigmoid_norm", 0), ("sigmoid_bias", 0)]:
        assert cl.theory_count(cl.MoE(4, 2, 3, gate=gate)) == 3 * 2 + extra, gate
    assert cl.theory_count(cl.MoE(4, 2, 3, gate="sigmoid_topk_norm", topk=2)) == 3 * 2
    with pytest.raises(ValueError, match="X"):
        cl.count_laws(cl.SwiGLU(3, 2), torch.zeros(3))
