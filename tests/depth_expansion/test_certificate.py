"""The held-out test-set certificate (``bounds.heldout_certificate``): its arithmetic, its
coverage on redrawn test sets, the three-way decision of ``DE.certificate`` and the planted
errors that must flip it, on synthetic expansion tables (no training)."""

import math

import numpy as np
import pandas as pd
import pytest

from dltheory import claims, mutations
from dltheory import depth_expansion as de
from dltheory.depth_expansion import bounds, transfer


def test_term_is_empirical_bernstein_for_range_2B():
    sd, K, B, d = 0.7, 2000, 5.0, 0.025
    L = math.log(2 / d)
    want = math.sqrt(2 * sd**2 * L / K) + 7 * 2 * B * L / (3 * (K - 1))
    assert bounds.heldout_term(sd, K, B, d) == pytest.approx(want, rel=1e-12)
    c = bounds.heldout_certificate(-0.1, sd, K, B, d)
    assert c.upper == pytest.approx(-0.1 + want) and c.lower == pytest.approx(-0.1 - want)
    # shrinks as 1/sqrt(K) at large K; never below the Hoeffding-free variance part
    assert bounds.heldout_term(sd, 4 * K, B, d) < bounds.heldout_term(sd, K, B, d) / 1.9


def test_coverage_holds_and_the_point_estimate_does_not():
    rng = np.random.default_rng(0)
    diff = np.clip(rng.normal(-0.1, 0.7, 3000), -5, 5)
    fail = transfer.simulate_certificate(diff, 2000, 5.0, 0.05, draws=400, seed=1)
    assert fail <= 0.05
    with mutations.apply("depth_expansion:certificate_no_term"):
        bad = transfer.simulate_certificate(diff, 2000, 5.0, 0.05, draws=400, seed=1)
    assert 0.3 < bad < 0.7


def _table(changes, sd=0.5, K=2000):
    rows = [{"model": "old", "seed": s, "lhs_direct": c, "lhs_se": sd / math.sqrt(K)}
            for s, c in enumerate(changes)]
    return pd.DataFrame(rows).set_index(["model", "seed"])


def _verdict(changes, **kw):
    cfg = de.Config.for_scale("smoke")
    led = claims.Ledger("depth_expansion", scale="smoke")
    de.checks.certificate(led, cfg, _table(changes, **kw), {"routes": pd.DataFrame()})
    return led.claims["DE.certificate"].verdict


def test_decision_three_ways():
    assert _verdict([-0.3, -0.2]) == claims.PASS
    assert _verdict([-0.3, 0.2]) == claims.FAIL        # one certified increase
    assert _verdict([-0.3, -0.01]) == claims.INCONCLUSIVE


def test_sign_mutation_is_caught_where_the_improvement_is_certified():
    m = mutations.get("depth_expansion:certificate_sign")
    assert m.catches == ("DE.certificate",)
    before = _verdict([-0.3, -0.2])
    with mutations.apply(m):
        after = _verdict([-0.3, -0.2])
    assert (before, after) == (claims.PASS, claims.FAIL)
