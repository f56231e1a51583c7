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
