"""Every claimed law is orthogonal to every Jacobian row; every negative control is not."""

import pytest
import torch

import dltheory.conservation as cl


def g(seed):
    return torch.Generator().manual_seed(seed)


def blocks(seed):
    return {
        "linear": (cl.FFN(4, 3, 4, "linear", gen=g(seed)), (4,), None),
        "relu": (cl.FFN(4, 3, 2, "relu", gen=g(seed)), (4,), None),
        "swiglu": (cl.SwiGLU(4, 3, 2, gen=g(seed)), (4,), None),
        "mha": (cl.MHA(4, 2, 2, 2, 3, gen=g(seed)), (3, 4), None),
        "mha_sin": (cl.MHA(4, 2, 2, 2, 3, pe="sin", gen=g(seed)), (3, 4), None),
        "mha_rope_interleaved": (cl.MHA(6, 2, 4, 2, 4, pe="rope", gen=g(seed)), (4, 6), None),
        "mha_rope_half": (cl.MHA(6, 2, 4, 2, 4, pe="rope", rope_style="half", gen=g(seed)),
                          (4, 6), None),
        "moe_dense": (cl.MoE(3, 2, 3, 2, gen=g(seed)), (3,), 200),
        "moe_top2": (cl.MoE(3, 2, 3, 2, topk=2, gen=g(seed)), (3,), 200),
        "moe_switch": (cl.MoE(3, 2, 3, 2, topk=1, gen=g(seed)), (3,), 200),
    }


def inputs(model, shape, n, seed):
    if n is None:
        return cl.sample_inputs(model, shape, seed=seed)
    return torch.randn(n, *shape, generator=g(seed), dtype=torch.float64)


@pytest.mark.parametrize("name", list(blocks(0)))
@pytest.mark.parametrize("seed", [0, 1])
def test_laws_orthogonal_to_jacobian_rows(name, seed):
    model, shape, n = blocks(seed)[name]
    model = model.double()
    X = inputs(model, shape, n, seed + 10)
    J = cl.jacobian_rows(model, X)
    for fam in cl.laws_for(model):
        assert cl.max_abs_cos(J, cl.law_gradients(model, fam)) < 1e-10, fam.name


@pytest.mark.parametrize("control, model, shape, n", [
    ("gelu_relu_law", cl.FFN(4, 3, 2, "gelu", gen=g(0)), (4,), None),
    ("silu_relu_law", cl.FFN(4, 3, 2, "silu", gen=g(0)), (4,), None),
    ("swiglu_gate_branch", cl.SwiGLU(4, 3, 2, gen=g(0)), (4,), None),
    ("rope_wrong_pairing", cl.MHA(6, 2, 4, 2, 4, pe="rope", gen=g(0)), (4, 6), None),
    ("rope_wrong_pairing", cl.MHA(6, 2, 4, 2, 4, pe="rope", rope_style="half", gen=g(0)),
     (4, 6), None),
    ("rope_full_qk", cl.MHA(6, 2, 4, 2, 4, pe="rope", gen=g(0)), (4, 6), None),
    ("moe_sigmoid_router_sum", cl.MoE(3, 2, 3, 2, gate="sigmoid", gen=g(0)), (3,), 200),
    ("moe_sigmoid_router_sum", cl.MoE(3, 2, 3, 2, gate="sigmoid_norm", gen=g(0)), (3,), 200),
])
def test_negative_controls_fail(control, model, shape, n):
    model = model.double()
    X = inputs(model, shape, n, 3)
    assert cl.orthogonality(model, cl.negative_control(control, model), X) > 1e-3


def test_rope_block_law_by_hand():
    """The interleaved block law equals ||Q^(j)||_F^2 - ||K^(j)||_F^2 computed with loops."""
    m = cl.MHA(6, 2, 4, 3, 4, pe="rope", gen=g(2)).double()
    p = dict(m.named_parameters())
    got = cl.qk_laws(2, 4, mode="interleaved")(p)
    want = []
    for i in range(2):
        Q = p["q.weight"][4 * i:4 * i + 4].T
        K = p["k.weight"][4 * i:4 * i + 4].T
        for j in range(2):
            cols = [2 * j, 2 * j + 1]
            want.append((Q[:, cols] ** 2).sum() - (K[:, cols] ** 2).sum())
    torch.testing.assert_close(got, torch.stack(want))


def test_vo_law_matches_paper_form():
    m = cl.MHA(5, 2, 2, 3, 3, gen=g(4)).double()
    p = dict(m.named_parameters())
    vals = cl.vo_laws(2, 3)(p)
    V1 = p["v.weight"][3:6].T      # (d, dv)
    O1 = p["o.weight"][:, 3:6]     # (d, dv)
    M = V1.T @ V1 - O1.T @ O1
    i, j = torch.triu_indices(3, 3)
    torch.testing.assert_close(vals[6:], M[i, j])


def test_rope_is_a_rotation_and_relative():
    """RoPE preserves norms and q_s . k_t depends only on t - s."""
    cos, sin = cl.rope_angles(6, 4, dtype=torch.float64)
    x = torch.randn(6, 4, generator=g(0), dtype=torch.float64)
    for style in ("interleaved", "half"):
        y = cl.apply_rope(x, cos, sin, style)
        torch.testing.assert_close(y.norm(dim=1), x.norm(dim=1))
        q = torch.randn(4, generator=g(1), dtype=torch.float64).expand(6, 4)
        k = torch.randn(4, generator=g(2), dtype=torch.float64).expand(6, 4)
        rq, rk = cl.apply_rope(q, cos, sin, style), cl.apply_rope(k, cos, sin, style)
        torch.testing.assert_close(rq[1] @ rk[3], rq[2] @ rk[4])


def test_softmax_router_shift_invariance():
    m = cl.MoE(3, 2, 4, 2, topk=2, gen=g(0)).double()
    x = torch.randn(10, 3, generator=g(1), dtype=torch.float64)
    y0 = m(x)
    with torch.no_grad():
        m.router.weight += torch.randn(3, generator=g(2), dtype=torch.float64)
    torch.testing.assert_close(m(x), y0)


def test_bad_inputs_name_the_argument():
    with pytest.raises(ValueError, match="act"):
        cl.FFN(4, 3, 2, "tanh")
    with pytest.raises(ValueError, match="pe"):
        cl.MHA(4, 2, 2, 2, 3, pe="alibi")
    with pytest.raises(ValueError, match="dk"):
        cl.MHA(4, 2, 3, 2, 3, pe="rope")
    with pytest.raises(ValueError, match="topk"):
        cl.MoE(3, 2, 3, topk=5)
    with pytest.raises(ValueError, match="gate"):
        cl.MoE(3, 2, 3, gate="relu")
    with pytest.raises(ValueError, match="branch"):
        cl.swiglu_laws(branch="down")
    with pytest.raises(ValueError, match="mode"):
        cl.qk_laws(2, 2, mode="diag")
    with pytest.raises(ValueError, match="unknown negative control"):
        cl.negative_control("nope", None)
