"""Section 7's measured departure from the additive law (checks.interaction) and the grid's
D = infinity column (sweeps.bayes_grid(..., infinite_data=True))."""

import numpy as np
import pandas as pd
import pytest

import dltheory.sparse_scaling as ss
from dltheory.sparse_scaling import checks, config, experiments
from dltheory.sparse_scaling.sweeps import bayes_grid


def test_bayes_grid_infinite_data_column_is_l_inf():
    """The l_inf(N) that bayes_grid returns beside the grid is loss_infinite_data of the
    same features (one QR serves both), and the grid itself is unchanged."""
    spec = ss.spectrum(3000, 1.0, 0.0)
    u = ss.gaussian_features(40, spec.M, 3)
    Ns, Ds = [5, 10, 20, 40], [50, 500]
    grid, linf = bayes_grid(spec, u, Ns, Ds, [1, 2], infinite_data=True)
    np.testing.assert_allclose(linf, ss.loss_infinite_data(u, spec.lam, Ns), rtol=1e-12)
    np.testing.assert_array_equal(grid, bayes_grid(spec, u, Ns, Ds, [1, 2]))
    assert np.all(grid >= linf[:, None] * (1 - 1e-12))     # finite D never beats D = inf


def _grid(cfg, extra):
    """A grid whose ridge loss is l_inf(N) + E T(D) + extra(N, D) (l_inf = 1.1 l_DE)."""
    Ng, Dg = experiments.grid_axes(cfg)
    spec = ss.spectrum(cfg.m_grid, cfg.alpha1, cfg.alpha2)
    lde, ET = ss.loss_de(spec.lam, Ng), ss.expected_floor(spec, Dg)
    EK = ss.expected_observed(spec, Dg)
    rows = [{"N": n, "D": d, "linf": 1.1 * lde[i], "rank": EK[k], "bayes": np.nan,
             "ridge": 1.1 * lde[i] + ET[k] + extra(n / EK[k]) * (1.1 * lde[i] + ET[k])}
            for i, n in enumerate(Ng) for k, d in enumerate(Dg)]
    return pd.DataFrame(rows)


def test_interaction_is_zero_on_an_additive_surface_and_found_where_planted():
    """On l_inf + E T exactly the interaction share is 0 everywhere and the fit of a equals
    the sampled one; a bump planted at N = 2 E K(D) is found there, with its size."""
    cfg = config.Config.for_scale("smoke")
    it = checks.interaction(cfg, _grid(cfg, lambda x: 0.0))
    assert np.max(np.abs(it["share"])) < 1e-12
    bump = lambda x: 0.25 * np.exp(-np.log(x / 2.0) ** 2)      # noqa: E731
    it = checks.interaction(cfg, _grid(cfg, bump))
    k = it["keep"]
    assert it["max"] == pytest.approx(np.max(it["share"][k]))
    assert 1.0 < it["x_max"] < 4.0
    assert 0.1 < it["max"] <= 0.2 + 1e-9                       # 0.25 / 1.25 at the top
    assert list(it["bands"]["points"]) and it["bands"]["points"].sum() == k.sum()
