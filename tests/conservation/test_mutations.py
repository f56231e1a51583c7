"""Planted errors in the theory must make a hard claim FAIL (smoke-sized inputs).

Each test runs the experiment and the check function the chapter calls, with one theory
function replaced by a plausible wrong version, and asserts that the named claim FAILs
(and that it PASSes unmutated).
"""

import pytest
import torch

from dltheory import claims
from dltheory.conservation import checks, config, theory
from dltheory.conservation import experiments as ex
from dltheory.conservation import laws as L


@pytest.fixture(scope="module")
def cfg():
    return config.Config.for_scale("smoke", disc_seeds=1, ks=(5, 10, 20, 40), id_steps=100)


@pytest.fixture(scope="module")
def counts(cfg):
    old = torch.get_default_dtype()
    names = list(checks.COUNT_IDS) + ["chain_residual", "chain_plain"]
    df = ex.counts(cfg, names)
    torch.set_default_dtype(old)
    return df


@pytest.fixture(scope="module")
def matched(cfg):
    return ex.matched_progress(cfg)


@pytest.fixture(scope="module")
def discrete(cfg):
    return ex.early_windows(cfg), ex.identity_runs(cfg)


def ledger(tmp_path):
    return claims.Ledger("mutation", scale="smoke", results_dir=tmp_path)


def verdict(led, cid):
    return led.claims[cid].verdict


def _tri(n):
    return n * (n + 1) // 2


MUTATIONS = {  # name: (class, wrong count, claim that must fail)
    # dropped term: the V/O laws forgotten in the attention count
    "mha_drop_vo": ("MHA", lambda m: m.H * _tri(m.dk), "CL.count.mha"),
    # wrong constant: antisymmetric instead of symmetric part, d_k(d_k-1)/2 per head
    "mha_antisym": ("MHA", lambda m: m.H * (_tri(m.dk - 1) + _tri(m.dv)), "CL.count.mha"),
    # RoPE treated like plain attention (one law per rotation pair forgotten)
    "rope_full": ("MHA", lambda m: m.H * (_tri(m.dk) + _tri(m.dv)), "CL.count.mha_rope"),
    # dropped term: the router sum forgotten (E m instead of E m + d)
    "moe_drop_router": ("MoE", lambda m: m.w_up.shape[0] * m.w_up.shape[1],
                        "CL.count.moe_dense"),
}


@pytest.mark.parametrize("name", list(MUTATIONS))
def test_count_mutations_fail(name, cfg, counts, monkeypatch, tmp_path):
    from dltheory.conservation.models import MHA, MoE
    led = ledger(tmp_path)
    checks.counts(led, cfg, counts)
    kind, wrong, cid = MUTATIONS[name]
    assert verdict(led, cid) == "PASS"
    cls = {"MHA": MHA, "MoE": MoE}[kind]
    real = L.theory_count

    def mutated(model):
        return wrong(model) if isinstance(model, cls) else real(model)
    monkeypatch.setattr(L, "theory_count", mutated)
    led2 = ledger(tmp_path)
    checks.counts(led2, cfg, counts)
    assert verdict(led2, cid) == "FAIL"


def test_renorm_top1_as_dense_fails(cfg, counts, monkeypatch, tmp_path):
    """'Sparse = dense laws' planted for renormalised top-1 routing (E m + d)."""
    monkeypatch.setattr(L, "renorm_top1_count",
                        lambda m: m.w_up.shape[0] * m.w_up.shape[1] + m.w_up.shape[2])
    led = ledger(tmp_path)
    checks.counts(led, cfg, counts)
    assert verdict(led, "CL.count.moe_top1_renorm") == "FAIL"


@pytest.mark.parametrize("wrong, cid", [
    ({"gd": 1.15, "adam": 0.0}, "CL.matched.gd_slope"),      # exponent off by 15%
    ({"gd": 1.0, "adam": 0.5}, "CL.matched.adam_gap"),       # Adam half first order
])
def test_matched_slope_mutations_fail(wrong, cid, cfg, matched, monkeypatch, tmp_path):
    led = ledger(tmp_path)
    checks.matched(led, cfg, matched)
    assert verdict(led, cid) == "PASS"
    monkeypatch.setattr(theory, "matched_slope", lambda opt: wrong[opt])
    led2 = ledger(tmp_path)
    checks.matched(led2, cfg, matched)
    assert verdict(led2, cid) == "FAIL"


@pytest.mark.parametrize("patch, cid", [
    # wrong sign in the decay: (1 + tau lam)^(2k)
    (("wd_decay", lambda tau, lam, k: (1 + tau * lam) ** (2 * k)), "CL.wd.decay"),
    # dropped factor 2 in the exponent: (1 - tau lam)^k
    (("wd_decay", lambda tau, lam, k: (1 - tau * lam) ** k), "CL.wd.decay"),
    # Adam second order like GD
    (("adam_tau_exponent", lambda: 2.0), "CL.adam.tau_exponent"),
    # Adam exponent off by 20%
    (("adam_tau_exponent", lambda: 1.25), "CL.adam.tau_exponent"),
])
def test_discrete_mutations_fail(patch, cid, cfg, discrete, monkeypatch, tmp_path):
    win, ident = discrete
    led = ledger(tmp_path)
    checks.discrete(led, cfg, win, ident)
    assert verdict(led, cid) == "PASS"
    monkeypatch.setattr(theory, *patch)
    led2 = ledger(tmp_path)
    checks.discrete(led2, cfg, win, ident)
    assert verdict(led2, cid) == "FAIL"
