"""Labels, counts and hand values of dltheory.conservation.laws that the orthogonality
tests leave open (written against the mutants that survived scripts/mutation_score.py).

Each test names its independent reference: a law written out with loops from the weight
layout that models.py documents, the symmetry count of theory_count (derived separately
from the law families), orthogonality to autograd's Jacobian rows, or the label/kind
contract that law_values and train's record key on."""

import pytest
import torch

import dltheory.conservation as cl
from dltheory.conservation import laws as L


def close(a, b, rtol=1e-12, atol=1e-14):
    assert a.shape == b.shape and torch.allclose(a, b, rtol=rtol, atol=atol), (a, b)


def g(seed):
    return torch.Generator().manual_seed(seed)


def params(model):
    return dict(model.double().named_parameters())


def blocks():
    return {
        "linear": cl.FFN(4, 3, 4, "linear", gen=g(0)),
        "relu": cl.FFN(4, 3, 2, "relu", gen=g(0)),
        "gelu": cl.FFN(4, 3, 2, "gelu", gen=g(0)),
        "swiglu": cl.SwiGLU(4, 3, 2, gen=g(0)),
        "mha": cl.MHA(4, 2, 2, 3, 3, gen=g(0)),
        "mha_rope": cl.MHA(6, 2, 4, 2, 4, pe="rope", gen=g(0)),
        "mha_qknorm": cl.MHA(4, 2, 3, 2, 3, qk_norm=True, gen=g(0)),
        "moe": cl.MoE(3, 2, 3, 2, gen=g(0)),
        "moe_sigmoid": cl.MoE(3, 2, 3, 2, gate="sigmoid", gen=g(0)),
        "norm_rms": cl.NormSwiGLU(4, 3, 2, "rms", gen=g(0)),
        "norm_layer_proj": cl.NormSwiGLU(4, 3, 2, "layer", proj=True, gen=g(0)),
        "norm_rms_proj": cl.NormSwiGLU(4, 3, 2, "rms", proj=True, gen=g(0)),
        "chain": cl.Chain(cl.MHA(4, 2, 2, 2, 3, gen=g(0)), cl.SwiGLU(4, 3, 4, gen=g(1))),
        "chain_qknorm": cl.Chain(cl.MHA(4, 2, 2, 2, 3, qk_norm=True, gen=g(0)),
                                 cl.FFN(4, 3, 4, "relu", gen=g(1))),
    }


#: the documented labels and kinds (LawFamily's docstring, the chapter's tables)
LABELS = {
    "linear": [("linear", "quadratic")], "relu": [("relu", "quadratic")], "gelu": [],
    "swiglu": [("swiglu", "quadratic")],
    "mha": [("qk", "quadratic"), ("vo", "quadratic")],
    "mha_rope": [("qk_rope", "quadratic"), ("vo", "quadratic")],
    "mha_qknorm": [("qk_norm", "quadratic"), ("vo", "quadratic")],
    "moe": [("experts", "quadratic"), ("router_sum", "linear")],
    "moe_sigmoid": [("experts", "quadratic")],
    "norm_rms": [("swiglu", "quadratic"), ("norm_gain", "quadratic")],
    "norm_layer_proj": [("swiglu", "quadratic"), ("norm_gain", "quadratic"),
                        ("scale", "quadratic"), ("column_sum", "linear")],
    "norm_rms_proj": [("swiglu", "quadratic"), ("norm_gain", "quadratic"),
                      ("scale", "quadratic")],
    "chain": [("qk", "quadratic"), ("vo", "quadratic"), ("swiglu", "quadratic")],
    "chain_qknorm": [("qk_norm", "quadratic"), ("vo", "quadratic"), ("relu", "quadratic")],
}


@pytest.mark.parametrize("name", list(LABELS))
def test_families_carry_their_labels_and_kinds(name):
    """law_values and train's record key on each family's label and treat 'linear' kinds
    (router sum, LayerNorm column sum) as drift-free: every block's families have the
    documented labels and kinds, distinct within a block so no values overwrite others."""
    fams = cl.laws_for(blocks()[name])
    assert [(f.name, f.kind) for f in fams] == LABELS[name]
    model = blocks()[name]
    assert set(L.law_values(fams, params(model))) == {lab for lab, _ in LABELS[name]}


def test_negative_control_labels_differ_from_the_laws():
    """A run that records a law and its negative control keys both by label: the gate-branch
    control is 'swiglu_gate', not the SwiGLU law's 'swiglu'; the ReLU law on a smooth FFN
    keeps the label 'relu'."""
    assert L.swiglu_laws(branch="gate").name == "swiglu_gate"
    assert L.swiglu_laws().name == "swiglu"
    ffn = blocks()["gelu"]
    assert L.negative_control("gelu_relu_law", ffn).name == "relu"


@pytest.mark.parametrize("name", list(LABELS))
def test_law_values_count_equals_theory_count(name):
    """The laws laws_for states (their number of values, evaluated on the block's own
    parameters, prefixes included) are as many as theory_count's symmetry count, which is
    an int."""
    model = blocks()[name]
    fams = cl.laws_for(model)
    n = sum(f(params(model)).numel() for f in fams)
    count = cl.theory_count(model)
    assert type(count) is int and n == count


def test_chain_laws_are_the_blocks_laws_under_their_prefixes():
    """A Chain's parameters are its blocks' under 'attn.' and 'ffn.': its law values are the
    attention block's followed by the FFN's, each evaluated on the block alone."""
    ch = blocks()["chain"]
    got = torch.cat([f(params(ch)) for f in cl.laws_for(ch)])
    want = torch.cat([f(params(b)) for b in (ch.attn, ch.ffn) for f in cl.laws_for(b)])
    close(got, want, rtol=0, atol=0)


def test_default_ffn_family_is_the_full_linear_law():
    """ffn_laws() without arguments is the linear net's A^T A - C C^T (m(m+1)/2 upper-
    triangular entries, here written out for m = 3), not the ReLU diagonal."""
    m = blocks()["linear"]
    p = params(m)
    A, C = p["first.weight"], p["second.weight"]
    M = A @ A.T - C.T @ C
    i, j = torch.triu_indices(3, 3)
    close(L.ffn_laws()(p), M[i, j])


@pytest.mark.parametrize("mode", ["interleaved", "half"])
def test_rope_block_laws_by_hand_at_dk_8(mode):
    """At dk = 8 the two RoPE pairings differ from any grouping of 4 rows: the law of pair j
    is ||Q_i^(j)||_F^2 - ||K_i^(j)||_F^2 with columns {2j, 2j+1} (interleaved) or
    {j, j + 4} (half) of Q_i = q.weight[8i:8i+8].T, written out with loops."""
    H, dk, d = 2, 8, 5
    p = {"q.weight": torch.randn(H * dk, d, generator=g(1), dtype=torch.float64),
         "k.weight": torch.randn(H * dk, d, generator=g(2), dtype=torch.float64)}
    got = L.qk_laws(H, dk, mode=mode)(p)
    want = []
    for i in range(H):
        Q, K = p["q.weight"][dk * i:dk * i + dk].T, p["k.weight"][dk * i:dk * i + dk].T
        for j in range(dk // 2):
            cols = [2 * j, 2 * j + 1] if mode == "interleaved" else [j, j + dk // 2]
            want.append((Q[:, cols] ** 2).sum() - (K[:, cols] ** 2).sum())
    close(got, torch.stack(want))


def test_qknorm_laws_by_hand_and_conserved():
    """With QK-norm, ||Q_i||_F^2 and ||K_i||_F^2 per head (loops over q.weight[3i:3i+3]) are
    the laws, and they and the VO laws are orthogonal to every Jacobian row (autograd)."""
    m = blocks()["mha_qknorm"]
    p = params(m)
    got = L.qknorm_laws(2, 3)(p)
    want = [(p[w][3 * i:3 * i + 3] ** 2).sum() for w in ("q.weight", "k.weight")
            for i in range(2)]
    close(got, torch.stack(want))
    X = cl.sample_inputs(m, (3, 4), seed=5)
    J = cl.jacobian_rows(m, X)
    for fam in cl.laws_for(m):
        assert cl.max_abs_cos(J, cl.law_gradients(m, fam)) < 1e-10, fam.name


def test_expert_laws_default_prefix_by_hand():
    """expert_laws() reads the MoE's own parameter names: ||w_up[e,i,:]||^2 -
    ||w_down[e,:,i]||^2 for every expert e and unit i (loops), E*m values."""
    m = blocks()["moe"]
    p = params(m)
    got = L.expert_laws()(p)
    want = [(p["w_up"][e, i] ** 2).sum() - (p["w_down"][e, :, i] ** 2).sum()
            for e in range(3) for i in range(2)]
    close(got, torch.stack(want))
