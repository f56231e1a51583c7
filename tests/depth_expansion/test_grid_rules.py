"""Decision rules of the powered grid claims on synthetic tables, and determinism of the
model initialisation (the draws must not depend on the caller's default dtype)."""

import numpy as np
import pandas as pd
import pytest
import torch

from dltheory import claims
from dltheory import depth_expansion as de
from dltheory.depth_expansion.models import postnorm_convnet, postnorm_mlp


def _grid(cfg, gamma, test, off=0.5, noise=0.02, seed=0, rot=0.5):
    rng = np.random.default_rng(seed)
    rows = []
    for w in cfg.grid_widths:
        for L in cfg.grid_depths:
            for s in range(cfg.grid_seeds):
                rows.append({"width": w, "depth": L, "seed": s, "reached": True,
                             "gamma_pop": gamma(w, L) * np.exp(noise * rng.standard_normal()),
                             "test": test(w, L) + noise * rng.standard_normal(),
                             "off_energy": off + noise * rng.standard_normal(),
                             "offdiag_null": 0.5, "rotation_null": rot})
    return pd.DataFrame(rows)


def _verdicts(cfg, gdf, odf=None):
    led = claims.Ledger("depth_expansion", scale=cfg.scale, rules=de.rules)
    de.checks.grid(led, cfg, gdf)
    if odf is not None:
        de.checks.covariance_mlp(led, cfg, odf)
        de.checks.covariance_conv(led, cfg, gdf)
    return {c.id: c.verdict for c in led.claims.values()}


CFG = de.Config.for_scale("paper", device="cpu")   # where the grid's rules decide
ODF = pd.DataFrame({"width": [16, 64], "off_energy": [0.7, 0.9], "offdiag_null": [0.58, 0.85]})


def test_paper_shaped_grid_passes():
    v = _verdicts(CFG, _grid(CFG, lambda w, L: L ** -0.7,
                             lambda w, L: 0.3 + 0.2 * (L == max(CFG.grid_depths)) * 8 / w,
                             off=0.1), ODF)
    assert v["DE.signal_decay"] == "PASS"
    assert v["DE.depth_rebound"] == "PASS"
    assert v["DE.joint_scaling"] == "PASS"
    assert v["DE.gradient_covariance.conv"] == "PASS"
    assert v["DE.gradient_covariance"] == "INCONCLUSIVE"   # rank-9 null above 0.3


def test_opposite_grid_is_not_reproduced():
    v = _verdicts(CFG, _grid(CFG, lambda w, L: L ** 0.7,
                             lambda w, L: 0.5 + (L == max(CFG.grid_depths)) * (0.05 * w / 4 - 0.2),
                             off=0.8), ODF)
    for cid in ("DE.signal_decay", "DE.depth_rebound", "DE.joint_scaling",
                "DE.gradient_covariance.conv"):
        assert v[cid] == "NOT REPRODUCED", cid


def test_conv_covariance_at_its_rotation_null_is_inconclusive():
    """Issue 49 item 3: a share that tracks the structureless null of its own spectrum
    (0.61 vs 0.58 at 16 channels at smoke) is no evidence either way, whatever the book's
    old threshold 0.3 says; the same share well below its null is near-diagonal structure."""
    flat = lambda w, L: 0.5   # noqa: E731
    at_null = _verdicts(CFG, _grid(CFG, flat, flat, off=0.6, rot=0.6), ODF)
    assert at_null["DE.gradient_covariance.conv"] == "INCONCLUSIVE"
    below = _verdicts(CFG, _grid(CFG, flat, flat, off=0.6, rot=0.8), ODF)
    assert below["DE.gradient_covariance.conv"] == "PASS"


def test_standard_declares_the_grid_claims_paper_only():
    """Pre-registered in rules.PAPER_ONLY from the power calculation: at standard a
    paper-shaped grid still gives INCONCLUSIVE with the stated reason."""
    std = de.Config.for_scale("standard")
    led = claims.Ledger("depth_expansion", scale="standard", rules=de.rules)
    de.checks.grid(led, std, _grid(std, lambda w, L: L ** -0.7,
                                   lambda w, L: 0.3 + 0.2 * (L == max(std.grid_depths)) * 8 / w))
    for cid in ("DE.depth_rebound", "DE.joint_scaling", "DE.signal_decay"):
        c = led.claims[cid]
        assert c.verdict == "INCONCLUSIVE" and "power calculation before the run" in c.note


def test_power_calculation_matches_the_presets():
    """The seeds the power calculation assumes are the standard preset's, and the claims it
    leaves to paper are exactly those whose required seeds exceed them."""
    std = de.Config.for_scale("standard")
    R = de.rules
    assert R.STANDARD_SEEDS == {"DE.joint_scaling": std.grid_seeds,
                                "DE.depth_rebound": std.grid_seeds,
                                "DE.signal_decay": std.grid_seeds,
                                "DE.width_observability": std.obs_seeds}
    for cid, (se, n0, eff) in R.STANDARD_SPREAD.items():
        assert (cid in R.PAPER_ONLY) == (R.seeds_needed(se, n0, eff) > R.STANDARD_SEEDS[cid])
        # detectable effect at the needed seeds is the effect itself (up to rounding up)
        assert R.detectable(se, n0, R.seeds_needed(se, n0, eff)) <= abs(eff)
    assert "DE.width_observability" not in R.PAPER_ONLY and "DE.power_law" in R.PAPER_ONLY


def test_flat_grid_is_inconclusive_and_smoke_always_is():
    flat = _grid(CFG, lambda w, L: 1.0, lambda w, L: 0.3, off=0.3)
    v = _verdicts(CFG, flat)
    assert v["DE.signal_decay"] == v["DE.depth_rebound"] == "INCONCLUSIVE"
    smoke = de.Config.for_scale("smoke")
    v = _verdicts(smoke, _grid(smoke, lambda w, L: L ** -0.7, lambda w, L: 0.3))
    assert set(v.values()) == {"INCONCLUSIVE"}


@pytest.mark.parametrize("build", [lambda: postnorm_mlp(40, 10, width=8, depth=2, seed=3),
                                   lambda: postnorm_convnet(1, 10, channels=4, depth=2, seed=3)])
def test_initialisation_ignores_the_default_dtype(build):
    old = torch.get_default_dtype()
    try:
        torch.set_default_dtype(torch.float32)
        a = [p.detach().double() for p in build().parameters()]
        torch.set_default_dtype(torch.float64)
        b = [p.detach() for p in build().parameters()]
    finally:
        torch.set_default_dtype(old)
    assert all(torch.allclose(x, y, atol=1e-7) for x, y in zip(a, b, strict=True))


def test_four_channel_convnet_groups_keep_two_channels():
    net = postnorm_convnet(1, 10, channels=4, depth=1, seed=0)
    assert net.stem[1].num_groups == 2 and net.blocks[0].norm.num_groups == 2
