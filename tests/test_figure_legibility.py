"""The book's figure style keeps text legible at the column width (plotting.use_style)."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from dltheory import plotting  # noqa: E402


@pytest.fixture
def styled():
    with matplotlib.rc_context():
        plotting.use_style()
        yield
    plt.close("all")


@pytest.mark.parametrize("width,panels", [(5.0, 1), (9.0, 2), (10.0, 2), (11.0, 3)])
def test_default_text_is_legible_at_column_width(styled, width, panels):
    fig, axs = plt.subplots(1, panels, figsize=(width, 3.4), squeeze=False)
    for ax in axs[0]:
        ax.plot([1, 10], [1, 100], label="theory")
        ax.set(xscale="log", yscale="log", xlabel="$N$", ylabel="loss", title="panel")
        ax.legend()
    px, text = plotting.smallest_text_px(fig)
    assert px >= plotting.MIN_TEXT_PX, f"{text!r} is {px:.1f} px at {width} in"


def test_smallest_text_px_sees_explicit_small_fonts(styled):
    fig, ax = plt.subplots(figsize=(11, 3))
    ax.plot([0, 1], [0, 1], label="tiny")
    ax.legend(fontsize=6)
    px, text = plotting.smallest_text_px(fig)
    assert text == "tiny" and px < plotting.MIN_TEXT_PX


def test_chapter4_headline_figure_is_legible(styled):
    """Chapter 4's first figure (its evidence: bounds against the realised change) drew its
    legend at 8 pt beside the axes, 8.9 px at the column width; below the floor."""
    import types

    import pandas as pd

    from dltheory.depth_expansion import figures

    seeds = [0, 1, 2]
    idx = pd.MultiIndex.from_product([["old", "new"], seeds], names=["model", "seed"])
    ex = pd.DataFrame({"lhs": -0.1, "lhs_se": 0.01, "delta_R": 0.02, "delta_erm_pop": 0.01,
                       "delta_test": 0.03, "delta_erm_S": 0.01}, index=idx)
    routes = pd.DataFrame({"A_eps_M": 0.01, "B_eps_M": 0.02, "B_eps_K": 0.01},
                          index=pd.Index(seeds, name="seed"))
    cfg = types.SimpleNamespace(scale="standard", route_delta=0.05)
    fig = figures.bounds_vs_realised(ex, {"routes": routes}, cfg)
    px, text = plotting.smallest_text_px(fig)
    assert px >= plotting.MIN_TEXT_PX, f"{text!r} is {px:.1f} px"


def test_chapter4_progressive_figure_is_legible(styled):
    """Chapter 4's progressive-deepening figure drew five legend entries at 8 pt inside its
    second panel: 8.6 px at the column width (found by scripts/legibility.py)."""
    import types

    import numpy as np
    import pandas as pd

    from dltheory.depth_expansion import figures

    k = np.arange(6)
    prog = pd.DataFrame({"round": k, "test": 1 - 0.05 * k, "pop": 1 - 0.04 * k,
                         "train": 0.9 - 0.06 * k, "gamma_pop": 0.1 * (k + 1) ** 0.5,
                         "gamma_S": 0.12 * (k + 1) ** 0.5, "g_norm": (k + 1) ** 0.6,
                         "coherence": 0.5 + 0 * k})
    fig = figures.progressive(prog, types.SimpleNamespace(scale="smoke"))
    px, text = plotting.smallest_text_px(fig)
    assert px >= plotting.MIN_TEXT_PX, f"{text!r} is {px:.1f} px"


def test_chapter4_certified_figure_is_legible(styled):
    """Chapter 4's headline figure (what is certified: the measured change, the held-out
    certificate and the theorems' right-hand sides) at the column width."""
    import types

    import pandas as pd

    from dltheory.depth_expansion import figures

    seeds = [0, 1, 2]
    idx = pd.MultiIndex.from_product([["old", "new"], seeds], names=["model", "seed"])
    ex = pd.DataFrame({"lhs": -0.1, "lhs_se": 0.01, "lhs_direct": -0.1, "rhsA": 1.1,
                       "rhsB": 1.3}, index=idx)
    cfg = types.SimpleNamespace(scale="standard", route_delta=0.05, n_test=800, B=3.0)
    fig = figures.certified(ex, cfg)
    px, text = plotting.smallest_text_px(fig)
    assert px >= plotting.MIN_TEXT_PX, f"{text!r} is {px:.1f} px"


def test_chapter4_figures_of_a_sweep_cut_by_the_budget_say_so(styled):
    """Under a budget the expansion sweep may not run (an empty table whose ``attrs``
    say why): every figure drawn from it shows that line instead of failing (the CPU paper
    step at a 30 s budget lost chapter 4's ledger to ``bounds_vs_realised``)."""
    import inspect
    import types

    import pandas as pd

    from dltheory.depth_expansion import figures

    ex = pd.DataFrame()
    ex.attrs["skipped"] = "not run under this budget"
    cfg = types.SimpleNamespace(scale="paper", route_delta=0.05, n_test=800, B=3.0, seed=0)
    names = [n for n, f in vars(figures).items() if inspect.isfunction(f)
             and f.__module__ == figures.__name__ and not n.startswith("_")
             and list(inspect.signature(f).parameters)[:1] == ["ex"]]
    assert "bounds_vs_realised" in names and "certified" in names
    for name in names:
        extra = ({"routes": pd.DataFrame()},) if name == "bounds_vs_realised" else ()
        fig = getattr(figures, name)(ex, *extra, cfg)
        assert "not run under this budget" in fig.axes[0].texts[0].get_text(), name
