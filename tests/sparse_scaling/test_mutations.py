"""Planted errors in the theory must make a hard claim FAIL (on smoke-sized inputs).

The entries are the chapter's part of the registry (``dltheory.sparse_scaling.mutations``).
The experiments run once (module fixtures, cache off); each test re-runs the chapter's
check functions unmutated (the entry's claims PASS) and with the entry applied (they FAIL).
"""

import pytest

from dltheory import claims, mutations
from dltheory.sparse_scaling import checks, config, rules
from dltheory.sparse_scaling import experiments as ssx
from dltheory.sparse_scaling.mutations import EXPERIMENT_SIDE

ENTRIES = {m.id: m for m in mutations.registry("sparse_scaling")}
# the paired ReLU judge has its own test (test_sparse_scaling_relu.py): the ReLU sweep is not
# among this module's fixtures
RELU_SIDE = ("sparse_scaling:relu_linear_exponents_swapped",)
JUDGE_SIDE = [i for i in ENTRIES if i not in EXPERIMENT_SIDE + RELU_SIDE]


def _no_cache():
    mp = pytest.MonkeyPatch()
    mp.setenv("DLTHEORY_CACHE", "0")
    return mp


@pytest.fixture(scope="module")
def sections():
    mp = _no_cache()
    cfg = config.Config.for_scale("smoke", heaps_trials=200, n_seeds=3, dd_seeds=1, rank_draws=4,
                                  dd_points=3, n_dd_points=24, grid_n=7, grid_d=7, grid_u_seeds=2)
    dm, asym = ssx.data_model(cfg), ssx.asymptotic_prefactors(cfg)
    an, ad, dd, grid = ssx.alpha_n(cfg), ssx.alpha_d(cfg), ssx.double_descent(cfg), ssx.combined_grid(cfg)
    op, env = ssx.overparam(cfg), ssx.envelope(cfg)
    cfg_gd = config.Config.for_scale("smoke", gd_shown=1)
    gd = ssx.gd(cfg_gd)
    mp.undo()

    def main(led):
        checks.data_model(led, cfg, dm, asym)
        checks.alpha_n(led, cfg, an)
        checks.alpha_d(led, cfg, ad, asym)
        checks.double_descent(led, cfg, dd)
        checks.combined_law(led, cfg, grid)
        checks.overparam(led, cfg, op)
        checks.frontier(led, cfg, env)
    return {"main": main, "gd": lambda led: checks.gd(led, cfg_gd, gd), "cfg": cfg, "asym": asym}


def verdicts(record):
    led = claims.Ledger("sparse_scaling_mutation", scale="smoke", rules=rules)
    record(led)
    return {c.id: c.verdict for c in led.claims.values()}


def test_every_entry_has_claims_here():
    assert len(ENTRIES) >= 6
    assert all(m.catches for m in ENTRIES.values())


@pytest.mark.parametrize("mid", JUDGE_SIDE)
def test_entry_is_caught(mid, sections, unmutated):
    m = ENTRIES[mid]
    key = "gd" if m.catches == ("SS.gd.instability",) else "main"
    run = lambda: verdicts(sections[key])   # noqa: E731
    got = mutations.flips(m, run, before=unmutated(key, run))
    assert set(m.catches) <= set(got), got     # the entry's claims flip (others may follow)
    # caught: FAIL, or WEAK (the band no longer resolves 20% on the fixture's few draws;
    # WEAK raises like FAIL)
    assert all(got[c][0] == claims.PASS and got[c][1] in (claims.FAIL, claims.WEAK) for c in m.catches), got


# experiment side: only the experiment the entry targets reruns, under the entry (cache off)
def _rerun(mid, cfg, asym):
    """Rerun the experiment ``mid`` targets; return the record function over its result."""
    if mid == "sparse_scaling:oracle_ridge_argmax":
        r = ssx.double_descent(cfg)
        return lambda led: checks.double_descent(led, cfg, r)
    if mid == "sparse_scaling:alpha_n_one_feature_draw":
        r = ssx.alpha_n(cfg)
        return lambda led: checks.alpha_n(led, cfg, r)
    r = ssx.alpha_d(cfg)
    return lambda led: checks.alpha_d(led, cfg, r, asym)


@pytest.mark.parametrize("mid", EXPERIMENT_SIDE)
def test_experiment_side_entry_is_caught(mid, sections, unmutated):
    m, cfg = ENTRIES[mid], sections["cfg"]
    # unmutated: the fixture's own run of the same experiment at the same config (cache off)
    clean = unmutated("main", lambda: verdicts(sections["main"]))
    mp = _no_cache()
    try:
        with mutations.apply(m):
            bad = verdicts(_rerun(mid, cfg, sections["asym"]))
    finally:
        mp.undo()
    assert all(clean[c] == claims.PASS and bad[c] in (claims.FAIL, claims.WEAK) for c in m.catches), (clean, bad)
