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
