"""A sweep whose first round the budget ended part-way feeds INCONCLUSIVE claims ("had k of
n tasks"), never a crash and never a PASS on the rows that happen to be there; and the
ledger catches a gate that closes where the chapter's rules say it decides."""

import pandas as pd
import pytest

from dltheory import claims
from dltheory.conservation import checks, config, rules


def _cut(df, done, planned, k, n):
    df.attrs["rounds"], df.attrs["tasks"] = (done, planned), (k, n)
    return df


def _matched_rows():
    return pd.DataFrame([{"block": "swiglu", "opt": "gd", "seed": 0, "lr": lr, "lam": 1.0,
                          "lam_ref": 1.0, "k_star": 10, "drift": lr, "in_reach": True}
                         for lr in (0.01, 0.02, 0.04)])


def test_cut_reason_only_for_a_first_round_cut_part_way():
    assert checks.cut(None) == ""
    assert checks.cut(_cut(_matched_rows(), 1, 8, 4, 32)) == ""       # whole rounds
    assert checks.cut(_cut(_matched_rows(), 0, 8, 4, 4)) == ""        # all tasks there
    assert "had 1 of 4 tasks" in checks.cut(_cut(_matched_rows(), 0, 8, 1, 4))


def test_cut_sweeps_give_hard_inconclusive_claims():
    cfg = config.Config.for_scale("smoke")
    ledger = claims.Ledger("conservation_laws", "smoke", rules=rules)
    sl = checks.matched(ledger, cfg, _cut(_matched_rows(), 0, 8, 1, 4))
    orth = pd.DataFrame([{"block": "swiglu", "control": "", "draw": 0, "law": "swiglu",
                          "max_cos": 1e-16}])
    checks.orthogonality(ledger, cfg, _cut(orth, 0, 3, 1, 18))
    for cid in ("CL.matched.gd_slope", "CL.matched.adam_gap", "CL.orth.swiglu",
                "CL.neg.gelu_relu_law"):
        c = ledger.claims[cid]
        assert c.verdict == claims.INCONCLUSIVE and c.kind == rules.KINDS[cid] == "hard"
        assert "tasks" in (c.note or c.reason)
    assert list(sl.columns) == ["block", "opt", "seed", "slope"]
    assert not ledger.failed


def _decided_ledger(identity):
    ledger = claims.Ledger("conservation_laws", "smoke", rules=rules, identity=identity)
    for cid in ledger.decides:
        if cid == "CL.matched.gd_slope":       # a gate that closed where it decides
            ledger.inconclusive(cid, "gated out", kind="hard", note="gate closed")
        else:
            ledger.check(cid, "stand-in", measured=1.0, predicted=1.0, tol=0.0, kind="hard")
    return ledger


def test_inverted_gate_raises_at_the_defaults_only():
    assert "CL.matched.gd_slope" in rules.DECIDES["smoke"]
    with pytest.raises(claims.Undecided, match="CL.matched.gd_slope"):
        _decided_ledger({"defaults": True}).report(show=False, write=False)
    _decided_ledger({"defaults": True, "budget": 30}).report(show=False, write=False)


def test_walks_cut_alone_leaves_out_only_the_walk_derivation():
    """The budget can cut SGD's random-walk sweep while the windows are whole (paper scale,
    60 s budget): the windows' claims are decided and only the walk's derivation (and its
    guard) is left out. Before, this path skipped CL.router_sum.adam with an empty reason
    and the chapter crashed (ValueError)."""
    from dltheory.conservation import experiments as ex

    cfg = config.Config.for_scale("smoke", disc_seeds=1, ks=(5, 10, 20, 40), id_steps=100,
                                  sgd_walk_draws=20)
    win, adam, ident = ex.early_windows(cfg), ex.adam_windows(cfg), ex.identity_runs(cfg)
    walks = _cut(ex.sgd_walks(cfg), 0, 2, 1, 3)
    ledger = claims.Ledger("conservation_laws", "smoke", rules=rules)
    checks.discrete(ledger, cfg, win, ident, adam, walks)
    assert ledger.claims["CL.adam.tau_exponent"].verdict != claims.INCONCLUSIVE
    assert ("CL.router_sum.adam" in ledger.claims) == (cfg.E >= 3)
    assert "CL.sgd.k_exponent" not in ledger.claims
    assert "CL.sgd_walk.batched_is_loop" not in ledger.claims
    # and a cut window still gives the Adam claims INCONCLUSIVE with the count
    ledger = claims.Ledger("conservation_laws", "smoke", rules=rules)
    checks.discrete(ledger, cfg, _cut(win.copy(), 0, 2, 1, 3), ident, adam, walks)
    c = ledger.claims["CL.adam.tau_exponent"]
    assert c.verdict == claims.INCONCLUSIVE and "had 1 of 3 tasks" in (c.note or c.reason)
