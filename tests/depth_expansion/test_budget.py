"""The chapter under a time budget: the cost model, sweeps not started when their first
round does not fit, and their claims INCONCLUSIVE with the reason."""

import pytest

from dltheory import budget, claims
from dltheory import depth_expansion as de
from dltheory.depth_expansion import cost
from dltheory.depth_expansion import experiments as dx


def test_cost_model_orders_the_scales():
    t = {s: sum(cost.table(de.Config.for_scale(s)).values()) for s in
         ("smoke", "standard", "paper", "full")}
    assert t["smoke"] < t["standard"] < t["paper"] < t["full"]
    gpu = sum(cost.table(de.Config.for_scale("paper"), "cuda").values())
    assert 4 * 60 < gpu < 12 * 60          # "about 8 minutes on one H100"
    assert cost.conv_step(64, 16, 16) == pytest.approx(0.903, rel=0.1)   # measured


def test_sweep_too_large_for_its_share_is_skipped_and_inconclusive():
    cfg = de.Config.for_scale("paper")
    budget.start(5.0, de.Config.BUDGET_WEIGHTS)
    try:
        gdf = dx.grid(cfg)
    finally:
        budget.start(None, {})
    assert gdf.empty and "grid_conv sweep" in dx.skipped(gdf)
    assert gdf.attrs["rounds"] == (0, cfg.grid_seeds)
    led = claims.Ledger("depth_expansion", scale="paper")
    de.checks.grid(led, cfg, gdf)
    assert {c.verdict for c in led.claims.values()} == {claims.INCONCLUSIVE}
    assert "not run under this budget" in led.claims["DE.signal_decay"].note
    assert isinstance(dx.view(gdf, ["test"]), str)
    de.figures.grid(gdf, cfg)     # a one-line figure, no error


def test_first_round_cut_part_way_is_hard_inconclusive(monkeypatch):
    """A budget that ends a sweep's first round part-way (here: the expansions' first round,
    old model and twin, with only the old model done) leaves no table the checks read:
    its claims are INCONCLUSIVE 'had k of n tasks', hard ones hard, never a KeyError."""
    import pandas as pd

    from dltheory import experiments as engine

    def cut(fn, tasks, *, config, name, rounds):
        df = pd.DataFrame([{"model": tasks[0]["model"], "seed": tasks[0]["seed"], "x": 1.0}])
        df.attrs["rounds"] = (0, 2)
        df.attrs["tasks"] = (1, len(tasks))
        return df

    monkeypatch.setattr(engine, "sweep", cut)
    cfg = de.Config.for_scale("smoke")
    ex = dx.expansions(cfg)
    assert ex.empty and "had 1 of 2 tasks" in dx.skipped(ex)
    led = claims.Ledger("depth_expansion", scale="paper")
    de.checks.signal(led, cfg, ex)
    de.checks.jumpboards(led, cfg, ex)
    de.checks.degenerate(led, cfg, ex)
    c = led.claims["DE.jumpboard.population"]
    assert c.verdict == claims.INCONCLUSIVE and c.kind == "hard"
    assert "had 1 of 2 tasks" in c.note
    assert {c.verdict for c in led.claims.values()} == {claims.INCONCLUSIVE}
