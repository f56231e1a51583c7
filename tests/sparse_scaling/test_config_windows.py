"""What the Config split must keep, checked as properties instead of a golden record: the
sizes and windows that follow chapter 3's knobs are integers where they count rows or draws,
stay inside their caps, move the right way with each knob, and land where their rule puts
them (a relative tolerance, never the last bit of a float computed on some other machine)."""

import numpy as np
import pytest

from dltheory.sparse_scaling import windows as W
from dltheory.sparse_scaling.config import Config

A1 = (0.25, 0.5, 1.0, 2.0, 4.0)         # ALPHA1 across its domain, ALPHA2 = 0
INTS = ("d_moments", "heaps_trials_used", "moment_coords", "d_heaps", "m_floor", "m_d",
        "d_op", "m_grid", "relu_j0", "relu_d_fixed", "d_seeds_used", "grid_u_seeds_used")
GRIDS = ("n_grid", "d_sampled", "d_dd", "n_dense", "n_dd", "relu_d_sweep", "d_dense_peak")


def _rising(xs) -> bool:
    return all(a < b for a, b in zip(xs, xs[1:], strict=False))


@pytest.mark.parametrize("scale", ["smoke", "standard", "paper"])
def test_windows_are_integers_inside_their_caps(scale):
    for a1 in A1:
        c = Config.for_scale(scale, alpha1=a1, alpha2=0.0)
        for name in INTS:
            assert type(getattr(c, name)) is int, (scale, a1, name)
        for name in GRIDS:
            g = getattr(c, name)
            assert g and all(type(v) is int for v in g) and _rising(g), (scale, a1, name, g)
        assert c.d_moments <= c.d_moments_cap and c.d_heaps <= c.d_cap
        assert c.d_sampled[-1] <= c.d_cap and c.d_dd[-1] <= max(c.d_cap_dd, c.d_dd[0])
        assert c.relu_d_fixed <= c.relu_d_fixed_cap and c.grid_d_range[1] <= c.grid_d_cap
        assert c.d_seeds <= c.d_seeds_used <= c.d_seeds_max
        assert c.grid_u_seeds <= c.grid_u_seeds_used <= max(c.grid_u_seeds, c.grid_u_seeds_max)
        assert 1 <= c.moment_coords <= 20 and 4 <= c.rank_draws_at(c.d_dd[-1]) <= c.rank_draws
        assert c.n_grid[0] == c.n_lo and c.n_grid[-1] == c.n_hi


@pytest.mark.parametrize("scale", ["smoke", "standard"])
def test_windows_follow_alpha1_where_their_rule_puts_them(scale):
    """Sparser data (larger ALPHA1) observe fewer coordinates per row, so every window
    placed by K(D) moves to larger D (until its cap); the ReLU head shrinks. Each window
    sits at its K target within 1% (the Heaps table is interpolated on a 161-point grid;
    a D is rounded to an integer)."""
    cs = [Config.for_scale(scale, alpha1=a1, alpha2=0.0) for a1 in A1]
    for name in ("d_heaps", "d_op", "d_moments", "relu_d_fixed"):
        vals = [getattr(c, name) for c in cs]
        assert vals == sorted(vals), (name, vals)
    for name in ("d_sampled", "d_dd"):
        tops = [getattr(c, name)[-1] for c in cs]
        assert tops == sorted(tops), (name, tops)
    j0 = [c.relu_j0 for c in cs]
    assert j0 == sorted(j0, reverse=True)
    for a1, c in zip(A1, cs, strict=True):
        if 100 < c.d_heaps < c.d_cap:                 # neither floor nor cap binds
            assert W.heaps_K(a1, c.d_heaps) == pytest.approx(30.0, rel=0.01)
        np.testing.assert_allclose(W.heaps_K(a1, c.floor_window), c.k_floor, rtol=0.01)
        hi = min(c.d_cap, float(W.heaps_D(a1, c.k_cap)))
        assert c.d_sampled[-1] == pytest.approx(hi, rel=0.01)


def test_dense_peak_follows_alpha2():
    """A steeper spectrum (larger ALPHA2, so alpha_N) resolves fewer dense octaves: the
    largest D of the N = D peak never grows with ALPHA2, and every D kept is resolved."""
    cs = [Config.for_scale("smoke", alpha1=4.0, alpha2=a2) for a2 in (-4.0, -2.0, 0.0, 1.0)]
    tops = [c.d_dense_peak[-1] for c in cs]
    assert tops == sorted(tops, reverse=True) and tops[-1] < tops[0]
    for c in cs:
        assert all(D ** (-(c.alpha_N + 3) / 2) >= c.dense_resolve for D in c.d_dense_peak)
