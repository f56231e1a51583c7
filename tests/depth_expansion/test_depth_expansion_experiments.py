"""One small end-to-end expansion: fallback, route identities, first-order slope."""

import numpy as np
import pytest

from dltheory.depth_expansion import (
    expand,
    make_pool,
    per_sample_loss,
    progressive_deepening,
    train_old,
)


@pytest.fixture(scope="module")
def small():
    pool = make_pool(400, 300, 600, seed=1)
    old, hist = train_old(pool, n=400, width=16, depth=2, epochs=8, seed=0)
    e = expand(old, pool, n=400, seed=0, l=1, etas=np.geomspace(0.01, 3, 12), block_epochs=2,
               n_perm=20, fd_eta=1e-3)  # tests run in float32: a larger FD step
    return pool, old, hist, e


def test_expansion_terms(small):
    pool, old, hist, e = small
    assert hist[-1] < hist[0]
    # Condition 2 through the fallback, for both jumpboards
    assert e.route_a.delta_erm >= 0 and e.route_b.delta_erm >= 0
    # exact identities against a direct per-sample computation on the test set
    direct = float((per_sample_loss(e.models["new"], pool.X_test, pool.y_test)
                    - per_sample_loss(e.models["old"], pool.X_test, pool.y_test)).mean())
    assert abs(e.route_b.identity_sum - direct) < 1e-5   # float32 round-off
    assert abs(e.route_a.identity_sum - direct) < 1e-5
    # first-order slope along -v_pop equals -gamma_pop
    assert abs(e.fd_slope + e.sig_pop.gamma) < 1e-2 * e.sig_pop.gamma
    # jumpboards never worsen the risk on the sample that chose them
    assert e.jb_pop.gain >= 0 and e.jb_S.gain >= 0
    lo, hi = e.delta_R_ci[1:]
    assert lo <= e.delta_R_ci[0] <= hi


def test_progressive_deepening_rows():
    pool = make_pool(300, 100, 200, seed=2)
    rows = progressive_deepening(pool, n=300, width=8, depth0=1, rounds=2, epochs=1, seed=0)
    assert [r["depth"] for r in rows] == [1, 2, 3]
    assert np.isnan(rows[0]["gamma_S"]) and rows[1]["gamma_pop"] > 0
