"""Chapter 4's pre-registered rules: kinds fixed for every claim, the regression-head
covariance check's rotation null and its decision both ways, tie-free Hoeffding counts."""

import numpy as np
import pandas as pd
import pytest

from dltheory import claims
from dltheory import depth_expansion as de
from dltheory.depth_expansion import diagnostics, rules, transfer


def test_every_kind_is_a_ledger_kind_and_hard_claims_are_the_mechanism():
    assert set(rules.KINDS.values()) <= set(claims.KINDS)
    hard = {k for k, v in rules.KINDS.items() if v == "hard"}
    # the held-out certificate is hard evidence but not pre-registered as decided: at smoke
    # its upper end sits within a few hundredths of 0, and no standard run has measured it
    assert hard - {"DE.certificate"} == set(rules.DECIDES["smoke"]) \
        == set(rules.DECIDES["standard"])
    # calculus on the book's code and formulas against their own Monte Carlo are not evidence
    for cid in ("DE.first_order", "DE.norm_lipschitz", "DE.lipschitz.top",
                "DE.transformer.first_order"):
        assert rules.KINDS[cid] == "identity"
    for cid in ("DE.null_mean", "DE.routeB.tightness", "DE.hoeffding.K", "DE.lowrank_null"):
        assert rules.KINDS[cid] == "derivation"
    for ids in de.checks.CLAIMS.values():
        assert set(ids) <= set(rules.KINDS)


def test_rotation_null_closed_form_against_haar_rotations():
    rng = np.random.default_rng(0)
    for d, r in ((8, 3), (16, 40), (12, 12)):
        A = rng.standard_normal((d, r)) * np.linspace(0.3, 2.0, r)
        sigma = A @ A.T
        m, se = diagnostics.simulate_rotation_offdiag(sigma, draws=400, seed=1)
        assert abs(m - diagnostics.rotation_offdiag(sigma)) < 4 * se + 1e-3
    assert diagnostics.rotation_offdiag(np.eye(5)) == pytest.approx(0.0, abs=1e-12)


def _rdf(off, rot):
    return pd.DataFrame({"off_energy": off, "rotation_null": rot, "rank_null": 0.185,
                         "participation": 8.0, "r2": 0.9})


@pytest.mark.parametrize("off, verdict", [
    ([0.05, 0.06, 0.04, 0.05], "PASS"),            # diagonal beyond its spectrum's null
    ([0.35, 0.36, 0.34, 0.35], "NOT REPRODUCED"),  # less diagonal than a random basis
    ([0.19, 0.21, 0.20, 0.20], "INCONCLUSIVE"),    # the structureless null itself
])
def test_regression_covariance_decides_both_ways(off, verdict):
    cfg = de.Config.for_scale("smoke")
    led = claims.Ledger("depth_expansion", scale="smoke", rules=rules)
    de.checks.covariance_regression(led, cfg, _rdf(off, [0.2, 0.21, 0.19, 0.2]))
    assert led.claims["DE.gradient_covariance.regression"].verdict == verdict


def _seed_rows(t):
    return pd.DataFrame({"t_cond1": t, "delta_R_lo": [0.01] * len(t)}, index=range(len(t)))


@pytest.mark.parametrize("t, verdict", [([7.0, 2.0], "PASS"), ([5.9, 2.0], "INCONCLUSIVE")])
def test_power_gate_opens_at_power_t(t, verdict):
    """The margin checks are decided only at seeds whose held-out t reaches POWER_T."""
    cfg = de.Config.for_scale("smoke")
    led = claims.Ledger("depth_expansion", scale="smoke", rules=rules)
    rows = _seed_rows(t)
    c = de.checks._powered(led, cfg, "DE.jumpboard.population", "s", rows, "t_cond1",
                           lambda r: r.delta_R_lo, rows.t_cond1, "a held-out population")
    assert c.verdict == verdict


@pytest.mark.parametrize("null, verdict", [(0.58, "INCONCLUSIVE"), (0.2, "NOT REPRODUCED")])
def test_mlp_covariance_gate_follows_the_low_rank_null(null, verdict):
    """Where the rank-9 null is above the threshold the MLP cannot test Assumption 3."""
    cfg = de.Config.for_scale("smoke")
    led = claims.Ledger("depth_expansion", scale="smoke", rules=rules)
    odf = pd.DataFrame({"width": [16, 16], "off_energy": [0.7, 0.7], "offdiag_null": null})
    de.checks._covariance_mlp(led, cfg, odf)
    assert led.claims["DE.gradient_covariance"].verdict == verdict


def test_hoeffding_failure_count_at_and_off_an_integer_threshold():
    # K = 10 000, margin B x / sqrt(K) with x = 2: threshold exactly 5100 (a tie is no failure)
    assert transfer.failure_count(10_000, 5.0 * 2 / 100, 5.0) == 5100
    # an irrational threshold floors
    assert transfer.failure_count(2000, 5.0 * 2 / 2000 ** 0.5, 5.0) == 1044
