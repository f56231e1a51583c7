"""The law counter adds bracket levels until the Lie algebra closes (issue 49, item 4).

On a residual MLP block with biases behind an affine LayerNorm, ``[W, W]`` alone leaves one
direction out and the count was one law too many (``d + 1`` for ``d``): ``[W, [W, W]]``
adds it. Each count here is checked against an independent one: the conserved quadratic
forms found by :func:`quadratic_laws` (a null space over many parameter points, no
brackets) are true laws, so their functional rank is a *lower* bound on the number of
laws, while ``D - rank`` of any set of elements of ``Lie(W)`` is an *upper* bound. Where
the two meet the count is exact; on every module below they must meet.
"""

import pandas as pd
import pytest
import torch
from torch import nn

import dltheory.conservation as cl
from dltheory.conservation.models import Norm
from dltheory.conservation.quadratic import quadratic_laws


def g(seed):
    return torch.Generator().manual_seed(seed)


def _random_norm(norm, gen):
    with torch.no_grad():
        for p in norm.parameters():
            p.copy_(torch.randn(p.shape, generator=gen))


class ResidualMLP(nn.Module):
    """``x + W2 act(W1 Norm(x) + b1) + b2``: the pre-norm MLP block of a transformer."""

    def __init__(self, d, m, kind="layer", act=None, gen=None):
        super().__init__()
        self.norm, self.act = Norm(d, kind), nn.GELU() if act is None else act
        self.fc1, self.fc2 = nn.Linear(d, m), nn.Linear(m, d)
        _random_norm(self.norm, gen)
        with torch.no_grad():
            for p in (*self.fc1.parameters(), *self.fc2.parameters()):
                p.copy_(torch.randn(p.shape, generator=gen) / 2)

    def forward(self, x):
        return x + self.fc2(self.act(self.fc1(self.norm(x))))


class ProjNormMLP(nn.Module):
    """``W2 gelu(W1 Norm(P x + p) + b1) + b2``: a linear map with bias feeding the norm."""

    def __init__(self, d, m, kind="layer", gen=None):
        super().__init__()
        self.proj, self.norm = nn.Linear(d, d), Norm(d, kind)
        self.fc1, self.fc2 = nn.Linear(d, m), nn.Linear(m, 2)
        _random_norm(self.norm, gen)
        with torch.no_grad():
            for lin in (self.proj, self.fc1, self.fc2):
                for p in lin.parameters():
                    p.copy_(torch.randn(p.shape, generator=gen) / 2)

    def forward(self, x):
        return self.fc2(nn.functional.gelu(self.fc1(self.norm(self.proj(x)))))


class NormSwiGLUBias(nn.Module):
    """``x + SwiGLU(Norm(x))`` with biases on the gate, up and down maps."""

    def __init__(self, d, m, kind="layer", gen=None):
        super().__init__()
        self.norm = Norm(d, kind)
        self.gate, self.up, self.down = nn.Linear(d, m), nn.Linear(d, m), nn.Linear(m, d)
        _random_norm(self.norm, gen)
        with torch.no_grad():
            for lin in (self.gate, self.up, self.down):
                for p in lin.parameters():
                    p.copy_(torch.randn(p.shape, generator=gen) / 2)

    def forward(self, x):
        z = self.norm(x)
        return x + self.down(nn.functional.silu(self.gate(z)) * self.up(z))


MODULES = {
    "residual_mlp_layernorm_d3": (lambda: ResidualMLP(3, 2, gen=g(0)), 3),
    "residual_mlp_layernorm_d4": (lambda: ResidualMLP(4, 2, gen=g(1)), 4),
    "residual_mlp_rmsnorm": (lambda: ResidualMLP(3, 2, "rms", gen=g(2)), 3),
    "residual_mlp_layernorm_tanh": (lambda: ResidualMLP(3, 3, act=nn.Tanh(), gen=g(3)), 3),
    "proj_layernorm_mlp": (lambda: ProjNormMLP(3, 2, gen=g(4)), 3),
    "proj_rmsnorm_mlp": (lambda: ProjNormMLP(3, 2, "rms", gen=g(5)), 3),
    "layernorm_swiglu_biases": (lambda: NormSwiGLUBias(3, 2, gen=g(6)), 3),
}


@pytest.mark.parametrize("name", list(MODULES))
def test_count_meets_the_independent_quadratic_count(name):
    make, in_dim = MODULES[name]
    model = make().double()
    c = cl.count_laws(model, in_shape=(in_dim,), seed=0)
    q = quadratic_laws(model, in_shape=(in_dim,), seed=0)
    assert c.closed, name
    assert c.laws == q.functional_rank(model), (name, c.laws, len(q))


def test_first_level_alone_overcounts_on_the_layernorm_block():
    """The case of issue 49: one bracket level stops one rank short (d + 1 laws for d)."""
    model = ResidualMLP(3, 2, gen=g(0)).double()
    one = cl.count_laws(model, in_shape=(3,), seed=0, max_depth=1)
    full = cl.count_laws(model, in_shape=(3,), seed=0)
    assert not one.closed and one.laws == 4          # an upper bound, and it says so
    assert full.closed and full.laws == 3 and full.batches >= 2


def test_nested_bracket_depth_one_is_a_bracket():
    """A depth-1 nested bracket is [u, v] = H_v u - H_u v: its rows lie in the span of the
    first-level brackets (and of the Jacobian rows)."""
    m = cl.SwiGLU(3, 2, 2, gen=g(0)).double()
    X = torch.randn(6, 3, generator=g(1), dtype=torch.float64)
    B1 = cl.brackets(m, X, 40, seed=0)
    N1 = cl.nested_brackets(m, X, 5, 1, seed=1)
    r = cl.numrank(B1)[0]
    assert cl.numrank(torch.cat([B1, N1]))[0] == r


@pytest.mark.parametrize("bad", [0, 1.5, -1])
def test_bad_depth_is_refused(bad):
    m = cl.SwiGLU(3, 2, 2, gen=g(0)).double()
    with pytest.raises(ValueError, match="depth"):
        cl.nested_brackets(m, torch.zeros(2, 3, dtype=torch.float64), 2, bad, seed=0)
    with pytest.raises(ValueError, match="max_depth"):
        cl.count_laws(m, in_shape=(3,), max_depth=bad)


# --------------------------------------------------------------------------- issue 51, item 3
def test_an_expert_no_input_reaches_is_refused_not_counted(tmp_path):
    """The planted error ``top1_expert_unreached``: the renormalised top-1 count inputs miss
    expert 0. The counter accepts only the router (declared structural) without gradient,
    so it refuses the count and the claim is INCONCLUSIVE; unplanted it PASSes at the count
    derived, E m + E d (44 at d = 3, m = 8, E = 4, where the old counter found 100)."""
    from dltheory import claims, mutations
    from dltheory.conservation import checks, config, rules
    from dltheory.conservation import experiments as ex

    cfg = config.Config.for_scale("smoke", SEED=5001, D_MODEL=3, EXPERTS=4, TOPK=1, HIDDEN=8)

    def verdict():
        old = torch.get_default_dtype()
        row = ex._task_count(cfg, {"model": "moe_top1_renorm"})
        torch.set_default_dtype(old)
        led = claims.Ledger("t", scale="smoke", results_dir=tmp_path, rules=rules)
        checks.count_claims(led, cfg, pd.DataFrame([{"model": "moe_top1_renorm", **row}]))
        return row, led.claims["CL.count.moe_top1_renorm"]

    row, c = verdict()
    assert row["laws"] == row["theory"] == 4 * 8 + 4 * 3 and c.verdict == claims.PASS
    with mutations.apply("conservation_laws:top1_expert_unreached"):
        row, c = verdict()
    assert row["undetermined"] and "no gradient" in row["undetermined"]
    assert c.verdict == claims.INCONCLUSIVE


# --------------------------------------------------------------------------- issue 49, item 5
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_top1_renormalised_sigmoid_router_has_the_frozen_router_count(seed):
    """sigma(z) renormalised over the one kept expert is 1: the router is frozen, as with
    the renormalised softmax, and the count is E m + E d (derived in ``renorm_top1_count``),
    checked with the counter (the router declared structurally unreached, nothing else)."""
    m = cl.MoE(3, 2, 3, 2, gate="sigmoid_topk_norm", topk=1, gen=g(seed)).double()
    c = cl.count_laws(m, in_shape=(3,), seed=seed, structural_unreached=("router.weight",))
    assert c.laws == cl.renorm_top1_count(m) == 3 * 2 + 3 * 3
    with pytest.raises(ValueError, match="renorm_top1_count"):
        cl.moe_count(m)
    with pytest.raises(ValueError, match="topk=1"):
        cl.renorm_top1_count(cl.MoE(3, 2, 3, 2, gate="sigmoid_topk_norm", topk=2, gen=g(0)))


def test_rope_laws_are_quadratic():
    """The RoPE attention laws (one per rotation pair and V/O) are quadratic forms: the
    quadratic solver finds them all (functional rank = the count), as quadratic.py says."""
    m = cl.MHA(2, 1, 2, 1, 3, pe="rope", gen=g(0)).double()
    q = quadratic_laws(m, in_shape=(3, 2), seed=0)
    c = cl.count_laws(m, in_shape=(3, 2), seed=0)
    assert q.functional_rank(m) == c.laws == cl.theory_count(m)


def test_an_unclosed_count_above_the_prediction_is_undecided_not_failed():
    """A count whose algebra had not closed is an upper bound: above the prediction it
    decides nothing (INCONCLUSIVE), at the prediction it is the certificate."""
    from dltheory.conservation import checks

    row = pd.Series({"laws": 7, "theory": 6, "closed": False, "levels": 4, "undetermined": ""})
    assert "upper bound" in checks.undecided(row)
    assert checks.undecided(row.copy().replace({7: 6})) == ""
    assert checks.undecided(pd.Series({"laws": 7, "theory": 6, "closed": True, "levels": 2,
                                       "undetermined": ""})) == ""
    assert "not determined" in checks.undecided(pd.Series(
        {"laws": float("nan"), "theory": 6, "undetermined": "no gap"}))


def test_listed_laws_rank_equals_the_count_on_the_papers_blocks():
    """Theorem 3's two numbers: the listed laws' functional rank and the counted laws."""
    from dltheory.conservation import experiments as ex

    for model, shape in ((cl.SwiGLU(3, 2, 2, gen=g(0)), (3,)),
                         (cl.MHA(3, 2, 2, 2, 3, pe="rope", gen=g(1)), (3, 3)),
                         (cl.MoE(3, 2, 3, 2, gen=g(2)), (3,))):
        model = model.double()
        assert ex.listed_rank(model, 1e-9) == cl.count_laws(model, in_shape=shape).laws
