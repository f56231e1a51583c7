"""The chapter's three-panel replica figure stays legible in the book's column (#30)."""

import matplotlib

matplotlib.use("Agg")

import pandas as pd  # noqa: E402

from dltheory import plotting  # noqa: E402
from dltheory.pretrain_finetune import figures  # noqa: E402
from dltheory.pretrain_finetune.config import Config  # noqa: E402


def test_replica_figure_text_is_legible():
    plotting.use_style()
    cfg = Config.for_scale("smoke")
    cur = pd.DataFrame([{"curve": "alpha", "task": t, "regime": r, "alpha": a, "replica": 1 - a}
                        for t in cfg.tasks for r in cfg.regimes for a in cfg.alpha_curve])
    sim = pd.DataFrame([{"task": t, "regime": r, "alpha": a, "seed": s, "sim": 1 - a + 0.01 * s}
                        for t in cfg.tasks for r in cfg.regimes for a in cfg.alphas for s in range(3)])
    fig = figures.replica_vs_sim(cur, sim, cfg)
    px, text = plotting.smallest_text_px(fig)
    assert px >= plotting.MIN_TEXT_PX, (px, text)


def test_lambda_axis_is_log_one_plus_lambda():
    """The lambda sweep is drawn against log10(1 + lambda), lambda = -1 a decade left of the
    band's edge (an optimum at -0.999 shows as the edge it is)."""
    import numpy as np

    at = figures.log1p_lambda_axis((-1.0, -0.999, -0.9, 0.0, 1.0))
    np.testing.assert_allclose(at([-1.0, -0.999, -0.9, 0.0, 1.0]), [-4, -3, -1, 0, np.log10(2)])
    cfg = Config.for_scale("smoke")
    cur = pd.DataFrame([{"curve": "lambda", "task": t, "lam": lam, "replica": 1.0 + lam}
                        for t in cfg.tasks for lam in cfg.lams])
    fig = figures.lambda_sweeps(cur, pd.DataFrame(), cfg)
    ticks = fig.axes[0].get_xticks()
    assert ticks.min() == at([-1.0])[0] and ticks.max() == at([1.0])[0]
