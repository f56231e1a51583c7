"""The nonlinear stand-ins: digits MLP and modular-addition transformer (smoke-sized)."""

import numpy as np
import pytest
import torch

from dltheory.fitting import mean_ci
from dltheory.pretrain_finetune.modarith import TinyTransformer, pairs, pt_then_ft
from dltheory.pretrain_finetune.vision import finetune_mlp, pretrain_mlp


def _toy(seed=0, n=120, d=16):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    X = rng.normal(0, 0.3, (n, d)) + np.eye(3, d)[y]
    return X, y


def test_mlp_pt_and_ft_run_and_learn():
    X, y = _toy()
    pt = pretrain_mlp(X, y, [0, 1], hidden=32, steps=50, seed=0)
    m = np.isin(y, [0, 2])
    yb = (y[m] == 2).astype(np.int64)
    o = finetune_mlp(pt, X[m][:40], yb[:40], X[m][40:], yb[40:], kappa=0.5, gamma=1.0, steps=100, seed=0)
    assert o.test_acc > 0.8
    assert np.isfinite([o.pr_pre, o.pr_post, o.ensd]).all() and o.pr_pre >= 1
    with pytest.raises(ValueError, match="kappa"):
        finetune_mlp(pt, X[:4], yb[:4], X[:4], yb[:4], kappa=0.0, gamma=1.0)


def test_mean_ci():
    m, lo, hi = mean_ci([1.0, 2.0, 3.0])
    assert m == 2.0 and lo < 2.0 < hi
    with pytest.raises(ValueError, match="samples"):
        mean_ci([1.0])


def test_modarith_shapes_and_dtype_restored():
    tok, s = pairs(5)
    assert tok.shape == (25, 2) and int(s.max()) == 8
    before = torch.get_default_dtype()
    res = pt_then_ft(7, 2, [3], [0.5], pt_steps=3, ft_steps=3, d=16, seed=0)
    assert torch.get_default_dtype() == before
    assert len(res) == 1 and 0.0 <= res[0].test_acc <= 1.0
    with pytest.raises(ValueError, match="frac"):
        pt_then_ft(7, 2, [3], [0.5], frac=1.5)
    model = TinyTransformer(7, 3, d=16).float()
    assert model(tok[:4] % 7).shape == (4, 3)
